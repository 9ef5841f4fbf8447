#!/usr/bin/env bash
# Whole-process timings of `tj reduce` (DESIGN.md "Performance budget": under 5 ms median on
# 100 KB with every builtin rule available), with hyperfine (apt-get install hyperfine).
#
# Usage: scripts/bench-process.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-50}
command -v hyperfine >/dev/null || { echo "hyperfine is needed: apt-get install -y hyperfine" >&2; exit 2; }
cargo build --release --quiet
tj=$PWD/target/release/tj
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TJ_DATA_DIR=$tmp/data TJ_CONFIG_DIR=$tmp/config

# 100 KB of cargo test output with one failure.
{
    echo "   Compiling bench v0.1.0 (/tmp/bench)"
    echo "running 2400 tests"
    i=0
    while [ "$i" -lt 2550 ]; do
        printf 'test module_%d::tests::case_%04d ... ok\n' $((i % 17)) "$i"
        i=$((i + 1))
    done
    printf 'test parser::tests::nested ... FAILED\n\nfailures:\n\n---- parser::tests::nested stdout ----\n'
    printf "thread 'parser::tests::nested' panicked at src/parser.rs:325:49:\nassertion \`left == right\` failed\n  left: 42\n right: 41\n\n"
    printf 'test result: FAILED. 2299 passed; 1 failed; 0 ignored\n'
} >"$tmp/cargo.log"
echo "input: $(wc -c <"$tmp/cargo.log") bytes"

# Debian's hyperfine has no --input: the commands redirect stdin themselves, through the
# shell hyperfine spawns (whose start-up it measures and subtracts).
hyperfine --warmup 5 --runs "$runs" \
    --export-markdown "$tmp/report.md" \
    "$tj reduce --exit-code 101 -- cargo test < $tmp/cargo.log" \
    "$tj reduce --exit-code 0 -- some-unknown-tool < $tmp/cargo.log" \
    "$tj rules list"
cat "$tmp/report.md"
