//! Issue 9, defects 1–4 and 7, through the binary: what `--emit PATH` does to a device, a
//! FIFO and a symbolic link; symbolic links planted in and in place of the store; data
//! directories tj did not create; and a re-stored original surviving the sweep.
//!
//! We run as root without `fs.protected_symlinks` here, so "another user's" link or file is
//! made with `lchown`/`chown` to a uid that is not ours: the tests check tj's own ownership
//! and `O_NOFOLLOW` mechanism, never the kernel's protection.

use std::fs;
use std::io::Read;
use std::os::unix::fs::{
    DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt, symlink,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime};

use crate::util::{TestEnv, cargo_test_output, run_within, spawn_retrying, stderr, stdout};

const DAY: u64 = 24 * 3600;

/// A uid that is not ours, for links and files "of another user".
const OTHER_UID: u32 = 12345;

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Sets the mtime of `path` (which must not be a link) to `secs` seconds ago.
fn age(path: &Path, secs: u64) {
    let when = SystemTime::now() - Duration::from_secs(secs);
    fs::File::options().write(true).open(path).unwrap().set_modified(when).unwrap();
}

fn mtime(path: &Path) -> SystemTime {
    fs::symlink_metadata(path).unwrap().modified().unwrap()
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

/// Writes `text` to a new file at `path` (no `fs::write`: the lint wants atomic writes for
/// what tj's readers see, and these are fixtures).
fn put(path: &Path, text: &str) {
    std::io::Write::write_all(&mut fs::File::create(path).unwrap(), text.as_bytes()).unwrap();
}

fn mkfifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
}

/// `tj run --agent --no-pty --emit PATH -- sh -c BODY` in `env`.
fn run_emit(env: &TestEnv, emit: &Path, body: &str) -> Output {
    let args = ["run", "--agent", "--no-pty", "--emit", emit.to_str().unwrap(), "--", "sh", "-c"];
    let mut args = args.to_vec();
    args.push(body);
    run_within(env.cmd(&args), b"", Duration::from_secs(10))
}

/// A directory of someone's files, 30 days old: what the sweep must never delete.
fn precious_dir(at: &Path) -> Vec<PathBuf> {
    fs::create_dir_all(at).unwrap();
    let names = ["app.log", "error.log", "app.json", "0123456789ab.log", "0123456789ab.json"];
    names
        .iter()
        .map(|name| {
            let path = at.join(name);
            put(&path, "precious\n");
            age(&path, 30 * DAY);
            path
        })
        .collect()
}

fn assert_untouched(files: &[PathBuf]) {
    for file in files {
        assert_eq!(fs::read_to_string(file).unwrap(), "precious\n", "{}", file.display());
    }
}

#[test]
fn emit_to_a_char_device_writes_it_in_place_and_it_stays_a_device() {
    let env = TestEnv::new();
    let null = env.work().join("mynull");
    let made = Command::new("mknod").arg(&null).args(["c", "1", "3"]).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: mknod needs root");
        return;
    }
    let out = run_emit(&env, &null, "echo hi; exit 3");
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stderr(&out), "");
    let meta = fs::symlink_metadata(&null).unwrap();
    assert!(meta.file_type().is_char_device(), "{:?}", meta.file_type());
    assert_eq!(meta.rdev(), nix::sys::stat::makedev(1, 3));
}

#[test]
fn emit_to_a_fifo_with_a_reader_delivers_the_rendition() {
    let env = TestEnv::new();
    let fifo = env.work().join("rendition.fifo");
    mkfifo(&fifo);
    // The read end, opened before tj runs (O_NONBLOCK: no writer needed yet), read after.
    let mut reader =
        fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
    let out = run_emit(&env, &fifo, "echo through-the-fifo; exit 5");
    assert_eq!(out.status.code(), Some(5));
    assert_eq!(stderr(&out), "");
    let mut got = String::new();
    reader.read_to_string(&mut got).unwrap();
    assert!(got.contains("through-the-fifo"), "{got}");
    // A side channel's reader (a harness) has the exit status: no `[tj] exit` line.
    assert!(!got.contains("[tj] exit"), "{got}");
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn emit_to_a_fifo_nobody_reads_falls_back_to_stdout_with_one_warning() {
    let env = TestEnv::new();
    let fifo = env.work().join("lonely.fifo");
    mkfifo(&fifo);
    let out = run_emit(&env, &fifo, "echo lonely; exit 4");
    assert_eq!(out.status.code(), Some(4));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no process is reading the FIFO"), "{err}");
    assert!(err.contains("the rendition is on stdout instead"), "{err}");
    assert!(stdout(&out).contains("lonely"), "{}", stdout(&out));
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn emit_through_an_own_symlink_writes_its_target_and_keeps_the_link() {
    let env = TestEnv::new();
    let target = env.work().join("target.txt");
    put(&target, "old\n");
    let link = env.work().join("link.txt");
    symlink(&target, &link).unwrap();
    let out = run_emit(&env, &link, "echo via-link");
    assert!(out.status.success());
    assert_eq!(stderr(&out), "");
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(fs::read_to_string(&target).unwrap().contains("via-link"));
}

#[test]
fn emit_through_another_users_symlink_is_refused_and_the_rendition_goes_to_stdout() {
    if !is_root() {
        eprintln!("skipped: only root can give a link to another user");
        return;
    }
    let env = TestEnv::new();
    let victim = env.work().join("victim.txt");
    put(&victim, "precious\n");
    let link = env.work().join("planted");
    symlink(&victim, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(OTHER_UID), None).unwrap();
    let out = run_emit(&env, &link, "echo secret-rendition; exit 2");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&format!("belongs to uid {OTHER_UID}")), "{err}");
    assert!(err.contains("the rendition is on stdout instead"), "{err}");
    assert!(stdout(&out).contains("secret-rendition"));
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());

    // Our own link to another user's file: refused too.
    std::os::unix::fs::lchown(&link, Some(0), None).unwrap();
    std::os::unix::fs::chown(&victim, Some(OTHER_UID), None).unwrap();
    let out = run_emit(&env, &link, "echo secret-rendition");
    assert!(stderr(&out).contains("which belongs to uid"), "{}", stderr(&out));
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
}

#[test]
fn symlinks_planted_at_last_sweep_and_ledger_are_never_written_through() {
    let env = TestEnv::new();
    // The store exists already (a first run made it).
    assert!(env.run(&["reduce", "--", "cargo", "test"], b"first\n").status.success());
    let victim = env.root.join("victim");
    put(&victim, "precious\n");
    age(&victim, 30 * DAY);
    let before = mtime(&victim);
    for name in [".last-sweep", "ledger.jsonl"] {
        let _ = fs::remove_file(env.data().join(name));
        symlink(&victim, env.data().join(name)).unwrap();
    }
    let out = env.run(&["reduce", "--", "cargo", "test"], cargo_test_output(50).as_bytes());
    assert!(out.status.success());
    assert!(stdout(&out).contains("module::tests::broken"));
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    assert_eq!(mtime(&victim), before, "the marker link was not touched through");
}

#[test]
fn symlinks_planted_at_the_stores_own_names_are_replaced_not_followed() {
    let env = TestEnv::new();
    let raw = cargo_test_output(50);
    let (id, _) = tj::store::id_of(raw.as_bytes());
    let spill = env.data().join("spill");
    fs::DirBuilder::new().mode(0o700).create(&spill).unwrap();
    let victim = env.root.join("victim");
    put(&victim, "precious\n");
    for ext in ["log", "json", "txt"] {
        symlink(&victim, spill.join(format!("{id}.{ext}"))).unwrap();
    }
    // The temporary name older tj versions used is predictable from the pid: plant it once
    // tj is running and before it has read its input.
    let mut cmd = env.cmd(&["reduce", "--", "cargo", "test"]);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = spawn_retrying(&mut cmd);
    symlink(&victim, spill.join(format!(".{id}.log.{}.tmp", child.id()))).unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), raw.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    let stored = fs::symlink_metadata(spill.join(format!("{id}.log"))).unwrap();
    assert!(stored.is_file(), "the original replaced the planted link");
    let expanded = env.run(&["expand", &id, "--raw"], b"");
    assert_eq!(stdout(&expanded), raw);
}

#[test]
fn a_spill_dir_that_is_a_symlink_is_refused_and_nothing_it_points_to_is_deleted() {
    let env = TestEnv::new();
    let victims = precious_dir(&env.root.join("logs"));
    symlink(env.root.join("logs"), env.data().join("spill")).unwrap();
    // An old marker: without the fix, this run would sweep the linked directory.
    put(&env.data().join(".last-sweep"), "");
    age(&env.data().join(".last-sweep"), DAY);
    let raw = cargo_test_output(400);
    let out = env.run(&["reduce", "--", "cargo", "test"], raw.as_bytes());
    assert!(out.status.success());
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not storing the original"), "{err}");
    assert!(err.contains("spill` is a symbolic link"), "{err}");
    assert!(err.contains("the rendition is the whole original"), "{err}");
    assert!(stdout(&out).contains("case_0200 ... ok"), "nothing dropped");
    let out = run_within(
        env.cmd(&["run", "--agent", "--no-pty", "--", "sh", "-c", "echo x; exit 6"]),
        b"",
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(6));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert_untouched(&victims);
    assert_eq!(fs::read_dir(env.root.join("logs")).unwrap().count(), victims.len());
    // Reading commands refuse it too, instead of listing someone else's files.
    let ls = env.run(&["ls"], b"");
    assert!(stderr(&ls).contains("is a symbolic link"), "{}", stderr(&ls));
}

#[test]
fn a_data_dir_that_is_a_symlink_is_refused_and_its_target_gets_nothing() {
    let env = TestEnv::new();
    let real = env.root.join("real");
    fs::DirBuilder::new().mode(0o700).create(&real).unwrap();
    let link = env.root.join("data-link");
    symlink(&real, &link).unwrap();
    let mut cmd = env.cmd(&["run", "--agent", "--no-pty", "--", "sh", "-c", "seq 1 3000"]);
    cmd.env("TJ_DATA_DIR", &link);
    let out = run_within(cmd, b"", Duration::from_secs(10));
    assert!(out.status.success());
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("data-link` is a symbolic link"), "{err}");
    assert!(stdout(&out).contains("\n2999\n"), "the whole original");
    assert_eq!(fs::read_dir(&real).unwrap().count(), 0);
}

#[test]
fn a_data_dir_open_to_others_is_refused_and_its_mode_left_alone() {
    let env = TestEnv::new();
    for bits in [0o1777, 0o775] {
        let dir = env.root.join(format!("open-{bits:o}"));
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(bits)).unwrap();
        let mut cmd = env.cmd(&["reduce", "--", "cargo", "test"]);
        cmd.env("TJ_DATA_DIR", &dir);
        let out = env.run_cmd(cmd, cargo_test_output(400).as_bytes());
        assert!(out.status.success());
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&format!("(mode {bits:04o})")), "{err}");
        assert!(err.contains(&format!("chmod 700 {}", dir.display())), "{err}");
        assert!(stdout(&out).contains("case_0200 ... ok"), "nothing dropped");
        assert_eq!(mode(&dir), bits, "tj never changes the mode of a dir it did not create");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
    }
}

#[test]
fn a_data_dir_of_another_user_is_refused() {
    if !is_root() {
        eprintln!("skipped: only root can give a directory to another user");
        return;
    }
    let env = TestEnv::new();
    let dir = env.root.join("theirs");
    fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(OTHER_UID), None).unwrap();
    let mut cmd = env.cmd(&["reduce", "--", "cargo", "test"]);
    cmd.env("TJ_DATA_DIR", &dir);
    let out = env.run_cmd(cmd, b"some output\n");
    let err = stderr(&out);
    assert!(err.contains(&format!("belongs to uid {OTHER_UID}")), "{err}");
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn a_re_stored_old_original_survives_the_next_sweep() {
    let env = TestEnv::new();
    let spill = env.data().join("spill");
    let marker = env.data().join(".last-sweep");
    // Through `tj reduce` (Store::persist) and `tj run` (Store::adopt).
    let reduce = |input: &str| {
        let out = env.run(&["reduce", "--", "cargo", "test"], input.as_bytes());
        assert!(out.status.success(), "{}", stderr(&out));
    };
    let run = |body: &str| {
        let cmd = env.cmd(&["run", "--agent", "--no-pty", "--", "sh", "-c", body]);
        let out = run_within(cmd, b"", Duration::from_secs(10));
        assert!(out.status.success(), "{}", stderr(&out));
    };
    reduce("the same output\n");
    run("echo the same run output");
    let ids: Vec<PathBuf> = fs::read_dir(&spill)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    assert_eq!(ids.len(), 2);
    for log in &ids {
        age(log, 8 * DAY);
    }
    // The same outputs again, a rendition names them: their clock restarts.
    reduce("the same output\n");
    run("echo the same run output");
    // A later run, with a sweep due, of something else.
    age(&marker, DAY);
    reduce("something else\n");
    assert!(mtime(&marker).elapsed().unwrap() < Duration::from_secs(3600), "a sweep ran");
    for log in &ids {
        assert!(log.exists(), "{} was re-stored and must survive", log.display());
    }
}
