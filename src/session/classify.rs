//! What each tool call is, for the compaction rules: a read of a file, an edit, a
//! test/build/lint run, a listing or search, a call that cannot be re-run, or anything else.
//! Pure: a function of the tool's name, its input and the working directory the log named.

use serde_json::Value;

use crate::rules::select::{Query, identify};

/// The kind of a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Reads a file: `path` (absolute when the working directory was known); `whole` if
    /// the whole file, else `part` names the part (`sed -n 1,80p`, an offset and a limit).
    Read {
        /// The file.
        path: String,
        /// The whole file was read.
        whole: bool,
        /// Which part, when not the whole.
        part: String,
    },
    /// Changes files (Edit, MultiEdit, Write, NotebookEdit, apply_patch).
    Edit(Vec<String>),
    /// A test, build or lint run: `command` (normalized) in `dir`.
    Check {
        /// The command.
        command: String,
        /// Its working directory, if known.
        dir: String,
    },
    /// A listing or a search (ls, find, rg, grep, Glob, Grep).
    Listing,
    /// A call that cannot be run again: a sub-agent, a question to the user.
    Unrepeatable,
    /// Anything else: kept.
    Other,
}

/// Claude Code tools that cannot be run again to get the same answer.
const CLAUDE_UNREPEATABLE: [&str; 4] = ["Task", "Agent", "AskUserQuestion", "ExitPlanMode"];

/// A Claude Code call of tool `name` with `input`, made in `cwd`.
pub fn claude(name: &str, input: &Value, cwd: Option<&str>) -> (Kind, String) {
    let s = |k: &str| input.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    match name {
        "Read" => {
            let path = s("file_path");
            let (offset, limit) = (input.get("offset"), input.get("limit"));
            let whole = offset.is_none_or(Value::is_null) && limit.is_none_or(Value::is_null);
            let part =
                format!("{}:{}", offset.unwrap_or(&Value::Null), limit.unwrap_or(&Value::Null));
            (Kind::Read { path: path.clone(), whole, part }, path)
        }
        "Edit" | "MultiEdit" | "Write" => (Kind::Edit(vec![s("file_path")]), s("file_path")),
        "NotebookEdit" => (Kind::Edit(vec![s("notebook_path")]), s("notebook_path")),
        "Bash" => {
            let command = s("command");
            (command_kind(&command, cwd), command)
        }
        "Glob" | "Grep" | "LS" => {
            let label = [s("pattern"), s("path")].join(" ").trim().to_owned();
            (Kind::Listing, label)
        }
        _ if CLAUDE_UNREPEATABLE.contains(&name) => (Kind::Unrepeatable, s("description")),
        _ => (Kind::Other, String::new()),
    }
}

/// A Codex call of tool `name` (the whole `payload` of its line), made in `cwd`.
pub fn codex(name: &str, payload: &Value, cwd: Option<&str>) -> (Kind, String) {
    let args: Value = match payload.get("arguments") {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
        Some(other) => other.clone(),
        None => payload.get("action").cloned().unwrap_or(Value::Null),
    };
    let dir = args
        .get("workdir")
        .or_else(|| args.get("working_directory"))
        .and_then(Value::as_str)
        .map(|d| join(cwd, d));
    let dir = dir.as_deref().or(cwd);
    match name {
        "shell" | "container.exec" | "local_shell" => {
            let argv: Vec<String> = args
                .get("command")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default();
            let command = match argv.as_slice() {
                [shell, flag, script]
                    if is_shell(shell) && flag.starts_with('-') && flag.contains('c') =>
                {
                    script.clone()
                }
                _ => argv.join(" "),
            };
            (command_kind(&command, dir), command)
        }
        "shell_command" | "exec_command" => {
            let command = args
                .get("command")
                .or_else(|| args.get("cmd"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            (command_kind(&command, dir), command)
        }
        "apply_patch" => {
            let patch = payload
                .get("input")
                .and_then(Value::as_str)
                .or_else(|| args.get("input").and_then(Value::as_str))
                .unwrap_or_default();
            let paths = patch_paths(patch, dir);
            let label = paths.join(", ");
            (Kind::Edit(paths), label)
        }
        "request_user_input" | "ask_user_question" | "spawn_agent" | "send_input" | "wait" => {
            (Kind::Unrepeatable, String::new())
        }
        _ => (Kind::Other, String::new()),
    }
}

fn is_shell(word: &str) -> bool {
    matches!(word.rsplit('/').next(), Some("bash" | "sh" | "zsh" | "dash"))
}

/// The files an `apply_patch` patch touches (`*** Add File:`, `*** Update File:`,
/// `*** Delete File:`, `*** Move to:`).
fn patch_paths(patch: &str, dir: Option<&str>) -> Vec<String> {
    let mut paths: Vec<String> = patch
        .lines()
        .filter_map(|l| {
            ["*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:"]
                .iter()
                .find_map(|p| l.strip_prefix(p))
        })
        .map(|p| join(dir, p.trim()))
        .collect();
    paths.dedup();
    paths
}

/// What a shell command run in `dir` is.
pub fn command_kind(command: &str, dir: Option<&str>) -> Kind {
    let (command, dir) = strip_cd(command.trim(), dir);
    if command.starts_with("apply_patch") {
        return Kind::Edit(patch_paths(&command, dir.as_deref()));
    }
    let identity = identify(&Query { command: Some(&command), ..Query::default() });
    if identity.compound || identity.argv.is_empty() {
        return Kind::Other;
    }
    let argv = &identity.argv;
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    if let Some(kind) = read_kind(&words, dir.as_deref()) {
        return kind;
    }
    if is_listing(&words) {
        return Kind::Listing;
    }
    if is_check(&words) {
        return Kind::Check { command: identity.command, dir: dir.unwrap_or_default() };
    }
    Kind::Other
}

/// `cd DIR && rest` as `rest` in DIR.
fn strip_cd(command: &str, dir: Option<&str>) -> (String, Option<String>) {
    if let Some(rest) = command.strip_prefix("cd ")
        && let Some((target, rest)) = rest.split_once("&&")
    {
        let target = target.trim().trim_matches(['"', '\'']);
        if !target.is_empty() && !target.contains(char::is_whitespace) {
            return (rest.trim().to_owned(), Some(join(dir, target)));
        }
    }
    (command.to_owned(), dir.map(str::to_owned))
}

/// A read of one file: `cat F`, `head [-n N] F`, `tail [-n N] F`, `sed -n 'A,Bp' F`,
/// `nl F`.
fn read_kind(words: &[&str], dir: Option<&str>) -> Option<Kind> {
    let (program, args) = words.split_first()?;
    let mut files = Vec::new();
    let mut part = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if matches!(a, "-n" | "-c") && *program != "cat" && *program != "sed" {
            part.push(format!("{a}{}", args.get(i + 1).unwrap_or(&"")));
            i += 2;
            continue;
        }
        if a.starts_with('-') {
            part.push(a.to_owned());
        } else {
            files.push(a);
        }
        i += 1;
    }
    let (path, whole) = match (*program, files.as_slice()) {
        ("cat" | "nl", [file]) => (*file, part.is_empty()),
        ("head" | "tail", [file]) => (*file, false),
        ("sed", [script, file]) if part == ["-n"] && script.ends_with('p') => {
            part.push((*script).to_owned());
            (*file, false)
        }
        _ => return None,
    };
    let path = join(dir, path);
    Some(Kind::Read { path, whole, part: format!("{program} {}", part.join(" ")) })
}

fn is_listing(words: &[&str]) -> bool {
    match words {
        [p, ..] if matches!(*p, "ls" | "find" | "fd" | "rg" | "grep" | "egrep" | "tree" | "ag") => {
            true
        }
        ["git", "ls-files" | "grep", ..] => true,
        _ => false,
    }
}

/// A test, build or lint run, by its program and subcommand.
fn is_check(words: &[&str]) -> bool {
    let sub = words.get(1).copied().unwrap_or_default();
    let script = |s: &str| {
        ["test", "build", "lint", "check", "typecheck", "tsc"].iter().any(|w| s.contains(w))
    };
    match words.first().map(|p| p.rsplit('/').next().unwrap_or(p)) {
        Some("cargo") => matches!(
            sub,
            "test" | "t" | "build" | "b" | "check" | "c" | "clippy" | "nextest" | "fmt"
        ),
        Some("npm" | "pnpm" | "yarn" | "bun") => {
            matches!(sub, "test" | "t" | "build" | "lint")
                || (sub == "run" && words.get(2).is_some_and(|s| script(s)))
        }
        Some("npx" | "pnpx" | "bunx") => {
            matches!(
                sub,
                "jest" | "vitest" | "tsc" | "eslint" | "prettier" | "playwright" | "mocha"
            )
        }
        Some("go") => matches!(sub, "test" | "build" | "vet"),
        Some("python" | "python3") => {
            sub == "-m"
                && words.get(2).is_some_and(|m| {
                    matches!(*m, "pytest" | "unittest" | "mypy" | "ruff" | "pylint" | "flake8")
                })
        }
        Some("dotnet" | "swift" | "zig" | "deno" | "bazel" | "mix") => {
            matches!(sub, "test" | "build" | "lint" | "check" | "compile")
        }
        Some("bundle") => sub == "exec",
        Some(
            "pytest" | "py.test" | "tox" | "nox" | "make" | "ninja" | "ctest" | "tsc" | "eslint"
            | "ruff" | "mypy" | "pylint" | "flake8" | "jest" | "vitest" | "mocha" | "rspec"
            | "rake" | "gradle" | "gradlew" | "mvn" | "mvnw" | "shellcheck" | "golangci-lint"
            | "phpunit" | "clippy-driver",
        ) => true,
        Some("cmake") => words.contains(&"--build"),
        _ => false,
    }
}

/// `path` made absolute against `dir` when it is relative and `dir` is known, `./` parts
/// removed.
pub fn join(dir: Option<&str>, path: &str) -> String {
    let path = path.trim();
    let joined = match dir {
        Some(dir) if !path.starts_with('/') && !path.starts_with('~') => {
            format!("{}/{path}", dir.trim_end_matches('/'))
        }
        _ => path.to_owned(),
    };
    let mut out: Vec<&str> = Vec::new();
    for (i, part) in joined.split('/').enumerate() {
        match part {
            "." => {}
            "" if i > 0 => {}
            ".." if out.last().is_some_and(|p| !p.is_empty() && *p != "..") => {
                out.pop();
            }
            _ => out.push(part),
        }
    }
    out.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_commands_are_classified() {
        let read = |p: &str, whole| Kind::Read { path: p.to_owned(), whole, part: String::new() };
        let strip = |k: Kind| match k {
            Kind::Read { path, whole, .. } => Kind::Read { path, whole, part: String::new() },
            other => other,
        };
        assert_eq!(strip(command_kind("cat src/a.rs", Some("/w"))), read("/w/src/a.rs", true));
        assert_eq!(
            strip(command_kind("sed -n '1,80p' ./a.rs", Some("/w"))),
            read("/w/a.rs", false)
        );
        assert_eq!(strip(command_kind("head -n 40 /x/b.rs", Some("/w"))), read("/x/b.rs", false));
        assert_eq!(command_kind("cat a b", Some("/w")), Kind::Other);
        assert_eq!(command_kind("rg -n foo src", None), Kind::Listing);
        assert_eq!(command_kind("ls -la", None), Kind::Listing);
        assert_eq!(
            command_kind("cd sub && cargo test -q", Some("/w")),
            Kind::Check { command: "cargo test -q".into(), dir: "/w/sub".into() }
        );
        assert_eq!(command_kind("cargo test | tail", Some("/w")), Kind::Other);
        assert_eq!(command_kind("echo hi", None), Kind::Other);
    }

    #[test]
    fn paths_are_joined_and_cleaned() {
        assert_eq!(join(Some("/w/"), "./src/../a.rs"), "/w/a.rs");
        assert_eq!(join(Some("/w"), "/abs/x"), "/abs/x");
        assert_eq!(join(None, "rel/x"), "rel/x");
    }
}
