//! Reading the user and project rule layers from disk.
//!
//! This is the I/O end of `rules`: it finds the directories, reads the files (sorted, so
//! the result never depends on directory order) and hands the text to
//! [`RuleSet::from_sources`]. Project rules come from untrusted repositories: they are data,
//! size-capped, and nothing in them is ever executed.

use std::fs;
use std::path::{Path, PathBuf};

use super::{Layer, LoadError, RuleSet, builtin_files};
use crate::env::Env;

/// Project rules live here, relative to a directory at or above the working directory.
pub const PROJECT_RULES_DIR: &str = ".tokenjuice/rules";
/// A rule file larger than this is skipped: no real rule is near it.
pub const MAX_RULE_BYTES: u64 = 1 << 20;
/// At most this many files are read from one layer.
pub const MAX_RULE_FILES: usize = 2000;

/// The directories the user and project layers come from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dirs {
    /// `<config dir>/rules`.
    pub user: Option<PathBuf>,
    /// The nearest `.tokenjuice/rules` at or above the working directory, up to the
    /// repository root.
    pub project: Option<PathBuf>,
}

impl Dirs {
    /// Finds the layer directories for this environment.
    pub fn find(env: &Env) -> Dirs {
        Dirs {
            user: env.config_dir().map(|d| d.join("rules")),
            project: env.cwd.as_deref().and_then(find_project_dir),
        }
    }
}

/// Walks up from `start` to the first directory holding `.tokenjuice/rules`, stopping at
/// the repository root (the first directory with a `.git`), so that a rule directory above
/// the repository, which the repository does not control, is never picked up by accident.
pub fn find_project_dir(start: &Path) -> Option<PathBuf> {
    for dir in start.ancestors() {
        let candidate = dir.join(PROJECT_RULES_DIR);
        if candidate.is_dir() {
            return Some(candidate);
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

/// [`load`], parsing only the builtin rules that could be selected for `program` (see
/// [`RuleSet::builtin_for`]); the user and project layers are read whole.
pub fn load_for(env: &Env, program: &str) -> RuleSet {
    load_layers(&Dirs::find(env), Some(program))
}

/// Loads builtin rules and the layers in `dirs`.
pub fn load_from(dirs: &Dirs) -> RuleSet {
    load_layers(dirs, None)
}

fn load_layers(dirs: &Dirs, program: Option<&str>) -> RuleSet {
    let mut problems = Vec::new();
    let mut texts: Vec<(Layer, PathBuf, String)> = Vec::new();
    for (layer, dir) in [(Layer::User, &dirs.user), (Layer::Project, &dirs.project)] {
        let Some(dir) = dir else { continue };
        let mut files = Vec::new();
        collect(dir, &mut files, &mut problems, 0);
        files.sort();
        files.truncate(MAX_RULE_FILES);
        for path in files {
            match read_capped(&path) {
                Ok(text) => texts.push((layer, path, text)),
                Err(err) => problems.push(err),
            }
        }
    }
    let builtins = builtin_files()
        .iter()
        .filter(|b| program.is_none_or(|p| b.could_match(p)))
        .map(|b| (Layer::Builtin, PathBuf::from(b.path), b.json));
    let layered = texts.iter().map(|(l, p, t)| (*l, p.clone(), t.as_str()));
    let mut set = RuleSet::from_sources(builtins.chain(layered), false);
    problems.append(&mut set.problems);
    set.problems = problems;
    set
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>, problems: &mut Vec<LoadError>, depth: usize) {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return,
        Err(err) => {
            problems.push(LoadError::Read { path: dir.to_path_buf(), err });
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() && depth < 4 {
            collect(&path, files, problems, depth + 1);
        } else if path.extension().is_some_and(|e| e == "json") && !kind.is_dir() {
            files.push(path);
        }
    }
}

fn read_capped(path: &Path) -> Result<String, LoadError> {
    let meta =
        fs::metadata(path).map_err(|err| LoadError::Read { path: path.to_path_buf(), err })?;
    if meta.len() > MAX_RULE_BYTES {
        return Err(LoadError::Invalid {
            path: path.to_path_buf(),
            reason: format!("{} bytes is larger than the {MAX_RULE_BYTES}-byte limit", meta.len()),
        });
    }
    let bytes = fs::read(path).map_err(|err| LoadError::Read { path: path.to_path_buf(), err })?;
    String::from_utf8(bytes).map_err(|_| LoadError::Invalid {
        path: path.to_path_buf(),
        reason: "not UTF-8".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tempdir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tj-load-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
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
        let set = load_from(&Dirs { user: None, project: Some(rules) });
        assert_eq!(set.get(id).unwrap().layer, Layer::Project);
        assert_eq!(set.problems.len(), 1);
        assert!(set.problems[0].to_string().contains("broken.json"));
        fs::remove_dir_all(&root).unwrap();
    }
}
