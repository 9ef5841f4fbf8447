#!/usr/bin/env bash
# Whole-process benchmarks of `tj run` (DESIGN.md "Contracts of `tj run`"), printed as a small
# markdown report on stdout (progress on stderr):
#   (a) start-up overhead: `tj run -- true` against `true` (agent mode: stdout is not a
#       terminal), and `script -qec "tj run -- true"` against `script -qec true` (terminal
#       mode: stdout is script's PTY); medians, with hyperfine;
#   (b) throughput of 200 MB through the relay against `cat` and `script -qec cat`;
#   (c) peak RSS of `tj run -- cat <1 GiB file> >/dev/null` (agent mode), target < 32 MiB;
#   (d) the spill's SHA-256 (from `tj ls --format json`) against `sha256sum` of the input,
#       for 1 MiB × RUNS_SHA runs and one 1 GiB run.
#
# Needs hyperfine, script (util-linux), /usr/bin/time (apt-get install -y hyperfine time),
# sha256sum and base64 (coreutils), and about 2.5 GB free under $TMPDIR.
#
# Usage: scripts/bench-run.sh [RUNS] [RUNS_SHA]   (defaults 30 and 50)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-30}
runs_sha=${2:-50}
for tool in hyperfine script sha256sum base64; do
    command -v "$tool" >/dev/null || { echo "$tool is needed (apt-get install -y hyperfine util-linux coreutils)" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "/usr/bin/time is needed: apt-get install -y time" >&2; exit 2; }

cargo build --release --quiet
tj=$PWD/target/release/tj
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TJ_DATA_DIR=$tmp/data TJ_CONFIG_DIR=$tmp/config TERM=${TERM:-xterm}
# Nothing may decide the mode but stdout: no harness variable, no hook, no side channel.
unset TJ_AGENT CLAUDECODE CODEX_SANDBOX CODEX_THREAD_ID GEMINI_CLI CURSOR_AGENT AI_AGENT \
    AIDER_MODEL OPENCODE AMP_AGENT TJ_DISABLE TJ_INNER TJ_AGENT_STDOUT TJ_EMIT TJ_EMIT_FD \
    TJ_EMIT_FORMAT TJ_RAW TJ_SESSION COLUMNS LINES

log() { echo "bench-run: $*" >&2; }

# hyperfine, its own output kept for when it fails.
bench() {
    hyperfine -N --style basic "$@" >"$tmp/hyperfine.log" 2>&1 || {
        cat "$tmp/hyperfine.log" >&2
        return 1
    }
}

# $3 (median, min, …) in seconds of the command named $2 in the hyperfine JSON export $1.
stat_of() {
    awk -F': ' -v n="$2" -v key="\"$3\":" '
        /"command":/ { name = $2; gsub(/^"|",?$/, "", name) }
        name == n && index($0, key) { v = $2; sub(/,$/, "", v); print v; exit }
    ' "$1"
}

median_of() { stat_of "$1" "$2" median; }

# $2 bytes of base64 lines $1 wide (printable, new each call).
random_text() {
    # base64 dies of SIGPIPE when head has enough; that is the plan, not a failure.
    { base64 -w "$1" /dev/urandom || true; } | head -c "$2"
}

ms() { awk -v s="$1" 'BEGIN { printf "%.2f", s * 1000 }'; }

# $1 file: the SHA-256 the store recorded for its only artifact, and the SHA-256 of its
# spill file, separated by a space.
stored_sha() {
    local json id
    json=$("$tj" ls --format json)
    id=$(printf '%s\n' "$json" | sed -n 's/^ *"id": "\([0-9a-f]*\)",$/\1/p' | head -n 1)
    printf '%s %s\n' \
        "$(printf '%s\n' "$json" | sed -n 's/^ *"sha256": "\([0-9a-f]*\)",$/\1/p' | head -n 1)" \
        "$(sha256sum "$TJ_DATA_DIR/spill/$id.log" | cut -d' ' -f1)"
}

# Runs the child on the PTY with output processing off (no \n → \r\n), so the bytes the PTY
# delivers are the file's, and checks both hashes the store has against sha256sum of $1.
sha_check() {
    local file=$1 want got
    rm -rf "$TJ_DATA_DIR"
    # shellcheck disable=SC2016 # $0 is the inner shell's
    "$tj" run -- sh -c 'stty -opost </dev/tty && exec cat "$0"' "$file" >/dev/null 2>>"$tmp/warnings.txt"
    want=$(sha256sum "$file" | cut -d' ' -f1)
    got=$(stored_sha)
    [ "$got" = "$want $want" ]
}

echo "# tj run: whole-process benchmarks"
echo
echo "$(nproc) CPUs, $(uname -sr), $(hyperfine --version), tj $("$tj" --version 2>/dev/null | awk '{print $2}'), $(date -u +%Y-%m-%d)"
echo

# (a) ------------------------------------------------------------------------------------
log "(a) start-up overhead, $runs runs each"
# script(1) sleeps twice in poll(…, 10 ms) (after stdin's EOF and after the child's exit),
# and a child that ends within those 20 ms costs nothing more: the terminal-mode difference
# it shows is mostly noise. A PTY harness without timers (Python's pty.spawn, when a Python is
# there) shows what tj adds in terminal mode.
python=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true)
pty_cmds=()
if [ -n "$python" ]; then
    printf 'import pty, sys\nsys.exit(pty.spawn(sys.argv[1:]) >> 8)\n' >"$tmp/ptyrun.py"
    pty_cmds=(-n pty "$python $tmp/ptyrun.py true" -n pty-tj "$python $tmp/ptyrun.py $tj run -- true")
fi
bench --warmup 3 --runs "$runs" --export-json "$tmp/a.json" \
    -n true true \
    -n tj "$tj run -- true" \
    -n script "script -qec true /dev/null" \
    -n script-tj "script -qec '$tj run -- true' /dev/null" \
    "${pty_cmds[@]}"
t_true=$(median_of "$tmp/a.json" true)
t_tj=$(median_of "$tmp/a.json" tj)
t_script=$(median_of "$tmp/a.json" script)
t_script_tj=$(median_of "$tmp/a.json" script-tj)
echo "## (a) Start-up overhead (median of $runs runs)"
echo
echo "| command | mode | median | min |"
echo "|---|---|---:|---:|"
row_a() { echo "| \`$2\` | $3 | $(ms "$(median_of "$tmp/a.json" "$1")") ms | $(ms "$(stat_of "$tmp/a.json" "$1" min)") ms |"; }
row_a true "true" "-"
row_a tj "tj run -- true" "agent (stdout /dev/null)"
row_a script "script -qec true /dev/null" "-"
row_a script-tj "script -qec 'tj run -- true' /dev/null" "terminal (stdout a PTY)"
if [ -n "$python" ]; then
    t_pty=$(median_of "$tmp/a.json" pty)
    t_pty_tj=$(median_of "$tmp/a.json" pty-tj)
    row_a pty "python3 ptyrun.py true" "-"
    row_a pty-tj "python3 ptyrun.py tj run -- true" "terminal (stdout a PTY)"
fi
echo
diff_ms() { ms "$(awk -v a="$1" -v b="$2" 'BEGIN { print a - b }')"; }
echo "Overhead of tj (difference of medians): agent mode $(diff_ms "$t_tj" "$t_true") ms;" \
    "terminal mode under script $(diff_ms "$t_script_tj" "$t_script") ms (masked by script's 2 × 10 ms poll timeouts)${python:+; terminal mode under pty.spawn $(diff_ms "$t_pty_tj" "$t_pty") ms}."
echo

# (b) ------------------------------------------------------------------------------------
mb=200
log "(b) generating $mb MB"
random_text 99 $((mb * 1000 * 1000)) >"$tmp/200mb.txt"
log "(b) throughput, 3 runs each"
rm -rf "$TJ_DATA_DIR"
bench --warmup 1 --runs 3 --export-json "$tmp/b.json" \
    -n cat "cat $tmp/200mb.txt" \
    -n tj "$tj run -- cat $tmp/200mb.txt" \
    -n script "script -qec 'cat $tmp/200mb.txt' /dev/null" \
    -n script-tj "script -qec '$tj run -- cat $tmp/200mb.txt' /dev/null"
echo "## (b) Throughput, $mb MB of text (median of 3 runs)"
echo
echo "| command | path of the bytes | median | MB/s |"
echo "|---|---|---:|---:|"
row() {
    local t
    t=$(median_of "$tmp/b.json" "$1")
    echo "| \`$2\` | $3 | $(awk -v s="$t" 'BEGIN { printf "%.2f", s }') s | $(awk -v s="$t" -v mb="$mb" 'BEGIN { printf "%.0f", mb / s }') |"
}
row cat "cat FILE" "no PTY, straight to /dev/null"
row tj "tj run -- cat FILE" "PTY → capture + spill (agent mode)"
row script "script -qec 'cat FILE' /dev/null" "PTY → script"
row script-tj "script -qec 'tj run -- cat FILE' /dev/null" "PTY → capture + spill + live → PTY → script (terminal mode)"
echo
rm -f "$tmp/200mb.txt"

# (c) ------------------------------------------------------------------------------------
log "(c) generating 1 GiB"
random_text 99 $((1 << 30)) >"$tmp/1gib.txt"
log "(c) peak RSS"
rss() {
    # `time -v` reports the largest resident set of the command and its waited-for children.
    rm -rf "$TJ_DATA_DIR"
    /usr/bin/time -v -o "$tmp/time.txt" "$@" >/dev/null 2>>"$tmp/warnings.txt"
    awk -F': ' '/Maximum resident set size/ { print $2 }' "$tmp/time.txt"
}
rss_agent=$(rss "$tj" run -- cat "$tmp/1gib.txt")
rss_terminal=$(rss script -qec "$tj run -- cat $tmp/1gib.txt" /dev/null)
verdict() { if [ "$1" -lt $((32 * 1024)) ]; then echo "under 32 MiB"; else echo "**over 32 MiB**"; fi; }
echo "## (c) Peak RSS, 1 GiB through the relay"
echo
echo "| command | peak RSS | target 32 MiB |"
echo "|---|---:|---|"
echo "| \`tj run -- cat 1GiB >/dev/null\` (agent mode) | $(awk -v k="$rss_agent" 'BEGIN { printf "%.1f", k / 1024 }') MiB | $(verdict "$rss_agent") |"
echo "| \`script -qec 'tj run -- cat 1GiB' /dev/null\` (terminal mode; largest of script, tj, cat) | $(awk -v k="$rss_terminal" 'BEGIN { printf "%.1f", k / 1024 }') MiB | $(verdict "$rss_terminal") |"
echo
if grep -qs "could not read the captured output back" "$tmp/warnings.txt"; then
    echo "tj could not read the spilled capture back (its stderr is at the end), so it reduced nothing:"
    echo "the tj rows of (b) and (c) measure the relay and the store without the reducer."
    echo
fi

# (d) ------------------------------------------------------------------------------------
log "(d) SHA-256, 1 MiB × $runs_sha"
ok=0
for _ in $(seq "$runs_sha"); do
    random_text 76 $((1 << 20)) >"$tmp/1mib.txt"
    if sha_check "$tmp/1mib.txt"; then ok=$((ok + 1)); fi
done
log "(d) SHA-256, 1 GiB"
if sha_check "$tmp/1gib.txt"; then big="match"; else big="**MISMATCH**"; fi
echo "## (d) Spill SHA-256 against sha256sum of the input"
echo
echo "The child is \`sh -c 'stty -opost </dev/tty && exec cat FILE'\`: with output processing off the PTY"
echo "delivers the file's bytes unchanged. Both the \`sha256\` that \`tj ls --format json\` reports and the"
echo "SHA-256 of \`spill/<id>.log\` are compared."
echo
echo "| input | runs | matching |"
echo "|---|---:|---:|"
echo "| 1 MiB of base64 lines, new each run | $runs_sha | $ok |"
echo "| 1 GiB of base64 lines | 1 | $big |"
if [ -s "$tmp/warnings.txt" ]; then
    echo
    echo "## tj's stderr during (c) and (d)"
    echo
    echo "| times | line |"
    echo "|---:|---|"
    sort "$tmp/warnings.txt" | uniq -c | awk '{ n = $1; sub(/^ *[0-9]+ /, ""); print "| " n " | " $0 " |" }'
fi
[ "$ok" -eq "$runs_sha" ] && [ "$big" = match ]
