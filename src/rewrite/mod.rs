//! The one rewrite engine every adapter asks: is this shell line a build, test, lint or
//! install command tj reduces with benefit, and if so, the same line with
//! `<absolute tj> run --agent --host H -- ` inserted before the command word, no other byte
//! changed (issue 11).
//!
//! SKELETON: the interface is fixed; the body below is a placeholder that a real POSIX-shell
//! lexer and the rule-derived allowlist replace.

use std::fmt;
use std::path::Path;

use crate::env::Env;
use crate::host::Host;

/// Everything the decision needs besides the line.
#[derive(Clone, Copy, Debug)]
pub struct Context<'a> {
    /// The environment snapshot (where user rules and config live).
    pub env: &'a Env,
    /// The absolute path of the tj binary the rewritten line runs.
    pub tj: &'a Path,
    /// The harness the line comes from, passed on as `--host`.
    pub host: Option<Host>,
    /// Commands the user excluded (`rewrite.exclude` in config.json).
    pub exclude: &'a [String],
}

/// An eligible line, rewritten.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewrite {
    /// The rewritten line.
    pub line: String,
    /// The simple commands of the *original* line, in order (`cd DIR`, then the command),
    /// each as its source text: what permission rules are judged against.
    pub segments: Vec<Segment>,
}

/// One simple command of the original line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The command's source text, exactly as in the line (without its `&&`).
    pub text: String,
    /// Its words after quote removal (assignments and redirects excluded).
    pub words: Vec<String>,
}

/// Why a line is not rewritten.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ineligible(pub String);

impl fmt::Display for Ineligible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Decides on `line`: the rewrite, or why not.
pub fn rewrite(line: &str, ctx: &Context<'_>) -> Result<Rewrite, Ineligible> {
    // PLACEHOLDER: plain words only, first word from the shell hook's list.
    if line.chars().any(|c| "|;&<>()$`'\"\\\n#*?{}[]~!".contains(c)) {
        return Err(Ineligible("shell syntax (placeholder engine)".to_owned()));
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some(first) = words.first() else {
        return Err(Ineligible("empty line".to_owned()));
    };
    if !crate::shell::DEFAULT_COMMANDS.contains(first) || ctx.exclude.iter().any(|e| e == first) {
        return Err(Ineligible(format!("`{first}` is not a command tj reduces")));
    }
    let start = line.len() - line.trim_start().len();
    let host = ctx.host.map(|h| format!(" --host {}", h.name())).unwrap_or_default();
    let line_out =
        format!("{}{} run --agent{host} -- {}", &line[..start], ctx.tj.display(), &line[start..]);
    let words = words.iter().map(|w| (*w).to_owned()).collect();
    Ok(Rewrite { line: line_out, segments: vec![Segment { text: line.trim().to_owned(), words }] })
}
