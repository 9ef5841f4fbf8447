//! The files Claude Code keeps beside a session's log under the session's id, which the log
//! names by path: `<project>/<id>/` (outputs too large for the log in `tool-results/`, whose
//! results say `Full output saved to: <project>/<id>/tool-results/….txt`; sub-agent
//! transcripts in `subagents/`) and `<config>/file-history/<id>/` (the backups behind its
//! checkpoints). A session `tj compact --resume` writes under a new id, with every
//! occurrence of the old id rewritten, gets copies of them under the new id, so that every
//! path its log names exists and the new session does not depend on the old one. Codex keeps
//! a session in its rollout file alone.
//!
//! Only real directories and regular files are copied, never through a symbolic link; what
//! is skipped is named in one warning. A file that exists under the new id is left as it is:
//! it is an earlier copy, or the resumed session's own.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// How deep a copied tree goes (`subagents/agent-….jsonl`, `tool-results/….txt`).
const DEPTH: usize = 4;
/// The most a copy takes: files, and bytes in all.
const MAX_FILES: usize = 10_000;
const MAX_BYTES: u64 = 2 << 30;

/// A directory of the old session to copy under the new id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sidecar {
    /// The old session's directory.
    pub from: PathBuf,
    /// The new session's.
    pub to: PathBuf,
}

/// The directories kept under the old id of the Claude Code log at `log`, with the paths
/// their copies get under `new`; only those that exist.
pub fn claude(log: &Path, old: &str, new: &str) -> Vec<Sidecar> {
    let Some(project) = log.parent() else { return Vec::new() };
    let mut dirs = vec![Sidecar { from: project.join(old), to: project.join(new) }];
    // `<config>/projects/<project>/<id>.jsonl`: the config directory is two levels up.
    if let Some(projects) = project.parent().filter(|p| p.file_name() == Some("projects".as_ref()))
        && let Some(config) = projects.parent()
    {
        let history = config.join("file-history");
        dirs.push(Sidecar { from: history.join(old), to: history.join(new) });
    }
    dirs.retain(|d| is_dir(&d.from));
    dirs
}

/// What a copy did: files written, and what it skipped.
#[derive(Clone, Debug, Default)]
pub struct Copied {
    /// Files written.
    pub files: usize,
    /// Bytes written.
    pub bytes: u64,
    /// What was not copied, and why, one entry each.
    pub skipped: Vec<String>,
}

/// Copies the tree `sidecar.from` to `sidecar.to`: regular files byte for byte, except that
/// `.jsonl` files (transcripts, which name their session) go through `rename`. Files that
/// exist at the destination are left alone.
pub fn copy(sidecar: &Sidecar, rename: &dyn Fn(&[u8]) -> Vec<u8>) -> Result<Copied> {
    let mut copied = Copied::default();
    copy_dir(&sidecar.from, &sidecar.to, DEPTH, rename, &mut copied)?;
    Ok(copied)
}

fn copy_dir(
    from: &Path,
    to: &Path,
    depth: usize,
    rename: &dyn Fn(&[u8]) -> Vec<u8>,
    copied: &mut Copied,
) -> Result<()> {
    make_dir(to)?;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(from)
        .with_context(|| format!("could not read `{}`", from.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for entry in entries {
        let Some(name) = entry.file_name() else { continue };
        let target = to.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&entry) else { continue };
        if meta.is_dir() && depth > 0 {
            copy_dir(&entry, &target, depth - 1, rename, copied)?;
        } else if !meta.is_file() || meta.is_dir() {
            let kind = if meta.is_dir() { "a directory too deep" } else { "not a regular file" };
            copied.skipped.push(format!("`{}` ({kind})", entry.display()));
        } else if std::fs::symlink_metadata(&target).is_ok() {
            // An earlier copy, or the resumed session's own file: left as it is.
        } else if copied.files >= MAX_FILES || copied.bytes + meta.len() > MAX_BYTES {
            copied.skipped.push(format!("`{}` (past the copy's bound)", entry.display()));
        } else {
            let bytes = crate::fsx::read_limited(&entry, MAX_BYTES)
                .with_context(|| format!("could not read `{}`", entry.display()))?;
            let bytes = if entry.extension().is_some_and(|e| e == "jsonl") {
                rename(&bytes)
            } else {
                bytes
            };
            crate::fsx::replace(&target, &bytes)
                .with_context(|| format!("could not write `{}`", target.display()))?;
            copied.files += 1;
            copied.bytes += bytes.len() as u64;
        }
    }
    Ok(())
}

/// Creates `dir` unless it exists, and checks it is a real directory (a symbolic link there
/// would send the copy elsewhere).
fn make_dir(dir: &Path) -> Result<()> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
            if is_dir(dir) {
                Ok(())
            } else {
                bail!("`{}` exists and is not a directory (or is a symbolic link)", dir.display())
            }
        }
        Err(err) => Err(err).with_context(|| format!("could not create `{}`", dir.display())),
    }
}

/// Returns true if and only if `path` is a directory, not a symbolic link to one.
fn is_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        crate::fsx::replace(path, text.as_bytes()).unwrap();
    }

    #[test]
    fn the_session_s_directories_are_found_and_copied_under_the_new_id() {
        let root = crate::testing::TempDir::created("sidecar");
        let config = root.0.join(".claude");
        let project = config.join("projects/-work");
        let log = project.join("old.jsonl");
        write(&log, "{}\n");
        write(&project.join("old/tool-results/a.txt"), "saved old output\n");
        write(&project.join("old/subagents/agent-1.jsonl"), "{\"sessionId\":\"old\"}\n");
        write(&config.join("file-history/old/abc@v1"), "backup\n");
        std::os::unix::fs::symlink("/etc/passwd", project.join("old/tool-results/link")).unwrap();
        let dirs = claude(&log, "old", "new");
        assert_eq!(
            dirs,
            vec![
                Sidecar { from: project.join("old"), to: project.join("new") },
                Sidecar {
                    from: config.join("file-history/old"),
                    to: config.join("file-history/new")
                },
            ]
        );
        let rename = |b: &[u8]| String::from_utf8_lossy(b).replace("old", "new").into_bytes();
        let copied = copy(&dirs[0], &rename).unwrap();
        assert_eq!(copied.files, 2);
        assert_eq!(copied.skipped.len(), 1, "{:?}", copied.skipped);
        let read = |p: &Path| std::fs::read_to_string(p).unwrap();
        // Outputs byte for byte, transcripts renamed, links never followed.
        assert_eq!(read(&project.join("new/tool-results/a.txt")), "saved old output\n");
        assert_eq!(read(&project.join("new/subagents/agent-1.jsonl")), "{\"sessionId\":\"new\"}\n");
        assert!(std::fs::symlink_metadata(project.join("new/tool-results/link")).is_err());
        // A second copy leaves what is there alone.
        write(&project.join("new/tool-results/a.txt"), "the resumed session's\n");
        assert_eq!(copy(&dirs[0], &rename).unwrap().files, 0);
        assert_eq!(read(&project.join("new/tool-results/a.txt")), "the resumed session's\n");
    }
}
