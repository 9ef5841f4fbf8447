//! Shape reducers for JSON (issue 5): `json_table::encode` on 1 MB and 10 MB of a uniform
//! array (~5k objects × 8 fields per MB), `ndjson::encode` on 1 MB and 10 MB of JSON Lines,
//! and the pieces a run-time self-check would add (`decode`, serde_json's parse).
//!
//! `cargo bench --bench shape_json`. `Throughput::Bytes`, so criterion reports MB/s.

#![allow(missing_docs)] // criterion's macros generate undocumented items

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::measurement::Measurement;
use criterion::{Criterion, Throughput};
use tj::reduce::shape::{json_table, ndjson};

mod common;

/// One record of about 200 bytes: 8 fields, ints, floats, bools, strings that need quoting.
fn record(out: &mut String, i: usize) {
    let _ = write!(
        out,
        r#"{{"id":{i},"name":"user {i}","email":"user{i}@example.com","active":{},"score":{}.{},"created":"2026-11-{:02}T{:02}:{:02}:00Z","city":"{}","note":{}}}"#,
        !i.is_multiple_of(3),
        i % 1000,
        i % 97,
        i % 28 + 1,
        i % 24,
        i % 60,
        ["Paris", "Zürich, CH", "New York", "São Paulo"][i % 4],
        if i.is_multiple_of(5) { "null".to_owned() } else { format!("\"n{}\"", i * 31 % 1000) },
    );
}

fn json_array(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 512);
    out.push('[');
    let mut i = 0;
    while out.len() < bytes {
        if i > 0 {
            out.push_str(",\n");
        }
        record(&mut out, i);
        i += 1;
    }
    out.push(']');
    out
}

fn json_lines(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 512);
    let mut i = 0;
    while out.len() < bytes {
        if i % 500 == 250 {
            out.push_str("{\"level\":\"error\",\"msg\":\"timeout\"}\n");
        }
        record(&mut out, i);
        out.push('\n');
        i += 1;
    }
    out
}

fn json_table<M: Measurement>(c: &mut Criterion<M>, prefix: &str) {
    let mut group = c.benchmark_group(format!("{prefix}json_table"));
    for (name, mb) in [("1mb", 1), ("10mb", 10)] {
        let json = json_array(mb << 20);
        group.throughput(Throughput::Bytes(json.len() as u64));
        if mb == 10 {
            group.sample_size(10);
        }
        group.bench_function(format!("encode_{name}"), |b| {
            b.iter(|| json_table::encode(black_box(&json)).expect("tabular"));
        });
        if mb == 1 {
            let table = json_table::encode(&json).expect("tabular");
            group.bench_function("decode_1mb", |b| {
                b.iter(|| json_table::decode(black_box(&table.text)).expect("decodes"));
            });
        }
        // The reference: what building any tree of this document costs on this machine.
        group.bench_function(format!("serde_json_parse_{name}"), |b| {
            b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&json)).expect("json"));
        });
    }
    group.finish();
}

fn ndjson<M: Measurement>(c: &mut Criterion<M>, prefix: &str) {
    let mut group = c.benchmark_group(format!("{prefix}ndjson"));
    for (name, mb) in [("1mb", 1), ("10mb", 10)] {
        let lines = json_lines(mb << 20);
        group.throughput(Throughput::Bytes(lines.len() as u64));
        if mb == 10 {
            group.sample_size(10);
        }
        group.bench_function(format!("encode_{name}"), |b| {
            b.iter(|| ndjson::encode(black_box(&lines)).expect("tabular"));
        });
        if mb == 1 {
            let table = ndjson::encode(&lines).expect("tabular");
            group.bench_function("decode_1mb", |b| {
                b.iter(|| ndjson::decode(black_box(&table.text)).expect("decodes"));
            });
        }
    }
    group.finish();
}

common::wall_and_cpu_main!(json_table, ndjson);
