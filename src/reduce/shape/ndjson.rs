//! JSON Lines (NDJSON) as a table (issue 5): where every line, or all but a few, is a JSON
//! object of one shape, the lines become one CSV table; the other lines stay verbatim, in
//! place, and are reported so the caller can treat them as evidence.
//!
//! The JSON parser, the shape vote, the cell rules and the CSV reader are
//! [`json_table`](super::json_table)'s; this module owns the line layout. Lines are the
//! lines [`split_lines`] makes (trailing whitespace is not part of a line), so the indices in
//! [`Table::verbatim`] are tj's own line numbers.
//!
//! # Format
//!
//! ```text
//! [tj] JSON Lines as CSV (lossless): 18 rows × 3 columns; empty = null, "" = empty string; input lines kept verbatim: 5, 20
//! level,msg,ms
//! info,"listening on :8080, tls",
//! info,step 1,1
//! info,step 2,2
//! info,step 3,3
//! {"level":"error","msg":"boom","stack":"at main\nat run"}
//! info,step 5,5
//! …
//! info,step 18,18
//! panic: runtime error
//! ```
//!
//! - **Line 1** says what follows. `nested keys joined with "."` appears when nested objects
//!   were flattened, as in [`json_table`](super::json_table). `input lines kept verbatim:`
//!   lists, 1-based, the input lines written as they were: lines that are not JSON objects,
//!   objects of another shape, and objects with a string holding a line break or another
//!   control character. They keep their place, so input line `k` is line `k + 2` of the
//!   table.
//! - **Line 2** is the CSV header, then one line per input line: a CSV row with the cell
//!   rules of [`json_table`](super::json_table) (empty = `null`, quoted = string), or the
//!   verbatim line.
//!
//! At most 10% of the lines may be verbatim, and at least 3 must be rows. A last line that
//! is blank is refused (tj drops blank edges, and the decoder could not tell).
//!
//! # Lossless
//!
//! [`decode`] gives back, line by line, the value of each row line
//! ([`LineValue::Json`]) and each verbatim line as it was ([`LineValue::Verbatim`]); it is
//! the exact inverse of [`encode`] on every table `encode` returns. [`encode`] checks this
//! itself only when built with debug assertions (the check costs more than the encoding);
//! the tests check it on generated and hand-written input.

use serde_json::Value;

pub use super::json_table::DecodeError;
use super::json_table::{
    Columns, Entries, LineParser, MIN_ROWS, NESTED, Node, RowSummary, Shape, same_keys, tolerable,
};
use crate::reduce::split_lines;

const TITLE: &str = "[tj] JSON Lines as CSV (lossless): ";
const VERBATIM: &str = "; input lines kept verbatim: ";

/// A lossless re-encoding of JSON Lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// The full replacement text: the title line, the CSV header line, then one line per
    /// input line. No trailing newline.
    pub text: String,
    /// Input lines written as CSV rows.
    pub rows: usize,
    /// Columns of the table.
    pub columns: usize,
    /// 0-based indices of the input lines kept verbatim, ascending.
    pub verbatim: Vec<usize>,
}

/// One input line as [`decode`] gives it back.
#[derive(Clone, Debug, PartialEq)]
pub enum LineValue {
    /// A line that was a row: its JSON value.
    Json(Value),
    /// A line kept verbatim.
    Verbatim(String),
}

/// Re-encodes `text` (a whole command output, JSON Lines) as a table, or `None` when too few
/// lines are JSON objects of one shape or the table is not smaller than `text`.
///
/// ```
/// use tj::reduce::shape::ndjson;
///
/// let log = "{\"level\":\"info\",\"n\":1}\n{\"level\":\"info\",\"n\":2}\noops\n\
///            {\"level\":\"info\",\"n\":3}\n{\"level\":\"info\",\"n\":4}\n\
///            {\"level\":\"info\",\"n\":5}\n{\"level\":\"info\",\"n\":6}\n\
///            {\"level\":\"info\",\"n\":7}\n{\"level\":\"info\",\"n\":8}\n\
///            {\"level\":\"info\",\"n\":9}\n";
/// let table = ndjson::encode(log).expect("JSON Lines of one shape");
/// assert_eq!(table.verbatim, [2]);
/// assert_eq!(table.text.lines().nth(4), Some("oops"));
/// ```
pub fn encode(text: &str) -> Option<Table> {
    let lines = split_lines(text);
    if lines.len() < MIN_ROWS || lines.last().is_some_and(|l| l.is_empty()) {
        return None;
    }
    // Two passes, so no more than two parse trees are alive at once and the cost per
    // megabyte holds still as the input grows: the first summarises each line's shape and
    // votes, the second parses the rows again and writes them.
    let summaries = summarize(&lines)?;
    // Flattening is unambiguous only when no key contains the separator.
    let flatten = !summaries.iter().flatten().any(|s| s.dotted);
    let tabular = |s: &RowSummary| if flatten { s.tabular_flat } else { s.tabular_plain };
    let (rep_line, rep_sig) = majority(&summaries, tabular)?;
    let mut rep_parser = LineParser::new();
    let Some(Node::Obj(rep)) = rep_parser.parse(lines[rep_line]) else { return None };
    let single = {
        let mut n = 0;
        count_leaves(&rep, &mut n);
        n == 1
    };
    let regular: Vec<bool> = summaries
        .iter()
        .map(|s| {
            // A lone null cell would be an empty line, which tj's line handling drops.
            s.is_some_and(|s| {
                tabular(&s) && s.signature == rep_sig && !(single && s.first_leaf_null)
            })
        })
        .collect();
    drop(summaries);
    let shape = Shape::of_summaries(&rep, regular)?;
    let verbatim: Vec<usize> =
        shape.regular.iter().enumerate().filter(|(_, r)| !**r).map(|(i, _)| i).collect();
    let out = write_table(text.len(), &lines, &rep, &shape, &verbatim)?;
    let table =
        Table { text: out, rows: lines.len() - verbatim.len(), columns: shape.columns(), verbatim };
    debug_assert!(
        decode(&table.text).ok() == Some(reference(&lines, &table.verbatim)),
        "ndjson is not lossless on its own output"
    );
    Some(table)
}

/// The first pass of [`encode`]: each line's shape, `None` for a line that is not a JSON
/// object. `None` as a whole as soon as too many lines are not ([`tolerable`]).
fn summarize(lines: &[&str]) -> Option<Vec<Option<RowSummary>>> {
    let mut summaries = Vec::with_capacity(lines.len());
    let mut misses = 0;
    let mut parser = LineParser::new();
    for line in lines {
        let summary = match line.trim_start().starts_with('{').then(|| parser.parse(line)) {
            Some(Some(Node::Obj(entries))) => Some(RowSummary::of(&entries)),
            _ => None,
        };
        if summary.is_none() {
            misses += 1;
            if !tolerable(misses, lines.len()) {
                return None;
            }
        }
        summaries.push(summary);
    }
    Some(summaries)
}

/// The line and signature of the shape most rows that can be CSV at all (`tabular`) have:
/// a Boyer-Moore majority vote, so the winner is the majority if there is one (and
/// [`Shape::of_summaries`] checks that there are enough of them).
fn majority(
    summaries: &[Option<RowSummary>],
    tabular: impl Fn(&RowSummary) -> bool,
) -> Option<(usize, u64)> {
    let mut candidate: Option<(usize, u64)> = None;
    let mut votes = 0usize;
    for (i, s) in summaries.iter().enumerate() {
        let Some(s) = s.filter(|s| tabular(s)) else { continue };
        match candidate {
            Some((_, sig)) if sig == s.signature => votes += 1,
            _ if votes == 0 => {
                candidate = Some((i, s.signature));
                votes = 1;
            }
            _ => votes -= 1,
        }
    }
    candidate
}

/// The second pass of [`encode`]: the title, the header and a row per line (`verbatim`
/// lines as they are), each regular row parsed again. `None` as soon as the table is not
/// smaller than the input (`limit` bytes), or a row's keys are not the representative's
/// (`rep`: two shapes with one signature).
fn write_table(
    limit: usize,
    lines: &[&str],
    rep: &Entries<'_>,
    shape: &Shape,
    verbatim: &[usize],
) -> Option<String> {
    let mut out = String::with_capacity(limit);
    out.push_str(TITLE);
    shape.write_summary(&mut out, lines.len() - verbatim.len(), 0);
    if !verbatim.is_empty() {
        out.push_str(VERBATIM);
        for (k, i) in verbatim.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            out.push_str(&(i + 1).to_string());
        }
    }
    out.push('\n');
    shape.write_header(&mut out);
    let mut parser = LineParser::new();
    for (line, regular) in lines.iter().zip(&shape.regular) {
        if out.len() >= limit {
            return None;
        }
        out.push('\n');
        if *regular {
            match parser.parse(line) {
                Some(Node::Obj(row)) if same_keys(rep, &row) => shape.write_row(&mut out, &row),
                // Two shapes with one signature: a hash collision. Refuse the table rather
                // than write a row under the wrong header.
                _ => return None,
            }
        } else {
            out.push_str(line);
        }
    }
    (out.len() < limit).then_some(out)
}

/// Counts the leaves (non-object values) of a row, nested objects included.
fn count_leaves(entries: &Entries<'_>, n: &mut usize) {
    for (_, v) in entries {
        match v {
            Node::Obj(inner) => count_leaves(inner, n),
            _ => *n += 1,
        }
    }
}

/// What [`decode`] must give for `lines` with `verbatim` kept as they are.
fn reference(lines: &[&str], verbatim: &[usize]) -> Vec<LineValue> {
    lines
        .iter()
        .enumerate()
        .map(|(i, line)| match verbatim.binary_search(&i) {
            Ok(_) => LineValue::Verbatim((*line).to_owned()),
            Err(_) => LineValue::Json(serde_json::from_str(line).unwrap_or(Value::Null)),
        })
        .collect()
}

/// Rebuilds the lines from [`encode`]'s text: each row's JSON value and each verbatim line.
/// Exact inverse on every `Some` of [`encode`].
pub fn decode(table: &str) -> Result<Vec<LineValue>, DecodeError> {
    let malformed = |line, what| DecodeError::Malformed { line, what };
    let mut lines = table.split('\n');
    let title = lines.next().unwrap_or_default();
    let summary = title.strip_prefix(TITLE).ok_or(malformed(1, "not a tj JSON Lines table"))?;
    let verbatim = match summary.split_once(VERBATIM) {
        Some((_, list)) => list
            .split(", ")
            .map(|n| n.parse::<usize>().ok().and_then(|n| n.checked_sub(1)))
            .collect::<Option<Vec<usize>>>()
            .ok_or(malformed(1, "bad verbatim line list"))?,
        None => Vec::new(),
    };
    let header = lines.next().ok_or(malformed(2, "missing header"))?;
    let columns = Columns::parse(header, summary.contains(NESTED)).map_err(|w| malformed(2, w))?;
    let mut out = Vec::new();
    let mut next = verbatim.iter().peekable();
    for (i, line) in lines.enumerate() {
        if next.next_if(|&&v| v == i).is_some() {
            out.push(LineValue::Verbatim(line.to_owned()));
        } else {
            out.push(LineValue::Json(columns.decode_line(i + 3, line)?));
        }
    }
    if next.next().is_some() {
        return Err(malformed(1, "verbatim line list out of order or past the end"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::reduce::shape::json_table::tests::rows;

    /// What `decode` must give back: serde_json's value of each row line, the rest verbatim.
    fn expected(text: &str, verbatim: &[usize]) -> Vec<LineValue> {
        split_lines(text)
            .iter()
            .enumerate()
            .map(|(i, line)| {
                if verbatim.contains(&i) {
                    LineValue::Verbatim((*line).to_owned())
                } else {
                    LineValue::Json(serde_json::from_str(line).expect("a row line is JSON"))
                }
            })
            .collect()
    }

    fn round_trip(text: &str) -> Table {
        let table = encode(text).unwrap_or_else(|| panic!("not encoded:\n{text}"));
        let back = decode(&table.text).unwrap_or_else(|e| panic!("{e}:\n{}", table.text));
        assert_eq!(back, expected(text, &table.verbatim), "table:\n{}", table.text);
        assert!(table.text.len() < text.len());
        assert_eq!(table.rows + table.verbatim.len(), split_lines(text).len());
        for line in table.text.split('\n') {
            assert_eq!(line, line.trim_end(), "a line ends in whitespace");
        }
        table
    }

    fn log_lines(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| {
                format!(
                    r#"{{"ts":"2026-11-30T05:{:02}:{:02}Z","level":"info","msg":"request {i}, ok","ms":{}}}"#,
                    i / 60 % 60,
                    i % 60,
                    i * 7 % 100
                )
            })
            .collect()
    }

    #[test]
    fn documented_example_is_exact() {
        let mut lines: Vec<String> =
            (0..19).map(|i| format!(r#"{{"level":"info","msg":"step {i}","ms":{i}}}"#)).collect();
        lines[0] = r#"{"level":"info","msg":"listening on :8080, tls","ms":null}"#.to_owned();
        lines[4] = r#"{"level":"error","msg":"boom","stack":"at main\nat run"}"#.to_owned();
        lines.push("panic: runtime error".to_owned());
        let text = lines.join("\n") + "\n";
        let table = round_trip(&text);
        let mut want = vec![
            "[tj] JSON Lines as CSV (lossless): 18 rows × 3 columns; empty = null, \"\" = empty string; input lines kept verbatim: 5, 20".to_owned(),
            "level,msg,ms".to_owned(),
            "info,\"listening on :8080, tls\",".to_owned(),
        ];
        want.extend((1..19).map(|i| format!("info,step {i},{i}")));
        want[6] =
            "{\"level\":\"error\",\"msg\":\"boom\",\"stack\":\"at main\\nat run\"}".to_owned();
        want.push("panic: runtime error".to_owned());
        assert_eq!(table.text, want.join("\n"));
        assert_eq!(table.verbatim, [4, 19]);
        assert_eq!((table.rows, table.columns), (18, 3));
    }

    #[test]
    fn other_shapes_and_text_stay_in_place() {
        let mut lines = log_lines(40);
        lines[3] = r#"{"level":"error","msg":"disk full","code":28}"#.to_owned();
        lines[17] = "thread 'main' panicked at src/main.rs:3:5".to_owned();
        lines[30] = String::new();
        lines[31] = r#"  {"ts":"x","level":"warn","msg":"m","ms":1}"#.to_owned(); // indented: still a row
        lines[32] = r#"["an","array"]"#.to_owned();
        let text = lines.join("\n");
        let table = round_trip(&text);
        assert_eq!(table.verbatim, [3, 17, 30, 32]);
        let out: Vec<&str> = table.text.split('\n').collect();
        assert_eq!(out[1], "ts,level,msg,ms");
        assert_eq!(out[2 + 17], lines[17]);
        assert_eq!(out[2 + 30], "");
        assert_eq!(out[2 + 31], "x,warn,m,1");
    }

    #[test]
    fn nested_objects_are_flattened() {
        let lines: Vec<String> = (0..20)
            .map(|i| format!(r#"{{"id":{i},"user":{{"name":"u{i}","admin":false}},"tags":null}}"#))
            .collect();
        let table = round_trip(&lines.join("\n"));
        assert!(table.text.lines().next().is_some_and(|l| l.contains(NESTED)));
        assert_eq!(table.text.lines().nth(1), Some("id,user.name,user.admin,tags"));
    }

    #[test]
    fn crlf_lines_are_lines() {
        let text = log_lines(20).join("\r\n") + "\r\n";
        let table = round_trip(&text);
        assert!(table.verbatim.is_empty());
        assert!(!table.text.contains('\r'));
    }

    #[test]
    fn rejects_what_is_not_json_lines() {
        // Too many lines of another shape (3 of 20 > 10%).
        let mut lines = log_lines(20);
        for i in [2, 9, 15] {
            lines[i] = format!(r#"{{"other":{i}}}"#);
        }
        assert!(encode(&lines.join("\n")).is_none());
        // Too many lines that are not JSON.
        let mut lines = log_lines(20);
        for i in [2, 9, 15] {
            lines[i] = "plain text".to_owned();
        }
        assert!(encode(&lines.join("\n")).is_none());
        // One JSON document, pretty or compact.
        let doc: Vec<Value> =
            log_lines(30).iter().map(|l| serde_json::from_str(l).expect("json")).collect();
        assert!(encode(&serde_json::to_string_pretty(&doc).expect("json")).is_none());
        assert!(encode(&serde_json::to_string(&doc).expect("json")).is_none());
        // Two lines; a blank last line; nothing.
        assert!(encode(&log_lines(2).join("\n")).is_none());
        assert!(encode(&(log_lines(20).join("\n") + "\n\n")).is_none());
        assert!(encode("").is_none());
        // Array values everywhere.
        let arrays: Vec<String> = (0..20).map(|i| format!(r#"{{"id":{i},"tags":[1]}}"#)).collect();
        assert!(encode(&arrays.join("\n")).is_none());
        // Plain text.
        assert!(encode("a\nb\nc\nd\n").is_none());
    }

    #[test]
    fn rejects_what_does_not_pay() {
        assert!(encode("{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n").is_none());
    }

    #[test]
    fn a_table_is_smaller_than_its_input_at_every_size_around_break_even() {
        // Rows whose CSV is not much shorter than their JSON: the table's title is paid back
        // only after some rows, so some counts are refused and the others must be smaller,
        // down to the last row written.
        let mut refused = 0;
        for width in 1..6 {
            for n in MIN_ROWS..120 {
                let value = "v".repeat(width);
                let text: String = (0..n).map(|i| format!("{{\"k\":\"{value}{i}\"}}\n")).collect();
                let text = text.trim_end();
                match encode(text) {
                    Some(table) => assert!(table.text.len() < text.len(), "{n} rows of {width}"),
                    None => refused += 1,
                }
            }
        }
        assert!(refused > 0 && refused < 5 * (120 - MIN_ROWS), "{refused} refused");
    }

    #[test]
    fn the_header_is_the_shape_most_rows_have_wherever_they_start() {
        // The first rows have another shape; the majority comes later.
        let mut lines = log_lines(30);
        lines[0] = r#"{"id":1}"#.to_owned();
        lines[1] = r#"{"id":2}"#.to_owned();
        let table = round_trip(&lines.join("\n"));
        assert_eq!(table.verbatim, [0, 1]);
        assert_eq!(table.text.lines().nth(1), Some("ts,level,msg,ms"));
    }

    #[test]
    fn decode_refuses_malformed_tables() {
        let title = "[tj] JSON Lines as CSV (lossless): 2 rows × 2 columns; empty = null, \"\" = empty string";
        for bad in [
            String::new(),
            "[tj] JSON at . as CSV (lossless): …\na\n1".to_owned(),
            title.to_owned(),
            format!("{title}\na,b\n1"),
            format!("{title}\na,b\n1,null"),
            format!("{title}; input lines kept verbatim: 3\na,b\n1,2\nx"),
            format!("{title}; input lines kept verbatim: 2, 1\na,b\nx\ny"),
            format!("{title}; input lines kept verbatim: 0\na,b\nx"),
            format!("{title}; input lines kept verbatim: one\na,b\nx"),
            format!("{title}\na,b\nnot, \"csv"),
        ] {
            assert!(decode(&bad).is_err(), "{bad}");
        }
        let ok = decode(&format!(
            "{title}; input lines kept verbatim: 2\na,b\n1,\"x\"\nanything, \"goes\"\n,"
        ))
        .expect("well formed");
        assert_eq!(
            ok,
            [
                LineValue::Json(serde_json::json!({"a": 1, "b": "x"})),
                LineValue::Verbatim("anything, \"goes\"".to_owned()),
                LineValue::Json(serde_json::json!({"a": null, "b": null})),
            ]
        );
    }

    /// A line that is not JSON, or JSON of another shape.
    fn stray() -> impl Strategy<Value = String> {
        prop_oneof![
            "[ -~]{0,20}".prop_map(|s| s.trim_end().to_owned()),
            Just("{not json".to_owned()),
            Just(r#"{"level":"error","code":1}"#.to_owned()),
            Just("[1,2]".to_owned()),
            Just("42".to_owned()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn uniform_lines_encode_and_decode_exactly(rows in rows(30..60, false, false)) {
            let text = rows.join("\n");
            let table = encode(&text);
            prop_assert!(table.is_some() || text.contains(":null}"), "not encoded: {}", text);
            if table.is_some() {
                let table = round_trip(&text);
                let lone_null = table.verbatim.iter().all(|&i| rows[i].contains(":null}"));
                prop_assert!(lone_null, "only a lone null column makes a line verbatim");
            }
        }

        #[test]
        fn any_table_decodes_exactly(
            rows in rows(3..60, true, true),
            strays in prop::collection::vec((any::<prop::sample::Index>(), stray()), 0..4),
        ) {
            let mut lines = rows;
            let mut injected = Vec::new();
            for (at, line) in strays {
                let at = at.index(lines.len() + 1);
                lines.insert(at, line);
                for i in &mut injected {
                    if *i >= at {
                        *i += 1;
                    }
                }
                injected.push(at);
            }
            let text = lines.join("\n");
            if let Some(table) = encode(&text) {
                let back = decode(&table.text).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(back, expected(&text, &table.verbatim), "table:\n{}", table.text);
                // A final empty line is only the text's last newline, not a line.
                let count = split_lines(&text).len();
                for i in injected.into_iter().filter(|&i| i < count) {
                    // A stray line is kept verbatim unless it happens to be a row of the shape.
                    prop_assert!(
                        table.verbatim.contains(&i) || lines[i].starts_with('{'),
                        "line {} not verbatim", i
                    );
                }
            }
        }
    }
}
