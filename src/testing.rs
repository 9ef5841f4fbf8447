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

/// A path of a test's own under the system's temporary directory: not there when made
/// (the test creates what it needs), and removed with all it holds when dropped, also when
/// the test fails. Unique per process and per call.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    /// A new path named `tj-{name}-{pid}-{n}`.
    pub fn new(name: &str) -> TempDir {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tj-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TempDir(dir)
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
