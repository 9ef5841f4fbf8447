//! Reading the user and project rule layers from disk.
//!
//! This is the I/O end of `rules`: it finds the directories, reads the files (sorted, so
//! the result never depends on directory order) and hands the text to
//! [`RuleSet::from_sources`]. Project rules come from untrusted repositories: they are data,
//! size-capped, and nothing in them is ever executed.
//!
//! What a hostile repository can put under `.tokenjuice/rules` costs nothing:
//!
//! - Only regular files are read. A FIFO, device or socket is skipped with one warning
//!   without being opened (a FIFO would block, `/dev/zero` would never end). The check is
//!   made twice: `lstat`/`stat` before opening, and `fstat` on the opened descriptor, which
//!   is opened `O_NONBLOCK|O_NOFOLLOW|O_NOCTTY` so that nothing swapped in between can block,
//!   redirect or become a controlling terminal.
//! - Reads are capped while reading (`take(MAX_RULE_BYTES + 1)`), never by the size a
//!   `stat` reported, and a layer reads at most [`MAX_LAYER_BYTES`] in all.
//! - A project symlink is followed only if it resolves inside the repository (the
//!   directory holding `.git`, else the one holding `.tokenjuice`); a rules directory that
//!   resolves outside it (a symlink to `/`) is not walked. In the user layer, which the user
//!   controls, a symlink to a regular file anywhere is fine, and symlinked directories are
//!   followed only inside the layer's own directory.
//! - A directory already walked (a symlink loop) is not walked again; the walk stops after
//!   [`MAX_WALK_ENTRIES`] entries and [`MAX_DEPTH`] levels. Each of these is said once.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::{Layer, LoadError, RuleSet, builtin_files};
use crate::env::Env;
use crate::fsx::{self, ReadError, read_regular};

/// Project rules live here, relative to a directory at or above the working directory.
pub const PROJECT_RULES_DIR: &str = ".tokenjuice/rules";
/// A rule file larger than this is skipped: no real rule is near it (the largest builtin
/// is under 8 KiB).
pub const MAX_RULE_BYTES: u64 = 1 << 20;
/// At most this many files are read from one layer.
pub const MAX_RULE_FILES: usize = 2000;
/// At most this many bytes of rule text are read from one layer: [`MAX_RULE_FILES`] files
/// of [`MAX_RULE_BYTES`] each would be 2 GiB.
pub const MAX_LAYER_BYTES: u64 = 16 << 20;
/// At most this many directory entries are looked at in one layer.
pub const MAX_WALK_ENTRIES: usize = 20_000;
/// Directories deeper than this below a layer's directory are not walked.
pub const MAX_DEPTH: usize = 4;

/// The directories the user and project layers come from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dirs {
    /// `<config dir>/rules`.
    pub user: Option<PathBuf>,
    /// The nearest `.tokenjuice/rules` at or above the working directory, up to the
    /// repository root.
    pub project: Option<PathBuf>,
    /// What project rules may read: the repository root (the directory holding `.git`),
    /// else the directory holding `.tokenjuice`. `None`: the directory holding
    /// `.tokenjuice`, worked out from `project`.
    pub project_root: Option<PathBuf>,
}

impl Dirs {
    /// Finds the layer directories for this environment.
    pub fn find(env: &Env) -> Dirs {
        let project = env.cwd.as_deref().and_then(find_project);
        Dirs {
            user: env.config_dir().map(|d| d.join("rules")),
            project_root: project.as_ref().map(|(_, root)| root.clone()),
            project: project.map(|(dir, _)| dir),
        }
    }
}

/// Walks up from `start` to the first directory holding `.tokenjuice/rules`, stopping at
/// the repository root (the first directory with a `.git`), so that a rule directory above
/// the repository, which the repository does not control, is never picked up by accident.
pub fn find_project_dir(start: &Path) -> Option<PathBuf> {
    find_project(start).map(|(dir, _)| dir)
}

/// [`find_project_dir`] and the repository root that bounds it.
fn find_project(start: &Path) -> Option<(PathBuf, PathBuf)> {
    let mut ancestors = start.ancestors();
    for dir in ancestors.by_ref() {
        let candidate = dir.join(PROJECT_RULES_DIR);
        if candidate.is_dir() {
            // The repository root is here or above: the first directory with a `.git`.
            let root =
                dir.ancestors().find(|d| d.join(".git").exists()).unwrap_or(dir).to_path_buf();
            return Some((candidate, root));
        }
        if dir.join(".git").exists() {
            return None;
        }
    }
    None
}

/// Loads builtin, user and project rules.
pub fn load(env: &Env) -> RuleSet {
    load_from(&Dirs::find(env))
}

/// [`load`], parsing only the builtin rules that could be selected for `argv`, the
/// command's identity (see [`RuleSet::builtin_for`]); the user and project layers are read
/// whole.
pub fn load_for(env: &Env, argv: &[String]) -> RuleSet {
    load_layers(&Dirs::find(env), Some(argv), None)
}

/// [`load`] with every rule file under `proposed` layered on top, as a project layer is (a
/// rule whose id is already loaded is replaced, a new id is added): `tj rules replay --rules
/// DIR` tries an edited rule before it ships. The directory is the user's own, so it is
/// walked as the user layer is (file symlinks may point anywhere); its problems are in
/// `problems` with paths under `proposed`.
pub fn load_proposed(env: &Env, proposed: &Path) -> RuleSet {
    load_layers(&Dirs::find(env), None, Some(proposed))
}

/// Loads builtin rules and the layers in `dirs`.
pub fn load_from(dirs: &Dirs) -> RuleSet {
    load_layers(dirs, None, None)
}

fn load_layers(dirs: &Dirs, argv: Option<&[String]>, proposed: Option<&Path>) -> RuleSet {
    let mut problems = Vec::new();
    let mut texts: Vec<(Layer, PathBuf, String)> = Vec::new();
    // (layer, directory, whether its files must resolve inside the repository)
    let layers = [
        (Layer::User, dirs.user.as_deref(), false),
        (Layer::Project, dirs.project.as_deref(), true),
        (Layer::Project, proposed, false),
    ];
    for (layer, dir, in_repository) in layers {
        let Some(dir) = dir else { continue };
        let files = if in_repository {
            let root = dirs.project_root.clone().or_else(|| holder_of_tokenjuice(dir));
            walk_layer(dir, root.as_deref(), &mut problems)
        } else {
            walk_layer(dir, None, &mut problems)
        };
        let mut total = 0;
        for file in files {
            if total >= MAX_LAYER_BYTES {
                problems.push(LoadError::Invalid {
                    path: file.shown,
                    reason: format!("the layer's {MAX_LAYER_BYTES}-byte limit is reached"),
                });
                break;
            }
            match read_rule(&file) {
                Ok(text) => {
                    total += text.len() as u64;
                    texts.push((layer, file.shown, text));
                }
                Err(err) => problems.push(err),
            }
        }
    }
    let builtins = builtin_files()
        .iter()
        .filter(|b| argv.is_none_or(|argv| b.could_match(argv)))
        .map(|b| (Layer::Builtin, PathBuf::from(b.path), b.json));
    let layered = texts.iter().map(|(l, p, t)| (*l, p.clone(), t.as_str()));
    let mut set = RuleSet::from_sources(builtins.chain(layered), false);
    problems.append(&mut set.problems);
    set.problems = problems;
    set
}

/// `<dir>/../..`: the directory holding `.tokenjuice` for `<it>/.tokenjuice/rules`.
fn holder_of_tokenjuice(dir: &Path) -> Option<PathBuf> {
    dir.parent().and_then(Path::parent).map(Path::to_path_buf)
}

const REPOSITORY: &str = "the repository";
const USER_DIR: &str = "the user rules directory";

/// A rule file to read: the path as found under the layer's directory (for messages and
/// `tj rules list`) and the path to open (the symlink's resolved target, or the same path).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct RuleFile {
    shown: PathBuf,
    open: PathBuf,
}

/// Lists the rule files of one layer, sorted, at most [`MAX_RULE_FILES`].
///
/// `root`: for the project layer, the repository root every directory and file must
/// resolve inside; `None` for the user layer, whose directories must resolve inside its
/// own directory and whose file symlinks may point anywhere.
fn walk_layer(dir: &Path, root: Option<&Path>, problems: &mut Vec<LoadError>) -> Vec<RuleFile> {
    let canonical = match fs::canonicalize(dir) {
        Ok(canonical) => canonical,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(err) => {
            problems.push(LoadError::Read { path: dir.to_path_buf(), err });
            return Vec::new();
        }
    };
    let files_bound = match root.map(fs::canonicalize) {
        Some(Ok(root)) => Some(root),
        Some(Err(err)) => {
            problems.push(LoadError::Read { path: dir.to_path_buf(), err });
            return Vec::new();
        }
        None => None,
    };
    if files_bound.as_ref().is_some_and(|root| !canonical.starts_with(root)) {
        problems.push(LoadError::Escapes { path: dir.to_path_buf(), outside: REPOSITORY });
        return Vec::new();
    }
    match fs::metadata(&canonical) {
        Ok(meta) if meta.is_dir() => {}
        Ok(meta) => {
            problems.push(LoadError::NotRegular {
                path: dir.to_path_buf(),
                kind: fsx::kind_phrase(&meta.file_type()),
            });
            return Vec::new();
        }
        Err(err) => {
            problems.push(LoadError::Read { path: dir.to_path_buf(), err });
            return Vec::new();
        }
    }
    let dirs_bound = files_bound.clone().unwrap_or_else(|| canonical.clone());
    let mut walk = Walk {
        dirs_bound,
        files_bound,
        visited: HashSet::new(),
        opened: HashSet::new(),
        entries: 0,
        files: Vec::new(),
        problems,
    };
    if let Some(id) = identity(&canonical) {
        walk.visited.insert(id);
    }
    walk.dir(dir, 0);
    let mut files = walk.files;
    files.sort();
    if files.len() > MAX_RULE_FILES {
        walk.problems.push(LoadError::NotWalked {
            path: dir.to_path_buf(),
            reason: format!("more than {MAX_RULE_FILES} rule files; the rest are skipped"),
        });
        files.truncate(MAX_RULE_FILES);
    }
    files
}

struct Walk<'p> {
    /// Every directory walked resolves inside this.
    dirs_bound: PathBuf,
    /// Every file read resolves inside this (project layer only).
    files_bound: Option<PathBuf>,
    /// (device, inode) of the directories walked: a loop ends at the second visit.
    visited: HashSet<(u64, u64)>,
    /// Resolved paths of the files listed: one file reached twice is read once.
    opened: HashSet<PathBuf>,
    entries: usize,
    files: Vec<RuleFile>,
    problems: &'p mut Vec<LoadError>,
}

impl Walk<'_> {
    fn dir(&mut self, dir: &Path, depth: usize) {
        let mut names: Vec<std::ffi::OsString> = match fs::read_dir(dir) {
            Ok(entries) => entries.flatten().map(|e| e.file_name()).collect(),
            Err(err) => {
                self.problems.push(LoadError::Read { path: dir.to_path_buf(), err });
                return;
            }
        };
        // Sorted, so that the entry limit cuts the same entries on every run.
        names.sort();
        for name in names {
            self.entries += 1;
            if self.entries > MAX_WALK_ENTRIES {
                if self.entries == MAX_WALK_ENTRIES + 1 {
                    self.problems.push(LoadError::NotWalked {
                        path: dir.to_path_buf(),
                        reason: format!("more than {MAX_WALK_ENTRIES} entries"),
                    });
                }
                return;
            }
            self.entry(&dir.join(name), depth);
        }
    }

    fn entry(&mut self, path: &Path, depth: usize) {
        // lstat: the entry itself, never what a symlink points to.
        let Ok(meta) = fs::symlink_metadata(path) else { return };
        let is_json = path.extension().is_some_and(|e| e == "json");
        if meta.is_dir() {
            if depth < MAX_DEPTH && identity(path).is_some_and(|id| self.visited.insert(id)) {
                self.dir(path, depth + 1);
            }
        } else if meta.file_type().is_symlink() {
            self.symlink(path, is_json, depth);
        } else if !is_json {
        } else if meta.is_file() {
            self.push(path.to_path_buf(), path.to_path_buf());
        } else {
            self.problems.push(LoadError::NotRegular {
                path: path.to_path_buf(),
                kind: fsx::kind_phrase(&meta.file_type()),
            });
        }
    }

    fn symlink(&mut self, path: &Path, is_json: bool, depth: usize) {
        let (target, meta) = match fs::canonicalize(path).and_then(|t| Ok((fs::metadata(&t)?, t))) {
            Ok((meta, target)) => (target, meta),
            // Dangling, a loop of links, unreadable: only worth a word if it would be read.
            Err(err) => {
                if is_json {
                    self.problems.push(LoadError::Read { path: path.to_path_buf(), err });
                }
                return;
            }
        };
        if meta.is_dir() {
            if !target.starts_with(&self.dirs_bound) {
                let outside = if self.files_bound.is_some() { REPOSITORY } else { USER_DIR };
                self.problems.push(LoadError::Escapes { path: path.to_path_buf(), outside });
            } else if identity(&target).is_some_and(|id| !self.visited.insert(id)) {
                self.problems.push(LoadError::NotWalked {
                    path: path.to_path_buf(),
                    reason: "it leads back to a directory already walked (a loop)".to_owned(),
                });
            } else if depth < MAX_DEPTH {
                self.dir(path, depth + 1);
            }
        } else if !is_json {
        } else if self.files_bound.as_ref().is_some_and(|root| !target.starts_with(root)) {
            self.problems
                .push(LoadError::Escapes { path: path.to_path_buf(), outside: REPOSITORY });
        } else if !meta.is_file() {
            self.problems.push(LoadError::NotRegular {
                path: path.to_path_buf(),
                kind: fsx::kind_phrase(&meta.file_type()),
            });
        } else {
            self.push(path.to_path_buf(), target);
        }
    }

    fn push(&mut self, shown: PathBuf, open: PathBuf) {
        if self.opened.insert(open.clone()) {
            self.files.push(RuleFile { shown, open });
        }
    }
}

/// (device, inode) of the directory at `path`, following symlinks.
fn identity(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Reads one rule file: [`read_regular`] without following a symlink (the walk resolved
/// it already), then UTF-8.
fn read_rule(file: &RuleFile) -> Result<String, LoadError> {
    let path = || file.shown.clone();
    let bytes = read_regular(&file.open, false, MAX_RULE_BYTES).map_err(|err| match err {
        ReadError::Io(err) => LoadError::Read { path: path(), err },
        ReadError::NotRegular(kind) => LoadError::NotRegular { path: path(), kind },
        ReadError::TooLarge => LoadError::Invalid {
            path: path(),
            reason: format!("larger than the {MAX_RULE_BYTES}-byte limit"),
        },
    })?;
    String::from_utf8(bytes)
        .map_err(|_| LoadError::Invalid { path: path(), reason: "not UTF-8".to_owned() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    fn tempdir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tj-load-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Loads `dirs` on another thread: a hang fails the test instead of stalling it.
    fn load_within(dirs: Dirs, secs: u64) -> RuleSet {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(load_from(&dirs));
        });
        rx.recv_timeout(std::time::Duration::from_secs(secs))
            .unwrap_or_else(|_| panic!("loading rules took more than {secs} s"))
    }

    fn rule(id: &str) -> String {
        format!(r#"{{"id":"{id}","family":"t","match":{{"argv0":["t"]}}}}"#)
    }

    #[allow(clippy::disallowed_methods)]
    fn put(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn layer_ids(set: &RuleSet, layer: Layer) -> Vec<String> {
        set.rules().iter().filter(|r| r.layer == layer).map(|r| r.rule.id.clone()).collect()
    }

    fn messages(set: &RuleSet) -> Vec<String> {
        set.problems.iter().map(ToString::to_string).collect()
    }

    /// A repository `root/repo` with `.git` and an empty `.tokenjuice/rules`.
    fn repo(root: &Path) -> (PathBuf, Dirs) {
        let repo = root.join("repo");
        fs::create_dir_all(repo.join(".git")).unwrap();
        let rules = repo.join(PROJECT_RULES_DIR);
        fs::create_dir_all(&rules).unwrap();
        let dirs = Dirs { project: Some(rules.clone()), project_root: Some(repo), user: None };
        (rules, dirs)
    }

    #[cfg(unix)]
    #[test]
    fn fifo_device_and_socket_rule_files_are_skipped_unopened_with_one_warning_each() {
        use std::os::unix::fs::symlink;
        let root = tempdir("special");
        let (rules, mut dirs) = repo(&root);
        nix::unistd::mkfifo(&rules.join("fifo.json"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let _socket = std::os::unix::net::UnixListener::bind(rules.join("socket.json")).unwrap();
        put(&rules.join("ok.json"), &rule("proj/ok"));
        // The user layer may link anywhere, but only to regular files.
        let user = root.join("config/rules");
        fs::create_dir_all(&user).unwrap();
        symlink("/dev/zero", user.join("zero.json")).unwrap();
        nix::unistd::mkfifo(&user.join("fifo.json"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        dirs.user = Some(user);
        let set = load_within(dirs, 20);
        assert_eq!(layer_ids(&set, Layer::Project), ["proj/ok"]);
        let msgs = messages(&set);
        assert_eq!(msgs.len(), 4, "{msgs:#?}");
        for (name, kind) in [
            ("fifo.json", "a FIFO"),
            ("socket.json", "a socket"),
            ("zero.json", "a character device"),
        ] {
            assert!(
                msgs.iter().any(|m| m.contains(name)
                    && m.contains("not a regular file")
                    && m.contains(kind)),
                "{name}: {msgs:#?}"
            );
        }
        fs::remove_dir_all(&root).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn project_symlinks_are_followed_only_inside_the_repository() {
        use std::os::unix::fs::symlink;
        let root = tempdir("links");
        let (rules, dirs) = repo(&root);
        let repo = root.join("repo");
        put(&repo.join("shared/inside.json"), &rule("proj/inside"));
        put(&repo.join("shared/more/deep.json"), &rule("proj/deep"));
        put(&root.join("outside/out.json"), &rule("outside/file"));
        put(&root.join("outside/d/r.json"), &rule("outside/dir"));
        symlink(repo.join("shared/inside.json"), rules.join("inside.json")).unwrap();
        symlink("../../shared/more", rules.join("more")).unwrap();
        symlink(root.join("outside/out.json"), rules.join("out.json")).unwrap();
        symlink(root.join("outside/d"), rules.join("d")).unwrap();
        symlink("/dev/zero", rules.join("zero.json")).unwrap();
        symlink("/", rules.join("slash")).unwrap();
        symlink("/", rules.join("slash.json")).unwrap();
        symlink("nowhere.json", rules.join("dangling.json")).unwrap();
        let set = load_within(dirs, 20);
        let mut ids = layer_ids(&set, Layer::Project);
        ids.sort();
        assert_eq!(ids, ["proj/deep", "proj/inside"]);
        let msgs = messages(&set);
        for name in ["out.json", "/d`", "zero.json", "slash`", "slash.json"] {
            assert_eq!(
                msgs.iter()
                    .filter(|m| m.contains(name) && m.contains("leads outside the repository"))
                    .count(),
                1,
                "{name}: {msgs:#?}"
            );
        }
        assert!(msgs.iter().any(|m| m.contains("dangling.json") && m.contains("could not read")));
        assert_eq!(msgs.len(), 6, "{msgs:#?}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_rules_directory_leading_outside_the_repository_is_not_walked() {
        use std::os::unix::fs::symlink;
        let root = tempdir("slashdir");
        let repo = root.join("repo");
        fs::create_dir_all(repo.join(".git")).unwrap();
        fs::create_dir_all(repo.join(".tokenjuice")).unwrap();
        symlink("/", repo.join(PROJECT_RULES_DIR)).unwrap();
        let found = find_project(&repo).unwrap();
        assert_eq!(found, (repo.join(PROJECT_RULES_DIR), repo.clone()));
        let dirs = Dirs { project: Some(found.0), project_root: Some(found.1), user: None };
        let set = load_within(dirs, 20);
        assert!(layer_ids(&set, Layer::Project).is_empty());
        let msgs = messages(&set);
        assert_eq!(msgs.len(), 1, "{msgs:#?}");
        assert!(msgs[0].contains(".tokenjuice/rules` leads outside the repository; not followed"));
        fs::remove_dir_all(&root).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_are_walked_once_and_said_once() {
        use std::os::unix::fs::symlink;
        let root = tempdir("loops");
        let (rules, dirs) = repo(&root);
        put(&rules.join("sub/a.json"), &rule("proj/a"));
        symlink("..", rules.join("sub/up")).unwrap();
        symlink("self.json", rules.join("self.json")).unwrap();
        symlink("ping.json", rules.join("pong.json")).unwrap();
        symlink("pong.json", rules.join("ping.json")).unwrap();
        let set = load_within(dirs, 20);
        assert_eq!(layer_ids(&set, Layer::Project), ["proj/a"]);
        let msgs = messages(&set);
        assert_eq!(msgs.iter().filter(|m| m.contains("sub/up") && m.contains("loop")).count(), 1);
        // Link loops are unreadable files: one warning each.
        for name in ["self.json", "ping.json", "pong.json"] {
            assert_eq!(msgs.iter().filter(|m| m.contains(name)).count(), 1, "{msgs:#?}");
        }
        assert_eq!(msgs.len(), 4, "{msgs:#?}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn user_layer_reads_file_symlinks_anywhere_but_walks_directories_only_inside_it() {
        use std::os::unix::fs::symlink;
        let root = tempdir("user");
        put(&root.join("dotfiles/mine.json"), &rule("user/mine"));
        put(&root.join("elsewhere/r.json"), &rule("user/elsewhere"));
        let user = root.join("config/rules");
        put(&user.join("sub/own.json"), &rule("user/own"));
        symlink(root.join("dotfiles/mine.json"), user.join("mine.json")).unwrap();
        symlink(root.join("elsewhere"), user.join("elsewhere")).unwrap();
        symlink("sub", user.join("alias")).unwrap();
        let set = load_within(Dirs { user: Some(user), ..Dirs::default() }, 20);
        let mut ids = layer_ids(&set, Layer::User);
        ids.sort();
        assert_eq!(ids, ["user/mine", "user/own"]);
        let msgs = messages(&set);
        assert_eq!(msgs.len(), 1, "{msgs:#?}");
        assert!(msgs[0].contains("elsewhere` leads outside the user rules directory"), "{msgs:#?}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn reads_are_capped_while_reading_not_by_the_reported_size() {
        // /proc files report a size of 0 and hold more: only a capped read catches them.
        let maps = Path::new("/proc/self/maps");
        assert_eq!(fs::metadata(maps).unwrap().len(), 0);
        assert!(matches!(read_regular(maps, false, 16), Err(ReadError::TooLarge)));
        assert!(read_regular(maps, false, 1 << 20).unwrap().len() > 16);
        assert!(matches!(
            read_regular(Path::new("/dev/zero"), true, 16),
            Err(ReadError::NotRegular("a character device"))
        ));
    }

    #[test]
    fn warnings_never_quote_what_a_rule_file_holds() {
        let root = tempdir("quotes");
        let (rules, dirs) = repo(&root);
        let evil = r"\u001b]0;PWNED\u0007\u001b[2J";
        put(
            &rules.join("type.json"),
            &format!(r#"{{"id":"a/b","family":"{evil}","priority":"{evil}"}}"#),
        );
        put(&rules.join("variant.json"), &format!(r#"{{"id":"a/c","counterSource":"{evil}"}}"#));
        put(
            &rules.join("keys.json"),
            &format!(r#"{{"id":"a/d","{evil}":1,"match":{{"{evil}":2}}}}"#),
        );
        put(&rules.join("syntax.json"), &format!(r#"{{"id":"{evil}" "#));
        put(&rules.join("ctrl\u{1b}[2J.json"), "{");
        let set = load_within(dirs, 20);
        let msgs = messages(&set);
        assert_eq!(msgs.len(), 5, "{msgs:#?}");
        for m in &msgs {
            assert!(!m.contains('\u{1b}') && !m.contains("PWNED") && !m.contains("u001b"), "{m}");
            assert!(m.contains("line 1, column") || m.contains("keys this tj"), "{m}");
        }
        assert!(msgs.iter().any(|m| m.contains("wrong type (expected i64)")), "{msgs:#?}");
        assert!(
            msgs.iter()
                .any(|m| m
                    .contains("2 keys this tj does not know (1 at the top level, 1 in `match`)")),
            "{msgs:#?}"
        );
        assert!(msgs.iter().any(|m| m.contains(r"ctrl\u{1b}[2J.json")), "{msgs:#?}");
        fs::remove_dir_all(&root).unwrap();
    }

    /// Everything under `root` as `lstat` sees it (type, mode, size, a hash of a regular
    /// file's bytes or a symlink's target), never following a link or opening anything
    /// but a regular file.
    #[cfg(unix)]
    fn snapshot(root: &Path) -> std::collections::BTreeMap<PathBuf, (u32, u64, u64)> {
        use std::hash::{DefaultHasher, Hash, Hasher};
        use std::os::unix::fs::MetadataExt;
        let mut out = std::collections::BTreeMap::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(path) = stack.pop() {
            let meta = fs::symlink_metadata(&path).unwrap();
            let mut hasher = DefaultHasher::new();
            if meta.is_file() {
                fs::read(&path).unwrap_or_default().hash(&mut hasher);
            } else if meta.file_type().is_symlink() {
                fs::read_link(&path).unwrap().hash(&mut hasher);
            } else if meta.is_dir() {
                for entry in fs::read_dir(&path).unwrap() {
                    stack.push(entry.unwrap().path());
                }
            }
            out.insert(path, (meta.mode(), meta.size(), hasher.finish()));
        }
        out
    }

    /// Fills `dir` with `count` random entries: directories, rule files good and bad,
    /// symlinks inside, outside, to `/dev/zero`, to `/`, dangling and looping, FIFOs, and
    /// random permission bits.
    #[cfg(unix)]
    fn random_tree(rng: &mut Rng, dir: &Path, outside: &Path, count: usize) {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let mut dirs = vec![dir.to_path_buf()];
        let mut made: Vec<PathBuf> = Vec::new();
        for n in 0..count {
            let parent = dirs[rng.below(dirs.len())].clone();
            let stem = ["a", "rule", "x\u{1b}[2J", "deep", "ZZ", ".hidden"][rng.below(6)];
            let ext = [".json", ".json", ".json", "", ".txt"][rng.below(5)];
            let path = parent.join(format!("{stem}{n}{ext}"));
            let target = |rng: &mut Rng, made: &[PathBuf]| -> PathBuf {
                if made.is_empty() {
                    dir.to_path_buf()
                } else {
                    made[rng.below(made.len())].clone()
                }
            };
            let made_ok = match rng.below(13) {
                0 | 1 => {
                    fs::create_dir(&path).is_ok() && {
                        dirs.push(path.clone());
                        true
                    }
                }
                2 => {
                    put(&path, &rule(&format!("fuzz/{n}")));
                    true
                }
                3 => {
                    let bytes: Vec<u8> =
                        (0..rng.below(300)).map(|_| rng.next_u64() as u8).collect();
                    #[allow(clippy::disallowed_methods)]
                    fs::write(&path, bytes).is_ok()
                }
                4 => {
                    put(&path, r#"{"id": 7, "counterSource": "\u001b]0;x\u0007", "match": []}"#);
                    true
                }
                5 => symlink(target(rng, &made), &path).is_ok(),
                6 => symlink(outside.join("f.json"), &path).is_ok(),
                7 => symlink(outside.join("d"), &path).is_ok(),
                8 => symlink(["/dev/zero", "/", "/dev/null"][rng.below(3)], &path).is_ok(),
                9 => symlink(format!("nowhere{n}.json"), &path).is_ok(),
                10 => symlink(["..", ".", "../..", path.to_str().unwrap()][rng.below(4)], &path)
                    .is_ok(),
                11 => nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).is_ok(),
                _ => {
                    let link = parent.join(format!("ping{n}.json"));
                    symlink(&link, &path).is_ok() && symlink(&path, &link).is_ok()
                }
            };
            if made_ok {
                made.push(path.clone());
                // Random permission bits on what is not a symlink (as root they do not stop
                // reading; as a user they make entries unreadable, which must not matter).
                let meta = fs::symlink_metadata(&path).unwrap();
                if !meta.file_type().is_symlink() && rng.below(3) == 0 {
                    let mode =
                        (rng.next_u64() as u32 & 0o777) | if meta.is_dir() { 0o700 } else { 0 };
                    let _ = fs::set_permissions(&path, fs::Permissions::from_mode(mode));
                }
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn seeded_fuzz_loading_random_trees_terminates_stays_inside_and_changes_nothing() {
        for seed in [1_u64, 2, 3, 5, 8, 13, 21, 34, 55, 89] {
            let root = tempdir(&format!("fuzz-{seed}"));
            let outside = root.join("outside");
            put(&outside.join("f.json"), &rule("outside/file"));
            put(&outside.join("d/r.json"), &rule("outside/dir"));
            let (project, mut dirs) = repo(&root);
            let user = root.join("config/rules");
            fs::create_dir_all(&user).unwrap();
            let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            random_tree(&mut rng, &project, &outside, 60);
            random_tree(&mut rng, &user, &outside, 60);
            dirs.user = Some(user);
            let before = snapshot(&root);

            let set = load_within(dirs, 30);

            assert_eq!(snapshot(&root), before, "seed {seed}: the tree changed");
            for loaded in set.rules() {
                let id = loaded.rule.id.as_str();
                match loaded.layer {
                    // Nothing outside the repository, through any symlink.
                    Layer::Project => {
                        assert!(!id.starts_with("outside/"), "seed {seed}: {id} via {loaded:?}");
                        assert!(loaded.path.starts_with(&project), "seed {seed}: {loaded:?}");
                    }
                    // A file symlink may point anywhere; a directory only inside the layer.
                    Layer::User => assert_ne!(id, "outside/dir", "seed {seed}: {loaded:?}"),
                    Layer::Builtin => {}
                }
            }
            for problem in &set.problems {
                let text = problem.to_string();
                assert!(!text.chars().any(char::is_control), "seed {seed}: {text:?}");
                assert!(text.contains(root.to_str().unwrap()), "seed {seed}: {text}");
            }
            fs::remove_dir_all(&root).unwrap();
        }
    }

    #[test]
    fn project_dir_is_found_walking_up_but_not_past_the_repo_root() {
        let root = tempdir("walk");
        let repo = root.join("repo");
        fs::create_dir_all(repo.join(".git")).unwrap();
        fs::create_dir_all(repo.join("a/b")).unwrap();
        fs::create_dir_all(root.join(PROJECT_RULES_DIR)).unwrap();
        // Above the repository root: not picked up.
        assert_eq!(find_project_dir(&repo.join("a/b")), None);
        fs::create_dir_all(repo.join(PROJECT_RULES_DIR)).unwrap();
        assert_eq!(find_project_dir(&repo.join("a/b")), Some(repo.join(PROJECT_RULES_DIR)));
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn project_rule_overrides_builtin_and_bad_files_are_reported() {
        let root = tempdir("layers");
        let rules = root.join("rules");
        fs::create_dir_all(&rules).unwrap();
        let id = builtin_files()[0].id;
        #[allow(clippy::disallowed_methods)]
        {
            fs::write(
                rules.join("mine.json"),
                format!(r#"{{"id":"{id}","family":"mine","match":{{}}}}"#),
            )
            .unwrap();
            fs::write(rules.join("broken.json"), "{ nope").unwrap();
        }
        let set = load_from(&Dirs { project: Some(rules), ..Dirs::default() });
        assert_eq!(set.get(id).unwrap().layer, Layer::Project);
        assert_eq!(set.problems.len(), 1);
        assert!(set.problems[0].to_string().contains("broken.json"));
        fs::remove_dir_all(&root).unwrap();
    }
}
