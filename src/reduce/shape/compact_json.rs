//! Compact JSON (issue 12): an irregular pretty-printed JSON document (`npm view PKG --json`,
//! `npm ls --json --all`, `kubectl get -o json`, `docker inspect`, `package.json`) re-encoded
//! as indented `key: value` lines in the spirit of TOON (toonformat.dev), with a decoder that
//! gives the document text back byte for byte.
//!
//! This module owns the encoding, its decoder and the detection of the layout the tool
//! printed with. It does not decide when the route is tried or adopted (the pipeline and the
//! gate do), and it does not touch documents that are a uniform table: that is
//! [`json_table`](super::json_table)'s.
//!
//! # Format
//!
//! ```text
//! [tj] JSON as indented key: value (TOON-like); key[N]: a,b is an array; key[N]{f,g}: one row per object, empty cell = no such key; "…" is JSON text; printed with 2-space indent
//! name: typescript
//! dist-tags:
//!   latest: 5.9.3
//! versions[3]: 0.8.0,0.8.1-1,"1.0"
//! maintainers[2]{name,email}:
//!   typescript-bot,typescript@microsoft.com
//!   ann,
//! files[2]:
//!   - bin
//!   - path: lib
//!     mode: 420
//! ```
//!
//! - **Line 1** (the legend) starts with [`LEGEND`], names the forms the text uses, and
//!   ends with `; printed …`: the layout the document had (`with 2-space indent`,
//!   `with 4-space indent`, `with tab indent`, `…, no space after :`, `on one line`,
//!   `on one line, a space after , and :`). The decoder re-prints the document in it.
//! - **An object** is its entries, one per line, indented two spaces per level:
//!   `key: scalar`, `key: {}` and `key: []` for empty containers, `key:` with the entries
//!   of a nested object indented under it.
//! - **An array** is `key[N]: a,b,c` when it holds only scalars; `key[N]{f,g}:` followed by
//!   N rows `a,b` when it holds objects of scalars whose keys keep one order (an empty cell:
//!   the object has no such key); otherwise `key[N]:` followed by N items `- …`. An item
//!   is a scalar, `{}`, `[]`, an array (`- [2]: a,b`), or an object whose first entry sits
//!   on the dash line and the rest under it. A root array is a line `[N]…` with no key.
//! - **A nested map** (`npm ls --json`'s `dependencies`: a map of objects of scalars, each
//!   holding the same key again as its own nested map, last) is `key{(path),f,g}:`
//!   followed by one row per entry in document order, the path of names joined by `>`.
//! - **A scalar** is written bare when that cannot be misread: numbers keep their text,
//!   `true`/`false`/`null` are literals, other strings are bare unless they are empty, hold
//!   an escape, have a leading or trailing space, start with `{` or `[`, or would read
//!   as a number or a literal, hold `,` in a row or a list, or hold `:` `[` `{` in an item;
//!   such a string is written as its exact JSON text (`"\u00e9"`, `"a\/b"`, `"1.0"`). Keys
//!   follow the same idea: bare unless empty, holding one of `":[]{},\`, spaced at an edge
//!   or starting with `-`.
//!
//! # Lossless
//!
//! [`decode`] rebuilds the document *text*: key order, duplicate keys, number text and
//! string escapes are the input's own, and the whitespace is the detected layout's. A
//! document whose whitespace is not exactly one of those layouts (a hand-edited file, a
//! printer with its own style for empty containers) is declined: [`encode`] decodes its own
//! result and returns `None` unless it gets the input back byte for byte.

use std::error::Error;
use std::fmt;

/// The start of the legend line of every encoding.
pub const LEGEND: &str = "[tj] JSON as indented key: value (TOON-like)";
const SAYS_LIST: &str = "; key[N]: a,b is an array";
const SAYS_TABLE: &str = "; key[N]{f,g}: one row per object, empty cell = no such key";
const SAYS_TREE: &str = "; key{(path),f}: nested key maps as rows, path joined by >";
const SAYS_JSON: &str = "; \"…\" is JSON text";
const PRINTED: &str = "; printed ";

/// Indentation of the encoding, per level. An item's `- ` is as wide, so the entries of an
/// object item line up under its first one.
const STEP: &str = "  ";
/// The first column of a nested map's rows.
const PATH_COLUMN: &str = "(path)";
/// Joins the names of a nested map's path. npm package names cannot hold it.
const PATH_JOIN: char = '>';
/// Deepest nesting accepted: the encoder and decoder recurse once per level.
const MAX_DEPTH: usize = 100;
/// Fewest rows for a nested map written as rows when no entry nests: a short map reads
/// better as entries (`resources: limits: …, requests: …`).
const MIN_FLAT_TREE_ROWS: usize = 5;
/// Widest table: past it, rows stop reading as rows.
const MAX_COLUMNS: usize = 32;
/// The gate's own thresholds (bytes at most 72 % of the input, 500 bytes saved): an
/// encoding that cannot pass them is not worth returning.
const PAYS_PERCENT: usize = 72;
const PAYS_BYTES: usize = 500;

/// Why a text does not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The first line is not a legend of this encoding, or names no known layout.
    Legend,
    /// A line is not what the format says.
    Malformed {
        /// 1-based line of the encoded text.
        line: usize,
        /// What is wrong with it.
        what: &'static str,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Legend => write!(f, "compact JSON: no legend naming a layout"),
            DecodeError::Malformed { line, what } => write!(f, "compact JSON line {line}: {what}"),
        }
    }
}

impl Error for DecodeError {}

/// `body` (one JSON document as printed, blank edges trimmed) as compact `key: value`
/// lines, or `None` when it is not one object or array, not printed in a layout the
/// decoder can re-print exactly, or the encoding does not pay.
///
/// ```
/// use tj::reduce::shape::compact_json;
///
/// let versions: Vec<String> = (0..200).map(|i| format!("    \"1.{i}.0\"")).collect();
/// let body = format!("{{\n  \"name\": \"x\",\n  \"versions\": [\n{}\n  ]\n}}", versions.join(",\n"));
/// let text = compact_json::encode(&body).expect("pays");
/// assert!(text.starts_with(compact_json::LEGEND));
/// assert!(text.contains("\nversions[200]: 1.0.0,1.1.0,"));
/// assert_eq!(compact_json::decode(&text).expect("decodes"), body);
/// ```
pub fn encode(body: &str) -> Option<String> {
    if body.len() < PAYS_BYTES {
        return None;
    }
    let text = encode_unchecked(body)?;
    let pays =
        text.len() * 100 <= body.len() * PAYS_PERCENT && body.len() - text.len() >= PAYS_BYTES;
    // Lossless: the layout is a guess and the writer's quoting a judgement; only the round
    // trip proves both. It costs about as much as the encoding, so it comes last.
    (pays && is_exact(body, &text)).then_some(text)
}

/// The encoding of `body` whatever its size, or `None` when it is not one object or array
/// or does not decode back to `body` exactly.
#[cfg(test)]
fn encode_exact(body: &str) -> Option<String> {
    encode_unchecked(body).filter(|text| is_exact(body, text))
}

fn is_exact(body: &str, text: &str) -> bool {
    decode(text).is_ok_and(|back| back == body)
}

/// The encoding of `body`, not yet proven to decode back to it.
fn encode_unchecked(body: &str) -> Option<String> {
    if !matches!(body.as_bytes().first(), Some(b'{' | b'[')) {
        return None;
    }
    let mut parser = Parser::new(body);
    let root = parser.document()?;
    let layout = Layout::detect(body, parser.after_colon)?;
    let mut w = Writer::default();
    match &root {
        Node::Obj(entries) if !entries.is_empty() => w.entries(entries, 0),
        Node::Arr(items) if !items.is_empty() => {
            w.lead(Lead::Indent(0));
            w.array(items, 0);
        }
        _ => return None,
    }
    let mut text = String::with_capacity(w.out.len() + 256);
    text.push_str(LEGEND);
    for (used, says) in
        [(w.list, SAYS_LIST), (w.table, SAYS_TABLE), (w.tree, SAYS_TREE), (w.json, SAYS_JSON)]
    {
        if used {
            text.push_str(says);
        }
    }
    text.push_str(PRINTED);
    layout.describe(&mut text);
    text.push_str(&w.out);
    Some(text)
}

/// The document text back from exactly what [`encode`] wrote.
pub fn decode(text: &str) -> Result<String, DecodeError> {
    let (legend, rest) = text.split_once('\n').unwrap_or((text, ""));
    if !legend.starts_with(LEGEND) {
        return Err(DecodeError::Legend);
    }
    let layout = legend
        .rfind(PRINTED)
        .and_then(|at| Layout::parse(&legend[at + PRINTED.len()..]))
        .ok_or(DecodeError::Legend)?;
    let mut reader = Reader::new(rest)?;
    let root = reader.root()?;
    let mut out = String::with_capacity(text.len() * 2);
    layout.print(&mut out, &root, 0);
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// The document.

/// A scalar or a key as text: `Raw` is JSON text as written (a string with its quotes and
/// escapes, a number, a literal), `Bare` a string's content with no escape in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Leaf<'a> {
    Raw(&'a str),
    Bare(&'a str),
}

impl<'a> Leaf<'a> {
    /// The string content when the leaf is a string without escapes.
    fn plain(self) -> Option<&'a str> {
        match self {
            Leaf::Bare(s) => Some(s),
            Leaf::Raw(r) if r.starts_with('"') => {
                let inner = &r[1..r.len() - 1];
                (!inner.contains('\\')).then_some(inner)
            }
            Leaf::Raw(_) => None,
        }
    }

    fn push(self, out: &mut String) {
        match self {
            Leaf::Raw(r) => out.push_str(r),
            Leaf::Bare(s) => {
                out.push('"');
                out.push_str(s);
                out.push('"');
            }
        }
    }
}

#[derive(Debug)]
enum Node<'a> {
    Leaf(Leaf<'a>),
    Arr(Vec<Node<'a>>),
    Obj(Vec<(Leaf<'a>, Node<'a>)>),
}

impl Node<'_> {
    /// Returns true if and only if the node fits a table cell: a scalar or an empty
    /// container.
    fn is_cell(&self) -> bool {
        match self {
            Node::Leaf(_) => true,
            Node::Arr(items) => items.is_empty(),
            Node::Obj(entries) => entries.is_empty(),
        }
    }
}

/// A strict RFC 8259 parser that keeps every token's text: strings with their escapes,
/// numbers as written.
struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
    /// The whitespace after the first `:`, for the layout.
    after_colon: Option<&'a str>,
    /// Entries of the objects being parsed, innermost last: they move into one exact
    /// allocation when their object ends, with no regrowth per object.
    entries: Vec<(Leaf<'a>, Node<'a>)>,
    /// Items of the arrays being parsed, the same way.
    items: Vec<Node<'a>>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Parser<'a> {
        Parser {
            src,
            b: src.as_bytes(),
            i: 0,
            after_colon: None,
            entries: Vec::new(),
            items: Vec::new(),
        }
    }

    fn document(&mut self) -> Option<Node<'a>> {
        let node = self.value(0)?;
        self.ws();
        (self.i == self.b.len()).then_some(node)
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        let hit = self.b.get(self.i) == Some(&c);
        self.i += usize::from(hit);
        hit
    }

    fn value(&mut self, depth: usize) -> Option<Node<'a>> {
        self.ws();
        match *self.b.get(self.i)? {
            b'{' | b'[' if depth >= MAX_DEPTH => None,
            b'{' => {
                self.i += 1;
                if self.eat(b'}') {
                    return Some(Node::Obj(Vec::new()));
                }
                let base = self.entries.len();
                loop {
                    self.ws();
                    let key = self.string()?;
                    if !self.eat(b':') {
                        return None;
                    }
                    if self.after_colon.is_none() {
                        let start = self.i;
                        self.ws();
                        self.after_colon = self.src.get(start..self.i);
                    }
                    let value = self.value(depth + 1)?;
                    self.entries.push((Leaf::Raw(key), value));
                    if !self.eat(b',') {
                        let entries = self.entries.drain(base..).collect();
                        return self.eat(b'}').then_some(Node::Obj(entries));
                    }
                }
            }
            b'[' => {
                self.i += 1;
                if self.eat(b']') {
                    return Some(Node::Arr(Vec::new()));
                }
                let base = self.items.len();
                loop {
                    let item = self.value(depth + 1)?;
                    self.items.push(item);
                    if !self.eat(b',') {
                        let items = self.items.drain(base..).collect();
                        return self.eat(b']').then_some(Node::Arr(items));
                    }
                }
            }
            b'"' => self.string().map(|s| Node::Leaf(Leaf::Raw(s))),
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            _ => self.number().map(|s| Node::Leaf(Leaf::Raw(s))),
        }
    }

    fn literal(&mut self, word: &'static str) -> Option<Node<'a>> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word.as_bytes()).then(|| {
            self.i = end;
            Node::Leaf(Leaf::Raw(word))
        })
    }

    fn number(&mut self) -> Option<&'a str> {
        let len = json_number_len(&self.b[self.i..])?;
        let text = self.src.get(self.i..self.i + len)?;
        self.i += len;
        Some(text)
    }

    /// A string token with its quotes, escapes checked, not decoded.
    fn string(&mut self) -> Option<&'a str> {
        let start = self.i;
        if self.b.get(self.i) != Some(&b'"') {
            return None;
        }
        self.i += 1;
        loop {
            match *self.b.get(self.i)? {
                b'"' => {
                    self.i += 1;
                    return self.src.get(start..self.i);
                }
                b'\\' => {
                    self.i += 1;
                    match *self.b.get(self.i)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 1,
                        b'u' => {
                            let hex = self.b.get(self.i + 1..self.i + 5)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            self.i += 5;
                        }
                        _ => return None,
                    }
                }
                0..=0x1f => return None,
                _ => self.i += 1,
            }
        }
    }
}

/// The length of the JSON number at the start of `b`:
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn json_number_len(b: &[u8]) -> Option<usize> {
    let digits = |i: usize| b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = usize::from(b.first() == Some(&b'-'));
    match b.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i += digits(i),
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        let n = digits(i + 1);
        if n == 0 {
            return None;
        }
        i += 1 + n;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        let n = digits(i);
        if n == 0 {
            return None;
        }
        i += n;
    }
    Some(i)
}

/// Returns true if and only if `s` is exactly one JSON number.
fn is_json_number(s: &str) -> bool {
    json_number_len(s.as_bytes()) == Some(s.len())
}

// ---------------------------------------------------------------------------------------
// The layout the document was printed with.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// One entry or item per line, nested ones indented by `indent` (spaces, 0 for a tab);
    /// `tight` when keys are followed by `:` alone rather than `: `.
    Pretty { indent: u8, tight: bool },
    /// Everything on one line; `spaced` when `,` and `:` are followed by a space (Python's
    /// `json.dumps` default).
    Line { spaced: bool },
}

impl Layout {
    /// The layout `body` seems printed with; the round trip in [`encode`] confirms it.
    fn detect(body: &str, after_colon: Option<&str>) -> Option<Layout> {
        let Some((_, rest)) = body.split_once('\n') else {
            return Some(Layout::Line { spaced: after_colon == Some(" ") });
        };
        let indent = rest.bytes().take_while(|&c| c == b' ').count();
        let indent = match indent {
            0 if rest.starts_with('\t') => 0,
            1..=8 => u8::try_from(indent).ok()?,
            _ => return None,
        };
        Some(Layout::Pretty { indent, tight: after_colon == Some("") })
    }

    fn describe(self, out: &mut String) {
        match self {
            Layout::Pretty { indent: 0, .. } => out.push_str("with tab indent"),
            Layout::Pretty { indent, .. } => {
                out.push_str("with ");
                out.push_str(&indent.to_string());
                out.push_str("-space indent");
            }
            Layout::Line { spaced: false } => out.push_str("on one line"),
            Layout::Line { spaced: true } => out.push_str("on one line, a space after , and :"),
        }
        if let Layout::Pretty { tight: true, .. } = self {
            out.push_str(", no space after :");
        }
    }

    fn parse(s: &str) -> Option<Layout> {
        match s {
            "on one line" => return Some(Layout::Line { spaced: false }),
            "on one line, a space after , and :" => return Some(Layout::Line { spaced: true }),
            _ => {}
        }
        let (s, tight) = match s.strip_suffix(", no space after :") {
            Some(s) => (s, true),
            None => (s, false),
        };
        let indent = s.strip_prefix("with ")?.strip_suffix(" indent")?;
        let indent = match indent {
            "tab" => 0,
            n => n.strip_suffix("-space")?.parse().ok().filter(|n| (1..=8).contains(n))?,
        };
        Some(Layout::Pretty { indent, tight })
    }

    fn newline(self, out: &mut String, depth: usize) {
        if let Layout::Pretty { indent, .. } = self {
            out.push('\n');
            if indent == 0 {
                out.extend(std::iter::repeat_n('\t', depth));
            } else {
                out.extend(std::iter::repeat_n(' ', depth * usize::from(indent)));
            }
        }
    }

    /// Prints `node` as the tool did.
    fn print(self, out: &mut String, node: &Node<'_>, depth: usize) {
        let (comma, colon) = match self {
            Layout::Pretty { tight, .. } => (",", if tight { ":" } else { ": " }),
            Layout::Line { spaced: true } => (", ", ": "),
            Layout::Line { spaced: false } => (",", ":"),
        };
        match node {
            Node::Leaf(leaf) => leaf.push(out),
            Node::Arr(items) if items.is_empty() => out.push_str("[]"),
            Node::Obj(entries) if entries.is_empty() => out.push_str("{}"),
            Node::Arr(items) => {
                out.push('[');
                for (n, item) in items.iter().enumerate() {
                    if n > 0 {
                        out.push_str(comma);
                    }
                    self.newline(out, depth + 1);
                    self.print(out, item, depth + 1);
                }
                self.newline(out, depth);
                out.push(']');
            }
            Node::Obj(entries) => {
                out.push('{');
                for (n, (key, value)) in entries.iter().enumerate() {
                    if n > 0 {
                        out.push_str(comma);
                    }
                    self.newline(out, depth + 1);
                    key.push(out);
                    out.push_str(colon);
                    self.print(out, value, depth + 1);
                }
                self.newline(out, depth);
                out.push('}');
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Encoding.

/// Where a scalar is written: what else its text could be mistaken for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// After `key: `, to the end of the line.
    Value,
    /// A cell of a row or an inline list, ended by `,`.
    Cell,
    /// After `- `, where `k: v` would start an object.
    Item,
}

/// Returns true if and only if the string content `s` must be written as JSON text at
/// `place` to read back as the same string.
fn needs_quotes(s: &str, place: Place) -> bool {
    let Some(&first) = s.as_bytes().first() else { return true };
    // Whitespace at either end, Unicode's too (`"\u{2000}"`): a line ending in it reads as
    // trailing blanks, which renderers and readers drop.
    matches!(first, b'{' | b'[' | b'"')
        || s.starts_with(char::is_whitespace)
        || s.ends_with(char::is_whitespace)
        || s.contains('\\')
        || matches!(s, "true" | "false" | "null")
        || ((first.is_ascii_digit()
            || matches!(first, b'-' | b'+' | b'.' | b'i' | b'I' | b'n' | b'N'))
            && s.parse::<f64>().is_ok())
        || match place {
            Place::Value => false,
            Place::Cell => s.contains(','),
            Place::Item => s.contains([':', '[', '{']),
        }
}

/// Returns true if and only if the key content `s` must be written as JSON text.
fn key_needs_quotes(s: &str) -> bool {
    s.is_empty()
        || s.starts_with('-')
        || s.starts_with(char::is_whitespace)
        || s.ends_with(char::is_whitespace)
        || s.contains(['"', '\\', ':', '[', ']', '{', '}', ','])
}

/// How the first line of an entry or item starts.
#[derive(Clone, Copy)]
enum Lead {
    /// Indented to this depth.
    Indent(usize),
    /// `- ` as an item at this depth.
    Dash(usize),
}

#[derive(Default)]
struct Writer {
    out: String,
    list: bool,
    table: bool,
    tree: bool,
    json: bool,
}

impl Writer {
    fn lead(&mut self, lead: Lead) {
        self.out.push('\n');
        match lead {
            Lead::Indent(depth) => self.indent(depth),
            Lead::Dash(depth) => {
                self.indent(depth);
                self.out.push_str("- ");
            }
        }
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str(STEP);
        }
    }

    fn key(&mut self, key: Leaf<'_>) {
        match key.plain() {
            Some(s) if !key_needs_quotes(s) => self.out.push_str(s),
            _ => self.raw(key),
        }
    }

    fn raw(&mut self, leaf: Leaf<'_>) {
        self.json = true;
        leaf.push(&mut self.out);
    }

    fn scalar(&mut self, node: &Node<'_>, place: Place) {
        match node {
            Node::Leaf(leaf @ Leaf::Raw(r)) if r.starts_with('"') => match leaf.plain() {
                Some(s) if !needs_quotes(s, place) => self.out.push_str(s),
                _ => self.raw(*leaf),
            },
            Node::Leaf(leaf) => leaf.push(&mut self.out),
            Node::Arr(_) => self.out.push_str("[]"),
            Node::Obj(_) => self.out.push_str("{}"),
        }
    }

    fn entries(&mut self, entries: &[(Leaf<'_>, Node<'_>)], depth: usize) {
        for (key, value) in entries {
            self.entry(*key, value, depth, Lead::Indent(depth));
        }
    }

    /// One entry at `depth`, its first line started by `lead`.
    fn entry(&mut self, key: Leaf<'_>, value: &Node<'_>, depth: usize, lead: Lead) {
        self.lead(lead);
        self.key(key);
        match value {
            Node::Obj(entries) if !entries.is_empty() => match Columns::of_tree(key, entries) {
                Some(columns) => self.tree(key, entries, &columns, depth + 1),
                None => {
                    self.out.push(':');
                    self.entries(entries, depth + 1);
                }
            },
            Node::Arr(items) if !items.is_empty() => self.array(items, depth),
            _ => {
                self.out.push_str(": ");
                self.scalar(value, Place::Value);
            }
        }
    }

    /// `[N]…` after a key, a dash or nothing (the root); the elements go one level under
    /// `depth`.
    fn array(&mut self, items: &[Node<'_>], depth: usize) {
        self.out.push('[');
        self.out.push_str(&items.len().to_string());
        self.out.push(']');
        if items.iter().all(|n| matches!(n, Node::Leaf(_))) {
            self.list = true;
            self.out.push_str(": ");
            self.cells(items.iter().map(Some));
        } else if let Some(columns) = Columns::of_rows(items) {
            self.table = true;
            self.header(None, &columns);
            for item in items {
                if let Node::Obj(fields) = item {
                    self.lead(Lead::Indent(depth + 1));
                    self.cells(columns.cells(fields));
                }
            }
        } else {
            self.list = true;
            self.out.push(':');
            for item in items {
                self.item(item, depth + 1);
            }
        }
    }

    fn item(&mut self, node: &Node<'_>, depth: usize) {
        match node {
            Node::Arr(items) if !items.is_empty() => {
                self.lead(Lead::Dash(depth));
                self.array(items, depth);
            }
            Node::Obj(entries) if !entries.is_empty() => {
                let mut lead = Lead::Dash(depth);
                for (key, value) in entries {
                    self.entry(*key, value, depth + 1, lead);
                    lead = Lead::Indent(depth + 1);
                }
            }
            _ => {
                self.lead(Lead::Dash(depth));
                self.scalar(node, Place::Item);
            }
        }
    }

    /// Cells joined by `,`; `None` is an empty cell.
    fn cells<'n, 'a: 'n>(&mut self, cells: impl Iterator<Item = Option<&'n Node<'a>>>) {
        for (n, cell) in cells.enumerate() {
            if n > 0 {
                self.out.push(',');
            }
            if let Some(node) = cell {
                self.scalar(node, Place::Cell);
            }
        }
    }

    /// `{(path),f,g}:` or `{f,g}:`.
    fn header(&mut self, path: Option<&str>, columns: &Columns<'_>) {
        self.out.push('{');
        if let Some(path) = path {
            self.out.push_str(path);
            self.out.push(',');
        }
        for (n, key) in columns.keys.iter().enumerate() {
            if n > 0 {
                self.out.push(',');
            }
            self.key(*key);
        }
        self.out.push_str("}:");
    }

    /// A nested map as rows: `key{(path),f,g}:` then one row per entry, depth first.
    fn tree(
        &mut self,
        key: Leaf<'_>,
        map: &[(Leaf<'_>, Node<'_>)],
        columns: &Columns<'_>,
        depth: usize,
    ) {
        self.tree = true;
        self.header(Some(PATH_COLUMN), columns);
        let mut path = String::new();
        self.tree_rows(key, map, columns, depth, &mut path);
    }

    fn tree_rows(
        &mut self,
        key: Leaf<'_>,
        map: &[(Leaf<'_>, Node<'_>)],
        columns: &Columns<'_>,
        depth: usize,
        path: &mut String,
    ) {
        for (name, value) in map {
            let Node::Obj(fields) = value else { continue };
            let len = path.len();
            if len > 0 {
                path.push(PATH_JOIN);
            }
            path.push_str(name.plain().unwrap_or_default());
            self.lead(Lead::Indent(depth));
            if needs_quotes(path, Place::Cell) {
                self.raw(Leaf::Bare(path));
            } else {
                self.out.push_str(path);
            }
            let (fields, children) = split_children(key, fields);
            self.out.push(',');
            self.cells(columns.cells(fields));
            if let Some(children) = children {
                self.tree_rows(key, children, columns, depth, path);
            }
            path.truncate(len);
        }
    }
}

type Entries<'n, 'a> = &'n [(Leaf<'a>, Node<'a>)];

/// The fields of a nested map's entry and, when its last entry is `key` holding a
/// non-empty object, that object.
fn split_children<'n, 'a>(
    key: Leaf<'_>,
    fields: Entries<'n, 'a>,
) -> (Entries<'n, 'a>, Option<Entries<'n, 'a>>) {
    match fields.split_last() {
        Some(((k, Node::Obj(children)), rest)) if *k == key && !children.is_empty() => {
            (rest, Some(children))
        }
        _ => (fields, None),
    }
}

/// The columns of a table: every key of its rows, in an order every row keeps.
struct Columns<'a> {
    keys: Vec<Leaf<'a>>,
    rows: usize,
    cells: usize,
}

impl<'a> Columns<'a> {
    /// Columns for an array of objects of cells, or `None`.
    fn of_rows(items: &[Node<'a>]) -> Option<Columns<'a>> {
        let mut columns = Columns { keys: Vec::new(), rows: 0, cells: 0 };
        for item in items {
            let Node::Obj(fields) = item else { return None };
            if fields.is_empty() || !columns.add(fields) {
                return None;
            }
        }
        columns.is_dense().then_some(columns)
    }

    /// Columns for a nested map under `key`, or `None` when it is not one.
    fn of_tree(key: Leaf<'a>, map: &[(Leaf<'a>, Node<'a>)]) -> Option<Columns<'a>> {
        let mut columns = Columns { keys: Vec::new(), rows: 0, cells: 0 };
        (map.iter().all(|(_, v)| matches!(v, Node::Obj(_)))
            && columns.add_tree(key, map)
            && columns.rows >= 2
            && (columns.rows > map.len() || columns.rows >= MIN_FLAT_TREE_ROWS)
            && columns.is_dense())
        .then_some(columns)
    }

    fn add_tree(&mut self, key: Leaf<'a>, map: &[(Leaf<'a>, Node<'a>)]) -> bool {
        map.iter().all(|(name, value)| {
            let name_ok = name.plain().is_some_and(|s| !s.is_empty() && !s.contains(PATH_JOIN));
            let Node::Obj(fields) = value else { return false };
            let (fields, children) = split_children(key, fields);
            name_ok
                && fields.iter().all(|(k, _)| *k != key)
                && self.add(fields)
                && children.is_none_or(|c| self.add_tree(key, c))
        })
    }

    /// Adds a row: false when a value is not a cell or the row's keys cannot keep their
    /// order in the columns. A key not yet seen becomes a column just after the row's
    /// previous key, which keeps every earlier row in order too.
    fn add(&mut self, fields: &[(Leaf<'a>, Node<'a>)]) -> bool {
        let mut at = 0;
        for (key, value) in fields {
            if !value.is_cell() {
                return false;
            }
            match self.keys.iter().position(|k| k == key) {
                Some(p) if p >= at => at = p + 1,
                Some(_) => return false,
                None => {
                    if self.keys.len() == MAX_COLUMNS {
                        return false;
                    }
                    self.keys.insert(at, *key);
                    at += 1;
                }
            }
        }
        self.rows += 1;
        self.cells += fields.len();
        true
    }

    /// Returns true if and only if at least half the cells are filled: sparser rows read
    /// better as entries.
    fn is_dense(&self) -> bool {
        !self.keys.is_empty() && self.cells * 2 >= self.rows * self.keys.len()
    }

    /// The row's value in each column, `None` where it has no such key.
    fn cells<'n>(
        &'n self,
        fields: &'n [(Leaf<'a>, Node<'a>)],
    ) -> impl Iterator<Item = Option<&'n Node<'a>>> {
        let mut rest = fields.iter().peekable();
        self.keys.iter().map(move |k| rest.next_if(|(key, _)| key == k).map(|(_, v)| v))
    }
}

// ---------------------------------------------------------------------------------------
// Decoding.

struct Line<'t> {
    /// 1-based line number in the encoded text.
    n: usize,
    depth: usize,
    text: &'t str,
}

struct Reader<'t> {
    lines: Vec<Line<'t>>,
    at: usize,
    /// Entries of the objects being read, innermost last, as in [`Parser`].
    entries: Vec<(Leaf<'t>, Node<'t>)>,
}

fn malformed(line: usize, what: &'static str) -> DecodeError {
    DecodeError::Malformed { line, what }
}

impl<'t> Reader<'t> {
    fn new(body: &'t str) -> Result<Reader<'t>, DecodeError> {
        let mut lines = Vec::new();
        for (i, line) in body.split('\n').enumerate() {
            let text = line.trim_start_matches(' ');
            let spaces = line.len() - text.len();
            if spaces % STEP.len() != 0 || text.is_empty() {
                return Err(malformed(i + 2, "bad indentation or empty line"));
            }
            lines.push(Line { n: i + 2, depth: spaces / STEP.len(), text });
        }
        Ok(Reader { lines, at: 0, entries: Vec::new() })
    }

    fn peek(&self) -> Option<&Line<'t>> {
        self.lines.get(self.at)
    }

    fn next(&mut self, depth: usize) -> Result<&Line<'t>, DecodeError> {
        let n = self.peek().map_or(self.lines.len() + 1, |l| l.n);
        match self.lines.get(self.at) {
            Some(line) if line.depth == depth => {
                self.at += 1;
                Ok(line)
            }
            _ => Err(malformed(n, "expected a line at this indentation")),
        }
    }

    fn root(&mut self) -> Result<Node<'t>, DecodeError> {
        let root = match self.peek() {
            Some(line) if line.depth == 0 && line.text.starts_with('[') => {
                let (n, text) = (line.n, line.text);
                self.at += 1;
                self.array(n, text, 0)?
            }
            Some(_) => Node::Obj(self.entries(0)?),
            None => return Err(malformed(2, "no document")),
        };
        match self.peek() {
            Some(line) => Err(malformed(line.n, "unexpected line")),
            None => Ok(root),
        }
    }

    /// The entries at `depth`, up to the first line that is not one.
    fn entries(&mut self, depth: usize) -> Result<Vec<(Leaf<'t>, Node<'t>)>, DecodeError> {
        let base = self.entries.len();
        while let Some(line) = self.peek() {
            if line.depth != depth || line.text.starts_with("- ") {
                break;
            }
            let (n, text) = (line.n, line.text);
            self.at += 1;
            let entry = self.entry(n, text, depth)?;
            self.entries.push(entry);
        }
        if self.entries.len() == base {
            let n = self.peek().map_or(self.lines.len() + 1, |l| l.n);
            return Err(malformed(n, "expected an entry"));
        }
        Ok(self.entries.drain(base..).collect())
    }

    fn entry(
        &mut self,
        n: usize,
        text: &'t str,
        depth: usize,
    ) -> Result<(Leaf<'t>, Node<'t>), DecodeError> {
        let (key, tail) = split_key(text).ok_or(malformed(n, "expected a key"))?;
        let value = if let Some(value) = tail.strip_prefix(": ") {
            leaf_or_empty(value, Place::Value).ok_or(malformed(n, "bad value"))?
        } else if tail == ":" {
            Node::Obj(self.entries(depth + 1)?)
        } else if tail.starts_with('[') {
            self.array(n, tail, depth)?
        } else if tail.starts_with('{') {
            self.tree(n, key, tail, depth + 1)?
        } else {
            return Err(malformed(n, "expected `:` after the key"));
        };
        Ok((key, value))
    }

    /// `[N]: a,b`, `[N]{f,g}:` and its rows, or `[N]:` and its items.
    fn array(&mut self, n: usize, text: &'t str, depth: usize) -> Result<Node<'t>, DecodeError> {
        let (count, tail) = text[1..].split_once(']').ok_or(malformed(n, "expected `[N]`"))?;
        let count: usize = count
            .parse()
            .ok()
            .filter(|&c| c > 0 && !count.starts_with(['0', '+']))
            .ok_or(malformed(n, "bad count"))?;
        if let Some(list) = tail.strip_prefix(": ") {
            let cells = split_cells(list).ok_or(malformed(n, "bad list"))?;
            let items: Option<Vec<Node<'t>>> =
                cells.into_iter().map(|c| leaf(c, Place::Cell)).collect();
            return match items {
                Some(items) if items.len() == count => Ok(Node::Arr(items)),
                _ => Err(malformed(n, "list does not match its count")),
            };
        }
        if tail == ":" {
            return (0..count)
                .map(|_| self.item(depth + 1))
                .collect::<Result<_, _>>()
                .map(Node::Arr);
        }
        let keys = header(tail).ok_or(malformed(n, "bad header"))?;
        let mut items = Vec::with_capacity(count);
        for _ in 0..count {
            let line = self.next(depth + 1)?;
            let (n, text) = (line.n, line.text);
            let cells = split_cells(text).ok_or(malformed(n, "bad row"))?;
            let fields = row(&keys, &cells).ok_or(malformed(n, "bad row"))?;
            items.push(Node::Obj(fields));
        }
        Ok(Node::Arr(items))
    }

    fn item(&mut self, depth: usize) -> Result<Node<'t>, DecodeError> {
        let line = self.next(depth)?;
        let (n, text) = (line.n, line.text);
        let text = text.strip_prefix("- ").ok_or(malformed(n, "expected an item `- `"))?;
        if text.starts_with('[') && text != "[]" {
            return self.array(n, text, depth);
        }
        let is_entry = match text.strip_prefix('"') {
            Some(_) => quoted_len(text).is_some_and(|len| len < text.len()),
            None => !matches!(text, "{}" | "[]") && text.contains([':', '[', '{']),
        };
        if !is_entry {
            return leaf_or_empty(text, Place::Item).ok_or(malformed(n, "bad item"));
        }
        let mut entries = vec![self.entry(n, text, depth + 1)?];
        if self.peek().is_some_and(|l| l.depth == depth + 1) {
            entries.extend(self.entries(depth + 1)?);
        }
        Ok(Node::Obj(entries))
    }

    /// The rows of a nested map under `key`, at `depth`.
    fn tree(
        &mut self,
        n: usize,
        key: Leaf<'t>,
        tail: &'t str,
        depth: usize,
    ) -> Result<Node<'t>, DecodeError> {
        let keys = header(tail).ok_or(malformed(n, "bad header"))?;
        if keys.first() != Some(&Leaf::Bare(PATH_COLUMN)) {
            return Err(malformed(n, "expected a (path) column"));
        }
        let mut tree = Tree { key, stack: Vec::new(), top: Vec::new() };
        while self.peek().is_some_and(|l| l.depth == depth) {
            let line = self.next(depth)?;
            let (n, text) = (line.n, line.text);
            let cells = split_cells(text).ok_or(malformed(n, "bad row"))?;
            let names = path_names(cells[0]).ok_or(malformed(n, "bad path"))?;
            let fields = row(&keys[1..], &cells[1..]).ok_or(malformed(n, "bad row"))?;
            tree.push(&names, fields).ok_or(malformed(n, "path does not follow its parent"))?;
        }
        tree.finish().ok_or(malformed(n, "no rows"))
    }
}

/// A nested map being rebuilt from rows in document order: the open entries, outermost
/// first, each with the children gathered so far.
struct Tree<'t> {
    key: Leaf<'t>,
    stack: Vec<Open<'t>>,
    top: Vec<(Leaf<'t>, Node<'t>)>,
}

struct Open<'t> {
    name: &'t str,
    fields: Vec<(Leaf<'t>, Node<'t>)>,
    children: Vec<(Leaf<'t>, Node<'t>)>,
}

impl<'t> Tree<'t> {
    fn push(&mut self, names: &[&'t str], fields: Vec<(Leaf<'t>, Node<'t>)>) -> Option<()> {
        let (&name, parents) = names.split_last()?;
        if parents.len() > self.stack.len() {
            return None;
        }
        while self.stack.len() > parents.len() {
            self.close();
        }
        if !self.stack.iter().zip(parents).all(|(open, p)| open.name == *p) {
            return None;
        }
        self.stack.push(Open { name, fields, children: Vec::new() });
        Some(())
    }

    fn close(&mut self) {
        let Some(mut open) = self.stack.pop() else { return };
        if !open.children.is_empty() {
            open.fields.push((self.key, Node::Obj(open.children)));
        }
        let entry = (Leaf::Bare(open.name), Node::Obj(open.fields));
        match self.stack.last_mut() {
            Some(parent) => parent.children.push(entry),
            None => self.top.push(entry),
        }
    }

    fn finish(mut self) -> Option<Node<'t>> {
        while !self.stack.is_empty() {
            self.close();
        }
        (!self.top.is_empty()).then_some(Node::Obj(self.top))
    }
}

/// The length of the JSON string token at the start of `s`, quotes included.
fn quoted_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    None
}

/// A key and what follows it.
fn split_key(text: &str) -> Option<(Leaf<'_>, &str)> {
    if text.starts_with('"') {
        let len = quoted_len(text)?;
        return Some((Leaf::Raw(&text[..len]), &text[len..]));
    }
    let end = text.find([':', '[', '{'])?;
    (end > 0).then(|| (Leaf::Bare(&text[..end]), &text[end..]))
}

/// The scalar `text` stands for at `place`, or `None` when it cannot be one.
fn leaf(text: &str, place: Place) -> Option<Node<'_>> {
    if text.starts_with('"') {
        return (quoted_len(text) == Some(text.len())).then_some(Node::Leaf(Leaf::Raw(text)));
    }
    if matches!(text, "true" | "false" | "null") || is_json_number(text) {
        return Some(Node::Leaf(Leaf::Raw(text)));
    }
    let bare_ok = !text.is_empty() && !text.contains('"') && !needs_quotes(text, place);
    bare_ok.then_some(Node::Leaf(Leaf::Bare(text)))
}

/// A scalar, or `{}`/`[]`.
fn leaf_or_empty(text: &str, place: Place) -> Option<Node<'_>> {
    match text {
        "{}" => Some(Node::Obj(Vec::new())),
        "[]" => Some(Node::Arr(Vec::new())),
        _ => leaf(text, place),
    }
}

/// The cells of a row or list: bare text up to `,`, or a JSON string token.
fn split_cells(text: &str) -> Option<Vec<&str>> {
    let mut cells = Vec::new();
    let mut rest = text;
    loop {
        let end = if rest.starts_with('"') {
            quoted_len(rest)?
        } else {
            rest.find(',').unwrap_or(rest.len())
        };
        cells.push(&rest[..end]);
        match rest[end..].strip_prefix(',') {
            Some(tail) => rest = tail,
            None if end == rest.len() => return Some(cells),
            None => return None,
        }
    }
}

/// The keys of a header `{f,g}:`.
fn header(tail: &str) -> Option<Vec<Leaf<'_>>> {
    let inner = tail.strip_prefix('{')?.strip_suffix("}:")?;
    let mut keys = Vec::new();
    let mut rest = inner;
    loop {
        let (key, after) = if rest.starts_with('"') {
            let len = quoted_len(rest)?;
            (Leaf::Raw(&rest[..len]), &rest[len..])
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            (Leaf::Bare(&rest[..end]), &rest[end..])
        };
        keys.push(key);
        match after.strip_prefix(',') {
            Some(tail) => rest = tail,
            None if after.is_empty() => return Some(keys),
            None => return None,
        }
    }
}

/// A row's entries: the filled cells under their column's key.
fn row<'t>(keys: &[Leaf<'t>], cells: &[&'t str]) -> Option<Vec<(Leaf<'t>, Node<'t>)>> {
    if cells.len() != keys.len() {
        return None;
    }
    let mut fields = Vec::with_capacity(keys.len());
    for (key, cell) in keys.iter().zip(cells) {
        if !cell.is_empty() {
            fields.push((*key, leaf_or_empty(cell, Place::Cell)?));
        }
    }
    Some(fields)
}

/// The names of a nested map's path cell.
fn path_names(cell: &str) -> Option<Vec<&str>> {
    let path = match cell.strip_prefix('"') {
        Some(quoted) => quoted.strip_suffix('"').filter(|s| !s.contains(['\\', '"']))?,
        None => cell,
    };
    let names: Vec<&str> = path.split(PATH_JOIN).collect();
    names.iter().all(|s| !s.is_empty()).then_some(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodes whatever the size, checks the round trip itself, returns the encoding.
    fn round_trip(body: &str) -> String {
        let text = encode_exact(body).unwrap_or_else(|| panic!("not encoded:\n{body}"));
        assert_eq!(decode(&text).as_deref(), Ok(body), "encoding:\n{text}");
        text
    }

    /// The encoding without its legend.
    fn lines(text: &str) -> Vec<&str> {
        text.lines().skip(1).collect()
    }

    /// `json` printed as `JSON.stringify(v, null, 2)` does, key order kept.
    fn pretty(json: &str) -> String {
        let mut parser = Parser::new(json);
        let node = parser.document().expect("valid JSON");
        let mut out = String::new();
        Layout::Pretty { indent: 2, tight: false }.print(&mut out, &node, 0);
        out
    }

    /// `npm view PKG --json`, cut down: maps of scalars, arrays of scalars, nested objects.
    const NPM_VIEW: &str = r#"{
  "_id": "typescript@5.9.3",
  "name": "typescript",
  "dist-tags": {
    "next": "6.0.0-dev.20251201",
    "latest": "5.9.3"
  },
  "versions": [
    "0.8.0",
    "0.8.1-1",
    "5.9.3"
  ],
  "time": {
    "created": "2012-10-01T15:22:56.839Z",
    "0.8.0": "2012-10-01T15:22:56.839Z",
    "5.9.3": "2025-09-30T21:19:39.491Z"
  },
  "_contentLength": 0,
  "keywords": [
    "TypeScript",
    "Microsoft"
  ],
  "bin": {
    "tsc": "./bin/tsc",
    "tsserver": "./bin/tsserver"
  },
  "engines": {
    "node": ">=14.17"
  },
  "dist": {
    "shasum": "5b3f2f1a",
    "signatures": [
      {
        "sig": "MEUCIQ==",
        "keyid": "SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA"
      }
    ],
    "unpackedSize": 22873421
  }
}"#;

    #[test]
    fn module_doc_example_is_exact() {
        let body = pretty(
            r#"{"name": "typescript", "dist-tags": {"latest": "5.9.3"},
            "versions": ["0.8.0", "0.8.1-1", "1.0"],
            "maintainers": [{"name": "typescript-bot", "email": "typescript@microsoft.com"},
                {"name": "ann"}],
            "files": ["bin", {"path": "lib", "mode": 420}]}"#,
        );
        let doc = include_str!("compact_json.rs")
            .lines()
            .skip_while(|l| *l != "//! ```text")
            .skip(1)
            .take_while(|l| *l != "//! ```")
            .map(|l| l.strip_prefix("//! ").unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(round_trip(&body), doc);
    }

    #[test]
    fn npm_view_reads_as_lists() {
        let text = round_trip(NPM_VIEW);
        assert_eq!(
            lines(&text),
            [
                "_id: typescript@5.9.3",
                "name: typescript",
                "dist-tags:",
                "  next: 6.0.0-dev.20251201",
                "  latest: 5.9.3",
                "versions[3]: 0.8.0,0.8.1-1,5.9.3",
                "time:",
                "  created: 2012-10-01T15:22:56.839Z",
                "  0.8.0: 2012-10-01T15:22:56.839Z",
                "  5.9.3: 2025-09-30T21:19:39.491Z",
                "_contentLength: 0",
                "keywords[2]: TypeScript,Microsoft",
                "bin:",
                "  tsc: ./bin/tsc",
                "  tsserver: ./bin/tsserver",
                "engines:",
                "  node: >=14.17",
                "dist:",
                "  shasum: 5b3f2f1a",
                "  signatures[1]{sig,keyid}:",
                "    MEUCIQ==,SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA",
                "  unpackedSize: 22873421",
            ]
        );
        assert!(text.starts_with(LEGEND));
        assert!(text.lines().next().is_some_and(|l| l.ends_with("; printed with 2-space indent")));
    }

    /// `npm ls --json --all`: deduped entries carry `version` only; a package appears
    /// twice under different parents.
    const NPM_LS: &str = r#"{
  "version": "1.0.0",
  "name": "proj",
  "dependencies": {
    "commander": {
      "version": "14.0.3",
      "overridden": false
    },
    "express": {
      "version": "4.22.3",
      "overridden": false,
      "dependencies": {
        "accepts": {
          "version": "1.3.8",
          "overridden": false,
          "dependencies": {
            "mime-types": {
              "version": "2.1.35",
              "overridden": false
            }
          }
        },
        "body-parser": {
          "version": "1.20.9",
          "overridden": false,
          "dependencies": {
            "mime-types": {
              "version": "2.1.35"
            }
          }
        }
      }
    },
    "a,b": {
      "version": "1.0.0",
      "resolved": "https://registry.npmjs.org/a/-/a-1.0.0.tgz",
      "overridden": false
    }
  }
}"#;

    #[test]
    fn npm_ls_dependencies_are_rows_with_a_path() {
        let text = round_trip(NPM_LS);
        assert_eq!(
            lines(&text),
            [
                "version: 1.0.0",
                "name: proj",
                "dependencies{(path),version,resolved,overridden}:",
                "  commander,14.0.3,,false",
                "  express,4.22.3,,false",
                "  express>accepts,1.3.8,,false",
                "  express>accepts>mime-types,2.1.35,,false",
                "  express>body-parser,1.20.9,,false",
                "  express>body-parser>mime-types,2.1.35,,",
                "  \"a,b\",1.0.0,https://registry.npmjs.org/a/-/a-1.0.0.tgz,false",
            ]
        );
        assert!(text.lines().next().is_some_and(|l| l.contains(SAYS_TREE)));
    }

    #[test]
    fn nested_map_declines_rows_when_a_row_does_not_fit() {
        // An array inside an entry, an empty nested map, keys out of order, a `>` in a
        // name: each keeps the nested entries, and each still round-trips.
        for (from, to) in [
            (
                "\"version\": \"14.0.3\",",
                "\"problems\": [\n        \"x\"\n      ],\n      \"version\": \"14.0.3\",",
            ),
            ("\"version\": \"14.0.3\",", "\"dependencies\": {},\n      \"version\": \"14.0.3\","),
            (
                "\"version\": \"4.22.3\",\n      \"overridden\": false,",
                "\"overridden\": false,\n      \"version\": \"4.22.3\",",
            ),
            ("\"commander\"", "\"a>b\""),
        ] {
            let body = NPM_LS.replacen(from, to, 1);
            assert_ne!(body, NPM_LS, "{from}");
            let text = round_trip(&body);
            assert!(!text.contains("\ndependencies{"), "{text}");
            assert!(text.contains("\ndependencies:\n  "), "{text}");
        }
    }

    #[test]
    fn short_flat_maps_stay_entries() {
        let body = r#"{
    "resources": {
        "limits": {
            "memory": "512Mi"
        },
        "requests": {
            "cpu": "100m",
            "memory": "256Mi"
        }
    }
}"#;
        assert_eq!(
            lines(&round_trip(body)),
            [
                "resources:",
                "  limits:",
                "    memory: 512Mi",
                "  requests:",
                "    cpu: 100m",
                "    memory: 256Mi",
            ]
        );
    }

    #[test]
    fn arrays_of_objects_are_tables_or_items() {
        let body = pretty(
            r#"{"conditions": [
                {"type": "Ready", "status": "True", "message": "ok, fine"},
                {"type": "Init", "status": "False"},
                {"type": "Sched", "status": "1", "message": ""}
            ],
            "items": [
                {"name": "a", "ports": [{"port": 80}, {"port": 443}], "tags": ["x", "y"]},
                "scalar: with colon",
                7,
                [1, [2, 3]],
                {},
                [],
                {"m": {"k": null}}
            ]}"#,
        );
        assert_eq!(
            lines(&round_trip(&body)),
            [
                "conditions[3]{type,status,message}:",
                "  Ready,True,\"ok, fine\"",
                "  Init,False,",
                "  Sched,\"1\",\"\"",
                "items[7]:",
                "  - name: a",
                "    ports[2]{port}:",
                "      80",
                "      443",
                "    tags[2]: x,y",
                "  - \"scalar: with colon\"",
                "  - 7",
                "  - [2]:",
                "    - 1",
                "    - [2]: 2,3",
                "  - {}",
                "  - []",
                "  - m:",
                "      k: null",
            ]
        );
    }

    #[test]
    fn root_array_has_a_count_line() {
        let body = pretty(
            r#"[{"name": "pip", "version": "23.2.1"},
            {"name": "setuptools", "version": "65.5.0", "editable_project_location": "/src"}]"#,
        );
        assert_eq!(
            lines(&round_trip(&body)),
            [
                "[2]{name,version,editable_project_location}:",
                "  pip,23.2.1,",
                "  setuptools,65.5.0,/src",
            ]
        );
        assert_eq!(lines(&round_trip("[\n  1,\n  \"1\"\n]")), ["[2]: 1,\"1\""]);
    }

    #[test]
    fn values_and_keys_with_unicode_whitespace_at_an_end_are_quoted() {
        // Found by the proptest in tests/lossless_json.rs: a bare `version: \u{2000}` ended
        // its line in whitespace.
        for s in ["\u{2000}", "a\u{2000}", "\u{a0}b", "x\t"] {
            assert!(needs_quotes(s, Place::Value), "{s:?}");
            assert!(key_needs_quotes(s), "{s:?}");
        }
        assert!(!needs_quotes("a\u{2000}b", Place::Value));
    }

    #[test]
    fn scalars_that_could_be_misread_are_quoted() {
        let cases = [
            ("", "\"\""),
            (" lead", "\" lead\""),
            ("trail ", "\"trail \""),
            ("true", "\"true\""),
            ("null", "\"null\""),
            ("12", "\"12\""),
            ("-1.5e3", "\"-1.5e3\""),
            ("1.0", "\"1.0\""),
            ("NaN", "\"NaN\""),
            ("{}", "\"{}\""),
            ("[tj] x", "\"[tj] x\""),
            ("a, b", "a, b"),
            ("k: v", "k: v"),
            ("- dash", "- dash"),
            ("True", "True"),
            ("v1.2", "v1.2"),
            ("naïve 日本 🦀", "naïve 日本 🦀"),
        ];
        for (s, want) in cases {
            let body = format!("{{\n  \"k\": {}\n}}", serde_json::to_string(s).expect("str"));
            assert_eq!(lines(&round_trip(&body)), [format!("k: {want}")], "{s:?}");
        }
        // In a list, a comma quotes; in an item, a colon or a bracket does.
        let body = "[\n  \"a,b\",\n  \"c\",\n  {\n    \"d\": 1\n  },\n  \"e:f\",\n  \"g[0]\"\n]";
        assert_eq!(
            lines(&round_trip(body)),
            ["[5]:", "  - a,b", "  - c", "  - d: 1", "  - \"e:f\"", "  - \"g[0]\""]
        );
        let body = "[\n  \"a,b\",\n  \"e:f\"\n]";
        assert_eq!(lines(&round_trip(body)), ["[2]: \"a,b\",e:f"]);
    }

    #[test]
    fn escapes_and_number_text_are_kept_as_written() {
        let body = r#"{
  "e": "caf\u00e9",
  "é": "café",
  "url": "http:\/\/x",
  "q": "say \"hi\"",
  "n": [
    1.50,
    1e5,
    -0,
    123456789012345678901234567890,
    1E+2
  ],
  "k\"ey": 1,
  "": 2,
  "-x": 3,
  "a:b": 4,
  "dup": 1,
  "dup": 2
}"#;
        assert_eq!(
            lines(&round_trip(body)),
            [
                "e: \"caf\\u00e9\"",
                "é: café",
                "url: \"http:\\/\\/x\"",
                "q: \"say \\\"hi\\\"\"",
                "n[5]: 1.50,1e5,-0,123456789012345678901234567890,1E+2",
                "\"k\\\"ey\": 1",
                "\"\": 2",
                "\"-x\": 3",
                "\"a:b\": 4",
                "dup: 1",
                "dup: 2",
            ]
        );
    }

    #[test]
    fn every_layout_is_detected_and_reprinted() {
        let two = pretty(r#"{"a": [1, {"b": null, "c": []}], "d": {}, "e": "x"}"#);
        let four = two
            .lines()
            .map(|l| {
                let n = l.len() - l.trim_start().len();
                format!("{}{}", " ".repeat(n * 2), l.trim_start())
            })
            .collect::<Vec<_>>()
            .join("\n");
        let tab = two
            .lines()
            .map(|l| {
                let n = l.len() - l.trim_start().len();
                format!("{}{}", "\t".repeat(n / 2), l.trim_start())
            })
            .collect::<Vec<_>>()
            .join("\n");
        let tight = two.replace("\": ", "\":");
        let line = r#"{"a":[1,{"b":null,"c":[]}],"d":{},"e":"x"}"#.to_owned();
        let spaced = line.replace(",", ", ").replace("\":", "\": ");
        for (body, says) in [
            (two, "with 2-space indent"),
            (four, "with 4-space indent"),
            (tab, "with tab indent"),
            (tight, "with 2-space indent, no space after :"),
            (line, "on one line"),
            (spaced, "on one line, a space after , and :"),
        ] {
            let text = round_trip(&body);
            assert!(text.lines().next().is_some_and(|l| l.ends_with(says)), "{says}: {text}");
        }
    }

    #[test]
    fn declines_what_it_cannot_reprint() {
        for body in [
            // Whitespace no printer of ours writes.
            "{\n  \"a\": 1,\n    \"b\": 2\n}",
            "{\n  \"a\" : 1\n}",
            "{\n  \"a\": [ ]\n}",
            "{\n  \"a\": {\n  }\n}",
            "{\n  \"a\": 1\n}\n",
            "{\n  \"a\": 1,\n  \"b\":2\n}",
            "[1, 2,3]",
            // Not one JSON document.
            "{\"a\": 1} {\"b\": 2}",
            "{\"a\": 01}",
            "{\"a\": \"\\x\"}",
            "{\"a\": \"tab\there\"}",
            "{\"a\": 1,}",
            "plain text",
            "",
            "{}",
            "[]",
            "\"scalar\"",
        ] {
            assert_eq!(encode_exact(body), None, "{body:?}");
        }
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(encode_exact(&deep), None);
    }

    #[test]
    fn encode_declines_what_does_not_pay() {
        // Small: under the gate's 500 bytes saved.
        assert_eq!(encode(NPM_VIEW), None);
        // Long escaped strings: almost nothing to save.
        let v: Vec<String> = (0..200).map(|i| format!("line {i}\n\tindented \"quoted\"")).collect();
        let log = serde_json::to_string(&v).expect("strings");
        assert_eq!(encode(&pretty(&format!("{{\"log\":{log}}}"))), None);
        // Many short versions: pays.
        let v: Vec<String> = (0..200).map(|i| format!("1.{i}.0")).collect();
        let versions = serde_json::to_string(&v).expect("strings");
        let body = pretty(&format!("{{\"versions\":{versions}}}"));
        let text = encode(&body).expect("pays");
        assert_eq!(decode(&text).as_deref(), Ok(body.as_str()));
    }

    #[test]
    fn decode_refuses_malformed_text() {
        let good = round_trip(NPM_LS);
        let legend = good.lines().next().expect("legend");
        for bad in [
            String::new(),
            "nonsense".to_owned(),
            "[tj] JSON as indented key: value (TOON-like); printed sideways\na: 1".to_owned(),
            legend.to_owned(),
            format!("{legend}\n"),
            format!("{legend}\na: 1\n\nb: 2"),
            format!("{legend}\n a: 1"),
            format!("{legend}\na: 1\n    b: 2"),
            format!("{legend}\na:"),
            format!("{legend}\na[2]: 1"),
            format!("{legend}\na[0]: 1"),
            format!("{legend}\na[01]: 1"),
            format!("{legend}\na[x]: 1"),
            format!("{legend}\na[2]:\n  - 1"),
            format!("{legend}\na[1]{{x,y}}:\n  1"),
            format!("{legend}\na[1]{{x,y}}:\n  1,2,3"),
            format!("{legend}\na: \"open"),
            format!("{legend}\na: \"x\"y"),
            format!("{legend}\na: x\"y"),
            format!("{legend}\na: true"), // fine: control below
            format!("{legend}\na{{x}}:\n  p,1"),
            format!("{legend}\na{{(path),x}}:\n  p>q,1"),
            format!("{legend}\na{{(path),x}}:\n  p,1\n  q>>r,2"),
            format!("{legend}\na{{(path),x}}:"),
            format!("{legend}\n- a"),
            format!("{legend}\na 1"),
        ] {
            if bad.ends_with("a: true") {
                assert_eq!(decode(&bad).as_deref(), Ok("{\n  \"a\": true\n}"));
                continue;
            }
            assert!(decode(&bad).is_err(), "{bad:?}");
        }
        let err = decode(&format!("{legend}\na[2]: 1")).expect_err("malformed");
        assert_eq!(err.to_string(), "compact JSON line 2: list does not match its count");
    }

    #[test]
    fn layout_phrases_parse_back() {
        for layout in [
            Layout::Pretty { indent: 0, tight: false },
            Layout::Pretty { indent: 1, tight: true },
            Layout::Pretty { indent: 8, tight: false },
            Layout::Line { spaced: false },
            Layout::Line { spaced: true },
        ] {
            let mut s = String::new();
            layout.describe(&mut s);
            assert_eq!(Layout::parse(&s), Some(layout), "{s}");
        }
        assert_eq!(Layout::parse("with 9-space indent"), None);
        assert_eq!(Layout::parse("with 0-space indent"), None);
    }
}
