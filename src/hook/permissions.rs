//! Claude Code's `permissions.{deny,ask,allow}` rules for its `Bash` tool, as Claude Code
//! 2.1 matches them (read from the shipped 2.1.197 bundle, the matcher behind
//! code.claude.com/docs/en/permissions):
//!
//! - `Bash` and `Bash(*)` match every command;
//! - `Bash(npm run build)` matches exactly that command;
//! - `Bash(cargo test:*)` (legacy prefix) matches `cargo test` and `cargo test …`;
//! - any other unescaped `*` is a wildcard over any characters, spaces included; a pattern
//!   whose single `*` ends it after a space (`Bash(ls *)`) also matches the bare `ls`;
//!   `\*` is a literal star and `\\` a backslash.
//!
//! Runs of spaces and tabs count as one space. Rules for other tools are ignored. A `Bash(`
//! rule tj cannot read is an error: the hook then answers nothing and Claude Code judges the
//! untouched command itself.
//!
//! A command is judged in several *forms* (as written; without leading assignments and
//! process wrappers such as `timeout 60`, which Claude Code strips before matching; and as
//! its plain words). Deny and ask rules count when they match any form, allow rules only
//! when every form is allowed, so a doubt never turns into an allow.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Skip, read_json};

/// One `Bash` rule's pattern.
#[derive(Debug)]
pub(super) enum Pattern {
    /// `Bash`, `Bash(*)`.
    Any,
    /// `Bash(npm run build)`.
    Exact(String),
    /// `Bash(cargo test:*)`.
    Prefix(String),
    /// `Bash(git * main)`.
    Wildcard(Glob),
}

impl Pattern {
    /// Reads one rule string: `Ok(None)` for a rule about another tool.
    pub(super) fn parse(rule: &str) -> Result<Option<Pattern>, String> {
        let rule = rule.trim();
        let (tool, content) = match rule.find('(') {
            None => (rule, None),
            Some(open) => {
                let Some(content) = rule[open + 1..].strip_suffix(')') else {
                    if rule.starts_with("Bash") {
                        return Err(format!("unclosed rule `{rule}`"));
                    }
                    return Ok(None);
                };
                (&rule[..open], Some(content))
            }
        };
        if tool != "Bash" {
            return Ok(None);
        }
        let Some(content) = content else { return Ok(Some(Pattern::Any)) };
        let content = content.replace("\\(", "(").replace("\\)", ")");
        let content = normalize(content.trim());
        if content.is_empty() {
            return Err("empty rule `Bash()`".to_owned());
        }
        if content == "*" {
            return Ok(Some(Pattern::Any));
        }
        if let Some(prefix) = content.strip_suffix(":*")
            && !prefix.is_empty()
        {
            return Ok(Some(Pattern::Prefix(prefix.to_owned())));
        }
        if has_wildcard(&content) {
            return Ok(Some(Pattern::Wildcard(Glob::new(&content))));
        }
        Ok(Some(Pattern::Exact(content)))
    }

    /// Returns true if and only if this pattern matches `command` (already normalised).
    pub(super) fn matches(&self, command: &str) -> bool {
        match self {
            Pattern::Any => true,
            Pattern::Exact(text) => command == text,
            Pattern::Prefix(prefix) => {
                command == prefix
                    || command.strip_prefix(prefix.as_str()).is_some_and(|r| r.starts_with(' '))
            }
            Pattern::Wildcard(glob) => glob.matches(command),
        }
    }
}

/// Returns true if and only if `text` has a `*` not escaped by a backslash.
fn has_wildcard(text: &str) -> bool {
    let mut escaped = false;
    for c in text.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '*' if !escaped => return true,
            _ => escaped = false,
        }
    }
    false
}

/// A wildcard pattern as the literal pieces between its stars, matched by hand: compiling
/// one regular expression per rule cost about 0.3 ms each, and users keep dozens of rules.
#[derive(Debug)]
pub(super) struct Glob {
    /// The literal text between unescaped stars (one more piece than stars).
    pieces: Vec<String>,
    /// `ls *`: the only star ends the pattern after a space, so the bare `ls` matches too.
    optional_tail: bool,
    /// The same pattern with each `/**/` read as `/` (a path with no directory between).
    collapsed: Option<Box<Glob>>,
}

impl Glob {
    fn new(pattern: &str) -> Glob {
        let mut pieces = Vec::new();
        let mut piece = String::new();
        let mut chars = pattern.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if matches!(chars.peek(), Some('*' | '\\')) => {
                    piece.push(chars.next().unwrap_or('\\'));
                }
                '*' => pieces.push(std::mem::take(&mut piece)),
                c => piece.push(c),
            }
        }
        pieces.push(piece);
        let optional_tail = pieces.len() == 2 && pieces[1].is_empty() && pieces[0].ends_with(' ');
        let collapsed =
            pattern.contains("/**/").then(|| Box::new(Glob::new(&pattern.replace("/**/", "/"))));
        Glob { pieces, optional_tail, collapsed }
    }

    fn matches(&self, text: &str) -> bool {
        if self.optional_tail && text == self.pieces[0].trim_end_matches(' ') {
            return true;
        }
        if self.collapsed.as_ref().is_some_and(|g| g.matches(text)) {
            return true;
        }
        let (first, rest) =
            self.pieces.split_first().map_or(("", &[][..]), |(f, r)| (f.as_str(), r));
        let Some(mut text) = text.strip_prefix(first) else { return false };
        let Some((last, middle)) = rest.split_last() else { return text.is_empty() };
        // Leftmost placement of each middle piece is optimal for `*`-only patterns.
        for piece in middle {
            match text.find(piece.as_str()) {
                Some(at) => text = &text[at + piece.len()..],
                None => return false,
            }
        }
        text.ends_with(last.as_str())
    }
}

/// `text` with each run of spaces and tabs made one space.
pub(super) fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = false;
    for c in text.chars() {
        if c == ' ' || c == '\t' {
            if !blank {
                out.push(' ');
            }
            blank = true;
        } else {
            out.push(c);
            blank = false;
        }
    }
    out
}

/// The merged rules of every settings layer.
#[derive(Debug, Default)]
pub(super) struct Rules {
    pub(super) deny: Vec<Pattern>,
    pub(super) ask: Vec<Pattern>,
    pub(super) allow: Vec<Pattern>,
}

/// What a command gets under the rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// A deny rule matches.
    Deny,
    /// An ask rule matches (and no deny rule).
    Ask,
    /// Allow rules match every form (and no deny or ask rule).
    Allow,
    /// No rule decides; the permission mode does.
    Unmatched,
}

impl Rules {
    /// The verdict for one command, judged in all its `forms`.
    pub(super) fn judge(&self, forms: &[String]) -> Verdict {
        let any = |set: &[Pattern]| forms.iter().any(|f| set.iter().any(|p| p.matches(f)));
        if any(&self.deny) {
            Verdict::Deny
        } else if any(&self.ask) {
            Verdict::Ask
        } else if !forms.is_empty() && forms.iter().all(|f| self.allow.iter().any(|p| p.matches(f)))
        {
            Verdict::Allow
        } else {
            Verdict::Unmatched
        }
    }
}

/// Where the settings files are.
#[derive(Debug, Default)]
pub(super) struct Layers {
    /// Managed policy files (`/etc/claude-code/managed-settings.json` and its `.d`).
    pub(super) managed: Vec<PathBuf>,
    /// Files whose every rule counts (user, project and local settings).
    pub(super) full: Vec<PathBuf>,
    /// Files whose deny and ask rules count but not their allow rules: project settings of
    /// directories Claude Code may or may not have started in (the payload's `cwd` and its
    /// parents, when they are not the project directory). Counting their denials costs at
    /// worst a rewrite; counting their allows could skip a prompt.
    pub(super) cautious: Vec<PathBuf>,
}

impl Layers {
    /// The layers for a session in `project` (Claude Code's project directory) whose command
    /// runs in `cwd`.
    pub(super) fn new(
        system_root: &Path,
        user_dir: Option<PathBuf>,
        project: Option<&Path>,
        cwd: Option<&Path>,
    ) -> Layers {
        let mut layers = Layers::default();
        let managed = if cfg!(target_os = "macos") {
            system_root.join("Library/Application Support/ClaudeCode")
        } else {
            system_root.join("etc/claude-code")
        };
        layers.managed.push(managed.join("managed-settings.json"));
        if let Ok(entries) = std::fs::read_dir(managed.join("managed-settings.d")) {
            let mut more: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect();
            more.sort();
            layers.managed.extend(more);
        }
        if let Some(dir) = user_dir {
            layers.full.push(dir.join("settings.json"));
        }
        let project_files = |dir: &Path| {
            [dir.join(".claude/settings.json"), dir.join(".claude/settings.local.json")]
        };
        if let Some(project) = project {
            layers.full.extend(project_files(project));
        }
        for dir in cwd.into_iter().flat_map(Path::ancestors) {
            if Some(dir) != project {
                layers.cautious.extend(project_files(dir));
            }
        }
        layers
    }

    /// Reads every layer; an error when one exists but cannot be read or parsed, or holds a
    /// `Bash` rule tj cannot read.
    pub(super) fn load(&self) -> Result<Rules, Skip> {
        let mut rules = Rules::default();
        let mut managed_only = false;
        for path in &self.managed {
            if let Some(settings) = read_json(path, false)? {
                managed_only |= settings
                    .get("allowManagedPermissionRulesOnly")
                    .is_some_and(|v| v == &Value::Bool(true));
                add(&mut rules, &settings, path, true)?;
            }
        }
        for (path, allow) in
            self.full.iter().map(|p| (p, true)).chain(self.cautious.iter().map(|p| (p, false)))
        {
            if self.full.contains(path) && !allow {
                continue;
            }
            if let Some(settings) = read_json(path, false)? {
                // Under `allowManagedPermissionRulesOnly` only the managed allows count; the
                // other layers' denials are kept all the same.
                add(&mut rules, &settings, path, allow && !managed_only)?;
            }
        }
        Ok(rules)
    }
}

/// Adds the `permissions` of one settings file.
fn add(rules: &mut Rules, settings: &Value, path: &Path, with_allow: bool) -> Result<(), Skip> {
    let Some(permissions) = settings.get("permissions") else { return Ok(()) };
    let bad = |what: &str| Skip::new(format!("`{}`: {what}", path.display()));
    let permissions =
        permissions.as_object().ok_or_else(|| bad("`permissions` is not an object"))?;
    for (key, list) in
        [("deny", &mut rules.deny), ("ask", &mut rules.ask), ("allow", &mut rules.allow)]
    {
        let Some(entries) = permissions.get(key) else { continue };
        let entries =
            entries.as_array().ok_or_else(|| bad(&format!("`permissions.{key}` is not a list")))?;
        for entry in entries {
            let text = entry
                .as_str()
                .ok_or_else(|| bad(&format!("`permissions.{key}` has a non-string")))?;
            let pattern = Pattern::parse(text).map_err(|why| bad(&why))?;
            if let Some(pattern) = pattern
                && (key != "allow" || with_allow)
            {
                list.push(pattern);
            }
        }
    }
    Ok(())
}

/// The forms a simple command is judged in: its text, its text without leading assignments
/// and wrappers, and the same two for its plain `words`; each normalised, no duplicates.
pub(super) fn forms(text: &str, words: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |form: String| {
        let form = normalize(form.trim());
        if !form.is_empty() && !out.contains(&form) {
            out.push(form);
        }
    };
    push(text.to_owned());
    push(strip_wrappers_text(text).to_owned());
    if !words.is_empty() {
        push(words.join(" "));
        push(strip_wrappers_words(words).join(" "));
    }
    out
}

/// Programs that only run the rest of their arguments, with how many option arguments
/// follow them before the command (`timeout` takes a duration).
fn wrapper(word: &str) -> Option<usize> {
    match word {
        "timeout" => Some(1),
        "env" | "time" | "nice" | "nohup" | "stdbuf" | "command" | "exec" => Some(0),
        _ => None,
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `words` after leading assignments, wrappers and their options.
pub(super) fn strip_wrappers_words(words: &[String]) -> &[String] {
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        if is_assignment(w) || w.starts_with('-') && i > 0 && wrapper(&words[i - 1]).is_some() {
            i += 1;
        } else if let Some(args) = wrapper(w) {
            i += 1;
            while words.get(i).is_some_and(|w| w.starts_with('-')) {
                i += 1;
                // `nice -n 5`, `timeout -s KILL 60`: an option's value.
                if matches!(words[i - 1].as_str(), "-n" | "-s" | "-k" | "-u") {
                    i += 1;
                }
            }
            i += args;
        } else {
            break;
        }
    }
    words.get(i..).unwrap_or_default()
}

/// The source words of `text` with their byte offsets, quotes kept (a simple command of an
/// eligible line has no substitutions, so quotes and backslashes are all there is).
fn source_words(text: &str) -> Vec<(usize, &str)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
            i += 1;
        }
        let start = i;
        let mut quote = None;
        while i < bytes.len() {
            let b = bytes[i];
            match quote {
                Some(q) if b == q => quote = None,
                Some(b'"') if b == b'\\' => i += 1,
                Some(_) => {}
                None if b == b'\'' || b == b'"' => quote = Some(b),
                None if b == b'\\' => i += 1,
                None if b == b' ' || b == b'\t' => break,
                None => {}
            }
            i += 1;
        }
        if i > start {
            out.push((start, text.get(start..i.min(text.len())).unwrap_or_default()));
        }
    }
    out
}

/// `text` from its first word that is neither an assignment nor a wrapper or its option.
fn strip_wrappers_text(text: &str) -> &str {
    let words = source_words(text);
    let plain: Vec<String> = words.iter().map(|(_, w)| (*w).to_owned()).collect();
    let rest = strip_wrappers_words(&plain).len();
    match words.len().checked_sub(rest).and_then(|skip| words.get(skip)) {
        Some((at, _)) => &text[*at..],
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(rule: &str) -> Pattern {
        Pattern::parse(rule).unwrap().unwrap()
    }

    #[test]
    fn rules_match_as_claude_code_matches_them() {
        assert!(p("Bash").matches("rm -rf /"));
        assert!(p("Bash(*)").matches("anything"));
        assert!(p("Bash(npm run build)").matches("npm run build"));
        assert!(!p("Bash(npm run build)").matches("npm run build --prod"));
        assert!(p("Bash(cargo test:*)").matches("cargo test"));
        assert!(p("Bash(cargo test:*)").matches("cargo test --lib"));
        assert!(!p("Bash(cargo test:*)").matches("cargo testing"));
        assert!(p("Bash(cargo test *)").matches("cargo test"));
        assert!(p("Bash(cargo test *)").matches("cargo test --lib"));
        assert!(!p("Bash(ls *)").matches("lsof"));
        assert!(p("Bash(ls*)").matches("lsof"));
        assert!(p("Bash(git * main)").matches("git checkout main"));
        assert!(!p("Bash(git * main)").matches("git checkout main2"));
        assert!(p("Bash(*tj*)").matches("/usr/bin/tj run -- cargo test"));
        assert!(p("Bash(echo \\* *)").matches("echo * x"));
        assert!(!p("Bash(echo \\* *)").matches("echo y x"));
        assert!(p("Bash(a.b *)").matches("a.b c"));
        assert!(!p("Bash(a.b *)").matches("axb c"));
        assert!(p("Bash(a*b*c)").matches("aXbYc"));
        assert!(p("Bash(a*b*c)").matches("abc"));
        assert!(!p("Bash(a*b*c)").matches("acb"));
        assert!(!p("Bash(ab*b)").matches("ab"));
        assert!(p("Bash(*install)").matches("npm install"));
        assert!(p("Bash(cat /a/**/b)").matches("cat /a/b"));
        assert!(p("Bash(cat /a/**/b)").matches("cat /a/x/y/b"));
        assert!(p("Bash(echo *)").matches("echo a\nb"));
    }

    #[test]
    fn other_tools_are_ignored_and_broken_bash_rules_are_errors() {
        assert!(Pattern::parse("Read(./.env)").unwrap().is_none());
        assert!(Pattern::parse("WebFetch").unwrap().is_none());
        assert!(Pattern::parse("Bash(cargo test").is_err());
        assert!(Pattern::parse("Bash()").is_err());
    }

    #[test]
    fn deny_beats_ask_beats_allow_and_allow_needs_every_form() {
        let rules = Rules {
            deny: vec![p("Bash(cargo publish:*)")],
            ask: vec![p("Bash(npm *)")],
            allow: vec![p("Bash(cargo *)"), p("Bash(npm *)")],
        };
        let f = |t: &str| forms(t, &[]);
        assert_eq!(rules.judge(&f("cargo publish")), Verdict::Deny);
        assert_eq!(rules.judge(&f("timeout 60 cargo publish")), Verdict::Deny);
        assert_eq!(rules.judge(&f("FOO=1 cargo publish --dry-run")), Verdict::Deny);
        assert_eq!(rules.judge(&f("npm test")), Verdict::Ask);
        assert_eq!(rules.judge(&f("cargo test")), Verdict::Allow);
        // Claude Code would not strip `FOO=1` for an allow rule: no allow here.
        assert_eq!(rules.judge(&f("FOO=1 cargo test")), Verdict::Unmatched);
        assert_eq!(rules.judge(&f("make")), Verdict::Unmatched);
    }

    #[test]
    fn wrappers_and_assignments_are_stripped_for_the_second_form() {
        assert_eq!(
            strip_wrappers_text("A='x y' timeout -s KILL 60 nice -n 5 cargo test"),
            "cargo test"
        );
        assert_eq!(strip_wrappers_text("env A=1 cargo test"), "cargo test");
        assert_eq!(strip_wrappers_text("cargo test"), "cargo test");
        assert_eq!(forms("cargo  test", &[]), ["cargo test"]);
    }
}
