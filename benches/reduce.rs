//! Reduction throughput (DESIGN.md "Performance budget": 100 KB of test output reduced
//! in-process well under 1 ms).
//!
//! `cargo bench --bench reduce`. Groups: `synthetic` (a 100 KB cargo-test run with three
//! failures, and 100 KB of plain log), `stages` (render of 100 KB of plain text and of 1 MB
//! of PTY output, with and without a width; classify) and `fixtures` (per family, every
//! case under tests/fixtures reduced once per iteration, `Throughput::Bytes`).

#![allow(missing_docs)] // criterion's macros generate undocumented items

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tj::reduce::{self, ArtifactRef, Input, Options};
use tj::rules::RuleSet;

fn cargo_test_100k() -> String {
    let mut raw = String::from(
        "   Compiling bench v0.1.0 (/tmp/bench)\n    Finished `test` profile\n     Running unittests src/lib.rs\n\nrunning 2400 tests\n",
    );
    let mut i = 0;
    while raw.len() < 100_000 {
        let _ = writeln!(raw, "test module_{}::tests::case_{i:04} ... ok", i % 17);
        i += 1;
    }
    raw.push_str("test parser::tests::nested ... FAILED\n\nfailures:\n\n---- parser::tests::nested stdout ----\n\nthread 'parser::tests::nested' panicked at src/parser.rs:325:49:\nassertion `left == right` failed\n  left: 42\n right: 41\n\nfailures:\n    parser::tests::nested\n\ntest result: FAILED. 2399 passed; 1 failed; 0 ignored\n\nerror: test failed, to rerun pass `--lib`\n");
    raw
}

fn plain_log_100k() -> String {
    let mut raw = String::new();
    let mut i = 0;
    while raw.len() < 100_000 {
        let _ = writeln!(
            raw,
            "2026-11-30T02:{:02}:{:02}Z INFO request id={i} path=/api/v1/items status=200",
            i / 60 % 60,
            i % 60
        );
        i += 1;
    }
    raw
}

/// About 1 MB of what cargo writes to a PTY: coloured `Compiling` lines between `\r\x1b[K`
/// redraws of its progress bar, then coloured test lines, all with `\r\n` endings.
fn pty_1m() -> String {
    let mut raw = String::new();
    let mut i = 0;
    while raw.len() < 1_000_000 {
        let _ = write!(
            raw,
            "\x1b[1m\x1b[92m   Compiling\x1b[0m crate_{i} v0.1.{i}\r\n\x1b[1m\x1b[96m    Building\x1b[0m [{:=>w$}>{:w2$}] {i}/99999: crate_{i}, crate_{}(build.rs)\r\x1b[K",
            "",
            "",
            i + 1,
            w = i % 40,
            w2 = 40 - i % 40,
        );
        let _ = write!(raw, "test module_{}::tests::case_{i:05} ... \x1b[32mok\x1b[0m\r\n", i % 17);
        i += 1;
    }
    raw
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

fn synthetic(c: &mut Criterion) {
    let rules = RuleSet::builtin();
    let artifact =
        ArtifactRef { id: "0123456789ab".into(), path: "/tmp/tj/spill/0123456789ab.log".into() };
    let opts = Options { artifact: Some(&artifact), ..Options::default() };
    let mut group = c.benchmark_group("synthetic");
    let cargo = cargo_test_100k();
    let cargo_argv = argv(&["cargo", "test"]);
    group.throughput(Throughput::Bytes(cargo.len() as u64));
    group.bench_function("cargo_test_100k", |b| {
        b.iter(|| {
            let input = Input {
                raw: cargo.as_bytes(),
                argv: &cargo_argv,
                exit_code: Some(101),
                ..Input::default()
            };
            black_box(reduce::reduce(&input, &rules, &opts))
        });
    });
    let log = plain_log_100k();
    let log_argv = argv(&["./server"]);
    group.throughput(Throughput::Bytes(log.len() as u64));
    group.bench_function("unmatched_log_100k", |b| {
        b.iter(|| {
            let input = Input {
                raw: log.as_bytes(),
                argv: &log_argv,
                exit_code: Some(0),
                ..Input::default()
            };
            black_box(reduce::reduce(&input, &rules, &opts))
        });
    });
    group.finish();

    let mut group = c.benchmark_group("stages");
    group.throughput(Throughput::Bytes(cargo.len() as u64));
    group.bench_function("render_100k_plain", |b| {
        b.iter(|| black_box(reduce::terminal::render(cargo.as_bytes())));
    });
    // The same text as a PTY writes it, uncoloured: every line ends in `\r\n`.
    let crlf = cargo.replace('\n', "\r\n");
    group.throughput(Throughput::Bytes(crlf.len() as u64));
    group.bench_function("render_width_100k_crlf", |b| {
        b.iter(|| black_box(reduce::terminal::render_width(crlf.as_bytes(), Some(500))));
    });
    let pty = pty_1m();
    group.throughput(Throughput::Bytes(pty.len() as u64));
    group.bench_function("render_1m_pty", |b| {
        b.iter(|| black_box(reduce::terminal::render(pty.as_bytes())));
    });
    group.bench_function("render_width_1m_pty", |b| {
        b.iter(|| black_box(reduce::terminal::render_width(pty.as_bytes(), Some(100))));
    });
    group.throughput(Throughput::Bytes(cargo.len() as u64));
    let rendered = reduce::terminal::render(cargo.as_bytes());
    let lines = reduce::split_lines(&rendered);
    group.bench_function("classify_100k", |b| {
        b.iter(|| black_box(reduce::evidence::classify(&lines)));
    });
    group.bench_function("load_builtin_rules", |b| b.iter(|| black_box(RuleSet::builtin())));
    group.finish();
}

fn fixtures(c: &mut Criterion) {
    let rules = RuleSet::builtin();
    let artifact =
        ArtifactRef { id: "0123456789ab".into(), path: "/tmp/tj/spill/0123456789ab.log".into() };
    let opts = Options { artifact: Some(&artifact), ..Options::default() };
    let mut paths = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"), &mut paths);
    paths.sort();
    // One benchmark per family: every fixture of the family reduced once per iteration.
    let mut families: std::collections::BTreeMap<String, Vec<tj::verify::Fixture>> =
        std::collections::BTreeMap::new();
    for path in paths {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let Ok(case) = serde_json::from_str::<tj::verify::Fixture>(&text) else { continue };
        let family = path
            .parent()
            .and_then(Path::file_name)
            .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
        families.entry(family).or_default().push(case);
    }
    let mut group = c.benchmark_group("fixtures");
    for (family, cases) in &families {
        let bytes: usize = cases.iter().map(|c| c.text.len()).sum();
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_function(family.as_str(), |b| {
            b.iter(|| {
                for case in cases {
                    black_box(reduce::reduce(&case.input(), &rules, &opts));
                }
            });
        });
    }
    group.finish();
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

criterion_group!(benches, synthetic, fixtures);
criterion_main!(benches);
