//! Round-trip properties of the compact JSON route (`tj::reduce::shape::compact_json`):
//! every document it encodes decodes back to the same text, byte for byte, whatever its
//! strings, numbers, keys and layout; and a document printed in a layout it knows, with
//! enough to save, is encoded.

#![allow(missing_docs, clippy::unwrap_used)] // test code: a panic is the failure report

use proptest::prelude::*;
use tj::reduce::shape::compact_json::{LEGEND, decode, encode};

/// A JSON document as written: scalars and keys are JSON text (quotes and escapes
/// included), so the test controls every byte the route must keep.
#[derive(Clone, Debug)]
enum Doc {
    Leaf(String),
    Arr(Vec<Doc>),
    Obj(Vec<(String, Doc)>),
}

/// How a tool printed the document.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// `JSON.stringify(v, null, n)`, Go's `MarshalIndent`, `json.dumps(indent=n)`, jq.
    Spaces(usize),
    Tab,
    /// Indented, `"key":value` with no space.
    Tight,
    /// `JSON.stringify(v)`, `serde_json::to_string`.
    Line,
    /// Python's `json.dumps(v)`: `, ` and `: `.
    Spaced,
}

impl Layout {
    fn is_pretty(self) -> bool {
        !matches!(self, Layout::Line | Layout::Spaced)
    }

    fn newline(self, out: &mut String, depth: usize) {
        match self {
            Layout::Spaces(n) => {
                out.push('\n');
                out.push_str(&" ".repeat(n * depth));
            }
            Layout::Tight => {
                out.push('\n');
                out.push_str(&"  ".repeat(depth));
            }
            Layout::Tab => {
                out.push('\n');
                out.push_str(&"\t".repeat(depth));
            }
            Layout::Line | Layout::Spaced => {}
        }
    }

    fn print(self, out: &mut String, doc: &Doc, depth: usize) {
        let comma = if matches!(self, Layout::Spaced) { ", " } else { "," };
        let colon = if matches!(self, Layout::Tight | Layout::Line) { ":" } else { ": " };
        match doc {
            Doc::Leaf(s) => out.push_str(s),
            Doc::Arr(items) if items.is_empty() => out.push_str("[]"),
            Doc::Obj(entries) if entries.is_empty() => out.push_str("{}"),
            Doc::Arr(items) => {
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
            Doc::Obj(entries) => {
                out.push('{');
                for (n, (k, v)) in entries.iter().enumerate() {
                    if n > 0 {
                        out.push_str(comma);
                    }
                    self.newline(out, depth + 1);
                    out.push_str(k);
                    out.push_str(colon);
                    self.print(out, v, depth + 1);
                }
                self.newline(out, depth);
                out.push('}');
            }
        }
    }
}

fn layout() -> impl Strategy<Value = Layout> {
    prop_oneof![
        3 => Just(Layout::Spaces(2)),
        2 => Just(Layout::Spaces(4)),
        1 => (1..=8usize).prop_map(Layout::Spaces),
        1 => Just(Layout::Tab),
        1 => Just(Layout::Tight),
        1 => Just(Layout::Line),
        1 => Just(Layout::Spaced),
    ]
}

/// String contents that hit the encoding's syntax, and a few plain ones.
fn content() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z][a-z0-9.-]{0,8}",
        1 => Just(String::new()),
        1 => prop::sample::select(vec![
            "a: b", "k:", "- x", "-", "[3]: a,b", "x[2]", "{a,b}:", "{}", "[]", "[tj] note",
            "a>b>c", "a,b", " lead", "trail ", "true", "false", "null", "True", "12", "1.0",
            "-1e5", "NaN", "inf", "0x1f", "007", "×3", "/usr/bin/env", "C:\\path",
            "say \"hi\"", "naïve 日本 🦀", "(path)", "line\nbreak", "tab\there", "#", "\u{7f}",
            "\"", "a\"", "\\",
        ])
        .prop_map(str::to_owned),
        1 => "\\PC{0,6}",
    ]
}

/// A string as JSON text: serde_json's escapes, or one of the escapes other printers use.
fn string_token() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => content().prop_map(|s| serde_json::to_string(&s).unwrap()),
        1 => prop::sample::select(vec![
            r#""caf\u00e9""#, r#""http:\/\/x""#, r#""\u0041""#, r#""\ud83e\udd80""#,
            r#""\u003cb\u003e""#, r#""a\/b,c""#, r#""\"""#,
        ])
        .prop_map(str::to_owned),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "name", "version", "dependencies", "resolved", "overridden", "a b", "x,y", "",
            "-x", "a:b", "[k]", "{k}", "é", "(path)", "a>b", "×", "k\"q", " sp",
        ])
        .prop_map(|k| serde_json::to_string(k).unwrap()),
        1 => string_token(),
    ]
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "0",
            "-0",
            "1.50",
            "1e5",
            "1E+2",
            "-12.5e-3",
            "0.0",
            "123456789012345678901234567890",
        ])
        .prop_map(str::to_owned),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| serde_json::to_string(&f).unwrap()),
    ]
}

fn scalar() -> impl Strategy<Value = Doc> {
    prop_oneof![
        4 => string_token(),
        2 => number(),
        1 => prop::sample::select(vec!["true", "false", "null"]).prop_map(str::to_owned),
    ]
    .prop_map(Doc::Leaf)
}

/// Objects of scalars sharing keys, some missing one: the table form.
fn rows() -> impl Strategy<Value = Doc> {
    prop::collection::vec(key(), 1..4).prop_flat_map(|keys| {
        prop::collection::vec(
            (prop::collection::vec(scalar(), keys.len()), 0..keys.len() + 2),
            1..6,
        )
        .prop_map(move |rows| {
            Doc::Arr(
                rows.into_iter()
                    .map(|(values, skip)| {
                        let fields: Vec<(String, Doc)> = keys
                            .iter()
                            .cloned()
                            .zip(values)
                            .enumerate()
                            .filter(|(i, _)| *i != skip)
                            .map(|(_, kv)| kv)
                            .collect();
                        Doc::Obj(fields)
                    })
                    .collect(),
            )
        })
    })
}

/// An `npm ls --json --all` tree: entries of scalars, each maybe with its own
/// `dependencies` map last.
fn deps(depth: u32) -> BoxedStrategy<Doc> {
    let entry = (
        prop::collection::vec(
            (prop::sample::select(vec!["\"version\"", "\"resolved\"", "\"overridden\""]), scalar()),
            0..3,
        ),
        if depth == 0 { Just(None).boxed() } else { prop::option::of(deps(depth - 1)).boxed() },
    )
        .prop_map(|(fields, children)| {
            let mut entries: Vec<(String, Doc)> =
                fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            if let Some(c) = children {
                entries.push(("\"dependencies\"".to_owned(), c));
            }
            Doc::Obj(entries)
        });
    prop::collection::vec((key(), entry), 1..5).prop_map(Doc::Obj).boxed()
}

fn doc() -> impl Strategy<Value = Doc> {
    let leaf = prop_oneof![
        6 => scalar(),
        1 => Just(Doc::Arr(Vec::new())),
        1 => Just(Doc::Obj(Vec::new())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            3 => prop::collection::vec(inner.clone(), 0..6).prop_map(Doc::Arr),
            3 => prop::collection::vec((key(), inner), 0..6).prop_map(Doc::Obj),
            1 => rows(),
            1 => deps(2).prop_map(|d| Doc::Obj(vec![("\"dependencies\"".to_owned(), d)])),
        ]
    })
}

/// `doc` under a key beside a long list of versions two levels down, so that the encoding
/// pays whatever the indentation.
fn padded(doc: Doc, versions: usize) -> Doc {
    let list = (0..versions).map(|i| Doc::Leaf(format!("\"1.{i}.0\""))).collect();
    let pad = Doc::Obj(vec![("\"versions\"".to_owned(), Doc::Arr(list))]);
    Doc::Obj(vec![("\"doc\"".to_owned(), doc), ("\"pad\"".to_owned(), pad)])
}

fn print(doc: &Doc, layout: Layout) -> String {
    let mut out = String::new();
    layout.print(&mut out, doc, 0);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_encoding_decodes_to_the_same_text(d in doc(), l in layout(), pad in 0..400usize) {
        let body = print(&padded(d, pad), l);
        if let Some(text) = encode(&body) {
            prop_assert!(text.starts_with(LEGEND));
            prop_assert!(text.lines().all(|line| !line.is_empty() && line.trim_end() == line));
            prop_assert_eq!(decode(&text), Ok(body.clone()), "encoding:\n{}", text);
        }
    }

    #[test]
    fn known_layouts_with_savings_are_encoded(d in doc(), l in layout()) {
        prop_assume!(l.is_pretty());
        let small = print(&d, l);
        prop_assume!(small.len() < 1500);
        let body = print(&padded(d, 600), l);
        let text = encode(&body);
        prop_assert!(text.is_some(), "not encoded:\n{}", body);
        prop_assert_eq!(decode(&text.unwrap()), Ok(body));
    }

    #[test]
    fn tricky_strings_in_every_position_are_encoded(
        items in prop::collection::vec(scalar(), 1..8),
        table in rows(),
        tree in deps(2),
        tricky in prop::collection::vec((key(), scalar()), 1..6),
        l in layout(),
    ) {
        // Each syntax-heavy scalar as an entry value, a list cell, an item, a table cell
        // and (through `deps`) a path name: every quoting rule is hit in every case.
        prop_assume!(l.is_pretty());
        let mut mixed = items.clone();
        mixed.push(Doc::Obj(Vec::new()));
        let d = Doc::Obj(vec![
            ("\"list\"".to_owned(), Doc::Arr(items)),
            ("\"items\"".to_owned(), Doc::Arr(mixed)),
            ("\"table\"".to_owned(), table),
            ("\"dependencies\"".to_owned(), tree),
            ("\"entries\"".to_owned(), Doc::Obj(tricky)),
        ]);
        prop_assume!(print(&d, l).len() < 3000);
        let body = print(&padded(d, 600), l);
        let text = encode(&body);
        prop_assert!(text.is_some(), "not encoded:\n{}", body);
        prop_assert_eq!(decode(&text.unwrap()), Ok(body));
    }

    #[test]
    fn other_whitespace_is_declined_or_kept(d in doc(), l in layout(), at in any::<prop::sample::Index>(), ws in prop::sample::select(vec![" ", "\n", "\t", "  "])) {
        // A byte of whitespace inserted where JSON allows it: the document is the same
        // value, but its text is not one the printer writes.
        let body = print(&padded(d, 400), l);
        let spots: Vec<usize> = body.match_indices([',', ':', '[', '{']).map(|(i, _)| i + 1).collect();
        let mut changed = body;
        changed.insert_str(spots[at.index(spots.len())], ws);
        if let Some(text) = encode(&changed) {
            prop_assert_eq!(decode(&text), Ok(changed));
        }
    }

    #[test]
    fn damaged_encodings_do_not_panic(d in doc(), cut in any::<prop::sample::Index>(), junk in "[ ,:\\[\\]{}\"a1>\n-]{0,3}") {
        let body = print(&padded(d, 300), Layout::Spaces(2));
        if let Some(text) = encode(&body) {
            let mut at = cut.index(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let mut end = (at + 1).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            let damaged = format!("{}{junk}{}", &text[..at], &text[end..]);
            let _ = decode(&damaged);
        }
    }
}
