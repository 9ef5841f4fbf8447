//! What tests share: the unit tests across modules and the tests under `tests/`. Not part
//! of tj's behaviour.

/// A xorshift64 generator: the same sequence for the same seed on every run, with no
/// dependency. Seeded tests (fuzz trees, random lines, noise bytes) draw from it.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (made odd: xorshift never leaves zero).
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (which must not be 0).
    pub fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next_u64() % n as u64).unwrap_or(0)
    }

    /// One of `from`.
    pub fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.below(from.len())]
    }

    /// `len` pseudo-random bytes (bits 24..32 of each draw).
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| (self.next_u64() >> 24) as u8).collect()
    }
}

/// Every fixture under this repository's `tests/fixtures/`, in path order. Panics on a
/// file that is not a fixture: a test's setup failing is its report.
pub fn fixtures() -> Vec<crate::verify::Fixture> {
    let mut problems = Vec::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let cases = crate::verify::read_fixtures(&dir, &mut problems).expect("fixtures are readable");
    assert!(problems.is_empty(), "{problems:?}");
    cases
}

/// Hands `f` each builtin rule's non-empty line lists as the build embeds them, one
/// matcher per list ([`crate::rules::compiled::embedded_line_lists`]): the rule's id and
/// the list's spec (its ASCII patterns, default flags).
pub fn each_builtin_line_list(mut f: impl FnMut(&str, &crate::matchers::Spec<'_>)) {
    let rules = crate::rules::RuleSet::builtin();
    for loaded in rules.rules() {
        for patterns in crate::rules::compiled::embedded_line_lists(&loaded.rule) {
            if !patterns.is_empty() {
                let flags = crate::matchers::Flags::default();
                let spec = crate::matchers::Spec { unicode: false, flags, patterns: &patterns };
                f(&loaded.rule.id, &spec);
            }
        }
    }
}

/// A path of a test's own under the system's temporary directory, removed with all it holds
/// when dropped, also when the test fails. Named `tj-{name}-{pid}-{16 random hex digits}`:
/// unique per call, and not guessable by another user of the shared directory.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    /// A new path, not there yet: the test creates what it needs.
    pub fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "tj-{name}-{}-{:016x}",
            std::process::id(),
            crate::fsx::unpredictable()
        ));
        TempDir(dir)
    }

    /// A new directory, created (with its parents, private to this user as the system's
    /// temporary directory leaves them).
    ///
    /// # Panics
    /// If it cannot be created: the test cannot run.
    pub fn created(name: &str) -> TempDir {
        let dir = TempDir::new(name);
        #[allow(clippy::unwrap_used)]
        std::fs::create_dir_all(&dir.0).unwrap();
        dir
    }
}

impl std::ops::Deref for TempDir {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for TempDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl From<&TempDir> for std::path::PathBuf {
    fn from(dir: &TempDir) -> std::path::PathBuf {
        dir.0.clone()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether this is the process of its own that the unit test `name` runs alone in: for what
/// depends on process-wide state that other tests of the same binary may have changed first
/// (the signals, which the first relay of a process may read on its own thread). In the
/// test binary's own run it runs the binary again for that one test, asserts that it passed
/// there, and returns false; the test then returns. `name` is the test's path as `cargo
/// test` lists it (`run::tests::…`).
///
/// # Panics
/// If the test failed in its own process, or could not be run there.
#[allow(clippy::unwrap_used, clippy::missing_panics_doc)]
pub fn alone_in_a_process(name: &str) -> bool {
    const MARK: &str = "TJ_TEST_ALONE";
    if std::env::var_os(MARK).is_some_and(|alone| alone == name) {
        return true;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--test-threads=1", "--nocapture"])
        .env(MARK, name)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{name} failed in a process of its own:\n{report}");
    assert!(stdout.contains("1 passed"), "{name} did not run in a process of its own:\n{report}");
    false
}
