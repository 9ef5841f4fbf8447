//! Seeded fuzz test of the store (issue 9, "What it must show"): for fixed seeds, a tree of
//! random directories, files, symbolic links (inside, outside, to `/dev/zero`, dangling,
//! loops), FIFOs and permission bits; `TJ_DATA_DIR` pointed at places in it; `tj run`,
//! `tj reduce`, `tj ls` and `tj expand` run against each. Nothing outside the data directory
//! may change (a hash of every entry's type, mode, owner, contents and link target, walked
//! with `lstat`, before and after), every run ends within a bound, and `tj run` exits with
//! the child's code.
//!
//! The generator is a xorshift PRNG (no dependency): a failing seed replays exactly. The
//! tree builder and the snapshot are shared with the rule-loader half of this test.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::util::run_within;
use crate::util::{TestEnv, stdout};

/// Seeds that each build a different tree; add one to replay a failure found elsewhere.
const SEEDS: [u64; 6] = [1, 2, 3, 42, 0x5eed_cafe, 0xdead_beef];

/// How long any one tj command may take before it counts as a hang.
const BOUND: Duration = Duration::from_secs(10);

/// A uid that is not ours, for entries "of another user" (root only).
const OTHER_UID: u32 = 12345;

/// xorshift64: tiny, deterministic, good enough to pick shapes of a tree.
pub(crate) struct XorShift(u64);

impl XorShift {
    pub(crate) fn new(seed: u64) -> XorShift {
        // Zero is xorshift's one fixed point; mix the seed so small seeds differ at once.
        XorShift(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub(crate) fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// What the generator made, by kind, for choosing where to point things.
#[derive(Default)]
pub(crate) struct Tree {
    pub(crate) dirs: Vec<PathBuf>,
    pub(crate) files: Vec<PathBuf>,
    pub(crate) links: Vec<PathBuf>,
    pub(crate) fifos: Vec<PathBuf>,
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Sets the mode of `path` (not a link); without root, keeps the owner's own access so the
/// test can still build and clean up the tree.
fn chmod(path: &Path, mode: u32, dir: bool) {
    let mode = if is_root() {
        mode
    } else if dir {
        mode | 0o700
    } else {
        mode | 0o600
    };
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn write_file(path: &Path, bytes: &[u8]) {
    std::io::Write::write_all(&mut fs::File::create(path).unwrap(), bytes).unwrap();
    // Old enough for any sweep to take it, were it ever to look.
    let old = SystemTime::now() - Duration::from_secs(30 * 24 * 3600);
    fs::File::options().write(true).open(path).unwrap().set_modified(old).unwrap();
}

/// Builds a random tree under `root` (created here) whose links may also point into
/// `outside`. `names` are preferred names for entries (the store's own names, say), so that
/// the tree collides with what tj writes.
pub(crate) fn build_tree(
    rng: &mut XorShift,
    root: &Path,
    outside: &Path,
    names: &[String],
) -> Tree {
    let mut tree = Tree::default();
    fs::create_dir_all(root).unwrap();
    tree.dirs.push(root.to_owned());
    let mut modes: Vec<(PathBuf, u32, bool)> = Vec::new();
    for i in 0..48 {
        let parent = rng.pick(&tree.dirs).clone();
        let mut path = parent.join(rng.pick(names));
        if fs::symlink_metadata(&path).is_ok() {
            path = parent.join(format!("e{i}"));
        }
        match rng.below(10) {
            0..=2 => {
                fs::create_dir(&path).unwrap();
                let mut mode = rng.next() as u32 & 0o777;
                if rng.chance(4) {
                    mode |= 0o1000; // sticky
                }
                modes.push((path.clone(), mode, true));
                tree.dirs.push(path.clone());
            }
            3..=5 => {
                let len = rng.below(300);
                let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                write_file(&path, &bytes);
                modes.push((path.clone(), rng.next() as u32 & 0o777, false));
                tree.files.push(path.clone());
            }
            6..=8 => {
                let target: PathBuf = match rng.below(9) {
                    0 if !tree.files.is_empty() => rng.pick(&tree.files).clone(),
                    1 => rng.pick(&tree.dirs).clone(),
                    2 => outside.join("logs"),
                    3 => outside.join("victim.txt"),
                    4 => PathBuf::from("/dev/zero"),
                    5 => root.join("nowhere/at/all"),
                    // A loop: a link to itself, or to a link that may point back.
                    6 => path.clone(),
                    7 if !tree.links.is_empty() => rng.pick(&tree.links).clone(),
                    _ => PathBuf::from(".."),
                };
                symlink(&target, &path).unwrap();
                tree.links.push(path.clone());
            }
            _ => {
                nix::unistd::mkfifo(&path, nix::sys::stat::Mode::from_bits_truncate(0o600))
                    .unwrap();
                modes.push((path.clone(), rng.next() as u32 & 0o777, false));
                tree.fifos.push(path.clone());
            }
        }
        if is_root() && rng.chance(8) {
            std::os::unix::fs::lchown(&path, Some(OTHER_UID), None).unwrap();
        }
    }
    // Modes last, deepest first, so a 0000 directory does not stop building its children.
    for (path, mode, dir) in modes.iter().rev() {
        chmod(path, *mode, *dir);
    }
    tree
}

/// Makes `outside`: a file and a directory of 30-day-old files named like the store's own,
/// which links in the tree point at.
pub(crate) fn build_outside(outside: &Path, names: &[String]) {
    fs::create_dir_all(outside.join("logs")).unwrap();
    write_file(&outside.join("victim.txt"), b"precious\n");
    for name in names {
        write_file(&outside.join("logs").join(name), b"precious\n");
    }
}

/// Every entry under `roots`, walked with `lstat` (never through a link, never opening a
/// FIFO or device), as type + mode + owner + (contents hash and mtime | link target | device
/// number), except what is under `skip` (`skip` itself is recorded, not entered).
pub(crate) fn snapshot(roots: &[&Path], skip: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    for root in roots {
        walk(root, skip, &mut out);
    }
    out
}

fn walk(path: &Path, skip: &Path, out: &mut BTreeMap<PathBuf, String>) {
    if path.starts_with(skip) && path != skip {
        return;
    }
    let Ok(meta) = fs::symlink_metadata(path) else { return };
    let kind = meta.file_type();
    let head = format!("{:o}:{}:{}", meta.mode() & 0o7777, meta.uid(), meta.gid());
    let entry = if kind.is_symlink() {
        format!("link {head} -> {}", fs::read_link(path).unwrap().display())
    } else if kind.is_dir() && path == skip {
        // The data dir itself: its type, mode and owner count (tj must never chmod it), its
        // contents are the store's.
        format!("dir {head}")
    } else if kind.is_dir() {
        let mut children: Vec<PathBuf> =
            fs::read_dir(path).unwrap().flatten().map(|e| e.path()).collect();
        children.sort();
        for child in &children {
            walk(child, skip, out);
        }
        // A directory's own mtime changes when the data dir is made inside it: not compared.
        format!("dir {head}")
    } else if kind.is_file() {
        let mut bytes = Vec::new();
        fs::File::open(path).unwrap().read_to_end(&mut bytes).unwrap();
        let (_, sha) = tj::store::id_of(&bytes);
        format!("file {head} {sha} {:?}", meta.modified().unwrap())
    } else {
        // FIFOs, devices, sockets: never opened.
        format!("special {head} {:?} {}", kind, meta.rdev())
    };
    out.insert(path.to_owned(), entry);
}

/// Asserts `before` and `after` agree, naming every entry that changed.
pub(crate) fn assert_same(
    before: &BTreeMap<PathBuf, String>,
    after: &BTreeMap<PathBuf, String>,
    what: &str,
) {
    let mut changed = Vec::new();
    for (path, was) in before {
        match after.get(path) {
            Some(now) if now == was => {}
            Some(now) => changed.push(format!("changed {}: {was} => {now}", path.display())),
            None => changed.push(format!("removed {}: {was}", path.display())),
        }
    }
    for path in after.keys().filter(|p| !before.contains_key(*p)) {
        changed.push(format!("added {}", path.display()));
    }
    assert!(changed.is_empty(), "{what}: outside the data dir\n{}", changed.join("\n"));
}

#[test]
fn store_never_changes_anything_outside_the_data_dir() {
    let reduce_input = "test a ... ok\ntest b ... FAILED\nerror: test failed\n";
    let (id, _) = tj::store::id_of(reduce_input.as_bytes());
    let mut names: Vec<String> = [
        "spill",
        "ledger.jsonl",
        ".last-sweep",
        "app.log",
        "error.log",
        "0123456789ab.log",
        "0123456789ab.json",
        ".capture-1-2.tmp",
        ".tj-1-00ff.tmp",
        "notes.tmp",
    ]
    .map(str::to_owned)
    .to_vec();
    for ext in ["log", "json", "txt", "tail"] {
        names.push(format!("{id}.{ext}"));
    }
    for seed in SEEDS {
        let env = TestEnv::new();
        let mut rng = XorShift::new(seed);
        let outside = env.root.join("outside");
        let root = env.root.join("tree");
        build_outside(&outside, &names);
        let tree = build_tree(&mut rng, &root, &outside, &names);

        // Where TJ_DATA_DIR points: a new dir tj creates, an existing dir made private (so
        // the store may accept it and meet what the tree planted inside), one as it is, a
        // link, a FIFO, a file, and a path under a file.
        let mut targets: Vec<(String, PathBuf)> =
            vec![("new".into(), rng.pick(&tree.dirs).join(format!("fresh-{seed}")))];
        // Not the tree's root: the whole tree would be "inside".
        let inner = if tree.dirs.len() > 1 { &tree.dirs[1..] } else { &tree.dirs[..] };
        targets.push(("private dir".into(), rng.pick(inner).clone()));
        targets.push(("dir".into(), rng.pick(&tree.dirs).clone()));
        for (label, pool) in [("link", &tree.links), ("fifo", &tree.fifos), ("file", &tree.files)] {
            if !pool.is_empty() {
                targets.push((label.into(), rng.pick(pool).clone()));
            }
        }
        if let Some(file) = tree.files.first() {
            targets.push(("under a file".into(), file.join("data")));
        }

        for (label, data_dir) in targets {
            if label == "private dir" {
                chmod(&data_dir, 0o700, true);
                let me = nix::unistd::geteuid().as_raw();
                std::os::unix::fs::lchown(&data_dir, Some(me), None).unwrap();
                // Issue 9's sweep repro, more often than chance gives it: `spill` a link to a
                // directory of old files named like the store's own.
                let spill = data_dir.join("spill");
                if fs::symlink_metadata(&spill).is_err() && rng.chance(2) {
                    symlink(outside.join("logs"), &spill).unwrap();
                }
            }
            let what = format!("seed {seed:#x}, TJ_DATA_DIR = {label} `{}`", data_dir.display());
            let before = snapshot(&[&root, &outside], &data_dir);
            let tj = |args: &[&str], stdin: &[u8]| {
                let mut cmd = env.cmd(args);
                cmd.env("TJ_DATA_DIR", &data_dir);
                run_within(cmd, stdin, BOUND)
            };
            let body = "echo x; seq 1 3000; exit 3";
            let out = tj(&["run", "--agent", "--no-pty", "--", "sh", "-c", body], b"");
            assert_eq!(out.status.code(), Some(3), "{what}: the child's exit code");
            assert!(stdout(&out).contains("3000"), "{what}: the rendition");
            let out = tj(&["reduce", "--", "cargo", "test"], reduce_input.as_bytes());
            assert!(out.status.success(), "{what}: reduce");
            assert!(stdout(&out).contains("test b ... FAILED"), "{what}: the failure kept");
            tj(&["ls"], b"");
            tj(&["expand", &id], b"");
            tj(&["expand", &id, "--reduced"], b"");
            let mut after = snapshot(&[&root, &outside], &data_dir);
            if label == "new" {
                let made = after.remove(&data_dir);
                let made = made.as_deref().unwrap_or("nothing");
                assert!(made.starts_with("dir 700:"), "{what}: tj made {made}");
            }
            assert_same(&before, &after, &what);
        }
    }
}
