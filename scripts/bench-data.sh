#!/usr/bin/env bash
# Whole-process timings of `tj reduce` on data outputs (issue 12: listings, searches,
# tables, repeated lines, pretty JSON, logs) of 100 KB, 1 MiB and 6 MiB, for two builds.
#
# Usage: scripts/bench-data.sh BEFORE_TJ [AFTER_TJ] [RUNS]
#   BEFORE_TJ  a tj binary to compare against (e.g. a release build of an older commit)
#   AFTER_TJ   default: this tree's release build
# Prints, per shape and size: median wall ms before and after, and the rendition's bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:?usage: scripts/bench-data.sh BEFORE_TJ [AFTER_TJ] [RUNS]}
after=${2:-}
runs=${3:-5}
if [ -z "$after" ]; then
    cargo build --release --quiet
    after=$PWD/target/release/tj
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TJ_DATA_DIR=$tmp/data TJ_CONFIG_DIR=$tmp/config

argv_of() {
    case $1 in
    find) echo "find . -name *.rs" ;;
    grep) echo "grep -rn value ." ;;
    table) echo "sqlite3 app.db select" ;;
    repeats) echo "python3 app.py" ;;
    json) echo "npm ls --json" ;;
    log) echo "docker logs web" ;;
    esac
}

# The median of RUNS wall-clock runs, in ms; the rendition's size in bytes.
time_one() {
    local bin=$1 input=$2 argv=$3 times=() start end
    for _ in $(seq "$runs"); do
        start=$(date +%s%N)
        # shellcheck disable=SC2086 # the argv is words on purpose
        "$bin" reduce --exit-code 0 -- $argv <"$input" >"$tmp/out"
        end=$(date +%s%N)
        times+=($(((end - start) / 1000000)))
    done
    printf '%s %s' "$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p")" "$(wc -c <"$tmp/out")"
}

printf '%-8s %6s %10s %10s %12s %12s\n' shape MiB "before ms" "after ms" "before B" "after B"
for shape in find grep table repeats json log; do
    for mib in 0.1 1 6; do
        input=$tmp/$shape-$mib.txt
        python3 scripts/gen-data.py "$shape" "$mib" >"$input"
        read -r b_ms b_bytes <<<"$(time_one "$before" "$input" "$(argv_of "$shape")")"
        read -r a_ms a_bytes <<<"$(time_one "$after" "$input" "$(argv_of "$shape")")"
        printf '%-8s %6s %10s %10s %12s %12s\n' "$shape" "$mib" "$b_ms" "$a_ms" "$b_bytes" "$a_bytes"
    done
done
