//! Throughput of the `log` and `testrun` shapes (DESIGN.md "Performance budget").
//!
//! `cargo bench --bench shape_log`. Groups: `fold` (normalize + fold over 1 MB and 10 MB of
//! a server log: health checks, request/response pairs, distinct lines and a warning or
//! error every few hundred lines; linear means the 10 MB case takes ten times the 1 MB
//! one), `normalize` (the masking alone over 1 MB) and `tally` (1 MB of `cargo test`
//! output, several targets).
//!
//! Each group runs twice: against the wall clock, and (`cpu-` prefix) against the thread's
//! CPU time, which holds still on a machine busy with other builds where wall time does not.

#![allow(missing_docs)] // criterion's macros generate undocumented items

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::measurement::Measurement;
use criterion::{Criterion, Throughput};
use tj::reduce::shape::{log, testrun};

mod common;

/// A deterministic server log of about `bytes` bytes.
fn server_log(bytes: usize) -> String {
    let mut raw = String::with_capacity(bytes + 256);
    // A fixed LCG: the same log on every run, without a rand dependency.
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        seed >> 33
    };
    let mut i: u64 = 0;
    let users = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"];
    while raw.len() < bytes {
        let r = next();
        let (h, m, s, ms) = (i / 3_600_000 % 24, i / 60_000 % 60, i / 1000 % 60, i % 1000);
        let ts = format!("2026-11-30T{h:02}:{m:02}:{s:02}.{ms:03}Z");
        match r % 100 {
            0..=59 => {
                let _ = writeln!(
                    raw,
                    "{ts} INFO  GET /healthz 200 {}µs req={:012x} peer=10.0.{}.{}:{}",
                    r % 900 + 50,
                    next(),
                    r % 4,
                    r % 250,
                    30000 + r % 20000
                );
            }
            60..=84 => {
                let _ = writeln!(
                    raw,
                    "{ts} INFO  -> POST /api/v1/orders/{} id={:08x}",
                    r % 10_000,
                    next()
                );
                let _ = writeln!(
                    raw,
                    "{ts} INFO  <- 201 Created {} bytes in {}.{}ms",
                    r % 4096,
                    r % 90,
                    r % 10
                );
            }
            85..=98 => {
                let user = users[(r % users.len() as u64) as usize];
                let _ = writeln!(
                    raw,
                    "{ts} INFO  session {user} opened cart with {} items, coupon {}",
                    r % 7,
                    if r % 3 == 0 { "none" } else { "WELCOME" }
                );
            }
            _ => {
                let level = if r % 2 == 0 { "WARN " } else { "ERROR" };
                let _ = writeln!(
                    raw,
                    "{ts} {level} upstream inventory slow: {}ms (limit 500ms)",
                    r % 3000
                );
            }
        }
        i += r % 37 + 1;
    }
    raw
}

/// About `bytes` of `cargo test` output: targets of 2,000 tests, a failure in each.
fn cargo_test(bytes: usize) -> String {
    let mut raw =
        String::from("   Compiling bench v0.1.0 (/tmp/bench)\n    Finished `test` profile\n");
    let mut target = 0;
    while raw.len() < bytes {
        let _ = writeln!(
            raw,
            "     Running tests/t{target}.rs (target/debug/deps/t{target}-0123456789abcdef)\n\nrunning 2000 tests"
        );
        for i in 0..2000 {
            let status = match i {
                1234 => "FAILED",
                77 => "ignored, slow",
                _ => "ok",
            };
            let _ = writeln!(raw, "test module_{}::tests::case_{i:04} ... {status}", i % 17);
        }
        let _ = writeln!(
            raw,
            "\nfailures:\n\n---- module_10::tests::case_1234 stdout ----\n\nthread 'module_10::tests::case_1234' panicked at src/lib.rs:325:49:\nassertion `left == right` failed\n  left: 42\n right: 41\n\nfailures:\n    module_10::tests::case_1234\n\ntest result: FAILED. 1998 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.02s\n"
        );
        target += 1;
    }
    raw
}

fn fold<M: Measurement>(c: &mut Criterion<M>, prefix: &str) {
    let mut group = c.benchmark_group(format!("{prefix}fold"));
    for (name, size) in [("1MB", 1 << 20), ("10MB", 10 << 20)] {
        let text = server_log(size);
        let lines: Vec<&str> = text.lines().collect();
        let evidence = vec![false; lines.len()];
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(name, |b| b.iter(|| black_box(log::fold(&lines, &evidence))));
    }
    group.finish();

    let text = server_log(1 << 20);
    let lines: Vec<&str> = text.lines().collect();
    let mut group = c.benchmark_group(format!("{prefix}normalize"));
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("1MB", |b| {
        b.iter(|| {
            let mut masked = 0usize;
            for line in &lines {
                masked += log::normalize(line).len();
            }
            black_box(masked)
        });
    });
    group.finish();
}

fn tally<M: Measurement>(c: &mut Criterion<M>, prefix: &str) {
    let text = cargo_test(1 << 20);
    let lines: Vec<&str> = text.lines().collect();
    let mut group = c.benchmark_group(format!("{prefix}tally"));
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("cargo_test_1MB", |b| b.iter(|| black_box(testrun::tally(&lines))));
    group.finish();
}

common::wall_and_cpu_main!(fold, tally);
