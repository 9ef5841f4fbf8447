//! Round-trip properties of the path-folding route (`tj::reduce::shape::paths`): whatever
//! the lines, the folding decodes back to them (checked before `encode`'s own check, which
//! would hide a fault as a decline), and listings and hits that share long prefixes do
//! fold, hostile lines mixed in included.

#![allow(missing_docs, clippy::unwrap_used)] // test code: a panic is the failure report

use proptest::prelude::*;
use tj::reduce::shape::paths::{LEGEND_PREFIX, decode, encode, fold_unchecked};

/// Path components chosen to collide with the encoding: digits with `-`/`:`, `--`, a
/// leading space, a backslash, a trailing slash, `[tj]`, `×`, unicode, a tab.
fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just("src".to_owned()),
        4 => Just("reduce".to_owned()),
        3 => Just("shape".to_owned()),
        3 => Just("mod.rs".to_owned()),
        2 => Just("a-1-b".to_owned()),
        1 => Just("12".to_owned()),
        1 => Just("7-x".to_owned()),
        1 => Just("--".to_owned()),
        1 => Just(" lead".to_owned()),
        1 => Just("\\esc".to_owned()),
        1 => Just("[tj]".to_owned()),
        1 => Just("× N".to_owned()),
        1 => Just("漢字".to_owned()),
        1 => Just("tab\there".to_owned()),
        1 => Just("".to_owned()),
        2 => "[a-z.]{1,6}",
    ]
}

/// A path component with nothing odd in it.
fn plain() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_.-]{0,8}"
}

/// A line: a path, a search hit in one of grep's forms, or something else entirely.
fn path() -> impl Strategy<Value = String> {
    proptest::collection::vec(component(), 1..6).prop_map(|c| c.join("/"))
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => path(),
        1 => path().prop_map(|p| format!("{p}/")),
        3 => (path(), 1..500u32, "[ -~]{0,12}").prop_map(|(p, n, t)| format!("{p}:{n}:{t}")),
        2 => (path(), 1..500u32, "[ -~]{0,12}").prop_map(|(p, n, t)| format!("{p}-{n}-{t}")),
        2 => (path(), "[ -~]{0,12}").prop_map(|(p, t)| format!("{p}:{t}")),
        1 => Just("--".to_owned()),
        1 => Just(String::new()),
        1 => Just("[tj] paths folded: a line ending in / names a directory".to_owned()),
        1 => Just("grep: x: Permission denied".to_owned()),
        1 => "[ -~]{0,20}",
        1 => "[ :0-9\\\\-]{0,8}",
    ]
}

/// A listing that must fold: plain paths under one long root, in runs of one directory,
/// with a few hostile lines anywhere.
fn listing() -> impl Strategy<Value = Vec<String>> {
    let run = (plain(), plain(), 3..12usize).prop_map(|(dir, sub, files)| {
        (0..files).map(|i| format!("{dir}/{sub}/file_{i}.rs")).collect::<Vec<_>>()
    });
    (
        proptest::collection::vec(run, 4..10),
        proptest::collection::vec((any::<prop::sample::Index>(), line()), 0..4),
    )
        .prop_map(|(runs, hostile)| {
            let mut lines: Vec<String> = runs
                .concat()
                .into_iter()
                .map(|p| format!("/home/user/projects/example-workspace/{p}"))
                .collect();
            for (at, h) in hostile {
                let at = at.index(lines.len());
                lines.insert(at, h);
            }
            lines
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_lines_round_trip(lines in proptest::collection::vec(line(), 0..60)) {
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        // The folding itself, before `encode`'s own check could turn a fault into a decline.
        prop_assert_eq!(decode(&fold_unchecked(&lines)).unwrap(), lines.clone());
        if let Some(text) = encode(&lines) {
            prop_assert!(text.starts_with(LEGEND_PREFIX));
            prop_assert_eq!(decode(&text).unwrap(), lines);
        }
    }

    #[test]
    fn a_listing_with_hostile_lines_folds_and_round_trips(lines in listing()) {
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let text = encode(&lines);
        prop_assert!(text.is_some(), "declined: {:?}", lines);
        let text = text.unwrap();
        prop_assert!(text.len() < lines.join("\n").len());
        prop_assert_eq!(decode(&text).unwrap(), lines);
    }

    #[test]
    fn hits_of_few_files_fold_and_round_trip(
        files in proptest::collection::vec((plain(), 4..20usize), 3..8),
        text in "[ -~]{0,30}",
    ) {
        let mut lines = Vec::new();
        for (name, hits) in &files {
            for n in 0..*hits {
                lines.push(format!("crates/example/src/{name}/lib.rs:{}:{text}", n * 7 + 1));
            }
        }
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let encoded = encode(&lines);
        prop_assert!(encoded.is_some(), "declined: {:?}", lines);
        prop_assert_eq!(decode(&encoded.unwrap()).unwrap(), lines);
    }
}
