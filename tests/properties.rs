//! Property tests over hostile input: random bytes, ANSI soup, huge lines, invalid UTF-8.
//! The engine must never panic, must be deterministic, and must never emit more than the
//! original plus its header and notice.

#![allow(missing_docs, clippy::unwrap_used)] // test code: a panic is the failure report

use proptest::prelude::*;
use tj::reduce::{self, ArtifactRef, Input, Options, Passthrough};
use tj::rules::RuleSet;

fn artifact() -> ArtifactRef {
    ArtifactRef { id: "0123456789ab".into(), path: "/tmp/tj/spill/0123456789ab.log".into() }
}

/// Pieces that stress the renderer and the line machinery when concatenated.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..64),
        Just(b"\x1b[31m".to_vec()),
        Just(b"\x1b[2K\r".to_vec()),
        Just(b"\x1b[3A".to_vec()),
        Just(b"\x1b]8;;http://x\x07link\x1b]8;;\x07".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\x08\x08".to_vec()),
        Just(b"\xff\xfe\xc3".to_vec()),
        Just(b"test foo ... ok\n".to_vec()),
        Just(b"error[E0308]: mismatched types\n".to_vec()),
        Just(b"thread 'x' panicked at src/a.rs:1:2:\n".to_vec()),
        "[a-z ]{0,40}\n".prop_map(String::into_bytes),
        Just(vec![b'x'; 3000]),
    ]
}

fn soup() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(piece(), 0..200).prop_map(|v| v.concat())
}

const ARGVS: &[&[&str]] =
    &[&["cargo", "test"], &["pytest"], &["npx", "jest"], &["unknown-tool"], &[]];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_is_deterministic_and_never_larger(raw in soup(), which in 0..ARGVS.len(), code in prop_oneof![Just(None), Just(Some(0i64)), Just(Some(1))]) {
        let rules = RuleSet::builtin();
        let art = artifact();
        let argv: Vec<String> = ARGVS[which].iter().map(|s| (*s).to_owned()).collect();
        let opts = Options { artifact: Some(&art), ..Options::default() };
        let input = Input { raw: &raw, argv: &argv, exit_code: code, ..Input::default() };
        let a = reduce::run(&input, &rules, &opts);
        prop_assert!(a.passthrough != Some(Passthrough::Panicked));
        let b = reduce::run(&input, &rules, &opts);
        prop_assert_eq!(&a.text, &b.text);
        if a.is_reduced() {
            prop_assert!(a.reduced_chars < a.raw_chars);
            for line in reduce::evidence_of(&raw, None) {
                prop_assert!(a.text.lines().any(|l| l == line), "lost evidence {:?}", line);
            }
        }
        // Never more than the original text plus a header line: U+FFFD expansion aside,
        // the rendition of n bytes is bounded by the lossy decoding of those n bytes.
        let decoded = String::from_utf8_lossy(&raw);
        prop_assert!(a.text.len() <= decoded.len() + "[tj] exit 1\n(no output)".len());
    }
}
