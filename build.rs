//! Embeds the builtin rules: walks `rules/`, sorts the paths (sorted order is precedence
//! order, DESIGN.md "Rules"), and writes `OUT_DIR/builtin_rules.rs` as a static slice of
//! `(id, path, json)` with `include_str!` so the JSON is checked by nothing but the tests and
//! `tj rules verify`: a build never fails on a rule.
//!
//! Dependency-free on purpose: a build script that pulls serde would slow every build.

#![allow(clippy::disallowed_methods)] // OUT_DIR is private to this build: no reader to protect from a torn write.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let root =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let rules = root.join("rules");
    println!("cargo:rerun-if-changed=rules");
    let mut files = Vec::new();
    walk(&rules, &mut files);
    files.sort();
    let mut out = String::from("&[\n");
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
        let rel = file.strip_prefix(&rules).expect("walked below rules/");
        let rel = rel.to_string_lossy().replace('\\', "/");
        let id = rel.trim_end_matches(".json");
        let text = fs::read_to_string(file).unwrap_or_default();
        writeln!(
            out,
            "    Builtin {{ id: {id:?}, path: {path:?}, json: include_str!({abs:?}), argv0: &{argv0:?} }},",
            path = format!("rules/{rel}"),
            abs = file.display().to_string(),
            argv0 = argv0_of(&text),
        )
        .expect("writing to a String cannot fail");
    }
    out.push_str("]\n");
    let dest =
        PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("builtin_rules.rs");
    fs::write(dest, out).expect("OUT_DIR is writable");
}

/// The names in a rule's `"argv0": [...]`, read without a JSON parser (builtin rules are
/// ours and plainly formatted). Empty when there is no such list or it is not plain: the
/// rule is then always loaded, so a misread costs start-up time, never a selection.
fn argv0_of(json: &str) -> Vec<String> {
    let Some(at) = json.find("\"argv0\"") else { return Vec::new() };
    let rest = json[at + 7..].trim_start();
    let Some(rest) = rest.strip_prefix(':').map(str::trim_start) else { return Vec::new() };
    let Some(rest) = rest.strip_prefix('[') else { return Vec::new() };
    let Some(end) = rest.find(']') else { return Vec::new() };
    let mut names = Vec::new();
    for item in rest[..end].split(',') {
        let item = item.trim();
        match item.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
            Some(name) if !name.contains(['\\', '"']) => names.push(name.to_owned()),
            _ => return Vec::new(),
        }
    }
    names
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            walk(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "json") {
            files.push(path);
        }
    }
}
