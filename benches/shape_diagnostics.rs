//! Throughput of the `diagnostics` shape (DESIGN.md "Performance budget").
//!
//! `cargo bench --bench shape_diagnostics`: grouping 1 MB and 10 MB of flake8-style
//! diagnostics by kind and sampling them (`kinds` + `sample`), linear in the input. Each
//! group runs against the wall clock and (`cpu-` prefix) the thread's CPU time.

#![allow(missing_docs)] // criterion's macros generate undocumented items

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::measurement::Measurement;
use criterion::{Criterion, Throughput};
use tj::reduce::shape::diagnostics;

mod common;

/// About `bytes` of flake8 output: a few huge kinds and a tail of rare ones.
fn flake8(bytes: usize) -> String {
    let mut raw = String::with_capacity(bytes + 128);
    let mut i = 0usize;
    while raw.len() < bytes {
        let file = format!("src/pkg{}/module_{}.py", i % 37, i % 211);
        let _ = match i % 7 {
            0 | 1 => writeln!(
                raw,
                "{file}:{}:80: E501 line too long ({} > 79 characters)",
                i % 900 + 1,
                80 + i % 60
            ),
            2 => writeln!(
                raw,
                "{file}:{}:1: E302 expected 2 blank lines, found {}",
                i % 900 + 1,
                i % 2
            ),
            3 => writeln!(raw, "{file}:{}:12: E231 missing whitespace after ','", i % 900 + 1),
            4 => writeln!(raw, "{file}:1:1: F401 'mod_{}' imported but unused", i % 50),
            5 => writeln!(raw, "{file}:{}:5: W291 trailing whitespace", i % 900 + 1),
            _ => writeln!(
                raw,
                "{file}:{}:9: F841 local variable 'v{}' is assigned to but never used",
                i % 900 + 1,
                i % 13
            ),
        };
        i += 1;
    }
    raw
}

fn sample<M: Measurement>(c: &mut Criterion<M>, prefix: &str) {
    let mut group = c.benchmark_group(format!("{prefix}diagnostics"));
    for (name, size) in [("flake8_1mb", 1 << 20), ("flake8_10mb", 10 << 20)] {
        let text = flake8(size);
        let lines: Vec<&str> = text.lines().collect();
        let evidence = vec![true; lines.len()];
        assert!(diagnostics::sample(&diagnostics::kinds(&lines, &evidence)).is_some());
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                let kinds = diagnostics::kinds(black_box(&lines), &evidence);
                diagnostics::sample(&kinds).map(|s| s.dropped.len())
            });
        });
    }
    group.finish();
}

common::wall_and_cpu_main!(sample);
