//! A JSON parser that remembers where every value sits in the text, and the few edits
//! `tj install` makes with it: append an item to an object or array, remove one, replace a
//! value. Everything outside the edited span keeps its bytes, so a settings file keeps its
//! key order, indentation, line endings and unicode, and an install followed by an
//! uninstall gives the original back byte for byte.
//!
//! Not a general JSON library: values other than objects, arrays and strings are only
//! located, never decoded. Comments (`//`, `/* */`) are accepted as whitespace when asked
//! for (Gemini CLI reads its settings as JSON with comments); nothing else beyond RFC 8259.

use std::fmt;

/// Nesting deeper than this is refused rather than recursed into (a hostile file must not
/// overflow the stack).
const MAX_DEPTH: usize = 128;

/// A value and the bytes `start..end` of the text it was parsed from.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) value: Value,
}

/// What a [`Node`] holds.
#[derive(Clone, Debug)]
pub(crate) enum Value {
    Object(Vec<Member>),
    Array(Vec<Node>),
    String(String),
    Number,
    Bool,
    Null,
}

/// One `"key": value` of an object; the member's text is `key_start..value.end`.
#[derive(Clone, Debug)]
pub(crate) struct Member {
    pub(crate) key: String,
    pub(crate) key_start: usize,
    pub(crate) key_end: usize,
    pub(crate) value: Node,
}

impl Node {
    /// The members, if this is an object.
    pub(crate) fn members(&self) -> Option<&[Member]> {
        match &self.value {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub(crate) fn elements(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Array(e) => Some(e),
            _ => None,
        }
    }

    /// The text, if this is a string.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The member named `key`; an error if there are several (which one a harness reads is
    /// its parser's choice, so tj does not guess).
    pub(crate) fn get(&self, key: &str) -> Result<Option<&Member>, String> {
        let mut found = self.members().unwrap_or_default().iter().filter(|m| m.key == key);
        let first = found.next();
        if found.next().is_some() {
            return Err(format!("the key `{key}` appears more than once"));
        }
        Ok(first)
    }

    /// What kind of value this is, for messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self.value {
            Value::Object(_) => "an object",
            Value::Array(_) => "an array",
            Value::String(_) => "a string",
            Value::Number => "a number",
            Value::Bool => "a boolean",
            Value::Null => "null",
        }
    }

    /// The spans of the items (members or elements): `(start, end)`.
    fn item_spans(&self) -> Vec<(usize, usize)> {
        match &self.value {
            Value::Object(m) => m.iter().map(|m| (m.key_start, m.value.end)).collect(),
            Value::Array(e) => e.iter().map(|e| (e.start, e.end)).collect(),
            _ => Vec::new(),
        }
    }
}

/// Where and why the text is not JSON.
#[derive(Debug)]
pub(crate) struct ParseError {
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) msg: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at line {} column {}", self.msg, self.line, self.column)
    }
}

/// Parses `text` (a UTF-8 byte order mark at the start is skipped). With `comments`,
/// `//` and `/* */` comments count as whitespace.
pub(crate) fn parse(text: &str, comments: bool) -> Result<Node, ParseError> {
    let mut p = Parser { text: text.as_bytes(), pos: 0, comments };
    if text.starts_with('\u{feff}') {
        p.pos = 3;
    }
    p.skip_ws()?;
    let node = p.value(0)?;
    p.skip_ws()?;
    if p.pos != p.text.len() {
        return Err(p.error("unexpected text after the value"));
    }
    Ok(node)
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    comments: bool,
}

impl Parser<'_> {
    fn error(&self, msg: &'static str) -> ParseError {
        let before = &self.text[..self.pos.min(self.text.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
        ParseError { line, column, msg }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_ws(&mut self) -> Result<(), ParseError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') if self.comments => self.comment()?,
                _ => return Ok(()),
            }
        }
    }

    fn comment(&mut self) -> Result<(), ParseError> {
        match self.text.get(self.pos + 1) {
            Some(b'/') => {
                while self.peek().is_some_and(|b| b != b'\n') {
                    self.pos += 1;
                }
                Ok(())
            }
            Some(b'*') => {
                self.pos += 2;
                while self.pos + 1 < self.text.len() {
                    if &self.text[self.pos..self.pos + 2] == b"*/" {
                        self.pos += 2;
                        return Ok(());
                    }
                    self.pos += 1;
                }
                self.pos = self.text.len();
                Err(self.error("unterminated comment"))
            }
            _ => Err(self.error("unexpected `/`")),
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        let start = self.pos;
        let value = match self.peek() {
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Value::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(b't') => self.literal("true", Value::Bool)?,
            Some(b'f') => self.literal("false", Value::Bool)?,
            Some(b'n') => self.literal("null", Value::Null)?,
            None => return Err(self.error("unexpected end of file")),
            Some(_) => return Err(self.error("expected a value")),
        };
        Ok(Node { start, end: self.pos, value })
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, ParseError> {
        if self.text[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("expected a value"))
        }
    }

    fn digits(&mut self) -> usize {
        let from = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - from
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.error("invalid number"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("invalid number"));
            }
        }
        Ok(Value::Number)
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let digits =
            self.text.get(self.pos..self.pos + 4).ok_or_else(|| self.error("bad escape"))?;
        let digits = std::str::from_utf8(digits).map_err(|_| self.error("bad escape"))?;
        let code = u32::from_str_radix(digits, 16).map_err(|_| self.error("bad escape"))?;
        self.pos += 4;
        Ok(code)
    }

    fn escape(&mut self, out: &mut String) -> Result<(), ParseError> {
        let Some(b) = self.peek() else { return Err(self.error("unterminated string")) };
        self.pos += 1;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let high = self.hex4()?;
                let code = if (0xd800..0xdc00).contains(&high)
                    && self.text[self.pos..].starts_with(b"\\u")
                {
                    let save = self.pos;
                    self.pos += 2;
                    let low = self.hex4()?;
                    if (0xdc00..0xe000).contains(&low) {
                        0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)
                    } else {
                        self.pos = save;
                        high
                    }
                } else {
                    high
                };
                // A lone surrogate decodes to U+FFFD, as JavaScript's JSON.parse keeps it.
                char::from_u32(code).unwrap_or('\u{fffd}')
            }
            _ => return Err(self.error("bad escape")),
        };
        out.push(c);
        Ok(())
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let from = self.pos;
            while self.peek().is_some_and(|b| b != b'"' && b != b'\\' && b >= 0x20) {
                self.pos += 1;
            }
            // The input is a &str and the run stops only at ASCII bytes: a char boundary.
            out.push_str(&String::from_utf8_lossy(&self.text[from..self.pos]));
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    self.escape(&mut out)?;
                }
                Some(_) => return Err(self.error("control character in a string")),
                None => return Err(self.error("unterminated string")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.pos += 1;
        let mut members = Vec::new();
        self.skip_ws()?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a key in double quotes"));
            }
            let key_start = self.pos;
            let key = self.string()?;
            let key_end = self.pos;
            self.skip_ws()?;
            if self.peek() != Some(b':') {
                return Err(self.error("expected `:` after a key"));
            }
            self.pos += 1;
            self.skip_ws()?;
            let value = self.value(depth + 1)?;
            members.push(Member { key, key_start, key_end, value });
            self.skip_ws()?;
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws()?;
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, ParseError> {
        self.pos += 1;
        let mut elements = Vec::new();
        self.skip_ws()?;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(elements));
        }
        loop {
            elements.push(self.value(depth + 1)?);
            self.skip_ws()?;
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.skip_ws()?;
                }
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(elements));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }
}

/// A JSON value tj writes, with its keys in the order given.
#[derive(Clone, Debug)]
pub(crate) enum Out {
    Str(String),
    Int(u64),
    Obj(Vec<(&'static str, Out)>),
    Arr(Vec<Out>),
}

/// How a file lays out its JSON, so that what tj adds looks like the rest: line ending,
/// one level of indentation, what sits around `:`, and whether it is on one line.
#[derive(Clone, Debug)]
pub(crate) struct Style {
    pub(crate) nl: &'static str,
    pub(crate) unit: String,
    pub(crate) colon: String,
    pub(crate) pretty: bool,
}

impl Default for Style {
    /// What the harnesses write themselves (`JSON.stringify(value, null, 2)`).
    fn default() -> Style {
        Style { nl: "\n", unit: "  ".to_owned(), colon: ": ".to_owned(), pretty: true }
    }
}

impl Style {
    /// The style of `text`, whose parsed root is `root`.
    pub(crate) fn detect(text: &str, root: &Node) -> Style {
        let mut style = Style::default();
        if text.contains("\r\n") {
            style.nl = "\r\n";
        }
        let spans = root.item_spans();
        style.pretty = spans.is_empty() || text[root.start..root.end].contains('\n');
        if let Some(&(first, _)) = spans.first() {
            let item = line_indent(text, first);
            let outer = line_indent(text, root.start);
            if let Some(unit) = item.strip_prefix(outer)
                && !unit.is_empty()
                && text[root.start..first].contains('\n')
            {
                style.unit = unit.to_owned();
            }
        }
        if let Some(colon) = first_colon(text, root) {
            style.colon = colon;
        }
        style
    }
}

/// The text between the first key found and its value, if it is plain (`": "`, `":"`,
/// `" : "`).
fn first_colon(text: &str, node: &Node) -> Option<String> {
    match &node.value {
        Value::Object(members) => {
            let m = members.first()?;
            let between = &text[m.key_end..m.value.start];
            let plain = between.chars().all(|c| c == ' ' || c == ':' || c == '\t');
            plain.then(|| between.to_owned()).or_else(|| first_colon(text, &m.value))
        }
        Value::Array(elements) => elements.iter().find_map(|e| first_colon(text, e)),
        _ => None,
    }
}

/// The spaces and tabs that start the line holding byte `pos`.
fn line_indent(text: &str, pos: usize) -> &str {
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let rest = &text[line_start..];
    let len = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    &rest[..len]
}

/// `value` as JSON text in `style`, its first line at the current position and the others
/// indented from `indent`.
pub(crate) fn render(value: &Out, style: &Style, indent: &str) -> String {
    let inner = format!("{indent}{}", style.unit);
    let (open, sep, close) = if style.pretty {
        (
            format!("{}{inner}", style.nl),
            format!(",{}{inner}", style.nl),
            format!("{}{indent}", style.nl),
        )
    } else {
        (String::new(), ",".to_owned(), String::new())
    };
    match value {
        Out::Str(s) => serde_json::Value::String(s.clone()).to_string(),
        Out::Int(n) => n.to_string(),
        Out::Obj(members) if members.is_empty() => "{}".to_owned(),
        Out::Arr(elements) if elements.is_empty() => "[]".to_owned(),
        Out::Obj(members) => {
            let items: Vec<String> = members
                .iter()
                .map(|(k, v)| {
                    let key = serde_json::Value::String((*k).to_owned()).to_string();
                    format!("{key}{}{}", style.colon, render(v, style, &inner))
                })
                .collect();
            format!("{{{open}{}{close}}}", items.join(&sep))
        }
        Out::Arr(elements) => {
            let items: Vec<String> = elements.iter().map(|v| render(v, style, &inner)).collect();
            format!("[{open}{}{close}]", items.join(&sep))
        }
    }
}

/// Replace bytes `start..end` of the text with `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Edit {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) text: String,
}

impl Edit {
    /// `source` with this edit made.
    pub(crate) fn apply(&self, source: &str) -> String {
        let mut out = String::with_capacity(source.len() + self.text.len());
        out.push_str(&source[..self.start]);
        out.push_str(&self.text);
        out.push_str(&source[self.end..]);
        out
    }
}

/// Appends an item after the last one of `container` (an object or array): for an object,
/// `item` is `(Some(key), value)`. The separator and indentation copy the container's own;
/// an empty container is laid out as `style` says.
pub(crate) fn append(
    text: &str,
    container: &Node,
    key: Option<&str>,
    value: &Out,
    style: &Style,
) -> Edit {
    let spans = container.item_spans();
    let render_item = |indent: &str, item_style: &Style| {
        let body = render(value, item_style, indent);
        match key {
            Some(k) => {
                format!("{}{}{body}", serde_json::Value::String(k.to_owned()), item_style.colon)
            }
            None => body,
        }
    };
    let Some(&(_, last_end)) = spans.last() else {
        // Empty: replace whatever is between the brackets.
        let outer = line_indent(text, container.start);
        let inner = format!("{outer}{}", style.unit);
        let body = if style.pretty {
            format!("{nl}{inner}{}{nl}{outer}", render_item(&inner, style), nl = style.nl)
        } else {
            render_item("", style)
        };
        return Edit { start: container.start + 1, end: container.end - 1, text: body };
    };
    let sep = separator(text, container, &spans);
    let (item_style, indent) = match sep.rfind('\n') {
        Some(i) => (style.clone(), sep[i + 1..].to_owned()),
        None => (Style { pretty: false, ..style.clone() }, String::new()),
    };
    Edit {
        start: last_end,
        end: last_end,
        text: format!("{sep}{}", render_item(&indent, &item_style)),
    }
}

/// What separates two items of `container`: the text between its first two items when
/// that is a comma and whitespace, else a comma and the whitespace before its first item.
fn separator(text: &str, container: &Node, spans: &[(usize, usize)]) -> String {
    let is_ws = |s: &str| s.chars().all(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
    if spans.len() >= 2 {
        let between = &text[spans[0].1..spans[1].0];
        if let Some(after) = between.strip_prefix(',')
            && is_ws(after)
        {
            return between.to_owned();
        }
    }
    let lead = &text[container.start + 1..spans[0].0];
    if is_ws(lead) { format!(",{lead}") } else { ",".to_owned() }
}

/// Removes item `index` of `container` (an object or array with at least two items) with
/// the separator before it (the last item) or after it (any other): the exact inverse of
/// [`append`].
pub(crate) fn remove(container: &Node, index: usize) -> Edit {
    let spans = container.item_spans();
    let (start, end) = spans[index];
    if index + 1 == spans.len() {
        Edit { start: spans[index - 1].1, end, text: String::new() }
    } else {
        Edit { start, end: spans[index + 1].0, text: String::new() }
    }
}

/// Empties `container`: `{}` or `[]`.
pub(crate) fn clear(container: &Node) -> Edit {
    Edit { start: container.start + 1, end: container.end - 1, text: String::new() }
}

/// Replaces `node` with `value` rendered compactly (used for strings and numbers).
pub(crate) fn replace(node: &Node, value: &Out) -> Edit {
    let text = render(value, &Style { pretty: false, ..Style::default() }, "");
    Edit { start: node.start, end: node.end, text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_serde_json_parses_and_records_spans() {
        let text =
            "\u{feff}{ \"a\" : [1, -2.5e3, true, null, \"x\\u00e9\\ud83d\\ude00\"], \"b\": {} }";
        let root = parse(text, false).unwrap();
        let a = root.get("a").unwrap().unwrap();
        assert_eq!(
            &text[a.value.start..a.value.end],
            "[1, -2.5e3, true, null, \"x\\u00e9\\ud83d\\ude00\"]"
        );
        assert_eq!(a.value.elements().unwrap()[4].as_str(), Some("xé😀"));
        assert_eq!(Style::detect(text, &root).colon, " : ");
    }

    #[test]
    fn refuses_what_is_not_json_with_a_position() {
        for bad in ["{", "{\"a\":}", "{\"a\":1,}", "[01]", "{'a':1}", "{\"a\":1} x", "\"\t\""] {
            let err = parse(bad, false).unwrap_err();
            assert!(err.line >= 1, "{bad}: {err}");
        }
        let err = parse("{\n  \"a\": tru\n}", false).unwrap_err();
        assert_eq!((err.line, err.column), (2, 8));
        assert!(parse("{\"a\": 1 // note\n}", false).is_err());
        assert!(parse("{\"a\": 1 // note\n /* x */}", true).is_ok());
    }

    #[test]
    fn refuses_deep_nesting_without_overflowing() {
        let deep = "[".repeat(100_000);
        assert!(parse(&deep, false).is_err());
    }

    #[test]
    fn append_then_remove_is_the_identity() {
        let cases = [
            "{\n  \"a\": 1\n}\n",
            "{\n\t\"a\": 1,\n\t\"b\": [\n\t\t2\n\t]\n}",
            "{\r\n    \"a\": 1\r\n}\r\n",
            "{\"a\":1,\"b\":2}",
            "{\"a\": 1, \"b\": 2}",
        ];
        for text in cases {
            let root = parse(text, false).unwrap();
            let style = Style::detect(text, &root);
            let value = Out::Obj(vec![("k", Out::Arr(vec![Out::Str("v".into())]))]);
            let added = append(text, &root, Some("new"), &value, &style).apply(text);
            let root2 = parse(&added, false).unwrap();
            let n = root2.members().unwrap().len();
            assert_eq!(root2.members().unwrap()[n - 1].key, "new");
            assert_eq!(remove(&root2, n - 1).apply(&added), text);
        }
    }

    #[test]
    fn appended_items_follow_the_files_indentation() {
        let text = "{\n\t\"a\": 1\n}";
        let root = parse(text, false).unwrap();
        let style = Style::detect(text, &root);
        let out = append(text, &root, Some("h"), &Out::Arr(vec![Out::Int(1)]), &style).apply(text);
        assert_eq!(out, "{\n\t\"a\": 1,\n\t\"h\": [\n\t\t1\n\t]\n}");
        let text = "{}";
        let root = parse(text, false).unwrap();
        let out = append(text, &root, Some("h"), &Out::Int(1), &Style::detect(text, &root));
        assert_eq!(out.apply(text), "{\n  \"h\": 1\n}");
    }
}
