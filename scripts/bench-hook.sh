#!/usr/bin/env bash
# Whole-process latency of `tj hook claude-code` on an eligible payload (issue 11: under 5 ms
# median), with settings layers holding a few rules so the whole judgement runs. Prints the
# wall and CPU medians (scripts/bench-ab.py) next to `tj --version`, the process start-up
# floor, and, with valgrind installed, both instruction counts.
#
# Usage: scripts/bench-hook.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-200}
cargo build --release --quiet
tj=$PWD/target/release/tj
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home/.claude" "$tmp/work/.claude" "$tmp/config" "$tmp/data"
export HOME=$tmp/home TJ_DATA_DIR=$tmp/data TJ_CONFIG_DIR=$tmp/config
unset CLAUDE_CONFIG_DIR CLAUDE_PROJECT_DIR CLAUDE_CODE_ENTRYPOINT TJ_HOOK_DEBUG

cat >"$HOME/.claude/settings.json" <<'JSON'
{"permissions": {"allow": ["Bash(cargo test:*)", "Bash(npm run *)", "Read(**)"],
                 "deny": ["Bash(git push --force *)", "Bash(rm -rf *)"]},
 "model": "opus"}
JSON
cat >"$tmp/work/.claude/settings.json" <<'JSON'
{"permissions": {"ask": ["Bash(cargo publish:*)"], "allow": ["Bash(make *)"]}}
JSON
printf '{"session_id":"s","transcript_path":"/dev/null","cwd":"%s","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cargo test --workspace","description":"Run the tests","timeout":120000},"tool_use_id":"t"}' \
    "$tmp/work" >"$tmp/payload.json"

echo "answer:"
"$tj" hook claude-code <"$tmp/payload.json"
grep -q '"permissionDecision":"allow"' < <("$tj" hook claude-code <"$tmp/payload.json") \
    || { echo "the sample payload was not rewritten with allow" >&2; exit 1; }

# Wall time on a shared machine moves with its load; the instruction count does not. With
# valgrind present, the hook's count is printed next to `tj --version` (the start-up floor).
if command -v valgrind >/dev/null; then
    count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | sed -n 's/.*Collected : //p'; }
    echo "instructions: hook $(count "$tj" hook claude-code <"$tmp/payload.json"), tj --version $(count "$tj" --version)"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# Whole-process wall and CPU medians, no shell in between (hyperfine's shell correction
# is coarser than the figure measured), interleaved with `tj --version` as the floor.
scripts/bench-ab.py "$runs" "$tmp/payload.json" "$tmp/work" \
    :: "$tj" hook claude-code :: "$tj" --version \
    | sed -e 's/^A:/tj hook claude-code:/' -e 's/^B:/tj --version:       /'
