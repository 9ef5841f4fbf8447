//! Throughput of the table and JSON-elision shapes (issue 5's budget: 1 MB of input in
//! under 10 ms, the table reducer linear in its input).
//!
//! `cargo bench --bench shape_table`. Groups: `table` (`ps aux`-like rows, 1 MB and 10 MB:
//! detect, flagged, sample) and `json_elide` (1 MB of GitHub-API-like issues, the parse
//! limit raised to fit). Each runs twice: in wall time (criterion's default) and, as
//! `cpu-…`, in the thread's CPU time, which a loaded machine (shared CI, parallel builds)
//! does not inflate.

#![allow(missing_docs)] // criterion's macros generate undocumented items

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::measurement::Measurement;
use criterion::{Criterion, Throughput};
use tj::reduce::shape::{json_elide, table};

mod common;

fn ps_aux(bytes: usize) -> String {
    let mut t = String::from(
        "USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n",
    );
    let mut i = 0usize;
    while t.len() < bytes {
        let _ = writeln!(
            t,
            "{user:<8} {pid:>7} {cpu:>4.1} {mem:>4.1} {vsz:>6} {rss:>5} {tty:<8} {stat:<4} 10:{m:02}   {tm}:{s:02} /usr/bin/worker --id {i} --queue q{q}",
            user = ["root", "www-data", "postgres", "alice"][i % 4],
            pid = 1000 + i,
            cpu = (i % 13) as f64 / 3.0,
            mem = (i % 7) as f64 / 2.0,
            vsz = 10_000 + (i * 37) % 90_000,
            rss = 1_000 + (i * 13) % 9_000,
            tty = if i.is_multiple_of(5) { "pts/0" } else { "?" },
            stat = if i.is_multiple_of(997) { "Z" } else { ["Ss", "S", "R+", "Sl"][i % 4] },
            m = i % 60,
            tm = i % 10,
            s = i % 60,
            q = i % 3,
        );
        i += 1;
    }
    t
}

fn issues(bytes: usize) -> String {
    let mut out = String::from("[");
    let mut i = 0usize;
    while out.len() < bytes {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            r#"{{"id":{id},"number":{i},"title":"Issue {i}","state":"{state}","user":{{"login":"user{u}","id":{u},"type":"User"}},"labels":[{labels}],"body":"Body of issue {i}\nwith a second line"{extra}}}"#,
            id = 1_000_000 + i,
            state = if i.is_multiple_of(3) { "closed" } else { "open" },
            u = i % 17,
            labels = (0..i % 4)
                .map(|l| format!(r#"{{"name":"label{l}","color":"ededed"}}"#))
                .collect::<Vec<_>>()
                .join(","),
            extra = if i.is_multiple_of(501) { r#","error":"rate limited""# } else { "" },
        );
        i += 1;
    }
    out.push(']');
    out
}

/// detect, then sample (which runs flagged); the lines are split once, outside, as the
/// pipeline hands them over.
fn reduce_table(lines: &[&str], evidence: &[bool]) -> usize {
    let Some(layout) = table::detect(lines) else { return 0 };
    let keep = table::sample(lines, &layout, evidence, 10, 5);
    keep.iter().filter(|&&k| k).count()
}

fn bench_table<M: Measurement>(c: &mut Criterion<M>, prefix: &str) {
    let mut group = c.benchmark_group(format!("{prefix}table"));
    for (name, size) in [("ps_aux_1mb", 1 << 20), ("ps_aux_10mb", 10 << 20)] {
        let text = ps_aux(size);
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        let evidence = vec![false; lines.len()];
        assert!(reduce_table(&lines, &evidence) > 0, "the bench input is a table");
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(name, |b| b.iter(|| reduce_table(black_box(&lines), &evidence)));
    }
    group.finish();
}

fn bench_json<M: Measurement>(c: &mut Criterion<M>, prefix: &str) {
    let mut group = c.benchmark_group(format!("{prefix}json_elide"));
    let text = issues(1 << 20);
    let limits = json_elide::Limits { max_parse_bytes: 2 << 20, ..json_elide::Limits::default() };
    let keep = |s: &str| s.contains("error");
    assert!(json_elide::elide(&text, &limits, &keep).is_some(), "the bench input elides");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("issues_1mb", |b| {
        b.iter(|| json_elide::elide(black_box(&text), &limits, &keep).map(|e| e.text.len()));
    });
    group.finish();
}

common::wall_and_cpu_main!(bench_table, bench_json);
