//! The column-factoring route round-trips: `decode(encode(lines)) == lines` on generated
//! tables (space-aligned, `|`-separated, tab-separated) whose cells include the encoding's
//! own syntax, with stray lines mixed in.

#![allow(missing_docs, clippy::unwrap_used)] // test code: a panic is the failure report

use proptest::prelude::*;
use tj::reduce::shape::columns;

/// Cell texts chosen to collide with the encoding and the splitting: the verbatim marker,
/// quotes and backslashes (the legend's JSON), pipes, unicode, `[tj]`.
fn cell() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("»".to_owned()),
        Just("\"q\"".to_owned()),
        Just("C:\\x".to_owned()),
        Just("[tj]".to_owned()),
        Just("漢字".to_owned()),
        Just("a|b".to_owned()),
        Just("web-".to_owned()),
        "[a-c0-9»|\"\\\\ ]{1,8}",
    ]
}

/// One column: a constant cell, or a varying one with a shared prefix and suffix.
#[derive(Clone, Debug)]
enum Column {
    Constant(String),
    Varying { prefix: String, suffix: String },
}

fn column() -> impl Strategy<Value = Column> {
    prop_oneof![
        cell().prop_map(Column::Constant),
        (cell(), cell()).prop_map(|(prefix, suffix)| Column::Varying { prefix, suffix }),
        Just(Column::Varying { prefix: String::new(), suffix: String::new() }),
    ]
}

/// How cells are joined, and whether they are padded to a width (right-aligned or not).
const SEPARATORS: [&str; 5] = [" ", "  ", " | ", "|", "\t"];

fn table() -> impl Strategy<Value = Vec<String>> {
    (
        proptest::collection::vec(column(), 1..6),
        0..SEPARATORS.len(),
        any::<bool>(),
        any::<bool>(),
        5usize..60,
        proptest::collection::vec((0usize..60, prop_oneof![cell(), Just(String::new())]), 0..4),
        any::<u64>(),
    )
        .prop_map(|(columns, sep, pad, right, rows, strays, seed)| {
            let mut lines: Vec<String> = (0..rows)
                .map(|r| row(&columns, SEPARATORS[sep], pad, right, r as u64 ^ seed))
                .collect();
            for (at, stray) in strays {
                lines.insert(at.min(lines.len()), stray);
            }
            lines
        })
}

/// Row `r` of a table: each varying cell holds a number between its prefix and suffix.
fn row(columns: &[Column], sep: &str, pad: bool, right: bool, r: u64) -> String {
    let cells: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let text = match c {
                Column::Constant(t) => t.clone(),
                Column::Varying { prefix, suffix } => {
                    let n = r.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(i as u32 * 7) % 5000;
                    format!("{prefix}{n}{suffix}")
                }
            };
            match (pad, right) {
                (true, true) => format!("{text:>8}"),
                (true, false) => format!("{text:<8}"),
                _ => text,
            }
        })
        .collect();
    cells.join(sep).trim_end().to_owned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn decode_gives_back_what_encode_factored(lines in table()) {
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        if let Some(text) = columns::encode(&refs) {
            prop_assert!(text.starts_with(columns::LEGEND));
            prop_assert_eq!(columns::decode(&text).unwrap(), lines);
        }
    }

    /// `encode` checks its own output and declines on a mismatch, so a broken rule would
    /// show as a refusal: a wide constant column in front of any cells must be encoded.
    #[test]
    fn a_wide_constant_column_is_always_factored(lines in table()) {
        const WIDE: &str = "-rw-r--r-- 1 root root 4096 Dec  1 12:00";
        // Rows, not lines: empty lines are left out, and a table of none has nothing to factor.
        let rows: Vec<String> = lines.into_iter().filter(|l| !l.is_empty()).collect();
        prop_assume!(rows.len() >= 20);
        let lines: Vec<String> = std::iter::once("header".to_owned())
            .chain(rows.into_iter().map(|l| format!("{WIDE} {l}")))
            .collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let text = columns::encode(&refs);
        prop_assert!(text.is_some(), "declined {:?}", lines);
        prop_assert_eq!(columns::decode(&text.unwrap()).unwrap(), lines);
    }
}
