//! tj's entry in a harness's JSON hook settings: what it looks like per host, how tj finds
//! its own entries again, and the text of the file after an install or an uninstall. Pure:
//! text in, text out; `super` reads and writes the files.
//!
//! **Which entries are tj's.** A hook entry is tj's if and only if its command, split into
//! words as a POSIX shell would, is exactly three words: a program whose file name is `tj`,
//! `hook`, and this host's name (or an alias of it). The program's directory does not
//! matter, so an entry left by a tj that has since moved is still tj's and is updated in
//! place, not duplicated; a user's own wrapper (`my-tj-wrapper hook codex`, `tj hook codex
//! --debug`) is not tj's and is left alone.

use super::jsonedit::{self, Edit, Member, Node, Out, Style};
use crate::host::Host;

/// How one host lays out its hooks in its JSON settings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    /// The key under `hooks` that lists the pre-tool-use hooks.
    pub(crate) event: &'static str,
    /// Entries sit in matcher groups (`{"matcher": …, "hooks": [entry]}`), not directly in
    /// the event's array.
    pub(crate) grouped: bool,
    /// The entry's key holding the shell command.
    pub(crate) command_key: &'static str,
    /// A new file starts with `"version": 1` (Cursor, Copilot CLI).
    pub(crate) versioned: bool,
    /// The file may hold `//` and `/* */` comments (Gemini CLI).
    pub(crate) comments: bool,
}

/// The layout of `host`'s hook settings; `None` for OpenCode, which takes a plugin file.
pub(crate) fn layout(host: Host) -> Option<Layout> {
    let base = Layout {
        event: "PreToolUse",
        grouped: true,
        command_key: "command",
        versioned: false,
        comments: false,
    };
    match host {
        Host::ClaudeCode | Host::Codex => Some(base),
        Host::Gemini => Some(Layout { event: "BeforeTool", comments: true, ..base }),
        Host::Cursor => {
            Some(Layout { event: "preToolUse", grouped: false, versioned: true, ..base })
        }
        Host::Copilot => Some(Layout {
            event: "preToolUse",
            grouped: false,
            command_key: "bash",
            versioned: true,
            ..base
        }),
        Host::OpenCode => None,
    }
}

/// Seconds a harness waits for the hook before going on without it.
pub(crate) const TIMEOUT_SECS: u64 = 10;

/// What tj adds to the event's array: a matcher group holding tj's entry, or the entry.
pub(crate) fn item(host: Host, command: &str) -> Out {
    let cmd = || Out::Str(command.to_owned());
    let kind = || Out::Str("command".to_owned());
    let group = |matcher: &str, entry: Out| {
        Out::Obj(vec![("matcher", Out::Str(matcher.to_owned())), ("hooks", Out::Arr(vec![entry]))])
    };
    let timeout = Out::Int(TIMEOUT_SECS);
    match host {
        Host::ClaudeCode => group(
            "Bash",
            Out::Obj(vec![("type", kind()), ("command", cmd()), ("timeout", timeout)]),
        ),
        Host::Codex => group(
            "^Bash$",
            Out::Obj(vec![("type", kind()), ("command", cmd()), ("timeout", timeout)]),
        ),
        // Gemini CLI counts milliseconds.
        Host::Gemini => group(
            "run_shell_command",
            Out::Obj(vec![
                ("name", Out::Str("tj".to_owned())),
                ("type", kind()),
                ("command", cmd()),
                ("timeout", Out::Int(TIMEOUT_SECS * 1000)),
            ]),
        ),
        Host::Cursor => Out::Obj(vec![
            ("type", kind()),
            ("matcher", Out::Str("Shell".to_owned())),
            ("command", cmd()),
        ]),
        Host::Copilot => Out::Obj(vec![
            ("type", kind()),
            ("bash", cmd()),
            ("timeoutSec", Out::Int(TIMEOUT_SECS)),
        ]),
        Host::OpenCode => Out::Obj(Vec::new()),
    }
}

/// `path` as one shell word: as it is if it holds only `[A-Za-z0-9_./+-]`, else in single
/// quotes.
pub(crate) fn shell_quote(path: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./+-".contains(c);
    if !path.is_empty() && path.chars().all(plain) {
        path.to_owned()
    } else {
        format!("'{}'", path.replace('\'', r"'\''"))
    }
}

/// The hook command for `host` with tj at `tj`.
pub(crate) fn command(tj: &str, host: Host) -> String {
    format!("{} hook {}", shell_quote(tj), host.name())
}

/// `command` split into words as a POSIX shell would (quotes and backslashes), or `None`
/// when it holds anything a plain word split cannot decide (`$`, backquotes, operators).
pub(crate) fn split_words(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => w.push(c),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('"' | '\\') => w.push(c),
                            c => {
                                w.push('\\');
                                w.push(c);
                            }
                        },
                        '$' | '`' => return None,
                        c => w.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).push(chars.next()?),
            '$' | '`' | ';' | '&' | '|' | '<' | '>' | '(' | ')' | '*' | '?' | '[' | '#' | '~' => {
                return None;
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

/// The program of `command` if it is tj's hook command for `host` (see the module doc).
pub(crate) fn tj_program(command: &str, host: Host) -> Option<String> {
    let words = split_words(command)?;
    let [program, hook, name] = <[String; 3]>::try_from(words).ok()?;
    let file = std::path::Path::new(&program).file_name()?;
    (file == "tj" && hook == "hook" && Host::parse(&name) == Some(host)).then_some(program)
}

/// One of tj's entries found in the file.
#[derive(Clone, Debug)]
pub(crate) struct Found {
    /// The entry's command, and where its string sits.
    pub(crate) command: String,
    pub(crate) command_node: Node,
    /// The program the command runs.
    pub(crate) program: String,
    /// Where the entry sits: index of the group (or entry) in the event's array, and of the
    /// entry in the group's `hooks`.
    pub(crate) group: usize,
    pub(crate) index: usize,
    /// The matcher of the entry's group (grouped layouts) or of the entry itself.
    pub(crate) matcher: Option<String>,
    /// The entry's `timeout`, when it is a whole number.
    pub(crate) timeout: Option<u64>,
    /// The keys of the entry and of its group, in file order.
    pub(crate) keys: Vec<String>,
}

/// The parsed file and the containers on the way to tj's entries.
pub(crate) struct Doc {
    pub(crate) text: String,
    pub(crate) root: Node,
    pub(crate) style: Style,
}

/// Parses `text` as `layout`'s settings: an object whose `hooks` (if present) is an object
/// whose event key (if present) is an array. Any other shape is an error naming the key.
pub(crate) fn parse(text: &str, layout: &Layout) -> Result<Doc, String> {
    let root =
        jsonedit::parse(text, layout.comments).map_err(|e| format!("not valid JSON: {e}"))?;
    if root.members().is_none() {
        return Err(format!("the top level is {}, not an object", root.kind()));
    }
    if let Some(hooks) = root.get("hooks")? {
        if hooks.value.members().is_none() {
            return Err(format!("`hooks` is {}, not an object", hooks.value.kind()));
        }
        if let Some(event) = hooks.value.get(layout.event)?
            && event.value.elements().is_none()
        {
            let kind = event.value.kind();
            return Err(format!("`hooks.{}` is {kind}, not an array", layout.event));
        }
    }
    let style = Style::detect(text, &root);
    Ok(Doc { text: text.to_owned(), root, style })
}

fn hooks_member(doc: &Doc) -> Option<&Member> {
    doc.root.get("hooks").ok().flatten()
}

fn event_member<'a>(doc: &'a Doc, layout: &Layout) -> Option<&'a Member> {
    hooks_member(doc)?.value.get(layout.event).ok().flatten()
}

/// tj's entries for `host` in `doc`, in file order.
pub(crate) fn find(doc: &Doc, layout: &Layout, host: Host) -> Vec<Found> {
    let mut found = Vec::new();
    let Some(event) = event_member(doc, layout) else { return found };
    for (group, item) in event.value.elements().unwrap_or_default().iter().enumerate() {
        let entries: Vec<&Node> = if layout.grouped {
            match item.get("hooks").ok().flatten().and_then(|h| h.value.elements()) {
                Some(entries) => entries.iter().collect(),
                None => continue,
            }
        } else {
            vec![item]
        };
        for (index, entry) in entries.into_iter().enumerate() {
            let Some(member) = entry.get(layout.command_key).ok().flatten() else { continue };
            let Some(command) = member.value.as_str() else { continue };
            let Some(program) = tj_program(command, host) else { continue };
            let text_of = |n: &Node| doc.text[n.start..n.end].to_owned();
            let value =
                |node: &Node, key: &str| node.get(key).ok().flatten().map(|m| m.value.clone());
            let matcher_node = if layout.grouped { item } else { entry };
            let keys = [item, entry]
                .iter()
                .flat_map(|n| n.members().unwrap_or_default().iter().map(|m| m.key.clone()))
                .collect();
            found.push(Found {
                command: command.to_owned(),
                command_node: member.value.clone(),
                program,
                group,
                index,
                matcher: value(matcher_node, "matcher").and_then(|n| n.as_str().map(str::to_owned)),
                timeout: value(entry, "timeout").and_then(|n| text_of(&n).parse().ok()),
                keys,
            });
        }
    }
    found
}

/// What an install or uninstall does to a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    /// Nothing to do.
    None,
    /// Write this text.
    Write(String),
    /// Remove the file: nothing but what tj's install puts in a new file is left.
    Remove,
}

/// The text of a new settings file holding only tj's entry.
pub(crate) fn new_file(layout: &Layout, host: Host, command: &str) -> String {
    let style = Style::default();
    let hooks = Out::Obj(vec![(layout.event, Out::Arr(vec![item(host, command)]))]);
    let mut root = Vec::new();
    if layout.versioned {
        root.push(("version", Out::Int(1)));
    }
    root.push(("hooks", hooks));
    format!("{}\n", jsonedit::render(&Out::Obj(root), &style, ""))
}

/// The file after installing `command` for `host`: tj's entries that run another command
/// (an older path) get this one; with none, one is appended at the end of the event's
/// array, creating `hooks` and the array as needed.
pub(crate) fn install(
    text: &str,
    layout: &Layout,
    host: Host,
    command: &str,
) -> Result<Change, String> {
    let doc = parse(text, layout)?;
    let found = find(&doc, layout, host);
    if !found.is_empty() {
        // Last first, so the earlier spans stay valid.
        let mut out = text.to_owned();
        for f in found.iter().rev().filter(|f| f.command != command) {
            out = jsonedit::replace(&f.command_node, &Out::Str(command.to_owned())).apply(&out);
        }
        return Ok(if out == text { Change::None } else { Change::Write(out) });
    }
    let edit = match (hooks_member(&doc), event_member(&doc, layout)) {
        (_, Some(event)) => {
            jsonedit::append(text, &event.value, None, &item(host, command), &doc.style)
        }
        (Some(hooks), None) => {
            let value = Out::Arr(vec![item(host, command)]);
            jsonedit::append(text, &hooks.value, Some(layout.event), &value, &doc.style)
        }
        (None, None) => {
            let value = Out::Obj(vec![(layout.event, Out::Arr(vec![item(host, command)]))]);
            jsonedit::append(text, &doc.root, Some("hooks"), &value, &doc.style)
        }
    };
    Ok(Change::Write(edit.apply(text)))
}

/// The file after removing every one of tj's entries for `host`, with each matcher group,
/// event array and `hooks` object left empty by that; [`Change::Remove`] when what is left
/// is an empty object (or only `"version": 1` where tj writes that).
pub(crate) fn uninstall(text: &str, layout: &Layout, host: Host) -> Result<Change, String> {
    let mut out = text.to_owned();
    loop {
        let doc = parse(&out, layout)?;
        let Some(first) = find(&doc, layout, host).into_iter().next() else { break };
        out = removal(&doc, layout, &first).apply(&out);
    }
    if out == text {
        return Ok(Change::None);
    }
    let doc = parse(&out, layout)?;
    let members = doc.root.members().unwrap_or_default();
    let only_version = layout.versioned
        && members.len() == 1
        && members[0].key == "version"
        && out[members[0].value.start..members[0].value.end] == *"1";
    Ok(if members.is_empty() || only_version { Change::Remove } else { Change::Write(out) })
}

/// The edit that removes the entry `found`, and each container it leaves empty.
fn removal(doc: &Doc, layout: &Layout, found: &Found) -> Edit {
    // Invariant: `found` came from `find` on this `doc`, so every container exists.
    let hooks = hooks_member(doc).map(|m| &m.value);
    let event = event_member(doc, layout).map(|m| &m.value);
    let (Some(hooks), Some(event)) = (hooks, event) else {
        return Edit { start: 0, end: 0, text: String::new() };
    };
    let groups = event.elements().unwrap_or_default();
    if layout.grouped {
        let group = &groups[found.group];
        if let Some(entries) = group.get("hooks").ok().flatten().map(|m| &m.value)
            && entries.elements().unwrap_or_default().len() > 1
        {
            return jsonedit::remove(entries, found.index);
        }
    }
    if groups.len() > 1 {
        return jsonedit::remove(event, found.group);
    }
    let event_index = position(hooks, layout.event);
    if hooks.members().unwrap_or_default().len() > 1 {
        return jsonedit::remove(hooks, event_index);
    }
    let hooks_index = position(&doc.root, "hooks");
    if doc.root.members().unwrap_or_default().len() > 1 {
        return jsonedit::remove(&doc.root, hooks_index);
    }
    jsonedit::clear(&doc.root)
}

fn position(object: &Node, key: &str) -> usize {
    object.members().unwrap_or_default().iter().position(|m| m.key == key).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tj_entries_are_recognised_by_program_name_and_host() {
        let host = Host::ClaudeCode;
        assert_eq!(
            tj_program("/usr/bin/tj hook claude-code", host).as_deref(),
            Some("/usr/bin/tj")
        );
        assert_eq!(tj_program("'/a b/tj' hook claude", host).as_deref(), Some("/a b/tj"));
        assert!(tj_program("/usr/bin/tj hook codex", host).is_none());
        assert!(tj_program("/usr/bin/tj hook claude-code --x", host).is_none());
        assert!(tj_program("/usr/bin/tjx hook claude-code", host).is_none());
        assert!(tj_program("$HOME/tj hook claude-code", host).is_none());
    }

    #[test]
    fn quoting_keeps_odd_paths_one_word() {
        for path in ["/usr/bin/tj", "/a b/tj", "/it's/tj", "/x/$HOME/tj"] {
            let cmd = command(path, Host::Codex);
            assert_eq!(tj_program(&cmd, Host::Codex).as_deref(), Some(path), "{cmd}");
        }
        assert_eq!(shell_quote("/usr/local/bin/tj"), "/usr/local/bin/tj");
    }

    #[test]
    fn install_uninstall_round_trip_for_every_json_host() {
        let text = "{\n    \"model\": \"x\",\n    \"hooks\": {\n        \"Stop\": []\n    }\n}\n";
        for host in Host::ALL {
            let Some(layout) = layout(host) else { continue };
            let cmd = command("/bin/tj", host);
            let Change::Write(added) = install(text, &layout, host, &cmd).unwrap() else {
                panic!()
            };
            assert_eq!(install(&added, &layout, host, &cmd).unwrap(), Change::None);
            assert_eq!(uninstall(&added, &layout, host).unwrap(), Change::Write(text.to_owned()));
            let fresh = new_file(&layout, host, &cmd);
            assert_eq!(uninstall(&fresh, &layout, host).unwrap(), Change::Remove, "{host}");
        }
    }
}
