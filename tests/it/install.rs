//! `install.sh` in a fresh temporary HOME: it installs into the default prefix, a re-run is
//! a no-op, `--write-rc` is idempotent, `--uninstall` restores each rc byte for byte, and its
//! errors (unwritable prefix, no cargo, a failed build, an unknown option) say what is wrong.
//!
//! The script builds from its own directory, so each test lays out a repository copy:
//! `<tmp>/repo/install.sh` and, as the "built" binary, `<tmp>/repo/target/release/tj` = the
//! test binary; `--no-build` installs that without running cargo.

use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::util::*;

const BEGIN: &str = "# >>> tj >>>";
const END: &str = "# <<< tj <<<";

/// A temporary HOME next to a copy of the repository holding `install.sh` and a "built" tj.
struct Installer {
    env: TestEnv,
    repo: PathBuf,
}

impl Installer {
    fn new() -> Installer {
        let env = TestEnv::new();
        let repo = env.root.join("repo");
        fs::create_dir_all(repo.join("target/release")).unwrap();
        fs::copy(manifest_dir().join("install.sh"), repo.join("install.sh")).unwrap();
        env.write("repo/Cargo.toml", "[package]\nname = \"tj\"\n");
        fs::copy(crate::util::tj_bin(), repo.join("target/release/tj")).unwrap();
        Installer { env, repo }
    }

    fn home(&self) -> PathBuf {
        self.env.root.join("home")
    }

    /// The default prefix, `~/.local/bin`.
    fn prefix(&self) -> PathBuf {
        self.home().join(".local/bin")
    }

    fn built(&self) -> PathBuf {
        self.repo.join("target/release/tj")
    }

    /// `sh install.sh args…` with only HOME and PATH set; PATH is the test's own, which holds
    /// cargo's directory.
    fn sh(&self, args: &[&str]) -> Command {
        self.sh_with_path(args, std::env::var_os("PATH").unwrap_or_default())
    }

    fn sh_with_path(&self, args: &[&str], path: OsString) -> Command {
        let mut cmd = Command::new("/bin/sh");
        cmd.env_clear()
            .env("HOME", self.home())
            .env("PATH", path)
            .current_dir(self.env.work())
            .arg(self.repo.join("install.sh"))
            .args(args);
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.env.run_cmd(self.sh(args), b"")
    }

    /// Runs `install.sh args…` and fails the test unless it succeeds.
    fn ok(&self, args: &[&str]) -> Output {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "install.sh {args:?} failed:\n{}{}",
            stdout(&out),
            stderr(&out)
        );
        out
    }
}

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn write_bytes(path: &Path, bytes: &[u8]) {
    fs::File::create(path).unwrap().write_all(bytes).unwrap();
}

fn blocks(text: &[u8]) -> usize {
    String::from_utf8_lossy(text).lines().filter(|line| *line == BEGIN).count()
}

/// `PATH` with each directory that holds `name` replaced by a directory of symlinks to
/// everything else in it, so the script still finds `cp`, `awk` and the rest.
fn path_without(env: &TestEnv, name: &str) -> OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path)
        .enumerate()
        .map(|(i, dir)| {
            if !dir.join(name).exists() {
                return dir;
            }
            let shadow = env.root.join(format!("path-{i}"));
            fs::create_dir_all(&shadow).unwrap();
            for entry in fs::read_dir(&dir).unwrap() {
                let entry = entry.unwrap();
                if entry.file_name() != name {
                    std::os::unix::fs::symlink(entry.path(), shadow.join(entry.file_name()))
                        .unwrap();
                }
            }
            shadow
        })
        .collect();
    std::env::join_paths(dirs).unwrap()
}

#[test]
fn installs_into_the_default_prefix_and_the_binary_runs() {
    let inst = Installer::new();
    let out = inst.ok(&["--no-build"]);

    let dest = inst.prefix().join("tj");
    assert_eq!(fs::read(&dest).unwrap(), fs::read(inst.built()).unwrap());
    assert!(is_private(&dest, 0o755), "mode of {}", dest.display());
    let version = Command::new(&dest).arg("--version").output().unwrap();
    assert!(version.status.success());
    assert!(stdout(&version).starts_with("tj "), "{}", stdout(&version));
    // The script ran it too, and prints the lines for the rc and the PATH warning.
    let text = stdout(&out);
    assert!(text.contains(stdout(&version).trim()), "{text}");
    assert!(text.contains(r#"eval "$(tj init bash)""#), "{text}");
    assert!(text.contains("BASH_ENV"), "{text}");
    assert!(text.contains(&format!("{BEGIN}\n")) && text.contains(END), "{text}");
    assert!(stderr(&out).contains("is not on your PATH"), "{}", stderr(&out));
    // Without --write-rc no rc file is touched.
    assert!(!inst.home().join(".bashrc").exists());
    assert!(!inst.home().join(".zshrc").exists());
    // No temporary file is left in the prefix.
    assert_eq!(prefix_names(&inst), ["tj"]);
}

#[test]
fn rerun_is_a_no_op() {
    let inst = Installer::new();
    inst.ok(&["--no-build"]);
    let dest = inst.prefix().join("tj");
    let before = fs::metadata(&dest).unwrap();

    let out = inst.ok(&["--no-build"]);
    let text = stdout(&out);
    let expected = format!("tj is up to date in {}", inst.prefix().display());
    assert!(text.contains(&expected), "{text}");
    let after = fs::metadata(&dest).unwrap();
    assert_eq!(after.ino(), before.ino(), "the binary was replaced");
    assert_eq!(after.modified().unwrap(), before.modified().unwrap());
    assert_eq!(fs::read(&dest).unwrap(), fs::read(inst.built()).unwrap());
}

#[test]
fn a_changed_binary_is_replaced() {
    let inst = Installer::new();
    let dest = inst.prefix().join("tj");
    fs::create_dir_all(inst.prefix()).unwrap();
    write_bytes(&dest, b"#!/bin/sh\necho old\n");
    let out = inst.ok(&["--no-build"]);
    assert!(stdout(&out).contains("Installed tj to"), "{}", stdout(&out));
    assert_eq!(fs::read(&dest).unwrap(), fs::read(inst.built()).unwrap());
    assert!(is_private(&dest, 0o755));
}

/// The binary is copied by `dd` in large writes (for its page cache, see `copy_binary`), and
/// by `cp` where there is no `dd`: the same bytes either way.
#[test]
fn without_dd_the_binary_is_copied_all_the_same() {
    let inst = Installer::new();
    let path = path_without(&inst.env, "dd");
    let out = inst.env.run_cmd(inst.sh_with_path(&["--no-build"], path), b"");
    assert!(out.status.success(), "{}", stderr(&out));
    let dest = inst.prefix().join("tj");
    assert_eq!(fs::read(&dest).unwrap(), fs::read(inst.built()).unwrap());
    assert!(is_private(&dest, 0o755), "mode of {}", dest.display());
}

/// The names in the install prefix.
fn prefix_names(inst: &Installer) -> Vec<std::ffi::OsString> {
    fs::read_dir(inst.prefix()).unwrap().map(|e| e.unwrap().file_name()).collect()
}

/// A `dd` on PATH that writes the first half of its input, then runs `then` (a shell line).
fn half_dd(inst: &Installer, then: &str) -> OsString {
    let body = format!(
        "#!/bin/sh\nfor a; do case $a in if=*) src=${{a#if=}};; of=*) dst=${{a#of=}};; esac; done\n\
         head -c $(( $(wc -c < \"$src\") / 2 )) \"$src\" > \"$dst\"\n{then}\n"
    );
    let fake = inst.env.write("fake-bin/dd", &body);
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(
        std::iter::once(fake.parent().unwrap().to_path_buf()).chain(std::env::split_paths(&path)),
    )
    .unwrap()
}

/// A copy that came out short although its writer said it succeeded replaces nothing: the
/// old binary stays, no temporary file is left, and the error says what happened.
#[test]
fn a_short_copy_replaces_nothing() {
    let inst = Installer::new();
    let dest = inst.prefix().join("tj");
    fs::create_dir_all(inst.prefix()).unwrap();
    write_bytes(&dest, b"#!/bin/sh\necho old\n");
    let path = half_dd(&inst, "exit 0");
    let out = inst.env.run_cmd(inst.sh_with_path(&["--no-build"], path), b"");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("differs from it"), "{}", stderr(&out));
    assert_eq!(fs::read(&dest).unwrap(), b"#!/bin/sh\necho old\n");
    assert_eq!(prefix_names(&inst), ["tj"]);
}

/// A hangup or a quit (Ctrl-\\) during the copy ends the installer as the signal would, but
/// without leaving the half-written temporary file in the prefix: the shell runs its exit
/// trap only for the signals it traps.
#[test]
fn a_signal_during_the_copy_leaves_no_temporary_file() {
    use std::os::unix::process::CommandExt;
    for (sig, status) in [(libc::SIGHUP, 129), (libc::SIGQUIT, 131), (libc::SIGTERM, 143)] {
        let inst = Installer::new();
        let path = half_dd(&inst, "exec sleep 30");
        let mut cmd = inst.sh_with_path(&["--no-build"], path);
        cmd.process_group(0).stdout(Stdio::null()).stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        // Until the temporary file holds the half that the fake dd writes before it sleeps.
        let half = fs::metadata(inst.built()).unwrap().len() / 2;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let written = || {
            fs::read_dir(inst.prefix()).ok().into_iter().flatten().flatten().any(|entry| {
                entry.file_name().to_string_lossy().starts_with(".tj.")
                    && entry.metadata().is_ok_and(|m| m.len() == half)
            })
        };
        while !written() {
            assert!(std::time::Instant::now() < deadline, "signal {sig}: no temporary file");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let pgid = i32::try_from(child.id()).unwrap();
        // SAFETY: kill(2) on the process group this test started.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(-pgid, sig);
        }
        let exit = child.wait().unwrap();
        assert_eq!(exit.code(), Some(status), "signal {sig}");
        let names = prefix_names(&inst);
        assert!(names.is_empty(), "signal {sig}: left {names:?}");
    }
}

#[test]
fn write_rc_twice_leaves_one_block_and_the_same_bytes() {
    let inst = Installer::new();
    let bashrc = inst.home().join(".bashrc");
    let zshrc = inst.home().join(".zshrc");
    let original = b"alias ll='ls -l'\nexport EDITOR=vi".as_slice();
    write_bytes(&bashrc, original);
    let args = ["--no-build", "--write-rc", "--shell", "bash", "--shell", "zsh"];

    inst.ok(&args);
    let bash_once = fs::read(&bashrc).unwrap();
    let zsh_once = fs::read(&zshrc).unwrap();
    assert!(bash_once.starts_with(original));
    assert_eq!(blocks(&bash_once), 1);
    assert_eq!(blocks(&zsh_once), 1);
    let bash_text = String::from_utf8(bash_once.clone()).unwrap();
    assert!(bash_text.contains(r#"eval "$(tj init bash)""#), "{bash_text}");
    assert!(bash_text.ends_with(&format!("{END}\n")), "{bash_text}");
    assert!(String::from_utf8_lossy(&zsh_once).contains(r#"eval "$(tj init zsh)""#));
    // The backup is the rc as it was; zsh had none to back up.
    let backup = inst.home().join(".bashrc.tj-backup");
    assert_eq!(fs::read(&backup).unwrap(), original);
    assert!(!inst.home().join(".zshrc.tj-backup").exists());

    // Once the rc has a block, a second run leaves every byte (and the backup) alone.
    write_bytes(&backup, b"the backup is made once");
    let out = inst.ok(&args);
    assert!(stdout(&out).contains("already loads tj"), "{}", stdout(&out));
    assert_eq!(fs::read(&bashrc).unwrap(), bash_once);
    assert_eq!(fs::read(&zshrc).unwrap(), zsh_once);
    assert_eq!(fs::read(&backup).unwrap(), b"the backup is made once");
}

#[test]
fn uninstall_restores_the_rc_byte_for_byte_and_removes_the_binary() {
    let cases: &[(&str, &[u8])] = &[
        ("empty", b""),
        ("newline at the end", b"export A=1\n"),
        ("no newline at the end", b"export A=1\n# last line"),
        ("blank lines at the end", b"export A=1\n\n\n"),
        ("only a newline", b"\n"),
        ("odd bytes", b"\r\n%s $HOME \\ '\"\t\xff\xfe no newline"),
        ("a marker-like line", b"# >>> tj >>> not ours\n"),
    ];
    for (name, original) in cases {
        let inst = Installer::new();
        let bashrc = inst.home().join(".bashrc");
        let zshrc = inst.home().join(".zshrc");
        write_bytes(&bashrc, original);
        write_bytes(&zshrc, original);
        fs::set_permissions(&bashrc, fs::Permissions::from_mode(0o600)).unwrap();

        inst.ok(&["--no-build", "--write-rc", "--shell", "bash", "--shell", "zsh"]);
        assert_ne!(fs::read(&bashrc).unwrap(), *original, "{name}: no block written");
        let out = inst.ok(&["--uninstall"]);

        assert_eq!(fs::read(&bashrc).unwrap(), *original, "{name}: ~/.bashrc");
        assert_eq!(fs::read(&zshrc).unwrap(), *original, "{name}: ~/.zshrc");
        assert!(is_private(&bashrc, 0o600), "{name}: the rc kept its mode");
        assert!(!inst.prefix().join("tj").exists(), "{name}: the binary is still there");
        // The backups matched the restored files, so they went too.
        assert!(!inst.home().join(".bashrc.tj-backup").exists(), "{name}: {}", stdout(&out));
        assert!(!inst.home().join(".zshrc.tj-backup").exists(), "{name}");
    }
}

#[test]
fn uninstall_removes_an_rc_that_write_rc_created() {
    let inst = Installer::new();
    inst.ok(&["--no-build", "--write-rc", "--shell", "zsh"]);
    let zshrc = inst.home().join(".zshrc");
    assert_eq!(blocks(&fs::read(&zshrc).unwrap()), 1);
    inst.ok(&["--uninstall"]);
    assert!(!zshrc.exists());
    // Uninstalling again finds nothing to do and still succeeds.
    let out = inst.ok(&["--uninstall"]);
    assert!(stdout(&out).contains("There is no tj in"), "{}", stdout(&out));
}

#[test]
fn uninstall_keeps_what_the_user_added_after_the_block() {
    let inst = Installer::new();
    let bashrc = inst.home().join(".bashrc");
    write_bytes(&bashrc, b"before");
    inst.ok(&["--no-build", "--write-rc", "--shell", "bash"]);
    let mut text = fs::read(&bashrc).unwrap();
    text.extend_from_slice(b"after\n");
    write_bytes(&bashrc, &text);

    let out = inst.ok(&["--uninstall", "--shell", "bash"]);
    assert_eq!(fs::read(&bashrc).unwrap(), b"before\nafter\n");
    // The rc no longer matches the backup, so the backup stays and the script says so.
    let backup = inst.home().join(".bashrc.tj-backup");
    assert_eq!(fs::read(&backup).unwrap(), b"before");
    assert!(stdout(&out).contains("kept"), "{}", stdout(&out));
}

#[test]
fn write_rc_writes_through_a_symlinked_rc() {
    let inst = Installer::new();
    let target = inst.home().join("dotfiles/bashrc");
    fs::create_dir_all(target.parent().unwrap()).unwrap();
    write_bytes(&target, b"# managed by a dotfiles tool\n");
    let bashrc = inst.home().join(".bashrc");
    std::os::unix::fs::symlink("dotfiles/bashrc", &bashrc).unwrap();

    inst.ok(&["--no-build", "--write-rc", "--shell", "bash"]);
    assert!(fs::symlink_metadata(&bashrc).unwrap().file_type().is_symlink());
    assert_eq!(blocks(&fs::read(&target).unwrap()), 1);

    inst.ok(&["--uninstall", "--shell", "bash"]);
    assert!(fs::symlink_metadata(&bashrc).unwrap().file_type().is_symlink());
    assert_eq!(fs::read(&target).unwrap(), b"# managed by a dotfiles tool\n");
}

#[test]
fn unwritable_prefix_fails_and_names_it() {
    let inst = Installer::new();
    let file = inst.env.write("a-file", "not a directory\n");
    let prefix = file.join("bin");
    let prefix = prefix.to_str().unwrap();
    let out = inst.run(&["--no-build", "--prefix", prefix]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains(prefix), "{}", stderr(&out));
    assert!(stderr(&out).contains("prefix"), "{}", stderr(&out));
}

#[test]
fn missing_cargo_fails_and_points_to_rustup() {
    let inst = Installer::new();
    let path = path_without(&inst.env, "cargo");
    let out = inst.env.run_cmd(inst.sh_with_path(&[], path), b"");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("cargo is not on PATH"), "{}", stderr(&out));
    assert!(stderr(&out).contains("rustup"), "{}", stderr(&out));
    assert!(!inst.prefix().join("tj").exists());
}

#[test]
fn failed_build_fails() {
    let inst = Installer::new();
    // A package without any target: cargo rejects it at once, without the network.
    let mut cmd = inst.sh(&[]);
    // With HOME moved, rustup's proxies need to be told where the toolchains are.
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
        cmd.env("RUSTUP_HOME", home.join(".rustup")).env("CARGO_HOME", home.join(".cargo"));
    }
    for name in ["RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "CARGO_HOME"] {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    let out = inst.env.run_cmd(cmd, b"");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("the build failed"), "{}", stderr(&out));
    assert!(!inst.prefix().join("tj").exists());
}

#[test]
fn unknown_option_fails_with_usage() {
    let inst = Installer::new();
    let out = inst.run(&["--frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown option: --frobnicate"), "{}", stderr(&out));
    assert!(stderr(&out).contains("Usage:"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());

    let help = inst.ok(&["--help"]);
    assert!(stdout(&help).contains("--uninstall"), "{}", stdout(&help));
}

#[test]
fn shellcheck_passes() {
    let script = manifest_dir().join("install.sh");
    let out = match Command::new("shellcheck").args(["-s", "sh"]).arg(&script).output() {
        Ok(out) => out,
        Err(err) => {
            eprintln!("skipped: shellcheck is not available ({err})");
            return;
        }
    };
    assert!(out.status.success(), "shellcheck:\n{}", stdout(&out));
}
