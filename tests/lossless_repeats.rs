//! The exact-repeats route round-trips: `decode(encode(lines)) == lines` on generated input
//! that repeats lines and blocks, mixed with lines that look like the encoding itself.

#![allow(missing_docs, clippy::unwrap_used)] // test code: a panic is the failure report

use proptest::prelude::*;
use tj::reduce::shape::repeats;

/// Lines chosen to collide with the encoding: counts, block markers, the legend, blanks,
/// tabs, unicode, and plain text.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("x  [× 3]".to_owned()),
        Just("  [× 1]".to_owned()),
        Just("[× 2]".to_owned()),
        Just("a  [× 0]".to_owned()),
        Just("[tj] the 2 lines above × 4".to_owned()),
        Just("[tj] the 3 lines above × 2  [× 1]".to_owned()),
        Just("[tj] repeats folded: a line".to_owned()),
        Just("\tconnection reset by peer".to_owned()),
        Just("漢字 × 2".to_owned()),
        "[a-c ×\\[\\]0-9]{0,12}",
    ]
}

/// Runs of blocks: each block of 1 to 9 lines repeated 1 to 30 times.
fn repetitive() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec((proptest::collection::vec(line(), 1..10), 1usize..30), 0..12)
        .prop_map(|runs| runs.into_iter().flat_map(|(block, reps)| repeat(&block, reps)).collect())
}

/// `reps` copies of `block`, one after another.
fn repeat(block: &[String], reps: usize) -> Vec<String> {
    std::iter::repeat_n(block, reps).flatten().cloned().collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn decode_gives_back_what_encode_folded(lines in repetitive()) {
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        if let Some(text) = repeats::encode(&refs) {
            prop_assert!(text.starts_with(repeats::LEGEND));
            prop_assert_eq!(repeats::decode(&text).unwrap(), lines);
        }
    }

    /// `encode` checks its own output and declines on a mismatch, so a broken escape would
    /// show as a refusal: a long run of any line, lookalikes included, must be encoded.
    /// Long enough that it pays whatever surrounds it: a run of empty lines saves a byte a
    /// copy, and 300 of them between two copies of four escaped lookalikes (about 300 bytes
    /// with the legend) kept 82 % of the original, past what `encode` returns; 1000 keep
    /// at most half.
    #[test]
    fn long_runs_of_lookalike_lines_are_encoded(prefix in proptest::collection::vec(line(), 0..5), run in line(), reps in 1000usize..1100) {
        let mut lines = prefix.clone();
        lines.extend(std::iter::repeat_n(run, reps));
        lines.extend(prefix);
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let text = repeats::encode(&refs);
        prop_assert!(text.is_some(), "declined {:?}", lines);
        prop_assert_eq!(repeats::decode(&text.unwrap()).unwrap(), lines);
    }

    /// The same for a block whose lines are lookalikes.
    #[test]
    fn long_runs_of_lookalike_blocks_are_encoded(block in proptest::collection::vec(line(), 1..repeats::MAX_PERIOD), reps in 40usize..80) {
        let mut block = block;
        block.push("a line that makes the block pay".to_owned());
        let lines = repeat(&block, reps);
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let text = repeats::encode(&refs);
        prop_assert!(text.is_some(), "declined {:?}", block);
        prop_assert_eq!(repeats::decode(&text.unwrap()).unwrap(), lines);
    }
}

/// The case that showed 300 copies too few (found by the property above): empty lines
/// between two copies of four escaped lookalikes.
#[test]
fn a_long_run_of_empty_lines_between_lookalikes_is_encoded() {
    let prefix = [
        "[tj] the 2 lines above × 4",
        "x  [× 3]",
        "[tj] the 3 lines above × 2  [× 1]",
        "[tj] the 2 lines above × 4",
    ];
    let mut lines: Vec<&str> = prefix.to_vec();
    lines.extend(std::iter::repeat_n("", 1000));
    lines.extend(prefix);
    let text = repeats::encode(&lines).expect("a run of 1000 pays");
    assert_eq!(repeats::decode(&text).unwrap(), lines);
}
