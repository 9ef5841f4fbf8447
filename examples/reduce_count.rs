//! Reduces one output in-process `N` times, as `tj run` reduces a command's output, for
//! counting what a reduction costs in instructions (issue 13). Wall-clock benchmarks on a
//! shared machine vary by half run to run; instruction counts do not.
//!
//! The cost of one warm reduction is the difference between two counts, divided by the
//! difference in `N` (the first reduction also pays for what is built once per process):
//!
//! ```text
//! cargo build --release --example reduce_count
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/reduce_count OUT 1
//! valgrind --tool=cachegrind --cache-sim=no target/release/examples/reduce_count OUT 6
//! ```
//!
//! `OUT` is a file of output, reduced as `cargo test`'s with exit code 101 (the rules select
//! by the command; change `ARGV` for another).

#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a measuring tool that prints")]

use std::process::ExitCode;

/// The command the output is reduced as.
const ARGV: [&str; 2] = ["cargo", "test"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(path), Some(Ok(times))) = (args.first(), args.get(1).map(|n| n.parse::<usize>()))
    else {
        eprintln!("usage: reduce_count OUTPUT_FILE N");
        return ExitCode::from(2);
    };
    let raw = match std::fs::read(path) {
        Ok(raw) => raw,
        Err(err) => {
            eprintln!("reduce_count: cannot read {path}: {err}");
            return ExitCode::FAILURE;
        }
    };
    let argv: Vec<String> = ARGV.map(String::from).to_vec();
    let rules = tj::rules::RuleSet::builtin_for(&argv);
    let input =
        tj::reduce::Input { raw: &raw, argv: &argv, exit_code: Some(101), ..Default::default() };
    // With an artifact, as when the original is stored: a lossy rendition may be adopted.
    let artifact =
        tj::reduce::ArtifactRef { id: "0123456789ab".into(), path: "/tmp/0123456789ab.log".into() };
    let opts = tj::reduce::Options { artifact: Some(&artifact), ..Default::default() };
    let mut bytes = 0;
    for _ in 0..times {
        bytes += tj::reduce::run(&input, &rules, &opts).text.len();
    }
    // Printed so that the reductions are not optimised away.
    println!("{times} reductions, {bytes} bytes of rendition");
    ExitCode::SUCCESS
}
