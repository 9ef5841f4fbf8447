//! Finding a session log from what the user typed: a path to a `.jsonl` file, or a session
//! id looked up under Claude Code's projects directory (`CLAUDE_CONFIG_DIR` or `~/.claude`)
//! and Codex's sessions directory (`CODEX_HOME` or `~/.codex`). Reading only; the walk is
//! bounded and does not follow symbolic links.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::env::Env;

/// How deep the walk under `sessions/` goes (`YYYY/MM/DD/rollout-….jsonl`).
const CODEX_DEPTH: usize = 4;

/// The log `session` names.
pub fn locate(session: &str, env: &Env) -> Result<PathBuf> {
    let path = Path::new(session);
    if path.is_file() {
        return Ok(path.to_path_buf());
    }
    if session.contains('/') || session.ends_with(".jsonl") || session.is_empty() {
        bail!("`{session}`: no such file");
    }
    let home = env.home.clone();
    let claude = env.claude_config_dir.clone().or_else(|| home.as_ref().map(|h| h.join(".claude")));
    let codex = env.codex_home.clone().or_else(|| home.as_ref().map(|h| h.join(".codex")));
    let mut found = Vec::new();
    if let Some(dir) = &claude {
        for project in sorted_dir(&dir.join("projects")) {
            let candidate = project.join(format!("{session}.jsonl"));
            if is_file(&candidate) {
                found.push(candidate);
            }
        }
    }
    if let Some(dir) = &codex {
        walk_codex(&dir.join("sessions"), session, CODEX_DEPTH, &mut found);
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => bail!(
            "no session `{session}`: not a file, and no log of that id under {} or {}",
            shown(claude.map(|d| d.join("projects"))),
            shown(codex.map(|d| d.join("sessions")))
        ),
        n => bail!(
            "`{session}` names {n} logs ({}); give the path",
            found.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn shown(dir: Option<PathBuf>) -> String {
    dir.map_or_else(|| "(no home directory)".to_owned(), |d| format!("`{}`", d.display()))
}

/// Rollout files under `dir` whose name ends with `-<id>.jsonl`.
fn walk_codex(dir: &Path, id: &str, depth: usize, found: &mut Vec<PathBuf>) {
    let suffix = format!("{id}.jsonl");
    for entry in sorted_dir(dir) {
        let Ok(meta) = std::fs::symlink_metadata(&entry) else { continue };
        let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if meta.is_dir() && depth > 0 {
            walk_codex(&entry, id, depth - 1, found);
        } else if meta.is_file() && name.starts_with("rollout-") && name.ends_with(&suffix) {
            found.push(entry);
        }
    }
}

/// The entries of `dir`, sorted; none if it cannot be read.
fn sorted_dir(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    entries.sort();
    entries
}

fn is_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}
