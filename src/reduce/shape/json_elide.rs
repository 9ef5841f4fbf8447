//! Structural elision of JSON too irregular to tabulate: long arrays keep their first and
//! last elements, wide objects their first keys, long strings their two ends; each cut
//! leaves one line naming what went, e.g.
//! `… items[5..1998] omitted (1993 objects, keys: id,name,status,…) …`.
//!
//! This module owns the parse (its own: it keeps key order and every scalar's bytes as
//! written, which `serde_json::Value` does not without features this crate does not
//! enable), the choice of what to elide and the rendering. It does not own the lossless
//! tables (`json_table`) nor the decision to adopt the result (`gate`). Lossy by design.
//!
//! Evidence first: the gate rejects a rendition that drops a line the evidence classifier
//! flagged, comparing whole lines. So the output is pretty-printed in the original's own
//! layout when the original was pretty-printed (its indent unit and its key separator,
//! `": "` or `" : "`), each kept element carrying the comma it had there, so that a kept
//! line is byte-identical to the original line; a compact original is pretty-printed with
//! two spaces. And an element or member holding a line or a string for which `keep_value`
//! returns true is never elided: it stays in place and splits the elided run around it.
//! Such strings are not trimmed either.

use std::fmt::Write as _;

/// How much of a document survives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Documents larger than this (in bytes) are not parsed.
    pub max_parse_bytes: usize,
    /// Elements kept at the start of a long array.
    pub array_head: usize,
    /// Elements kept at the end of a long array.
    pub array_tail: usize,
    /// Members kept at the start of a wide object.
    pub max_keys: usize,
    /// Strings longer than this (in bytes, as written) are cut in the middle.
    pub max_string: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_parse_bytes: 512 * 1024,
            array_head: 5,
            array_tail: 2,
            max_keys: 20,
            max_string: 256,
        }
    }
}

/// An elided rendition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Elided {
    /// The rendered document, with one marker line per elided run; no trailing newline.
    pub text: String,
    /// One note per elision, e.g. `items[5..1998] omitted (1993 objects, keys: id,name,…)`.
    pub notes: Vec<String>,
}

/// Nesting deeper than this is not parsed (the parse, marking and rendering recurse).
pub const MAX_DEPTH: usize = 256;

/// Elides `text` structurally (see the module docs).
///
/// `keep_value` is asked about every scalar's line as the original layout renders it
/// (`    "error": "connection refused",`), about every container's opening line
/// (`  "errors": [`), and about the contents of every string (without quotes, escapes as
/// written); whatever holds a yes is kept.
///
/// `None` when `text` is not one JSON document, is over `limits.max_parse_bytes`, nests
/// deeper than [`MAX_DEPTH`], or nothing would be elided.
///
/// ```
/// use tj::reduce::shape::json_elide::{elide, Limits};
///
/// let items: Vec<String> = (0..100).map(|i| format!("{{\"id\":{i}}}")).collect();
/// let text = format!("{{\"items\":[{}]}}", items.join(","));
/// let out = elide(&text, &Limits::default(), &|_| false).unwrap();
/// assert_eq!(out.notes, ["items[5..98] omitted (93 objects, keys: id)"]);
/// ```
pub fn elide(text: &str, limits: &Limits, keep_value: &dyn Fn(&str) -> bool) -> Option<Elided> {
    if text.len() > limits.max_parse_bytes {
        return None;
    }
    let mut parser = Parser {
        s: text,
        b: text.as_bytes(),
        pos: 0,
        depth: 0,
        sep: None,
        items: Vec::new(),
        members: Vec::new(),
    };
    parser.skip_ws();
    let mut root = parser.value()?;
    parser.skip_ws();
    if parser.pos != text.len() {
        return None;
    }
    let style = Style::of(text.trim(), parser.sep);
    let mut cx = Cx { style: &style, keep_value, line: String::new() };
    cx.mark(&mut root, 0, None, true);
    let mut out = Render { limits, style: &style, text: String::new(), notes: Vec::new() };
    out.node(&root, 0, None, true, "$");
    if out.notes.is_empty() {
        return None;
    }
    // The first line starts without a newline; `line` pushes one before every line.
    let text = out.text.split_off(1);
    Some(Elided { text, notes: out.notes })
}

/// A parsed value; scalars and keys are slices of the original, quotes included.
#[derive(Debug)]
enum Value<'a> {
    /// A number, `true`, `false` or `null`.
    Scalar(&'a str),
    /// A string, quotes included.
    Str(&'a str),
    Array(Vec<Node<'a>>),
    Object(Vec<(&'a str, Node<'a>)>),
}

#[derive(Debug)]
struct Node<'a> {
    value: Value<'a>,
    /// Whether `keep_value` said yes to this node or to anything inside it.
    hot: bool,
}

struct Parser<'a> {
    s: &'a str,
    b: &'a [u8],
    pos: usize,
    depth: usize,
    /// The bytes between the first key and its value (`": "`, `" : "`).
    sep: Option<&'a str>,
    /// Children of the containers being parsed, collected here and moved out into a
    /// vector of the exact size when the container closes: growing one vector per
    /// container costs a copy at every doubling.
    items: Vec<Node<'a>>,
    members: Vec<(&'a str, Node<'a>)>,
}

impl<'a> Parser<'a> {
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.b.get(self.pos) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.b.get(self.pos) == Some(&c)).then(|| self.pos += 1)
    }

    fn value(&mut self) -> Option<Node<'a>> {
        let value = match *self.b.get(self.pos)? {
            b'{' => self.object()?,
            b'[' => self.array()?,
            b'"' => Value::Str(self.string()?),
            b't' => self.literal("true")?,
            b'f' => self.literal("false")?,
            b'n' => self.literal("null")?,
            _ => self.number()?,
        };
        Some(Node { value, hot: false })
    }

    fn literal(&mut self, word: &'static str) -> Option<Value<'a>> {
        let end = self.pos + word.len();
        if self.b.get(self.pos..end)? != word.as_bytes() {
            return None;
        }
        self.pos = end;
        Some(Value::Scalar(word))
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.b.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Option<Value<'a>> {
        let start = self.pos;
        let _ = self.eat(b'-');
        match self.b.get(self.pos)? {
            b'0' => self.pos += 1,
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.eat(b'.').is_some() && self.digits() == 0 {
            return None;
        }
        if let Some(b'e' | b'E') = self.b.get(self.pos) {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.b.get(self.pos) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        Some(Value::Scalar(&self.s[start..self.pos]))
    }

    /// A string at `pos`, quotes included.
    fn string(&mut self) -> Option<&'a str> {
        let start = self.pos;
        self.eat(b'"')?;
        loop {
            match *self.b.get(self.pos)? {
                b'"' => {
                    self.pos += 1;
                    return self.s.get(start..self.pos);
                }
                b'\\' => match *self.b.get(self.pos + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.pos += 2,
                    b'u' => {
                        let hex = self.b.get(self.pos + 2..self.pos + 6)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        self.pos += 6;
                    }
                    _ => return None,
                },
                0..=0x1f => return None,
                // Skip to the next byte that needs a look: most of a string is plain.
                _ => {
                    let rest = self.b.get(self.pos..)?;
                    self.pos += rest
                        .iter()
                        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                        .unwrap_or(rest.len());
                }
            }
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    fn array(&mut self) -> Option<Value<'a>> {
        self.enter()?;
        self.pos += 1;
        let base = self.items.len();
        self.skip_ws();
        if self.eat(b']').is_none() {
            loop {
                self.skip_ws();
                let item = self.value()?;
                self.items.push(item);
                self.skip_ws();
                if self.eat(b',').is_none() {
                    self.eat(b']')?;
                    break;
                }
            }
        }
        self.depth -= 1;
        Some(Value::Array(self.items.drain(base..).collect()))
    }

    fn object(&mut self) -> Option<Value<'a>> {
        self.enter()?;
        self.pos += 1;
        let base = self.members.len();
        self.skip_ws();
        if self.eat(b'}').is_none() {
            loop {
                self.skip_ws();
                let key = self.string()?;
                let after_key = self.pos;
                self.skip_ws();
                self.eat(b':')?;
                self.skip_ws();
                if self.sep.is_none() {
                    self.sep = self.s.get(after_key..self.pos);
                }
                let member = self.value()?;
                self.members.push((key, member));
                self.skip_ws();
                if self.eat(b',').is_none() {
                    self.eat(b'}')?;
                    break;
                }
            }
        }
        self.depth -= 1;
        Some(Value::Object(self.members.drain(base..).collect()))
    }
}

/// The layout the output is rendered in.
struct Style {
    indent: String,
    sep: String,
}

impl Style {
    /// The original's layout when it is pretty-printed (more than one line): the leading
    /// whitespace of its second line, and the separator between its first key and value.
    /// Otherwise two spaces and `": "`.
    fn of(text: &str, sep: Option<&str>) -> Style {
        let mut lines = text.lines();
        let _ = lines.next();
        let indent = lines.find(|l| !l.trim().is_empty()).map(|l| {
            let body = l.trim_start_matches([' ', '\t']);
            &l[..l.len() - body.len()]
        });
        match (indent, sep) {
            (Some(indent), sep) if !indent.is_empty() && !indent.contains('\n') => Style {
                indent: indent.to_owned(),
                sep: sep.filter(|s| !s.contains('\n')).unwrap_or(": ").to_owned(),
            },
            _ => Style { indent: "  ".to_owned(), sep: ": ".to_owned() },
        }
    }
}

/// The marking pass: asks `keep_value` about every line and string, bottom-up.
struct Cx<'s> {
    style: &'s Style,
    keep_value: &'s dyn Fn(&str) -> bool,
    line: String,
}

impl Cx<'_> {
    /// Builds in `self.line` the line starting `node`: indent, key, then `tail`.
    fn start_line(&mut self, depth: usize, key: Option<&str>, tail: &str, last: bool) {
        self.line.clear();
        for _ in 0..depth {
            self.line.push_str(&self.style.indent);
        }
        if let Some(key) = key {
            self.line.push_str(key);
            self.line.push_str(&self.style.sep);
        }
        self.line.push_str(tail);
        if !last {
            self.line.push(',');
        }
    }

    fn mark(&mut self, node: &mut Node<'_>, depth: usize, key: Option<&str>, last: bool) -> bool {
        let hot = match &mut node.value {
            Value::Scalar(raw) => {
                self.start_line(depth, key, raw, last);
                (self.keep_value)(&self.line)
            }
            Value::Str(raw) => {
                self.start_line(depth, key, raw, last);
                (self.keep_value)(&self.line) || (self.keep_value)(&raw[1..raw.len() - 1])
            }
            Value::Array(items) => {
                let open = if items.is_empty() { "[]" } else { "[" };
                self.start_line(depth, key, open, last || !items.is_empty());
                let mut hot = (self.keep_value)(&self.line);
                let n = items.len();
                for (i, item) in items.iter_mut().enumerate() {
                    hot |= self.mark(item, depth + 1, None, i + 1 == n);
                }
                hot
            }
            Value::Object(members) => {
                let open = if members.is_empty() { "{}" } else { "{" };
                self.start_line(depth, key, open, last || !members.is_empty());
                let mut hot = (self.keep_value)(&self.line);
                let n = members.len();
                for (i, (k, member)) in members.iter_mut().enumerate() {
                    hot |= self.mark(member, depth + 1, Some(k), i + 1 == n);
                }
                hot
            }
        };
        node.hot = hot;
        hot
    }
}

/// The rendering pass.
struct Render<'s> {
    limits: &'s Limits,
    style: &'s Style,
    text: String,
    notes: Vec<String>,
}

impl Render<'_> {
    fn line(&mut self, depth: usize) {
        self.text.push('\n');
        for _ in 0..depth {
            self.text.push_str(&self.style.indent);
        }
    }

    fn marker(&mut self, depth: usize, note: String) {
        self.line(depth);
        let _ = write!(self.text, "… {note} …");
        self.notes.push(note);
    }

    fn node(&mut self, node: &Node<'_>, depth: usize, key: Option<&str>, last: bool, path: &str) {
        self.line(depth);
        if let Some(key) = key {
            self.text.push_str(key);
            self.text.push_str(&self.style.sep);
        }
        let comma = if last { "" } else { "," };
        match &node.value {
            Value::Scalar(raw) => self.text.push_str(raw),
            Value::Str(raw) if node.hot || raw.len() - 2 <= self.limits.max_string => {
                self.text.push_str(raw);
            }
            Value::Str(raw) => self.string(raw, path),
            Value::Array(items) if items.is_empty() => self.text.push_str("[]"),
            Value::Object(members) if members.is_empty() => self.text.push_str("{}"),
            Value::Array(items) => {
                self.text.push('[');
                let n = items.len();
                let keep = plan(
                    n,
                    self.limits.array_head,
                    self.limits.array_tail,
                    |i| items[i].hot,
                    |i| is_scalar(&items[i]),
                );
                let mut i = 0;
                while i < n {
                    if keep[i] {
                        let child = format!("{path}[{i}]");
                        self.node(&items[i], depth + 1, None, i + 1 == n, &child);
                        i += 1;
                    } else {
                        let end = (i..n).find(|&j| keep[j]).unwrap_or(n);
                        let shape = describe(items[i..end].iter());
                        self.marker(depth + 1, format!("{path}[{i}..{end}] omitted ({shape})"));
                        i = end;
                    }
                }
                self.line(depth);
                self.text.push(']');
            }
            Value::Object(members) => {
                self.text.push('{');
                let n = members.len();
                let keep = plan(
                    n,
                    self.limits.max_keys,
                    0,
                    |i| members[i].1.hot,
                    |i| is_scalar(&members[i].1),
                );
                let mut i = 0;
                while i < n {
                    if keep[i] {
                        let (k, member) = &members[i];
                        let child = child_path(path, k);
                        self.node(member, depth + 1, Some(k), i + 1 == n, &child);
                        i += 1;
                    } else {
                        let end = (i..n).find(|&j| keep[j]).unwrap_or(n);
                        let names = key_list(members[i..end].iter().map(|(k, _)| *k));
                        let count = end - i;
                        let note = format!("{path}{{{i}..{end}}} omitted ({count} keys: {names})");
                        self.marker(depth + 1, note);
                        i = end;
                    }
                }
                self.line(depth);
                self.text.push('}');
            }
        }
        self.text.push_str(comma);
    }

    /// Writes a long string cut in the middle: about two thirds of the budget from its
    /// start, one third from its end, never splitting a character or an escape.
    fn string(&mut self, raw: &str, path: &str) {
        let body = &raw[1..raw.len() - 1];
        let head_budget = self.limits.max_string * 2 / 3;
        let tail_budget = self.limits.max_string - head_budget;
        let mut head = 0;
        let mut tail = body.len();
        let mut tail_set = false;
        for (start, end) in (Tokens { s: body, pos: 0 }) {
            if end <= head_budget {
                head = end;
            }
            if !tail_set && start >= body.len().saturating_sub(tail_budget) {
                tail = start;
                tail_set = true;
            }
        }
        let tail = tail.max(head);
        let cut = tail - head;
        self.text.push('"');
        self.text.push_str(&body[..head]);
        let _ = write!(self.text, "… {cut} bytes omitted …");
        self.text.push_str(&body[tail..]);
        self.text.push('"');
        self.notes.push(format!("{path}: {cut} of {} string bytes omitted", body.len()));
    }
}

/// The tokens of a string body as written: one character, or one escape (`\n`, `\u00e9`).
struct Tokens<'a> {
    s: &'a str,
    pos: usize,
}

impl Iterator for Tokens<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        let start = self.pos;
        let rest = self.s.get(start..)?;
        let mut chars = rest.chars();
        let len = match chars.next()? {
            '\\' if rest.as_bytes().get(1) == Some(&b'u') => 6,
            '\\' => 2,
            c => c.len_utf8(),
        };
        self.pos = (start + len).min(self.s.len());
        Some((start, self.pos))
    }
}

/// Which children of a container of `n` survive: the first `head`, the last `tail` and the
/// hot ones, unless the container is short enough that eliding would save nothing. A
/// lone dropped scalar between kept neighbours is kept too: its marker would be longer.
fn plan(
    n: usize,
    head: usize,
    tail: usize,
    hot: impl Fn(usize) -> bool,
    scalar: impl Fn(usize) -> bool,
) -> Vec<bool> {
    let all = head.saturating_add(tail) >= n;
    let mask: Vec<bool> = (0..n).map(|i| all || i < head || i >= n - tail || hot(i)).collect();
    (0..n)
        .map(|i| {
            mask[i] || (scalar(i) && (i == 0 || mask[i - 1]) && mask.get(i + 1).is_none_or(|&k| k))
        })
        .collect()
}

fn is_scalar(node: &Node<'_>) -> bool {
    matches!(node.value, Value::Scalar(_) | Value::Str(_))
}

/// The path of member `key` (quotes included) under `path`: `items`, `data.items`,
/// `data["a b"]`.
fn child_path(path: &str, key: &str) -> String {
    let name = &key[1..key.len() - 1];
    let plain = !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'@');
    match (path, plain) {
        ("$", true) => name.to_owned(),
        (_, true) => format!("{path}.{name}"),
        (_, false) => format!("{path}[{key}]"),
    }
}

/// The first keys of `keys`, without quotes, comma-separated, `…` when there are more.
fn key_list<'k>(keys: impl Iterator<Item = &'k str>) -> String {
    const SHOWN: usize = 5;
    let mut out = String::new();
    let mut shown: Vec<&str> = Vec::new();
    for key in keys {
        if shown.contains(&key) {
            continue;
        }
        if shown.len() == SHOWN {
            out.push_str(",…");
            break;
        }
        if !shown.is_empty() {
            out.push(',');
        }
        out.push_str(&key[1..key.len() - 1]);
        shown.push(key);
    }
    out
}

/// The shape of an elided run: `1993 objects, keys: id,name,…`, or the mix of kinds.
fn describe<'a, 'n: 'a>(items: impl Iterator<Item = &'a Node<'n>> + Clone) -> String {
    let mut counts = [0usize; 6];
    const NAMES: [(&str, &str); 6] = [
        ("object", "objects"),
        ("array", "arrays"),
        ("string", "strings"),
        ("number", "numbers"),
        ("boolean", "booleans"),
        ("null", "nulls"),
    ];
    for item in items.clone() {
        let kind = match &item.value {
            Value::Object(_) => 0,
            Value::Array(_) => 1,
            Value::Str(_) => 2,
            Value::Scalar("true" | "false") => 4,
            Value::Scalar("null") => 5,
            Value::Scalar(_) => 3,
        };
        counts[kind] += 1;
    }
    let total: usize = counts.iter().sum();
    let name = |k: usize, n: usize| if n == 1 { NAMES[k].0 } else { NAMES[k].1 };
    let mut out = String::new();
    let kinds: Vec<usize> = (0..6).filter(|&k| counts[k] > 0).collect();
    if let [k] = kinds[..] {
        let _ = write!(out, "{total} {}", name(k, total));
    } else {
        let _ = write!(out, "{total} values: ");
        for (j, &k) in kinds.iter().enumerate() {
            let sep = if j == 0 { "" } else { ", " };
            let _ = write!(out, "{sep}{} {}", counts[k], name(k, counts[k]));
        }
    }
    if counts[0] > 0 {
        let keys = key_list(
            items
                .filter_map(|item| match &item.value {
                    Value::Object(members) => Some(members.iter().map(|(k, _)| *k)),
                    _ => None,
                })
                .flatten(),
        );
        if !keys.is_empty() {
            let _ = write!(out, ", keys: {keys}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    fn never(_: &str) -> bool {
        false
    }

    fn is_error(s: &str) -> bool {
        s.contains("error") || s.contains("failed")
    }

    /// A GitHub-API-like list of `n` issues of varying shape.
    fn issues(n: usize) -> String {
        let mut out = String::from("[");
        for i in 0..n {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(
                out,
                r#"{{"id":{id},"number":{i},"title":"Issue {i}","state":"{state}","user":{{"login":"user{u}","id":{u},"type":"User","site_admin":false}},"labels":[{labels}],"comments":{c},"body":{body}{extra}}}"#,
                id = 1_000_000 + i,
                state = if i.is_multiple_of(3) { "closed" } else { "open" },
                u = i % 17,
                labels = (0..i % 4)
                    .map(|l| format!(r#"{{"name":"label{l}","color":"ededed"}}"#))
                    .collect::<Vec<_>>()
                    .join(","),
                c = i % 9,
                body = if i.is_multiple_of(5) {
                    "null".to_owned()
                } else {
                    format!("\"Body of issue {i}\\nwith a second line\"")
                },
                extra = if i.is_multiple_of(7) {
                    r#","pull_request":{"url":"https://api.github.com/x","merged_at":null}"#
                } else {
                    ""
                },
            );
        }
        out.push(']');
        out
    }

    fn pretty(text: &str, indent: &[u8]) -> String {
        use serde::Serialize as _;
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        let mut buf = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(indent);
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
        value.serialize(&mut ser).unwrap();
        String::from_utf8(buf).unwrap()
    }

    /// Asserts that every line of `out` but markers and cut strings is a line of
    /// `original`, in order.
    fn assert_lines_from(out: &str, original: &str) {
        let mut orig = original.lines();
        for line in out.lines() {
            if line.trim_start().starts_with('…') || line.contains(" bytes omitted …") {
                continue;
            }
            assert!(orig.any(|o| o == line), "line not in the original, in order: {line:?}");
        }
    }

    #[test]
    fn github_like_array_keeps_head_and_tail() {
        let text = issues(2000);
        let limits = Limits { max_parse_bytes: 4 << 20, ..Limits::default() };
        let out = elide(&text, &limits, &never).unwrap();
        assert_eq!(out.notes.len(), 1, "{:?}", out.notes);
        assert_eq!(
            out.notes[0],
            "$[5..1998] omitted (1993 objects, keys: id,number,title,state,user,…)"
        );
        assert!(out.text.starts_with("[\n  {\n    \"id\": 1000000,\n"));
        assert!(out.text.contains("\n  … $[5..1998] omitted (1993 objects"));
        assert!(out.text.contains("\"number\": 1999"));
        assert!(!out.text.ends_with('\n'));
        assert!(out.text.lines().count() < 200);
        // The rendition is valid JSON apart from its markers.
        let json: String = out
            .text
            .lines()
            .filter(|l| !l.trim_start().starts_with('…'))
            .collect::<Vec<_>>()
            .join("\n");
        let json = json.replace("},\n]", "}\n]");
        assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok(), "{json}");
    }

    #[test]
    fn error_inside_a_long_array_is_kept_in_place() {
        let mut items: Vec<String> =
            (0..300).map(|i| format!(r#"{{"id":{i},"status":"ok"}}"#)).collect();
        items[150] = r#"{"id":150,"status":"ok","detail":{"error":"connection refused"}}"#.into();
        let text = format!(r#"{{"results":[{}]}}"#, items.join(","));
        let out = elide(&text, &Limits::default(), &is_error).unwrap();
        assert!(out.text.contains("\"error\": \"connection refused\""));
        assert_eq!(
            out.notes,
            [
                "results[5..150] omitted (145 objects, keys: id,status)",
                "results[151..298] omitted (147 objects, keys: id,status)",
            ]
        );
        let pos = |s: &str| out.text.find(s).unwrap();
        assert!(pos("results[5..150]") < pos("connection refused"));
        assert!(pos("connection refused") < pos("results[151..298]"));
    }

    #[test]
    fn four_space_pretty_original_is_reproduced_line_for_line() {
        let text = pretty(&issues(200), b"    ");
        let out = elide(&text, &Limits::default(), &is_error).unwrap();
        assert_lines_from(&out.text, &text);
        assert!(out.text.contains("\n    {\n        \"body\": null,"));
        assert!(out.text.lines().count() < text.lines().count() / 10);
    }

    #[test]
    fn tab_indent_and_spaced_separator_are_detected() {
        let mut text = String::from("{\n\t\"rows\" : [\n");
        for i in 0..50 {
            let comma = if i == 49 { "" } else { "," };
            let _ = writeln!(text, "\t\t{{\n\t\t\t\"n\" : {i}\n\t\t}}{comma}");
        }
        text.push_str("\t]\n}");
        let out = elide(&text, &Limits::default(), &never).unwrap();
        assert_lines_from(&out.text, &text);
        assert!(out.text.starts_with("{\n\t\"rows\" : [\n\t\t{\n\t\t\t\"n\" : 0\n\t\t},"));
    }

    #[test]
    fn evidence_lines_of_a_pretty_original_survive_verbatim() {
        let mut value: Vec<serde_json::Value> = (0..100)
            .map(|i| serde_json::json!({"id": i, "name": format!("n{i}"), "ok": true}))
            .collect();
        value[60] = serde_json::json!({"id": 60, "name": "n60", "error": "connection refused"});
        let text = pretty(&serde_json::Value::Array(value).to_string(), b"  ");
        let flagged: Vec<&str> = text.lines().filter(|l| is_error(l)).collect();
        assert_eq!(flagged, ["    \"error\": \"connection refused\","]);
        let out = elide(&text, &Limits::default(), &is_error).unwrap();
        assert!(out.text.lines().any(|l| l == flagged[0]));
        assert_lines_from(&out.text, &text);
    }

    #[test]
    fn wide_objects_keep_their_first_keys() {
        let members: Vec<String> = (0..40).map(|i| format!(r#""field_{i}":{i}"#)).collect();
        let text = format!(r#"{{"repo":{{{}}}}}"#, members.join(","));
        let limits = Limits { max_keys: 10, ..Limits::default() };
        let out = elide(&text, &limits, &|s: &str| s.contains("field_33")).unwrap();
        assert_eq!(
            out.notes,
            [
                "repo{10..33} omitted (23 keys: field_10,field_11,field_12,field_13,field_14,…)",
                "repo{34..40} omitted (6 keys: field_34,field_35,field_36,field_37,field_38,…)",
            ]
        );
        assert!(out.text.contains("\n    \"field_33\": 33,\n"));
    }

    #[test]
    fn long_strings_are_cut_in_the_middle() {
        let big: String = (0..50_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let text =
            format!(r#"{{"blob":"{big}","note":"short","esc":"{}"}}"#, "\\u00e9\\n".repeat(200));
        let out = elide(&text, &Limits::default(), &never).unwrap();
        assert_eq!(out.notes.len(), 2);
        assert_eq!(out.notes[0], "blob: 49744 of 50000 string bytes omitted");
        assert!(out.text.len() < 1000);
        assert!(out.text.contains("\"note\": \"short\""));
        // Escapes are never split.
        let esc = out.text.lines().find(|l| l.contains("\"esc\"")).unwrap();
        let kept = esc.split("… ").next().unwrap();
        assert!(kept.ends_with("\\n") || kept.ends_with("\\u00e9"), "{kept}");
    }

    #[test]
    fn flagged_opening_lines_and_string_contents_are_kept() {
        let mut members: Vec<String> = (0..30).map(|i| format!(r#""k{i}":{i}"#)).collect();
        members.push(r#""errors":[{"code":1}]"#.into());
        members.push(r#""msg":"Error: disk full""#.into());
        let text = format!("{{{}}}", members.join(","));
        let limits = Limits { max_keys: 5, ..Limits::default() };
        // Anchored, as the evidence classifier's start patterns are.
        let keep = |s: &str| s.trim_start().starts_with("\"errors\": [") || s.starts_with("Error:");
        let out = elide(&text, &limits, &keep).unwrap();
        assert!(out.text.contains("\n  \"errors\": [\n    {\n      \"code\": 1\n    }\n  ],\n"));
        assert!(out.text.contains("\n  \"msg\": \"Error: disk full\"\n}"));
        assert_eq!(out.notes, ["${5..30} omitted (25 keys: k5,k6,k7,k8,k9,…)"]);
    }

    #[test]
    fn hot_strings_are_not_cut() {
        let text = format!(r#"{{"log":"{}error: disk full"}}"#, "x".repeat(5000));
        assert!(elide(&text, &Limits::default(), &is_error).is_none());
    }

    #[test]
    fn deep_nesting() {
        let mut text = String::new();
        for _ in 0..100 {
            text.push_str(r#"{"child":"#);
        }
        let arr: Vec<String> = (0..50).map(|i| i.to_string()).collect();
        let _ = write!(text, "[{}]", arr.join(","));
        text.push_str(&"}".repeat(100));
        let out = elide(&text, &Limits::default(), &never).unwrap();
        let path = vec!["child"; 100].join(".");
        assert_eq!(out.notes, [format!("{path}[5..48] omitted (43 numbers)")]);

        let too_deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(elide(&too_deep, &Limits::default(), &never).is_none());
    }

    #[test]
    fn compact_input_is_pretty_printed_with_two_spaces() {
        let text = r#"{"a":[1,2,3,4,5,6,7,8,9,10,11,12],"b":{"c":"d"}}"#;
        let out = elide(text, &Limits::default(), &never).unwrap();
        assert_eq!(
            out.text,
            "{\n  \"a\": [\n    1,\n    2,\n    3,\n    4,\n    5,\n    … a[5..10] omitted (5 numbers) …\n    11,\n    12\n  ],\n  \"b\": {\n    \"c\": \"d\"\n  }\n}"
        );
    }

    #[test]
    fn none_when_invalid_over_limit_or_nothing_to_elide() {
        // Each bad piece spoils a document that would otherwise be elided.
        let long: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let long = long.join(",");
        assert!(elide(&format!("[{long}]"), &Limits::default(), &never).is_some());
        for bad in
            ["", "{", "1,]", "{\"a\" 1}", "1] [2", "\"\\x\"", "01", "1.", "nul", "\"a\nb\"", "-"]
        {
            let text = format!("[{long},{bad}]");
            assert!(elide(&text, &Limits::default(), &never).is_none(), "{bad:?}");
        }
        let big = issues(5000);
        assert!(big.len() > Limits::default().max_parse_bytes);
        assert!(elide(&big, &Limits::default(), &never).is_none());
        assert!(elide(r#"{"a":[1,2,3]}"#, &Limits::default(), &never).is_none());
    }

    #[test]
    fn deterministic() {
        let text = issues(500);
        let a = elide(&text, &Limits::default(), &is_error).unwrap();
        let b = elide(&text, &Limits::default(), &is_error).unwrap();
        assert_eq!(a, b);
    }
}
