//! The `diagnostics` shape: a linter's or compiler's list of located diagnostics, one per
//! line (`src/app.py:12:80: E501 line too long (88 > 79 characters)`, `src/a.ts(3,7):
//! error TS2322: …`, `a.sh:4:1: warning: … [SC2086]`).
//!
//! Every such line is evidence, which serves a list of twenty well and one of two thousand
//! not at all: past 512 distinct evidence lines no candidate can be verified, so the whole
//! list went out. This shape groups the items by *kind*, the line with its location removed
//! and its volatile parts masked (numbers that stand alone, quoted names), and, when there
//! are more than [`BUDGET`] items, keeps the first [`PER_KIND`] of each large kind verbatim and
//! accounts for the rest by kind: one `[tj]` line per kind with its count and the grep that
//! lists them all from the stored original. Every kind is shown; no kind is lost.
//!
//! Below the budget it does nothing: each item stays evidence, as before.

use std::collections::HashMap;

/// Items a list may have before the shape samples it.
pub const BUDGET: usize = 512;

/// Items of each kind shown verbatim when sampling.
pub const PER_KIND: usize = 3;

/// Kinds with at most this many items are never sampled: a handful of distinct problems is
/// worth showing whole.
pub const FEW: usize = 10;

/// A kind of diagnostic and its items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind {
    /// The item with its location removed and its volatile parts masked.
    pub signature: String,
    /// Line indices of its items, in order.
    pub items: Vec<usize>,
}

/// The sampling: which items go, and the kinds with more items than were shown.
#[derive(Debug, Default)]
pub struct Sampled {
    /// Items dropped (they are no longer evidence: their kind accounts for them).
    pub dropped: Vec<usize>,
    /// One line per kind that lost items, for the rendition (`[tj] …`).
    pub summaries: Vec<String>,
}

/// The byte length of the location that starts `line` (`path:12:`, `path:12:80:`,
/// `path(12,80):`), if it starts with one.
pub fn location_len(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let start = bytes.iter().take_while(|b| **b == b' ').count();
    let path_end = start
        + bytes[start..]
            .iter()
            .take_while(|b| !matches!(b, b' ' | b'\t' | b':' | b'(' | b')'))
            .count();
    // A path has a letter, a dot or a slash: `12:30:01` is a time, not `12` at line 30.
    // Except eslint's stylish form: an indented `line:col` and two spaces, under a file
    // header line.
    if !bytes[start..path_end].iter().any(|b| !b.is_ascii_digit()) {
        return stylish_len(bytes, start);
    }
    let mut i = path_end;
    match bytes.get(i) {
        Some(b':') => {
            let mut fields = 0;
            while bytes.get(i) == Some(&b':') {
                let digits = bytes[i + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
                if digits == 0 {
                    break;
                }
                i += 1 + digits;
                fields += 1;
            }
            if fields == 0 {
                return None;
            }
            if bytes.get(i) == Some(&b':') {
                i += 1;
            }
        }
        Some(b'(') => {
            let inner =
                bytes[i + 1..].iter().take_while(|b| b.is_ascii_digit() || **b == b',').count();
            if inner == 0 || bytes.get(i + 1 + inner) != Some(&b')') {
                return None;
            }
            i += inner + 2;
            if bytes.get(i) == Some(&b':') {
                i += 1;
            }
        }
        _ => return None,
    }
    // A location is followed by the message, not by more of a word.
    match bytes.get(i) {
        Some(b' ' | b'\t') => Some(i),
        None => None,
        Some(_) => None,
    }
}

/// eslint's stylish item, `  12:5  error  message  rule`: the length of `  12:5`.
fn stylish_len(bytes: &[u8], start: usize) -> Option<usize> {
    if start == 0 {
        return None;
    }
    let line = bytes[start..].iter().take_while(|b| b.is_ascii_digit()).count();
    let at = start + line;
    if line == 0 || bytes.get(at) != Some(&b':') {
        return None;
    }
    let col = bytes[at + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
    let end = at + 1 + col;
    (col > 0 && bytes.get(end..end + 2) == Some(b"  ")).then_some(end)
}

/// The kind of a diagnostic message: numbers that stand alone become `#`, quoted text
/// becomes `"…"`, and runs of spaces one space. Codes such as `E501`, `TS2322` or `SC2086`
/// keep their digits: they are the kind.
pub fn signature(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut chars = message.trim().chars().peekable();
    let mut prev: Option<char> = None;
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' | '`' => {
                // A quote that opens a word (`"name"`, `'x'`), not an apostrophe (`don't`).
                let opens = prev.is_none_or(|p| !p.is_alphanumeric());
                let close = if c == '`' { '\'' } else { c };
                if opens && let Some(len) = quoted_len(chars.clone(), c, close) {
                    for _ in 0..len {
                        chars.next();
                    }
                    out.push_str("\"…\"");
                    prev = Some('"');
                    continue;
                }
                out.push(c);
            }
            d if d.is_ascii_digit() && prev.is_none_or(|p| !p.is_alphanumeric() && p != '_') => {
                while chars.peek().is_some_and(|n| n.is_ascii_digit() || *n == '.') {
                    chars.next();
                }
                out.push('#');
            }
            ' ' | '\t' => {
                if prev != Some(' ') {
                    out.push(' ');
                }
                prev = Some(' ');
                continue;
            }
            _ => out.push(c),
        }
        prev = Some(c);
    }
    out
}

/// The length in chars (closing quote included) of a quoted run that `rest` starts inside,
/// if it closes on the same line within 200 chars.
fn quoted_len(rest: impl Iterator<Item = char>, open: char, close: char) -> Option<usize> {
    for (n, c) in rest.take(200).enumerate() {
        if c == close || (c == open && open != close) {
            return (c == close).then_some(n + 1);
        }
    }
    None
}

/// Groups the located evidence lines by kind, in order of first appearance.
pub fn kinds(lines: &[&str], evidence: &[bool]) -> Vec<Kind> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut kinds: Vec<Kind> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !evidence[i] {
            continue;
        }
        let Some(at) = location_len(line) else { continue };
        let signature = signature(&line[at..]);
        match index.get(&signature) {
            Some(&k) => kinds[k].items.push(i),
            None => {
                index.insert(signature.clone(), kinds.len());
                kinds.push(Kind { signature, items: vec![i] });
            }
        }
    }
    kinds
}

/// Samples `kinds` when they hold more than [`BUDGET`] items: each kind of more than [`FEW`]
/// items keeps its first [`PER_KIND`]; the rest are dropped and summarised, one line per
/// kind. `None` when the
/// list is within budget.
pub fn sample(kinds: &[Kind]) -> Option<Sampled> {
    let total: usize = kinds.iter().map(|k| k.items.len()).sum();
    if total <= BUDGET {
        return None;
    }
    let mut sampled = Sampled::default();
    for kind in kinds.iter().filter(|k| k.items.len() > FEW) {
        sampled.dropped.extend_from_slice(&kind.items[PER_KIND..]);
        sampled.summaries.push(summary(kind.items.len(), &kind.signature));
    }
    sampled.dropped.sort_unstable();
    Some(sampled)
}

/// The line that accounts for the items of one kind, such as
/// `[tj] 1,204 × E501 line too long (# > # characters), 3 shown`. `tj rules verify` looks
/// for `× {signature},` to know a sampled item's kind was reported.
pub fn summary(count: usize, signature: &str) -> String {
    format!("[tj] {} × {signature}, {PER_KIND} shown", crate::reduce::group(count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_common_location_forms() {
        fn at(l: &str) -> Option<&str> {
            location_len(l).map(|n| &l[n..])
        }
        assert_eq!(at("./src/app.py:12:80: E501 line too long"), Some(" E501 line too long"));
        assert_eq!(at("src/a.ts(3,7): error TS2322: x"), Some(" error TS2322: x"));
        assert_eq!(at("a.sh:4:1: warning: quote [SC2086]"), Some(" warning: quote [SC2086]"));
        assert_eq!(at("main.go:7: undefined: x"), Some(" undefined: x"));
        assert_eq!(at("  src/lib.rs:3:9 error"), Some(" error"));
        assert_eq!(at("no location here"), None);
        assert_eq!(at("http://example.com:8080/x"), None);
        assert_eq!(at("12:30:01 server started"), None);
        assert_eq!(
            at("  12:5  error  'x' is unused  no-unused-vars"),
            Some("  error  'x' is unused  no-unused-vars")
        );
        assert_eq!(at("  12:5 error"), None);
        assert_eq!(at("file.py:12"), None);
    }

    #[test]
    fn kinds_keep_codes_and_mask_what_varies() {
        assert_eq!(
            signature("E501 line too long (88 > 79 characters)"),
            "E501 line too long (# > # characters)"
        );
        assert_eq!(
            signature("error: Name \"foo\" is not defined  [name-defined]"),
            "error: Name \"…\" is not defined [name-defined]"
        );
        assert_eq!(signature("F401 'os' imported but unused"), "F401 \"…\" imported but unused");
        assert_eq!(signature("W0612: Unused variable 'x' (unused-variable)"), {
            "W0612: Unused variable \"…\" (unused-variable)"
        });
        assert_eq!(signature("don't do this"), "don't do this");
        assert_eq!(signature("x_1 and 2.5s"), "x_1 and #s");
    }

    fn flake8(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| match i % 3 {
                0 => format!(
                    "./src/m{i}.py:{}:80: E501 line too long ({} > 79 characters)",
                    i + 1,
                    80 + i % 40
                ),
                1 => format!("./src/m{i}.py:1:1: F401 'mod{i}' imported but unused"),
                _ => format!("./src/m{i}.py:{}:5: E302 expected 2 blank lines, found 1", i + 2),
            })
            .collect()
    }

    #[test]
    fn a_short_list_is_left_alone() {
        let owned = flake8(BUDGET);
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let kinds = kinds(&lines, &vec![true; lines.len()]);
        assert_eq!(kinds.len(), 3);
        assert!(sample(&kinds).is_none());
    }

    #[test]
    fn a_long_list_keeps_every_kind_and_counts_the_rest() {
        let mut owned = flake8(3000);
        owned.push("./src/odd.py:9:1: E999 SyntaxError: invalid syntax".to_owned());
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let evidence = vec![true; lines.len()];
        let kinds = kinds(&lines, &evidence);
        assert_eq!(kinds.len(), 4, "{kinds:#?}");
        let sampled = sample(&kinds).expect("over budget");
        assert_eq!(sampled.dropped.len(), 3000 - 3 * PER_KIND);
        assert!(!sampled.dropped.contains(&3000), "the lone E999 stays");
        for k in &kinds {
            assert!(
                k.items[..PER_KIND.min(k.items.len())].iter().all(|i| !sampled.dropped.contains(i))
            );
        }
        assert_eq!(sampled.summaries.len(), 3);
        // A kind of a few items is shown whole.
        let mut owned = flake8(3000);
        owned.extend((0..FEW).map(|i| format!("./src/w.py:{i}:1: W291 trailing whitespace")));
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let sampled = sample(&super::kinds(&lines, &vec![true; lines.len()])).expect("over budget");
        assert!(sampled.dropped.iter().all(|&i| i < 3000));
        assert_eq!(
            sampled.summaries[0],
            "[tj] 1,000 × E501 line too long (# > # characters), 3 shown"
        );
    }

    #[test]
    fn lines_that_are_not_evidence_are_not_items() {
        let lines = ["src/a.py:1:1: F401 x", "Found 1 error."];
        assert_eq!(kinds(&lines, &[false, true]), Vec::new());
    }
}
