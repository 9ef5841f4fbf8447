//! Cursor's agent (`cursor-agent`), `preToolUse` hook on `Shell`.
//!
//! The answer is `{"permission": …, "updated_input": {…}}` and `{}` when tj does not rewrite.
//! Cursor's documentation was not checked (HARNESSES.md 1): the permission is judged against
//! the allow and deny lists of Cursor's CLI configuration as far as they can be read, and
//! `ask` is the default, so nothing the user did not allow runs unasked:
//!
//! | original (every simple command)                     | answer            |
//! |-----------------------------------------------------|-------------------|
//! | matches a `Shell(…)` deny entry, or the file does not parse | `{}`      |
//! | starts with the words of a `Shell(…)` allow entry  | `allow` + rewrite |
//! | otherwise                                           | `ask` + rewrite   |
//!
//! The lists are `permissions.allow`/`permissions.deny` in `~/.cursor/cli-config.json` and
//! in `.cursor/cli.json` of the workspace root (the payload's first `workspace_roots`, else
//! its `cwd`). An entry `Shell(git)` is taken to cover `git …`, `Shell(git push:*)` and
//! `Shell(git push *)` to cover `git push …`; a deny entry with another `*` is taken to
//! cover everything starting with its text before the `*`; an allow entry with one allows
//! nothing. A deny entry naming tj itself refuses every rewrite.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::permissions::strip_wrappers_words;
use super::{
    Context, Skip, payload_cwd, read_json, rewrite_for, shell_call, starts_with_words, with_command,
};
use crate::host::Host;

pub(super) fn answer(payload: &Value, ctx: &Context<'_>) -> Result<Value, Skip> {
    let call = shell_call(payload, "tool_name", &["Shell"], "tool_input")?;
    let rewrite = rewrite_for(call.command, Host::Cursor, ctx)?;
    let lists = load(payload, ctx)?;
    let tj = ctx.tj.to_string_lossy().into_owned();
    let mut allowed = true;
    for segment in &rewrite.segments {
        let forms = [segment.words.as_slice(), strip_wrappers_words(&segment.words)];
        if forms.iter().any(|words| lists.denies(words, &segment.text)) {
            return Err(Skip::new(format!("a deny entry matches `{}`", segment.text)));
        }
        allowed &= forms.iter().all(|words| lists.allows(words));
    }
    if lists.denies(std::slice::from_ref(&tj), &tj) {
        return Err(Skip::new("a deny entry matches tj itself"));
    }
    let permission = if allowed { "allow" } else { "ask" };
    Ok(
        json!({ "permission": permission, "updated_input": with_command(call.input, &rewrite.line) }),
    )
}

/// One `Shell(…)` entry.
#[derive(Debug)]
enum Entry {
    /// `Shell`, `Shell(*)`: every command.
    All,
    /// The words a command must start with.
    Words(Vec<String>),
    /// A pattern with an inner `*`: its text before the `*`.
    Glob(String),
}

#[derive(Debug, Default)]
struct Lists {
    allow: Vec<Entry>,
    deny: Vec<Entry>,
}

impl Lists {
    fn denies(&self, words: &[String], text: &str) -> bool {
        let joined = words.join(" ");
        self.deny.iter().any(|entry| match entry {
            Entry::All => true,
            Entry::Words(prefix) => starts_with_words(words, prefix),
            Entry::Glob(start) => {
                joined.starts_with(start.as_str()) || text.trim().starts_with(start.as_str())
            }
        })
    }

    fn allows(&self, words: &[String]) -> bool {
        self.allow.iter().any(|entry| match entry {
            Entry::All => true,
            Entry::Words(prefix) => starts_with_words(words, prefix),
            Entry::Glob(_) => false,
        })
    }
}

fn load(payload: &Value, ctx: &Context<'_>) -> Result<Lists, Skip> {
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(home) = &ctx.env.home {
        files.push(home.join(".cursor/cli-config.json"));
    }
    let root = payload
        .get("workspace_roots")
        .and_then(Value::as_array)
        .and_then(|roots| roots.first())
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .or_else(|| payload_cwd(payload, ctx.env));
    if let Some(root) = root {
        files.push(root.join(".cursor/cli.json"));
    }
    let mut lists = Lists::default();
    for path in &files {
        if let Some(config) = read_json(path, false)? {
            add(&mut lists, &config)
                .map_err(|why| Skip::new(format!("`{}`: {why}", path.display())))?;
        }
    }
    Ok(lists)
}

fn add(lists: &mut Lists, config: &Value) -> Result<(), String> {
    let Some(permissions) = config.get("permissions") else { return Ok(()) };
    for (key, list) in [("allow", &mut lists.allow), ("deny", &mut lists.deny)] {
        let Some(entries) = permissions.get(key) else { continue };
        let entries =
            entries.as_array().ok_or_else(|| format!("`permissions.{key}` is not a list"))?;
        for entry in entries {
            let entry =
                entry.as_str().ok_or_else(|| format!("`permissions.{key}` has a non-string"))?;
            if let Some(entry) = parse(entry)? {
                list.push(entry);
            }
        }
    }
    Ok(())
}

/// One entry: `None` for another tool's.
fn parse(entry: &str) -> Result<Option<Entry>, String> {
    let entry = entry.trim();
    if entry == "Shell" {
        return Ok(Some(Entry::All));
    }
    let Some(inner) = entry.strip_prefix("Shell(") else { return Ok(None) };
    let inner = inner.strip_suffix(')').ok_or_else(|| format!("unclosed entry `{entry}`"))?.trim();
    let inner =
        inner.strip_suffix(":*").or_else(|| inner.strip_suffix(" *")).unwrap_or(inner).trim();
    if inner.is_empty() || inner == "*" {
        return Ok(Some(Entry::All));
    }
    if let Some(star) = inner.find('*') {
        return Ok(Some(Entry::Glob(inner[..star].to_owned())));
    }
    Ok(Some(Entry::Words(inner.split_whitespace().map(str::to_owned).collect())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn entries_cover_what_their_words_start() {
        let mut lists = Lists::default();
        add(
            &mut lists,
            &json!({"permissions": {"allow": ["Shell(cargo)", "Read(**)", "Shell(npm run *)"], "deny": ["Shell(cargo publish:*)", "Shell(rm*)"]}}),
        )
        .unwrap();
        assert!(lists.allows(&words("cargo test")));
        assert!(lists.allows(&words("npm run build")));
        assert!(!lists.allows(&words("npm test")));
        assert!(lists.denies(&words("cargo publish"), "cargo publish"));
        assert!(lists.denies(&words("rmdir x"), "rmdir x"));
        assert!(!lists.denies(&words("cargo test"), "cargo test"));
        assert!(parse("Shell(ls").is_err());
    }
}
