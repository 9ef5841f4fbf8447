//! Codex CLI's `PreToolUse` hook on `Bash`.
//!
//! Codex accepts one rewrite form only, `permissionDecision: "allow"` with
//! `updatedInput.command`; its `allow` means "not blocked", after which the rewritten
//! command goes through Codex's own approval and exec-policy checks (openai/codex:
//! `codex-rs/core/src/hook_runtime.rs`, `exec_policy.rs`). Those checks would then judge
//! `<tj> run …`, not the original, so tj rewrites only where that cannot change anything:
//!
//! - `permission_mode` is `bypassPermissions`, which Codex sends exactly when its approval
//!   policy is `never` (`hook_permission_mode`); every other policy sends `default`, which
//!   may or may not prompt, so it gets no answer;
//! - no exec-policy `prefix_rule` (`$CODEX_HOME/rules`, `/etc/codex/rules`, `.codex/rules`
//!   of the working directory and its parents) matches any simple command of the original:
//!   under `never`, a `prompt` or `forbidden` rule refuses the original, and an `allow` rule
//!   runs it outside the sandbox; the rewritten line would match none of them. A rules file
//!   tj cannot read means no answer, as does a managed `requirements.toml`;
//! - the tool input is a script (`kind` absent or `script`), not an argv or PowerShell call.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::permissions::strip_wrappers_words;
use super::{Context, MAX_SETTINGS, Skip, payload_cwd, rewrite_for, shell_call, with_command};
use crate::fsx::{ReadError, read_regular};
use crate::host::Host;

pub(super) fn answer(payload: &Value, ctx: &Context<'_>) -> Result<Value, Skip> {
    let call = shell_call(payload, "tool_name", &["Bash"], "tool_input")?;
    if let Some(kind) = call.input.get("kind").filter(|k| k.as_str() != Some("script")) {
        return Err(Skip::new(format!("tool input of kind {kind}")));
    }
    let mode = payload.get("permission_mode").and_then(Value::as_str).unwrap_or_default();
    if mode != "bypassPermissions" {
        return Err(Skip::new(format!(
            "permission mode `{mode}`: Codex would judge the rewritten command, not the original"
        )));
    }
    let rewrite = rewrite_for(call.command, Host::Codex, ctx)?;
    let patterns = load_rules(payload, ctx)?;
    for segment in &rewrite.segments {
        let stripped = strip_wrappers_words(&segment.words);
        for pattern in &patterns {
            if pattern.matches(&segment.words) || pattern.matches(stripped) {
                return Err(Skip::new(format!("an exec-policy rule matches `{}`", segment.text)));
            }
        }
    }
    Ok(json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": with_command(call.input, &rewrite.line),
        }
    }))
}

/// The `pattern` of every `prefix_rule` Codex would load for this call.
fn load_rules(payload: &Value, ctx: &Context<'_>) -> Result<Vec<Prefix>, Skip> {
    let env = ctx.env;
    let requirements = ctx.system_root.join("etc/codex/requirements.toml");
    if requirements.exists() {
        return Err(Skip::new(format!("managed `{}` may hold rules", requirements.display())));
    }
    let mut dirs: Vec<PathBuf> = vec![ctx.system_root.join("etc/codex/rules")];
    if let Some(home) =
        env.codex_home.clone().or_else(|| env.home.as_ref().map(|h| h.join(".codex")))
    {
        dirs.push(home.join("rules"));
    }
    if let Some(cwd) = payload_cwd(payload, env) {
        dirs.extend(cwd.ancestors().map(|d| d.join(".codex/rules")));
    }
    let mut patterns = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.extension().is_some_and(|x| x == "rules") {
                patterns.extend(read_rules(&path)?);
            }
        }
    }
    Ok(patterns)
}

fn read_rules(path: &Path) -> Result<Vec<Prefix>, Skip> {
    let bytes = match read_regular(path, true, MAX_SETTINGS) {
        Ok(bytes) => bytes,
        Err(ReadError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(_) => return Err(Skip::new(format!("cannot read `{}`", path.display()))),
    };
    let text = String::from_utf8_lossy(&bytes);
    parse_rules(&text).map_err(|why| Skip::new(format!("`{}`: {why}", path.display())))
}

/// A `prefix_rule` pattern: for each leading word, the words it may be.
#[derive(Debug, PartialEq, Eq)]
struct Prefix(Vec<Vec<String>>);

impl Prefix {
    /// Returns true if and only if `words` start with this pattern.
    fn matches(&self, words: &[String]) -> bool {
        words.len() >= self.0.len()
            && self.0.iter().zip(words).enumerate().all(|(i, (alternatives, word))| {
                alternatives.iter().any(|a| {
                    let program = (i == 0).then(|| Path::new(word).file_name()).flatten();
                    a == word || program.is_some_and(|name| name == a.as_str())
                })
            })
    }
}

/// One token of a rules file (Starlark).
#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    Str(String),
    Other(String),
    Punct(char),
}

/// Every `prefix_rule`'s pattern in a rules file. Anything but top-level calls whose
/// patterns are literal lists of strings is an error: tj does not evaluate Starlark.
fn parse_rules(text: &str) -> Result<Vec<Prefix>, String> {
    let tokens = tokenize(text)?;
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let Token::Ident(name) = &tokens[i] else {
            return Err(format!("unexpected {:?} at the top level", tokens[i]));
        };
        if tokens.get(i + 1) != Some(&Token::Punct('(')) {
            return Err(format!("`{name}` is not a call"));
        }
        let close = matching(&tokens, i + 1)?;
        if name == "prefix_rule" {
            out.push(pattern_of(&tokens[i + 2..close])?);
        }
        i = close + 1;
    }
    Ok(out)
}

/// The index of the bracket closing the one at `open`.
fn matching(tokens: &[Token], open: usize) -> Result<usize, String> {
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate().skip(open) {
        match token {
            Token::Punct('(' | '[' | '{') => depth += 1,
            Token::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return Ok(i);
                }
            }
            _ => {}
        }
    }
    Err("unbalanced brackets".to_owned())
}

/// The `pattern` argument (keyword, or the first positional) of a `prefix_rule` call.
fn pattern_of(args: &[Token]) -> Result<Prefix, String> {
    let start = match args.iter().position(|t| t == &Token::Ident("pattern".to_owned())) {
        Some(at) if args.get(at + 1) == Some(&Token::Punct('=')) => at + 2,
        _ if args.first() == Some(&Token::Punct('[')) => 0,
        _ => return Err("a `prefix_rule` without a literal `pattern`".to_owned()),
    };
    if args.get(start) != Some(&Token::Punct('[')) {
        return Err("a `prefix_rule` pattern that is not a list".to_owned());
    }
    let end = matching(args, start)?;
    if !matches!(args.get(end + 1), None | Some(Token::Punct(','))) {
        return Err("a `prefix_rule` pattern that is not a literal list".to_owned());
    }
    let mut items = Vec::new();
    let mut i = start + 1;
    while i < end {
        match &args[i] {
            Token::Str(s) => items.push(vec![s.clone()]),
            Token::Punct('[') => {
                let close = matching(args, i)?;
                let mut alternatives = Vec::new();
                for token in &args[i + 1..close] {
                    match token {
                        Token::Str(s) => alternatives.push(s.clone()),
                        Token::Punct(',') => {}
                        other => return Err(format!("unexpected {other:?} in a pattern")),
                    }
                }
                items.push(alternatives);
                i = close;
            }
            Token::Punct(',') => {}
            other => return Err(format!("unexpected {other:?} in a pattern")),
        }
        i += 1;
    }
    if items.is_empty() {
        return Err("an empty `prefix_rule` pattern".to_owned());
    }
    Ok(Prefix(items))
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '#' {
            while chars.next().is_some_and(|c| c != '\n') {}
        } else if c == '"' || c == '\'' {
            chars.next();
            tokens.push(Token::Str(string(&mut chars, c)?));
        } else if c.is_alphanumeric() || c == '_' {
            let mut word = String::new();
            while let Some(&c) = chars.peek().filter(|c| c.is_alphanumeric() || **c == '_') {
                word.push(c);
                chars.next();
            }
            if word.starts_with(|c: char| c.is_ascii_digit()) {
                tokens.push(Token::Other(word));
            } else {
                tokens.push(Token::Ident(word));
            }
        } else {
            chars.next();
            tokens.push(Token::Punct(c));
        }
    }
    Ok(tokens)
}

/// A string literal after its opening `quote`; triple quotes and prefixes are refused.
fn string(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    quote: char,
) -> Result<String, String> {
    let mut out = String::new();
    if chars.peek() == Some(&quote) {
        chars.next();
        if chars.peek() == Some(&quote) {
            return Err("a triple-quoted string".to_owned());
        }
        return Ok(out);
    }
    while let Some(c) = chars.next() {
        match c {
            c if c == quote => return Ok(out),
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(c @ ('\\' | '"' | '\'')) => out.push(c),
                other => return Err(format!("an escape tj does not read: \\{other:?}")),
            },
            '\n' => return Err("an unterminated string".to_owned()),
            c => out.push(c),
        }
    }
    Err("an unterminated string".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn prefix_rules_are_read_with_their_alternatives() {
        let text = r#"
# a comment
prefix_rule(
    pattern = ["cargo", ["publish", "yank"]],
    decision = "forbidden",
    justification = "not from an agent",
    match = [["cargo", "publish"]],
)
host_executable(name = "git", paths = ["/usr/bin/git"])
prefix_rule(["npm", 'test'], decision="prompt")
"#;
        let rules = parse_rules(text).unwrap();
        assert_eq!(rules.len(), 2);
        assert!(rules[0].matches(&words("cargo publish --dry-run")));
        assert!(rules[0].matches(&words("/usr/local/bin/cargo yank")));
        assert!(!rules[0].matches(&words("cargo test")));
        assert!(rules[1].matches(&words("npm test")));
        assert!(!rules[1].matches(&words("npm")));
    }

    #[test]
    fn starlark_tj_does_not_evaluate_is_an_error() {
        assert!(parse_rules("P = [\"cargo\"]\nprefix_rule(pattern = P)").is_err());
        assert!(parse_rules("prefix_rule(pattern = [\"a\"] + [\"b\"])").is_err());
        assert!(parse_rules("prefix_rule(pattern = [\"a\"]").is_err());
        assert!(parse_rules("prefix_rule(pattern = [\"\"\"a\"\"\"])").is_err());
        assert_eq!(parse_rules("").unwrap(), vec![]);
    }
}
