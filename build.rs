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
        writeln!(
            out,
            "    Builtin {{ id: {id:?}, path: {path:?}, json: include_str!({abs:?}) }},",
            path = format!("rules/{rel}"),
            abs = file.display().to_string(),
        )
        .expect("writing to a String cannot fail");
    }
    out.push_str("]\n");
    let dest =
        PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("builtin_rules.rs");
    fs::write(dest, out).expect("OUT_DIR is writable");
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
