//! JSON as a table (issue 5): a uniform array of flat objects, or a root map of uniform
//! objects, re-encoded as CSV that reads naturally and decodes back to the same JSON value.
//!
//! This module owns the JSON side of the shape reducers: a borrowing JSON parser that keeps
//! key order and the original text of numbers, the choice of the array (the root, a direct
//! child of the root object, or a child of a child: `{"data":{"items":[…]}}`), the shape
//! vote, the CSV writer and the [`decode`]r. [`ndjson`](super::ndjson) reuses all of it.
//! It does not decide whether the table is adopted: the pipeline and the gate do.
//!
//! # Format
//!
//! ```text
//! [tj] JSON at .data.items as CSV (lossless): 4 rows × 3 columns; empty = null, "" = empty string; nested keys joined with "."
//! [tj] rest: {"data":{"items":[],"total":4},"ok":true}
//! id,name,owner.login
//! 1,"Smith, J.",ann
//! 2,"",
//! 3,"007",bob
//! 4,x,eve
//! ```
//!
//! - **Line 1** says what follows. `at <path>` names the array in jq syntax: `.` for the
//!   root, `.items`, `.data.items`, and `.["a key"]` (a JSON string) for a key that is not
//!   a plain identifier. A root map reads `[tj] JSON object as CSV (lossless), one row per
//!   key: …` and its header starts with a `(key)` column. `nested keys joined with "."`
//!   appears when nested objects were flattened: then no key anywhere in the rows contains a
//!   `.`, and the decoder splits column names on `.`. `K rows as JSON lines (start with "{")`
//!   appears when some rows are written as JSON (below).
//! - **`[tj] rest:`** (only when the array is not the root): the whole document as compact
//!   JSON with the array emptied to `[]`, so the envelope's other keys survive.
//! - **The header**: the column names, CSV-quoted when empty, when they contain `,` or `"`,
//!   start with `{` or have leading or trailing whitespace.
//! - **A row** per element, in order. A quoted field is always a string (`""` inside doubles a
//!   quote, RFC 4180). An unquoted field is `null` when empty, `true`/`false`, a number when
//!   it is a JSON number (written with the input's own text, so `1.50` and big integers stay
//!   as they were), and a string otherwise. A string is quoted when it is empty, contains
//!   `,` or `"`, has leading or trailing whitespace, starts with `{` or `[`, or would read as
//!   a literal (`null`, `True`, `-1`, `1e5`, `.5`, `inf`, `NaN`: anything Rust parses as an
//!   `f64`, and `true`/`false`/`null` in any case).
//! - **A line starting with `{`** is a whole row as compact JSON: a row of another shape
//!   (missing or extra keys, another key order, an array value), or a row with a string
//!   holding a line break or another control character (tab aside), which keeps every line
//!   of the table one line. In a root map such a line is a one-entry object
//!   `{"key":value}`. At most 10% of the rows may be such lines.
//!
//! No line ends in whitespace and no row line is empty (a lone `null` cell is a JSON line),
//! so tj's line splitting, which trims line ends and drops blank edges, does not touch the
//! table.
//!
//! Which array: on a root object, a root map of uniform objects is tried first, then the
//! arrays that are a value of the root or of one of its object values, longest first (a key
//! that appears twice in its object is skipped). A table needs at least 3 rows and must be
//! smaller than the input in bytes.
//!
//! # Lossless
//!
//! [`decode`] rebuilds the [`serde_json::Value`] from the table; it is the exact inverse of
//! [`encode`] on every table `encode` returns (key order aside, which `Value` does not
//! keep: the table itself keeps the input's order). [`encode`] checks this itself at run
//! time only when built with debug assertions: the check (decode plus a serde_json parse of
//! the input) costs about three times the encoding (`benches/shape_json.rs`), well past the
//! budget of 10 ms per MB. The tests check it on generated and hand-written input.

use std::borrow::Cow;
use std::collections::HashMap;
use std::error::Error;
use std::fmt::{self, Write as _};

use serde_json::{Map, Number, Value};

use crate::reduce::group;

/// Deepest nesting the parser accepts: below serde_json's recursion limit (128), so every
/// part we re-emit as JSON parses back.
const MAX_DEPTH: usize = 100;
/// Fewest rows worth a table.
pub(super) const MIN_ROWS: usize = 3;

const TITLE: &str = "[tj] JSON ";
const TITLE_AT: &str = "at ";
const TITLE_MAP: &str = "object as CSV (lossless), one row per key: ";
const AS_CSV: &str = " as CSV (lossless): ";
const LEGEND: &str = "; empty = null, \"\" = empty string";
pub(super) const NESTED: &str = "; nested keys joined with \".\"";
const REST: &str = "[tj] rest: ";
const KEY_COLUMN: &str = "(key)";

/// A lossless re-encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// The full replacement text: the title line, the `[tj] rest:` line when the array sits
    /// in an envelope, the CSV header line, then one line per row. No trailing newline.
    pub text: String,
    /// Rows of the table, the ones written as JSON lines included.
    pub rows: usize,
    /// Columns of the table, the key column of a root map included.
    pub columns: usize,
}

/// Why a table does not decode.
#[derive(Debug)]
pub enum DecodeError {
    /// A line is not what the format says.
    Malformed {
        /// 1-based line of the table.
        line: usize,
        /// What is wrong with it.
        what: &'static str,
    },
    /// A JSON part of the table (a number, a row written as JSON, the rest of the envelope)
    /// does not parse.
    Json {
        /// 1-based line of the table.
        line: usize,
        /// The parser's error.
        err: serde_json::Error,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Malformed { line, what } => write!(f, "table line {line}: {what}"),
            DecodeError::Json { line, .. } => write!(f, "table line {line}: invalid JSON"),
        }
    }
}

impl Error for DecodeError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            DecodeError::Malformed { .. } => None,
            DecodeError::Json { err, .. } => Some(err),
        }
    }
}

/// Returns true if and only if the first non-whitespace byte of `text` is `{` or `[`: the
/// cheap check before [`encode`] parses.
pub fn looks_like_json(text: &str) -> bool {
    matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
}

/// Re-encodes `text` (a whole command output that is one JSON document) as a table, or
/// `None` when it is not JSON, not tabular, or the table is not smaller than `text`.
///
/// ```
/// use tj::reduce::shape::json_table;
///
/// let rows: Vec<String> =
///     (1..=20).map(|i| format!(r#"{{"id":{i},"name":"n{i}, x","ok":null}}"#)).collect();
/// let json = format!("[{}]", rows.join(","));
/// let table = json_table::encode(&json).expect("a uniform array");
/// let mut lines = table.text.lines().skip(1);
/// assert_eq!(lines.next(), Some("id,name,ok"));
/// assert_eq!(lines.next(), Some(r#"1,"n1, x","#));
/// let back = json_table::decode(&table.text).expect("decodes");
/// assert_eq!(back, serde_json::from_str::<serde_json::Value>(&json).expect("valid"));
/// ```
pub fn encode(text: &str) -> Option<Table> {
    if !looks_like_json(text) {
        return None;
    }
    let root = parse(text)?;
    let table = match &root {
        Node::Arr(items) => encode_array(text.len(), &root, &[], items),
        Node::Obj(entries) => encode_object(text.len(), &root, entries),
        _ => None,
    }?;
    debug_assert!(
        decode(&table.text).ok() == serde_json::from_str::<Value>(text).ok(),
        "json_table is not lossless on its own output"
    );
    Some(table)
}

/// Tries, on a root object, a root map of uniform objects, then the arrays one and two
/// levels down, longest first.
fn encode_object<'n, 'a>(
    limit: usize,
    root: &'n Node<'a>,
    entries: &'n Entries<'a>,
) -> Option<Table> {
    if entries.len() >= MIN_ROWS
        && entries.iter().any(|(_, v)| matches!(v, Node::Obj(_)))
        && let Some(table) = encode_map(limit, entries)
    {
        return Some(table);
    }
    let mut candidates: Vec<(Vec<&'n str>, &'n [Node<'a>])> = Vec::new();
    for (k, v) in unique(entries) {
        match v {
            Node::Arr(items) => candidates.push((vec![k], items)),
            Node::Obj(inner) => {
                for (k2, v2) in unique(inner) {
                    if let Node::Arr(items) = v2 {
                        candidates.push((vec![k, k2], items));
                    }
                }
            }
            _ => {}
        }
    }
    candidates.retain(|(_, items)| items.len() >= MIN_ROWS);
    // Stable: among equally long arrays the first in the document wins.
    candidates.sort_by_key(|(_, items)| std::cmp::Reverse(items.len()));
    candidates.into_iter().find_map(|(path, items)| encode_array(limit, root, &path, items))
}

/// The entries of an object whose key appears once in it: a duplicated key is not a path
/// the decoder can follow (serde_json keeps the last one).
fn unique<'n, 'a>(entries: &'n Entries<'a>) -> impl Iterator<Item = (&'n str, &'n Node<'a>)> {
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
    for (k, _) in entries {
        *seen.entry(k.as_ref()).or_default() += 1;
    }
    entries
        .iter()
        .filter_map(move |(k, v)| (seen.get(k.as_ref()) == Some(&1)).then_some((k.as_ref(), v)))
}

fn encode_array(limit: usize, root: &Node<'_>, path: &[&str], items: &[Node<'_>]) -> Option<Table> {
    if items.len() < MIN_ROWS {
        return None;
    }
    // A JSON line must start with `{`, so every element must be an object.
    let rows: Vec<Option<&Entries<'_>>> = items
        .iter()
        .map(|n| match n {
            Node::Obj(e) => Some(e),
            _ => None,
        })
        .collect();
    if rows.iter().any(Option::is_none) {
        return None;
    }
    let shape = Shape::vote(&rows)?;
    let mut out = String::with_capacity(limit);
    out.push_str(TITLE);
    out.push_str(TITLE_AT);
    write_path(&mut out, path);
    out.push_str(AS_CSV);
    shape.write_summary(&mut out, rows.len(), 0);
    write_json_rows(&mut out, shape.irregular());
    if !path.is_empty() {
        out.push('\n');
        out.push_str(REST);
        let hole = path.iter().try_fold(root, |node, key| match node {
            Node::Obj(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        })?;
        write_json(&mut out, root, Some(hole));
    }
    out.push('\n');
    shape.write_header(&mut out);
    for (row, regular) in rows.iter().zip(&shape.regular) {
        if out.len() >= limit {
            return None;
        }
        out.push('\n');
        let Some(row) = row else { return None };
        if *regular {
            shape.write_row(&mut out, row);
        } else {
            write_json_object(&mut out, row, None);
        }
    }
    (out.len() < limit).then(|| Table { text: out, rows: rows.len(), columns: shape.columns() })
}

fn encode_map(limit: usize, entries: &Entries<'_>) -> Option<Table> {
    let rows: Vec<Option<&Entries<'_>>> = entries
        .iter()
        .map(|(k, v)| match v {
            // A key with a line break would break the line: that row is a JSON line.
            Node::Obj(e) if !has_control(k) => Some(e),
            _ => None,
        })
        .collect();
    let shape = Shape::vote(&rows)?;
    let mut out = String::with_capacity(limit);
    out.push_str(TITLE);
    out.push_str(TITLE_MAP);
    shape.write_summary(&mut out, rows.len(), 1);
    write_json_rows(&mut out, shape.irregular());
    out.push('\n');
    out.push_str(KEY_COLUMN);
    out.push(',');
    shape.write_header(&mut out);
    for ((key, value), regular) in entries.iter().zip(&shape.regular) {
        if out.len() >= limit {
            return None;
        }
        out.push('\n');
        match value {
            Node::Obj(row) if *regular => {
                write_str_cell(&mut out, key);
                out.push(',');
                shape.write_row(&mut out, row);
            }
            _ => {
                out.push('{');
                write_json_str(&mut out, key);
                out.push(':');
                write_json(&mut out, value, None);
                out.push('}');
            }
        }
    }
    (out.len() < limit).then(|| Table { text: out, rows: rows.len(), columns: shape.columns() + 1 })
}

// ---------------------------------------------------------------------------------------
// The shape vote.

/// What the two-pass JSON Lines encoder keeps of a row between its passes: enough to vote
/// on shapes without holding every row's parse tree (which made 10 MB of JSON Lines cost
/// more per megabyte than 1 MB: the trees outgrow the caches).
#[derive(Clone, Copy, Debug)]
pub(super) struct RowSummary {
    /// A key somewhere in the row contains `.`.
    pub(super) dotted: bool,
    /// [`is_tabular`] with nested objects flattened.
    pub(super) tabular_flat: bool,
    /// [`is_tabular`] without flattening.
    pub(super) tabular_plain: bool,
    /// A hash of the row's keys and nesting: rows of one shape have one signature. The
    /// second pass checks the shape itself, so a collision costs the table, never a row.
    pub(super) signature: u64,
    /// The row's first leaf is `null`.
    pub(super) first_leaf_null: bool,
}

impl RowSummary {
    /// The summary of one row.
    pub(super) fn of(entries: &Entries<'_>) -> RowSummary {
        use std::hash::{DefaultHasher, Hasher};
        fn feed(entries: &Entries<'_>, h: &mut DefaultHasher) {
            h.write_usize(entries.len());
            for (k, v) in entries {
                h.write(k.as_bytes());
                match v {
                    Node::Obj(inner) => {
                        h.write_u8(1);
                        feed(inner, h);
                        h.write_u8(2);
                    }
                    _ => h.write_u8(0),
                }
            }
        }
        // `DefaultHasher::new` has fixed keys: the same row hashes the same on every run.
        let mut h = DefaultHasher::new();
        feed(entries, &mut h);
        RowSummary {
            dotted: has_dotted_key(entries),
            tabular_flat: is_tabular(entries, true),
            tabular_plain: is_tabular(entries, false),
            signature: h.finish(),
            first_leaf_null: matches!(first_leaf(entries), Some(Node::Null)),
        }
    }
}

/// Returns true if and only if `a` and `b` have the same keys, in the same order, nested
/// the same way.
pub(super) fn same_keys(a: &Entries<'_>, b: &Entries<'_>) -> bool {
    same_shape(a, b)
}

/// The shape of a table: its flattened column names and which rows have it.
pub(super) struct Shape {
    /// True if nested objects were flattened into dotted column names.
    nested: bool,
    names: Vec<String>,
    /// Per row: true if it is written as CSV, false if as a JSON line.
    pub(super) regular: Vec<bool>,
}

impl Shape {
    /// Finds the shape most rows share (Boyer-Moore majority vote over the rows that can be
    /// CSV at all), or `None` when fewer than [`MIN_ROWS`] rows have it, more than 10% do not,
    /// or it cannot be a header. `None` in `rows` is a row that is not an object.
    /// The shape of `rep` for rows that [`RowSummary`]s already voted on: `None` when it
    /// cannot be a header (duplicate keys, no leaves, a name with a control character) or
    /// the rows do not make a table (fewer than [`MIN_ROWS`] regular, more than 10% not).
    pub(super) fn of_summaries(rep: &Entries<'_>, regular: Vec<bool>) -> Option<Shape> {
        if has_duplicate_key(rep) {
            return None;
        }
        let mut names = Vec::new();
        leaf_names(rep, None, &mut names);
        if names.is_empty() || names.iter().any(|n| has_control(n)) {
            return None;
        }
        let irregular = regular.iter().filter(|r| !**r).count();
        if regular.len() - irregular < MIN_ROWS || !tolerable(irregular, regular.len()) {
            return None;
        }
        let nested = rep.iter().any(|(_, v)| matches!(v, Node::Obj(_)));
        Some(Shape { nested, names, regular })
    }

    pub(super) fn vote(rows: &[Option<&Entries<'_>>]) -> Option<Shape> {
        // Flattening is unambiguous only when no key contains the separator.
        let flatten = !rows.iter().flatten().any(|e| has_dotted_key(e));
        let tabular: Vec<bool> =
            rows.iter().map(|r| r.is_some_and(|e| is_tabular(e, flatten))).collect();
        let mut candidate = None;
        let mut votes = 0usize;
        for (row, _) in rows.iter().zip(&tabular).filter(|(_, t)| **t) {
            let Some(row) = *row else { continue };
            match candidate {
                Some(c) if same_shape(c, row) => votes += 1,
                _ if votes == 0 => {
                    candidate = Some(row);
                    votes = 1;
                }
                _ => votes -= 1,
            }
        }
        let rep = candidate?;
        if has_duplicate_key(rep) {
            return None;
        }
        let mut names = Vec::new();
        leaf_names(rep, None, &mut names);
        let single = names.len() == 1;
        if names.is_empty() || names.iter().any(|n| has_control(n)) {
            return None;
        }
        let regular: Vec<bool> = rows
            .iter()
            .zip(&tabular)
            .map(|(row, t)| {
                // A lone null cell would be an empty line, which tj's line handling drops.
                *t && row.is_some_and(|r| {
                    same_shape(rep, r) && !(single && matches!(first_leaf(r), Some(Node::Null)))
                })
            })
            .collect();
        let irregular = regular.iter().filter(|r| !**r).count();
        if rows.len() - irregular < MIN_ROWS || !tolerable(irregular, rows.len()) {
            return None;
        }
        let nested = rep.iter().any(|(_, v)| matches!(v, Node::Obj(_)));
        Some(Shape { nested, names, regular })
    }

    /// Columns of the CSV.
    pub(super) fn columns(&self) -> usize {
        self.names.len()
    }

    /// Writes `R rows × C columns; legend[; nested…]`.
    /// `extra_columns` counts a leading key column.
    pub(super) fn write_summary(&self, out: &mut String, rows: usize, extra_columns: usize) {
        let columns = self.columns() + extra_columns;
        let _ = write!(
            out,
            "{} row{} × {} column{}{LEGEND}",
            group(rows),
            plural(rows),
            group(columns),
            plural(columns)
        );
        if self.nested {
            out.push_str(NESTED);
        }
    }

    /// Rows that are not written as CSV.
    pub(super) fn irregular(&self) -> usize {
        self.regular.iter().filter(|r| !**r).count()
    }

    /// Writes the column names as a CSV line (no newline).
    pub(super) fn write_header(&self, out: &mut String) {
        for (i, name) in self.names.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            if name.is_empty()
                || name.starts_with('{')
                || name.contains([',', '"'])
                || name.starts_with(char::is_whitespace)
                || name.ends_with(char::is_whitespace)
            {
                write_quoted(out, name);
            } else {
                out.push_str(name);
            }
        }
    }

    /// Writes a regular row's cells as a CSV line (no newline).
    pub(super) fn write_row(&self, out: &mut String, row: &Entries<'_>) {
        let mut first = true;
        write_leaves(out, row, &mut first);
    }
}

/// Writes `; K rows as JSON lines (start with "{")` when K > 0.
fn write_json_rows(out: &mut String, json: usize) {
    if json > 0 {
        let _ = write!(
            out,
            "; {} row{} as {} (start{} with \"{{\")",
            group(json),
            plural(json),
            if json == 1 { "a JSON line" } else { "JSON lines" },
            if json == 1 { "s" } else { "" }
        );
    }
}

/// Returns true if and only if `irregular` rows out of `total` are few enough (10%).
pub(super) fn tolerable(irregular: usize, total: usize) -> bool {
    irregular * 10 <= total
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn has_dotted_key(entries: &Entries<'_>) -> bool {
    entries.iter().any(|(k, v)| {
        k.contains('.')
            || match v {
                Node::Obj(inner) => has_dotted_key(inner),
                _ => false,
            }
    })
}

/// Returns true if and only if a row can be CSV: scalars, strings without line breaks or
/// other control characters (tab aside), and (when flattening) non-empty nested objects of
/// the same.
fn is_tabular(entries: &Entries<'_>, flatten: bool) -> bool {
    entries.iter().all(|(_, v)| match v {
        Node::Arr(_) => false,
        Node::Obj(inner) => flatten && !inner.is_empty() && is_tabular(inner, flatten),
        // A string without escapes cannot hold a control character (JSON forbids them raw).
        Node::Str(Cow::Owned(s)) => !has_control(s),
        _ => true,
    })
}

/// Returns true if and only if `s` holds a line break or another control character that a
/// CSV line cannot carry (tab aside).
fn has_control(s: &str) -> bool {
    s.bytes().any(|b| b < 0x20 && b != b'\t')
}

/// Returns true if and only if both rows have the same keys in the same order, and nested
/// objects at the same places with the same shape.
fn same_shape(a: &Entries<'_>, b: &Entries<'_>) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|((ka, va), (kb, vb))| {
            ka == kb
                && match (va, vb) {
                    (Node::Obj(x), Node::Obj(y)) => same_shape(x, y),
                    (Node::Obj(_), _) | (_, Node::Obj(_)) => false,
                    _ => true,
                }
        })
}

fn has_duplicate_key(entries: &Entries<'_>) -> bool {
    let mut keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_ref()).collect();
    keys.sort_unstable();
    keys.windows(2).any(|w| w[0] == w[1])
        || entries.iter().any(|(_, v)| matches!(v, Node::Obj(inner) if has_duplicate_key(inner)))
}

fn leaf_names(entries: &Entries<'_>, prefix: Option<&str>, out: &mut Vec<String>) {
    for (k, v) in entries {
        let name = match prefix {
            Some(prefix) => format!("{prefix}.{k}"),
            None => k.to_string(),
        };
        match v {
            Node::Obj(inner) => leaf_names(inner, Some(&name), out),
            _ => out.push(name),
        }
    }
}

fn first_leaf<'n, 'a>(entries: &'n Entries<'a>) -> Option<&'n Node<'a>> {
    match entries.first().map(|(_, v)| v)? {
        Node::Obj(inner) => first_leaf(inner),
        leaf => Some(leaf),
    }
}

// ---------------------------------------------------------------------------------------
// Writing.

fn write_leaves(out: &mut String, entries: &Entries<'_>, first: &mut bool) {
    for (_, v) in entries {
        if let Node::Obj(inner) = v {
            write_leaves(out, inner, first);
            continue;
        }
        if !*first {
            out.push(',');
        }
        *first = false;
        match v {
            Node::Null | Node::Arr(_) | Node::Obj(_) => {}
            Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Node::Num(n) => out.push_str(n),
            Node::Str(s) => write_str_cell(out, s),
        }
    }
}

/// Writes a string cell, quoted when it would otherwise read as something else.
pub(super) fn write_str_cell(out: &mut String, s: &str) {
    if needs_quotes(s) {
        write_quoted(out, s);
    } else {
        out.push_str(s);
    }
}

fn write_quoted(out: &mut String, s: &str) {
    out.push('"');
    for (i, part) in s.split('"').enumerate() {
        if i > 0 {
            out.push_str("\"\"");
        }
        out.push_str(part);
    }
    out.push('"');
}

/// Returns true if and only if a string cell must be quoted: unquoted it would be `null`, a
/// literal, another CSV field, a JSON line, or would lose its edge whitespace.
fn needs_quotes(s: &str) -> bool {
    let Some(&first) = s.as_bytes().first() else { return true };
    matches!(first, b'{' | b'[')
        || s.bytes().any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
        || s.starts_with(char::is_whitespace)
        || s.ends_with(char::is_whitespace)
        || (matches!(
            first,
            b'0'..=b'9'
                | b'+'
                | b'-'
                | b'.'
                | b'i'
                | b'I'
                | b'n'
                | b'N'
                | b't'
                | b'T'
                | b'f'
                | b'F'
        ) && (s.eq_ignore_ascii_case("true")
            || s.eq_ignore_ascii_case("false")
            || s.eq_ignore_ascii_case("null")
            || s.parse::<f64>().is_ok()))
}

/// Writes `node` as compact JSON, with `hole` (if it is inside) written as `[]`.
fn write_json(out: &mut String, node: &Node<'_>, hole: Option<&Node<'_>>) {
    if hole.is_some_and(|h| std::ptr::eq(h, node)) {
        out.push_str("[]");
        return;
    }
    match node {
        Node::Null => out.push_str("null"),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Num(n) => out.push_str(n),
        Node::Str(s) => write_json_str(out, s),
        Node::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, item, hole);
            }
            out.push(']');
        }
        Node::Obj(entries) => write_json_object(out, entries, hole),
    }
}

pub(super) fn write_json_object(out: &mut String, entries: &Entries<'_>, hole: Option<&Node<'_>>) {
    out.push('{');
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_json_str(out, k);
        out.push(':');
        write_json(out, v, hole);
    }
    out.push('}');
}

fn write_json_str(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        // `i` is at an ASCII byte, so both slices are on char boundaries.
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Writes a path in jq syntax: `.` for the root, `.key`, `.["other key"]`.
fn write_path(out: &mut String, path: &[&str]) {
    if path.is_empty() {
        out.push('.');
    }
    for key in path {
        out.push('.');
        let plain = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if plain {
            out.push_str(key);
        } else {
            out.push('[');
            write_json_str(out, key);
            out.push(']');
        }
    }
}

// ---------------------------------------------------------------------------------------
// Parsing JSON.

/// The entries of an object, in input order.
pub(super) type Entries<'a> = Vec<(Cow<'a, str>, Node<'a>)>;

/// A JSON value borrowed from the input: key order and number text as written.
#[derive(Debug)]
pub(super) enum Node<'a> {
    Null,
    Bool(bool),
    /// The number's text in the input.
    Num(&'a str),
    /// Borrowed when the string has no escapes.
    Str(Cow<'a, str>),
    Arr(Vec<Node<'a>>),
    Obj(Entries<'a>),
}

/// Parses one JSON document (RFC 8259, as strict as serde_json: no lone surrogates, no
/// number that overflows an `f64`), or `None`.
pub(super) fn parse(text: &str) -> Option<Node<'_>> {
    Parser::new(text).document(text)
}

/// A parser for many small documents (JSON Lines) that keeps its scratch space.
pub(super) struct LineParser<'a>(Parser<'a>);

impl<'a> LineParser<'a> {
    /// A parser with empty scratch space.
    pub(super) fn new() -> LineParser<'a> {
        LineParser(Parser::new(""))
    }

    /// Parses one document, as [`parse`] does.
    pub(super) fn parse(&mut self, text: &'a str) -> Option<Node<'a>> {
        self.0.entries.clear();
        self.0.items.clear();
        self.0.document(text)
    }
}

struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
    /// Entries of the objects being parsed, innermost last.
    entries: Entries<'a>,
    /// Items of the arrays being parsed, innermost last.
    items: Vec<Node<'a>>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Parser<'a> {
        Parser { src, b: src.as_bytes(), i: 0, entries: Vec::new(), items: Vec::new() }
    }

    fn document(&mut self, text: &'a str) -> Option<Node<'a>> {
        self.src = text;
        self.b = text.as_bytes();
        self.i = 0;
        self.ws();
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
        let hit = self.b.get(self.i) == Some(&c);
        self.i += usize::from(hit);
        hit
    }

    fn value(&mut self, depth: usize) -> Option<Node<'a>> {
        match *self.b.get(self.i)? {
            b'{' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                self.i += 1;
                self.ws();
                if self.eat(b'}') {
                    return Some(Node::Obj(Vec::new()));
                }
                // Entries gather on a shared stack and move into one exact allocation at the
                // end: no regrowth per object.
                let base = self.entries.len();
                loop {
                    self.ws();
                    let key = self.string()?;
                    self.ws();
                    if !self.eat(b':') {
                        return None;
                    }
                    self.ws();
                    let value = self.value(depth + 1)?;
                    self.entries.push((key, value));
                    self.ws();
                    if !self.eat(b',') {
                        let entries = self.entries.drain(base..).collect();
                        return self.eat(b'}').then_some(Node::Obj(entries));
                    }
                }
            }
            b'[' => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                self.i += 1;
                self.ws();
                if self.eat(b']') {
                    return Some(Node::Arr(Vec::new()));
                }
                let base = self.items.len();
                loop {
                    self.ws();
                    let item = self.value(depth + 1)?;
                    self.items.push(item);
                    self.ws();
                    if !self.eat(b',') {
                        let items = self.items.drain(base..).collect();
                        return self.eat(b']').then_some(Node::Arr(items));
                    }
                }
            }
            b'"' => self.string().map(Node::Str),
            b't' => self.literal("true", Node::Bool(true)),
            b'f' => self.literal("false", Node::Bool(false)),
            b'n' => self.literal("null", Node::Null),
            _ => self.number().map(Node::Num),
        }
    }

    fn literal(&mut self, word: &str, node: Node<'a>) -> Option<Node<'a>> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word.as_bytes()).then(|| {
            self.i = end;
            node
        })
    }

    fn digits(&mut self) -> bool {
        let start = self.i;
        while self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        self.i > start
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, and finite as serde_json reads it.
    fn number(&mut self) -> Option<&'a str> {
        let start = self.i;
        self.eat(b'-');
        match self.b.get(self.i)? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        let mut integer = true;
        if self.eat(b'.') {
            integer = false;
            if !self.digits() {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.i) {
            integer = false;
            self.i += 1;
            if let Some(b'+' | b'-') = self.b.get(self.i) {
                self.i += 1;
            }
            if !self.digits() {
                return None;
            }
        }
        let text = self.src.get(start..self.i)?;
        // serde_json reads what fits an i64/u64 exactly and the rest as an f64, and rejects
        // an f64 that overflows.
        let exact = integer && (text.parse::<u64>().is_ok() || text.parse::<i64>().is_ok());
        (exact || text.parse::<f64>().is_ok_and(f64::is_finite)).then_some(text)
    }

    fn string(&mut self) -> Option<Cow<'a, str>> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.i;
        loop {
            match *self.b.get(self.i)? {
                b'"' => {
                    let s = self.src.get(start..self.i)?;
                    self.i += 1;
                    return Some(Cow::Borrowed(s));
                }
                b'\\' => break,
                0..=0x1f => return None,
                _ => self.i += 1,
            }
        }
        let mut out = String::from(self.src.get(start..self.i)?);
        loop {
            match *self.b.get(self.i)? {
                b'"' => {
                    self.i += 1;
                    return Some(Cow::Owned(out));
                }
                b'\\' => {
                    self.i += 1;
                    let escape = *self.b.get(self.i)?;
                    self.i += 1;
                    out.push(match escape {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return None,
                    });
                }
                0..=0x1f => return None,
                _ => {
                    let run = self.i;
                    while self.b.get(self.i).is_some_and(|&c| c != b'"' && c != b'\\' && c >= 0x20)
                    {
                        self.i += 1;
                    }
                    out.push_str(self.src.get(run..self.i)?);
                }
            }
        }
    }

    /// After `\u`: four hex digits, a surrogate pair when the first is a high surrogate.
    fn unicode_escape(&mut self) -> Option<char> {
        let hi = self.hex4()?;
        match hi {
            0xD800..=0xDBFF => {
                if !(self.eat(b'\\') && self.eat(b'u')) {
                    return None;
                }
                let lo = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&lo) {
                    return None;
                }
                char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
            }
            0xDC00..=0xDFFF => None,
            _ => char::from_u32(hi),
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.src.get(self.i..self.i + 4)?;
        let value = u32::from_str_radix(digits, 16).ok()?;
        // from_str_radix accepts a sign.
        if digits.starts_with('+') {
            return None;
        }
        self.i += 4;
        Some(value)
    }
}

// ---------------------------------------------------------------------------------------
// Decoding.

/// Rebuilds the JSON value from [`encode`]'s text. Exact inverse on every `Some` of
/// [`encode`].
pub fn decode(table: &str) -> Result<Value, DecodeError> {
    let mut lines = table.split('\n').enumerate().map(|(i, l)| (i + 1, l));
    let (_, title) = lines.next().ok_or(DecodeError::Malformed { line: 1, what: "empty" })?;
    let malformed = |line, what| DecodeError::Malformed { line, what };
    let body = title.strip_prefix(TITLE).ok_or(malformed(1, "not a tj JSON table"))?;
    let (path, summary) = if let Some(summary) = body.strip_prefix(TITLE_MAP) {
        (None, summary)
    } else {
        let at = body.strip_prefix(TITLE_AT).ok_or(malformed(1, "not a tj JSON table"))?;
        let (path, rest) = parse_path(at).ok_or(malformed(1, "bad path"))?;
        (Some(path), rest.strip_prefix(AS_CSV).ok_or(malformed(1, "not a tj JSON table"))?)
    };
    let nested = summary.contains(NESTED);
    let rest = match &path {
        Some(p) if !p.is_empty() => {
            let (n, line) = lines.next().ok_or(malformed(2, "missing rest line"))?;
            let json = line.strip_prefix(REST).ok_or(malformed(n, "missing rest line"))?;
            Some(
                serde_json::from_str::<Value>(json)
                    .map_err(|err| DecodeError::Json { line: n, err })?,
            )
        }
        _ => None,
    };
    let (n, header) = lines.next().ok_or(malformed(2, "missing header"))?;
    let mut columns = Columns::parse(header, nested).map_err(|what| malformed(n, what))?;
    if path.is_none() {
        if columns.paths.first().map(|p| p.as_slice()) != Some(&[KEY_COLUMN.to_owned()][..]) {
            return Err(malformed(n, "missing key column"));
        }
        columns.paths.remove(0);
    }
    match path {
        None => {
            let mut map = Map::new();
            for (n, line) in lines {
                if line.starts_with('{') {
                    let row = parse_json_line(n, line)?;
                    let Value::Object(entry) = row else {
                        return Err(malformed(n, "JSON row is not an object"));
                    };
                    if entry.len() != 1 {
                        return Err(malformed(n, "JSON row of a map has not one key"));
                    }
                    map.extend(entry);
                } else {
                    let mut fields = split_fields(line).map_err(|what| malformed(n, what))?;
                    if fields.is_empty() {
                        return Err(malformed(n, "empty row"));
                    }
                    let key = fields.remove(0);
                    if !key.quoted && needs_quotes(&key.text) {
                        return Err(malformed(n, "key must be quoted"));
                    }
                    let row = columns.row(n, fields)?;
                    map.insert(key.text.into_owned(), row);
                }
            }
            Ok(Value::Object(map))
        }
        Some(path) => {
            let mut items = Vec::new();
            for (n, line) in lines {
                items.push(columns.decode_line(n, line)?);
            }
            let array = Value::Array(items);
            let Some(mut rest) = rest else { return Ok(array) };
            let hole = path
                .iter()
                .try_fold(&mut rest, |v, key| v.as_object_mut().and_then(|m| m.get_mut(key)))
                .ok_or(malformed(2, "rest has no array at the path"))?;
            if hole.as_array().is_none_or(|a| !a.is_empty()) {
                return Err(malformed(2, "rest has no empty array at the path"));
            }
            *hole = array;
            Ok(rest)
        }
    }
}

/// Parses a jq path up to the first byte that cannot continue it.
fn parse_path(s: &str) -> Option<(Vec<String>, &str)> {
    let mut rest = s.strip_prefix('.')?;
    let mut path = Vec::new();
    if rest.starts_with(' ') {
        return Some((path, rest));
    }
    loop {
        if let Some(quoted) = rest.strip_prefix("[\"") {
            // Find the closing quote: one not escaped by a backslash.
            let bytes = quoted.as_bytes();
            let mut i = 0;
            while *bytes.get(i)? != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            let json = s.get(s.len() - rest.len() + 1..s.len() - quoted.len() + i + 1)?;
            path.push(serde_json::from_str::<String>(json).ok()?);
            rest = quoted.get(i + 1..)?.strip_prefix(']')?;
        } else {
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
            if end == 0 {
                return None;
            }
            path.push(rest[..end].to_owned());
            rest = &rest[end..];
        }
        match rest.strip_prefix('.') {
            Some(more) => rest = more,
            None => return Some((path, rest)),
        }
    }
}

fn parse_json_line(n: usize, line: &str) -> Result<Value, DecodeError> {
    serde_json::from_str(line).map_err(|err| DecodeError::Json { line: n, err })
}

/// The header of a table, as the key path of each column.
pub(super) struct Columns {
    paths: Vec<Vec<String>>,
}

impl Columns {
    /// Parses a header line; `nested` splits names on `.`.
    pub(super) fn parse(header: &str, nested: bool) -> Result<Columns, &'static str> {
        let paths = split_fields(header)?
            .into_iter()
            .map(|f| {
                if nested {
                    f.text.split('.').map(str::to_owned).collect()
                } else {
                    vec![f.text.into_owned()]
                }
            })
            .collect();
        Ok(Columns { paths })
    }

    /// Decodes a row line: a JSON line when it starts with `{`, CSV otherwise.
    pub(super) fn decode_line(&self, n: usize, line: &str) -> Result<Value, DecodeError> {
        if line.starts_with('{') {
            let row = parse_json_line(n, line)?;
            if !row.is_object() {
                return Err(DecodeError::Malformed { line: n, what: "JSON row is not an object" });
            }
            return Ok(row);
        }
        let fields = split_fields(line).map_err(|what| DecodeError::Malformed { line: n, what })?;
        self.row(n, fields)
    }

    fn row(&self, n: usize, fields: Vec<Field<'_>>) -> Result<Value, DecodeError> {
        let malformed = |what| DecodeError::Malformed { line: n, what };
        if fields.len() != self.paths.len() {
            return Err(malformed("wrong number of fields"));
        }
        let mut row = Map::new();
        for (path, field) in self.paths.iter().zip(fields) {
            let value = field.value().map_err(|e| match e {
                CellError::Malformed(what) => malformed(what),
                CellError::Json(err) => DecodeError::Json { line: n, err },
            })?;
            insert_path(&mut row, path, value).ok_or(malformed("column path clashes"))?;
        }
        Ok(Value::Object(row))
    }
}

fn insert_path(map: &mut Map<String, Value>, path: &[String], value: Value) -> Option<()> {
    match path {
        [] => None,
        [key] => map.insert(key.clone(), value).is_none().then_some(()),
        [key, rest @ ..] => {
            match map.entry(key.clone()).or_insert_with(|| Value::Object(Map::new())) {
                Value::Object(inner) => insert_path(inner, rest, value),
                _ => None,
            }
        }
    }
}

/// A CSV field as written.
pub(super) struct Field<'t> {
    text: Cow<'t, str>,
    quoted: bool,
}

enum CellError {
    Malformed(&'static str),
    Json(serde_json::Error),
}

impl Field<'_> {
    fn value(self) -> Result<Value, CellError> {
        if self.quoted {
            return Ok(Value::String(self.text.into_owned()));
        }
        let s = self.text.as_ref();
        Ok(match s {
            "" => Value::Null,
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ if is_json_number(s) => {
                Value::Number(serde_json::from_str::<Number>(s).map_err(CellError::Json)?)
            }
            _ if needs_quotes(s) => return Err(CellError::Malformed("field must be quoted")),
            _ => Value::String(self.text.into_owned()),
        })
    }
}

fn is_json_number(s: &str) -> bool {
    let mut p = Parser::new(s);
    p.number().is_some() && p.i == s.len()
}

/// Splits a CSV line (RFC 4180, no line breaks inside fields).
pub(super) fn split_fields(line: &str) -> Result<Vec<Field<'_>>, &'static str> {
    let mut fields = Vec::new();
    let mut rest = line;
    loop {
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut text = Cow::Borrowed("");
            let mut inner = quoted;
            loop {
                let end = inner.find('"').ok_or("unterminated quoted field")?;
                let (part, after) = (&inner[..end], &inner[end + 1..]);
                if let Some(after) = after.strip_prefix('"') {
                    let owned = text.to_mut();
                    owned.push_str(part);
                    owned.push('"');
                    inner = after;
                } else {
                    if text.is_empty() {
                        text = Cow::Borrowed(part);
                    } else {
                        text.to_mut().push_str(part);
                    }
                    inner = after;
                    break;
                }
            }
            fields.push(Field { text, quoted: true });
            match inner.strip_prefix(',') {
                Some(more) => rest = more,
                None if inner.is_empty() => return Ok(fields),
                None => return Err("text after a quoted field"),
            }
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            let text = &rest[..end];
            if text.contains('"') {
                return Err("quote inside an unquoted field");
            }
            fields.push(Field { text: Cow::Borrowed(text), quoted: false });
            match rest.get(end + 1..) {
                Some(more) => rest = more,
                None => return Ok(fields),
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use proptest::prelude::*;

    use super::*;

    fn value(json: &str) -> Value {
        serde_json::from_str(json).expect("test input is valid JSON")
    }

    /// Encodes, decodes and compares with serde_json's reading of the input.
    fn round_trip(json: &str) -> Table {
        let table = encode(json).unwrap_or_else(|| panic!("not encoded: {json}"));
        let back = decode(&table.text).unwrap_or_else(|e| panic!("{e}:\n{}", table.text));
        assert_eq!(back, value(json), "table:\n{}", table.text);
        assert!(table.text.len() < json.len());
        assert!(!table.text.ends_with('\n'));
        for line in table.text.lines() {
            assert_eq!(line, line.trim_end(), "a line ends in whitespace");
        }
        table
    }

    /// `json` with trailing whitespace, for small cases where the title would not pay.
    fn pad(json: &str) -> String {
        format!("{json}{}", " ".repeat(400))
    }

    fn to_value(node: &Node<'_>) -> Value {
        match node {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Num(n) => Value::Number(serde_json::from_str(n).expect("parser checked it")),
            Node::Str(s) => Value::String(s.to_string()),
            Node::Arr(items) => Value::Array(items.iter().map(to_value).collect()),
            Node::Obj(entries) => {
                Value::Object(entries.iter().map(|(k, v)| (k.to_string(), to_value(v))).collect())
            }
        }
    }

    fn repeat_rows(row: &str, n: usize) -> String {
        let rows: Vec<String> = (0..n).map(|i| row.replace("#", &i.to_string())).collect();
        format!("[{}]", rows.join(","))
    }

    #[test]
    fn documented_example_is_exact() {
        let json = r#"{"data":{"items":[
            {"id":1,"name":"Smith, J.","owner":{"login":"ann"}},
            {"id":2,"name":"","owner":{"login":null}},
            {"id":3,"name":"007","owner":{"login":"bob"}},
            {"id":4,"name":"x","owner":{"login":"eve"}}
        ],"total":4},"ok":true}"#;
        let table = round_trip(&pad(json));
        assert_eq!(
            table.text,
            "[tj] JSON at .data.items as CSV (lossless): 4 rows × 3 columns; empty = null, \"\" = empty string; nested keys joined with \".\"\n\
             [tj] rest: {\"data\":{\"items\":[],\"total\":4},\"ok\":true}\n\
             id,name,owner.login\n\
             1,\"Smith, J.\",ann\n\
             2,\"\",\n\
             3,\"007\",bob\n\
             4,x,eve"
        );
        assert_eq!((table.rows, table.columns), (4, 3));
    }

    #[test]
    fn root_array_reads_naturally() {
        let json = repeat_rows(r#"{"name":"pkg-#","version":"1.#.0","dev":false,"size":1#}"#, 5);
        let table = round_trip(&json);
        let lines: Vec<&str> = table.text.lines().collect();
        assert_eq!(
            lines[0],
            "[tj] JSON at . as CSV (lossless): 5 rows × 4 columns; empty = null, \"\" = empty string"
        );
        assert_eq!(lines[1], "name,version,dev,size");
        assert_eq!(lines[2], "pkg-0,1.0.0,false,10");
        assert_eq!(lines.len(), 7);
    }

    #[test]
    fn direct_child_with_siblings_keeps_the_envelope() {
        let rows = repeat_rows(r#"{"a":#,"b":"x#"}"#, 12);
        let json = format!(r#"{{"count":12,"items":{rows},"next":null,"tags":["a","b"]}}"#);
        let table = round_trip(&json);
        assert!(table.text.starts_with("[tj] JSON at .items as CSV"));
        assert!(table.text.contains(
            "\n[tj] rest: {\"count\":12,\"items\":[],\"next\":null,\"tags\":[\"a\",\"b\"]}\n"
        ));
    }

    #[test]
    fn odd_keys_on_the_path_are_quoted() {
        let rows = repeat_rows(r#"{"a":#,"b":"x#"}"#, 12);
        let json = format!(r#"{{"the data":{{"it\"ems.x":{rows}}}}}"#);
        let table = round_trip(&json);
        assert!(table.text.starts_with(r#"[tj] JSON at .["the data"].["it\"ems.x"] as CSV"#));
    }

    #[test]
    fn longest_array_wins() {
        let short = repeat_rows(r#"{"a":#}"#, 3);
        let long = repeat_rows(r#"{"b":#,"c":"z"}"#, 20);
        let json = format!(r#"{{"warnings":{short},"results":{long}}}"#);
        assert!(round_trip(&json).text.starts_with("[tj] JSON at .results as CSV"));
    }

    #[test]
    fn root_map_has_a_key_column() {
        let json = r#"{"pkgA":{"version":"1","dev":false},"pkgB":{"version":"2.0","dev":true},
            "1":{"version":"3","dev":false},"{x}":{"version":"","dev":null}}"#;
        let table = round_trip(&pad(json));
        let lines: Vec<&str> = table.text.lines().collect();
        assert!(lines[0].starts_with(
            "[tj] JSON object as CSV (lossless), one row per key: 4 rows × 3 columns"
        ));
        assert_eq!(
            &lines[1..],
            [
                "(key),version,dev",
                "pkgA,\"1\",false",
                "pkgB,\"2.0\",true",
                "\"1\",\"3\",false",
                "\"{x}\",\"\","
            ]
        );
    }

    #[test]
    fn root_map_keeps_an_odd_value_as_a_json_line() {
        let mut entries: Vec<String> =
            (0..10).map(|i| format!(r#""p{i}":{{"v":"{i}.0","ok":true}}"#)).collect();
        entries.insert(4, r#""odd":"just a string""#.to_owned());
        entries.insert(8, r#""two\nlines":{"v":"x","ok":false}"#.to_owned());
        entries.extend((10..20).map(|i| format!(r#""p{i}":{{"v":"{i}.0","ok":true}}"#)));
        let json = format!("{{{}}}", entries.join(","));
        let table = round_trip(&pad(&json));
        assert!(table.text.contains("\n{\"odd\":\"just a string\"}\n"));
        assert!(table.text.contains("\n{\"two\\nlines\":{\"v\":\"x\",\"ok\":false}}\n"));
        assert!(
            table
                .text
                .lines()
                .next()
                .is_some_and(|l| l.ends_with("; 2 rows as JSON lines (start with \"{\")"))
        );
    }

    #[test]
    fn tricky_strings_round_trip() {
        let strings = [
            "",
            " ",
            "a,b",
            "say \"hi\"",
            "\"",
            "\"\"",
            " lead",
            "trail ",
            "tab\tin",
            "\ttab",
            "1",
            "-0",
            "1.5",
            "1e5",
            ".5",
            "+1",
            "inf",
            "NaN",
            "true",
            "False",
            "null",
            "NULL",
            "{x}",
            "[1]",
            "a{b",
            "日本語",
            "é",
            "emoji 🦀",
            "\u{2028}",
            "back\\slash",
            "a\u{a0}",
            "0x1F",
            "--",
            "-",
            "t",
            "nul",
        ];
        let rows: Vec<String> = strings
            .iter()
            .enumerate()
            .map(|(i, s)| {
                format!(r#"{{"i":{i},"s":{}}}"#, serde_json::to_string(s).expect("string"))
            })
            .collect();
        let json = format!("[{}]", rows.join(","));
        let table = round_trip(&json);
        assert_eq!(table.text.lines().count(), 2 + strings.len(), "every row is CSV");
    }

    #[test]
    fn numbers_keep_their_text() {
        let json = r#"[{"n":1.50,"m":12345678901234567890123},{"n":-0,"m":1E+5},{"n":0.1,"m":-9223372036854775808},{"n":18446744073709551615,"m":2.5e-300}]"#;
        let table = round_trip(&pad(json));
        let rows: Vec<&str> = table.text.lines().skip(2).collect();
        assert_eq!(
            rows,
            [
                "1.50,12345678901234567890123",
                "-0,1E+5",
                "0.1,-9223372036854775808",
                "18446744073709551615,2.5e-300"
            ]
        );
    }

    #[test]
    fn line_breaks_make_a_row_a_json_line() {
        let mut rows: Vec<String> =
            (0..12).map(|i| format!(r#"{{"id":{i},"msg":"ok {i}"}}"#)).collect();
        rows[5] = r#"{"id":5,"msg":"two\nlines\r\u0001"}"#.to_owned();
        let json = format!("[{}]", rows.join(","));
        let table = round_trip(&json);
        assert!(table.text.contains("\n{\"id\":5,\"msg\":\"two\\nlines\\r\\u0001\"}\n"));
    }

    #[test]
    fn a_few_irregular_rows_are_json_lines() {
        let mut rows: Vec<String> =
            (0..20).map(|i| format!(r#"{{"id":{i},"msg":"m{i}"}}"#)).collect();
        rows[0] = r#"{"id":0}"#.to_owned(); // missing key, first row: the vote still finds the shape
        rows[7] = r#"{"msg":"m7","id":7}"#.to_owned(); // other order
        let json = format!("[{}]", rows.join(","));
        let table = round_trip(&json);
        let lines: Vec<&str> = table.text.lines().collect();
        assert_eq!(lines[1], "id,msg");
        assert_eq!(lines[2], r#"{"id":0}"#);
        assert_eq!(lines[9], r#"{"msg":"m7","id":7}"#, "key order kept");
    }

    #[test]
    fn dotted_keys_are_not_flattened() {
        let mut rows: Vec<String> =
            (0..20).map(|i| format!(r#"{{"a.b":{i},"c":{{"d":1}}}}"#)).collect();
        rows[3] = r#"{"a.b":3,"c":2}"#.to_owned();
        // Every row has a nested object, so without flattening no row is CSV.
        assert!(encode(&format!("[{}]", rows.join(","))).is_none());
        let flat = repeat_rows(r#"{"a.b":#,"c":"x"}"#, 10);
        let table = round_trip(&flat);
        assert!(!table.text.contains("nested keys"));
        assert_eq!(table.text.lines().nth(1), Some("a.b,c"));
    }

    #[test]
    fn single_null_column_rows_are_json_lines() {
        let mut rows: Vec<String> = (0..20).map(|i| format!(r#"{{"value":{i}}}"#)).collect();
        rows[2] = r#"{"value":null}"#.to_owned();
        let table = round_trip(&format!("[{}]", rows.join(",")));
        assert!(table.text.lines().all(|l| !l.is_empty()));
    }

    #[test]
    fn rejects_irregular_input() {
        // Padded, so that only the shape can be the reason; each case has a control that
        // differs only in what is checked.
        let rejects = |json: &str| assert!(encode(&pad(json)).is_none(), "encoded: {json}");
        let accepts = |json: &str| assert!(encode(&pad(json)).is_some(), "not encoded: {json}");
        let array = |rows: &[String]| format!("[{}]", rows.join(","));
        // Rows lacking a key: 2 of 20 are tolerated, 3 of 20 are not.
        let mut rows: Vec<String> = (0..20).map(|i| format!(r#"{{"id":{i},"msg":"m"}}"#)).collect();
        rows[3] = r#"{"id":3}"#.to_owned();
        rows[9] = r#"{"id":9}"#.to_owned();
        accepts(&array(&rows));
        rows[15] = r#"{"id":15}"#.to_owned();
        rejects(&array(&rows));
        // Extra keys, the same.
        let mut rows: Vec<String> = (0..20).map(|i| format!(r#"{{"id":{i},"msg":"m"}}"#)).collect();
        for i in [1, 2, 3] {
            rows[i] = format!(r#"{{"id":{i},"msg":"m","extra":true}}"#);
        }
        rejects(&array(&rows));
        // Array values.
        accepts(&repeat_rows(r#"{"id":#,"tags":"a"}"#, 20));
        rejects(&repeat_rows(r#"{"id":#,"tags":["a","b"]}"#, 20));
        rejects(&repeat_rows(r#"{"id":#,"tags":[]}"#, 20));
        // Nested objects: the same shape flattens, different shapes do not.
        accepts(&repeat_rows(r#"{"id":#,"o":{"k":1}}"#, 20));
        let mixed: Vec<String> =
            (0..20).map(|i| format!(r#"{{"id":{i},"o":{{"k{}":1}}}}"#, i % 3)).collect();
        rejects(&array(&mixed));
        rejects(&repeat_rows(r#"{"id":#,"o":{}}"#, 20));
        // A non-object element.
        let mut rows: Vec<String> = (0..20).map(|i| format!(r#"{{"id":{i}}}"#)).collect();
        accepts(&array(&rows));
        rows.push("null".to_owned());
        rejects(&array(&rows));
        // Empty objects, scalars, nested arrays.
        rejects(&repeat_rows("{}", 20));
        rejects("[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]");
        rejects(&repeat_rows("[#,#]", 20));
        // Duplicate keys.
        rejects(&repeat_rows(r#"{"a":#,"a":"x"}"#, 20));
        rejects(&repeat_rows(r#"{"a":{"x":#},"a":{"y":1}}"#, 20));
    }

    #[test]
    fn rejects_what_does_not_pay() {
        // Two rows, even padded; three padded rows are a table.
        assert!(encode(&pad(r#"[{"a":1},{"a":2}]"#)).is_none());
        assert!(encode(&pad(r#"[{"a":1},{"a":2},{"a":3}]"#)).is_some());
        // Three short rows: the title costs more than the keys save.
        assert!(encode(r#"[{"a":1},{"a":2},{"a":3}]"#).is_none());
    }

    #[test]
    fn rejects_what_is_not_json() {
        for text in [
            "",
            "   ",
            "hello",
            "[",
            "[1,]",
            "{\"a\":1,}",
            "[01]",
            "[1.]",
            "[.5]",
            "[1e]",
            "[+1]",
            "[\"\\ud800\"]",
            "[\"\\udc00x\"]",
            "[1e400]",
            "[\"a\tb\"]",
            "[tru]",
            "[1] [2]",
            "[\"\\x\"]",
        ] {
            let rows = repeat_rows(r#"{"a":#,"b":"x"}"#, 30);
            assert!(encode(text).is_none(), "{text}");
            let bad = format!("{}{text}]", &rows[..rows.len() - 1]);
            if !text.trim().is_empty() {
                assert!(encode(&bad).is_none(), "{bad}");
            }
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse(&deep).is_none());
    }

    #[test]
    fn parser_agrees_with_serde_json_on_edges() {
        for text in [
            "1e400",
            "-1e400",
            "1e-400",
            "1.7976931348623157e308",
            "1.8e308",
            "-0",
            "-0.0",
            "18446744073709551616",
            "-9223372036854775809",
            &format!("1{}", "0".repeat(400)),
            "0e0",
            "0E-0",
            "1E+2",
            "01",
            "-",
            "1.",
            "\"\\ud83e\\udd80\"",
            "\"\\ud800\\u0041\"",
            "\"\\u+041\"",
            "\"\\u00e9\"",
            "\"\u{7f}\"",
            "[1,[2,{\"a\":[]}]]",
            "{\"a\":1 , \"b\" : 2}",
            "\u{feff}[]",
            "[]\n",
            " [ ] ",
            "{\"a\"}",
            "[1 2]",
        ] {
            let ours = parse(text).map(|n| to_value(&n));
            assert_eq!(ours, serde_json::from_str::<Value>(text).ok(), "{text}");
        }
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(&deep(MAX_DEPTH)).is_some());
        assert!(parse(&deep(MAX_DEPTH + 1)).is_none());
    }

    #[test]
    fn looks_like_json_checks_the_first_byte() {
        assert!(looks_like_json("  \n[1]"));
        assert!(looks_like_json("{"));
        assert!(!looks_like_json("x{"));
        assert!(!looks_like_json(""));
    }

    #[test]
    fn decode_refuses_malformed_tables() {
        let good = round_trip(&repeat_rows(r#"{"a":#,"b":"x#"}"#, 20)).text;
        let header = "[tj] JSON at . as CSV (lossless): 1 row × 2 columns; empty = null, \"\" = empty string\na,b\n";
        for bad in [
            String::new(),
            "nonsense".to_owned(),
            good.replacen("[tj] JSON at .", "[tj] JSON at ..", 1),
            format!("{header}1"),
            format!("{header}1,2,3"),
            format!("{header}1,null"),
            format!("{header}1,\"x"),
            format!("{header}1,\"x\"y"),
            format!("{header}1,x\"y"),
            format!("{header}[1],2"),
            format!("{header}{{\"a\":1"),
            format!("{header}{{}}x"),
            "[tj] JSON at .items as CSV (lossless): …\na\n1".to_owned(),
            "[tj] JSON at .items as CSV (lossless): …\n[tj] rest: {\"items\":[1]}\na\n1".to_owned(),
            "[tj] JSON object as CSV (lossless), one row per key: …\na\n1".to_owned(),
        ] {
            assert!(decode(&bad).is_err(), "{bad}");
        }
        let err = decode(&format!("{header}1,2,3")).expect_err("malformed");
        assert_eq!(err.to_string(), "table line 3: wrong number of fields");
    }

    // -----------------------------------------------------------------------------------
    // Generated input.

    /// A scalar as JSON text: tricky strings, nulls, booleans, integers, floats, big
    /// integers, numbers with trailing zeros and exponents.
    pub(in crate::reduce::shape) fn scalar(newlines: bool) -> BoxedStrategy<String> {
        let tricky = prop_oneof![
            Just(String::new()),
            Just(",".to_owned()),
            Just("\"quoted\"".to_owned()),
            Just("a, \"b\"".to_owned()),
            Just(" lead".to_owned()),
            Just("trail ".to_owned()),
            Just("123".to_owned()),
            Just("-1.5e3".to_owned()),
            Just("true".to_owned()),
            Just("null".to_owned()),
            Just("Null".to_owned()),
            Just("{}".to_owned()),
            Just("[x".to_owned()),
            Just("naïve 日本 🦀".to_owned()),
            "[ -~]{0,12}",
            "\\PC{0,8}",
        ];
        let string = if newlines {
            prop_oneof![9 => tricky, 1 => "[a\n\r\t\u{1}]{1,4}".prop_map(|s| s)].boxed()
        } else {
            tricky.boxed()
        };
        prop_oneof![
            1 => Just("null".to_owned()),
            1 => any::<bool>().prop_map(|b| b.to_string()),
            1 => any::<i64>().prop_map(|n| n.to_string()),
            1 => any::<u64>().prop_map(|n| n.to_string()),
            1 => any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| {
                serde_json::to_string(&f).expect("finite")
            }),
            1 => "-?[1-9][0-9]{20,30}",
            1 => "-?[0-9]\\.[0-9]{0,4}0",
            1 => "[1-9](\\.[0-9]{1,3})?[eE][+-]?[0-9]{1,2}",
            3 => string.prop_map(|s| serde_json::to_string(&s).expect("string")),
        ]
        .boxed()
    }

    /// A column: a key and either a scalar or a nested object's keys.
    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z_]{1,6}",
            Just(String::new()),
            Just("a b".to_owned()),
            Just("x,y".to_owned()),
            Just("\"q\"".to_owned()),
            Just(" sp".to_owned()),
            Just("{k".to_owned()),
            Just("é".to_owned()),
            Just("1".to_owned()),
        ]
    }

    #[derive(Clone, Debug)]
    enum Column {
        Scalar(String),
        Nested(String, Vec<String>),
    }

    fn columns() -> impl Strategy<Value = Vec<Column>> {
        prop::collection::vec(
            prop_oneof![
                3 => key().prop_map(Column::Scalar),
                1 => (key(), prop::collection::vec("[a-z]{1,4}", 1..3))
                    .prop_map(|(k, sub)| Column::Nested(k, sub)),
            ],
            1..6,
        )
        .prop_map(|mut cols| {
            // Unique keys at every level, as a table needs.
            let mut seen = std::collections::HashSet::new();
            cols.retain(|c| match c {
                Column::Scalar(k) | Column::Nested(k, _) => seen.insert(k.clone()),
            });
            for c in &mut cols {
                if let Column::Nested(_, sub) = c {
                    let mut seen = std::collections::HashSet::new();
                    sub.retain(|k| seen.insert(k.clone()));
                }
            }
            cols
        })
    }

    fn row(cols: &[Column], newlines: bool) -> BoxedStrategy<String> {
        let parts: Vec<BoxedStrategy<String>> = cols
            .iter()
            .map(|c| match c {
                Column::Scalar(k) => {
                    let k = serde_json::to_string(k).expect("key");
                    scalar(newlines).prop_map(move |v| format!("{k}:{v}")).boxed()
                }
                Column::Nested(k, sub) => {
                    let k = serde_json::to_string(k).expect("key");
                    let inner: Vec<BoxedStrategy<String>> = sub
                        .iter()
                        .map(|s| {
                            let s = serde_json::to_string(s).expect("key");
                            scalar(newlines).prop_map(move |v| format!("{s}:{v}")).boxed()
                        })
                        .collect();
                    inner.prop_map(move |kv| format!("{k}:{{{}}}", kv.join(","))).boxed()
                }
            })
            .collect();
        parts.prop_map(|kv| format!("{{{}}}", kv.join(","))).boxed()
    }

    /// Rows of one shape, some (maybe) made irregular by dropping their last key.
    pub(in crate::reduce::shape) fn rows(
        n: std::ops::Range<usize>,
        newlines: bool,
        drop: bool,
    ) -> BoxedStrategy<Vec<String>> {
        columns()
            .prop_flat_map(move |cols| {
                prop::collection::vec((row(&cols, newlines), 0..30u8), n.clone())
            })
            .prop_map(move |rows| {
                rows.into_iter()
                    .map(|(r, dice)| {
                        if drop && dice == 0 && r.contains(',') {
                            // Drop the last key: a missing key.
                            let cut = r.rfind(",\"").unwrap_or(0);
                            if cut > 0 { format!("{}}}", &r[..cut]) } else { r }
                        } else {
                            r
                        }
                    })
                    .collect()
            })
            .boxed()
    }

    fn wrap(rows: &[String], envelope: u8) -> String {
        let array = format!("[{}]", rows.join(",\n  "));
        match envelope {
            0 => array,
            1 => format!(r#"{{"total":{},"items":{array},"ok":true,"next":null}}"#, rows.len()),
            2 => format!(
                r#"{{"meta":{{"page":1,"tags":["x"]}},"data":{{"items":{array},"cursor":"abc"}}}}"#
            ),
            _ => {
                let entries: Vec<String> = rows
                    .iter()
                    .enumerate()
                    .map(|(i, r)| format!(r#""key {i}, \"{i}\"":{r}"#))
                    .collect();
                format!("{{{}}}", entries.join(",\n  "))
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn uniform_input_encodes_and_decodes_exactly(rows in rows(30..60, false, false), envelope in 0..4u8) {
            let json = wrap(&rows, envelope);
            // Uniform, large enough, no line breaks: must be a table (a lone null column aside).
            let table = encode(&json);
            prop_assert!(table.is_some() || json.contains(":null}"), "not encoded: {json}");
            if table.is_some() {
                round_trip(&json);
            }
        }

        #[test]
        fn any_table_decodes_exactly(rows in rows(3..40, true, true), envelope in 0..4u8) {
            let json = wrap(&rows, envelope);
            if let Some(table) = encode(&json) {
                let back = decode(&table.text).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(back, value(&json), "table:\n{}", table.text);
            }
        }

        #[test]
        fn parser_agrees_with_serde_json(v in arbitrary_value(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&v).expect("value")
            } else {
                serde_json::to_string(&v).expect("value")
            };
            let node = parse(&text).expect("valid JSON parses");
            // serde_json's default float parsing is not always exact, so its reading of the
            // text is the reference, as it is for `decode`.
            prop_assert_eq!(to_value(&node), value(&text));
            let mut out = String::new();
            write_json(&mut out, &node, None);
            prop_assert_eq!(value(&out), value(&text));
        }

        #[test]
        fn parser_accepts_what_serde_json_accepts(text in r#"[\[\]{}",:0-9eE.+\- tfnrul\\]{0,14}"#) {
            prop_assert_eq!(parse(&text).is_some(), serde_json::from_str::<Value>(&text).is_ok(), "{}", text);
        }
    }

    fn arbitrary_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
            "\\PC{0,6}|[\\x00-\\x20\"\\\\]{0,4}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map("\\PC{0,4}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }
}
