#!/usr/bin/env python3
"""`tj audit` and `tj compact --dry-run` on a 5 MB session log, whole processes (issue 15).

The log is generated here, the same every time, as tests/it/session.rs generates its own:
Claude Code turns of a prompt, a whole read of one of twenty files, `cargo test` in one of
three directories (a failure every seventh turn), a search, and an edit every third turn.
Each command runs RUNS times; the script prints the median and the fastest wall time in
milliseconds against the 300 ms target, and the tokens before and after as the dry run
reports them.

Usage: scripts/bench-session.py [TJ] [RUNS]
  TJ    the tj binary (default: this tree's target/release/tj, built first)
  RUNS  runs per command (default 11)
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZE = 5 << 20
TARGET_MS = 300


def large_log(size: int) -> bytes:
    """At least `size` bytes of Claude Code session log."""
    out, n, parent, turn = [], 0, None, 0
    total = 0

    def push(kind, message):
        nonlocal n, parent, total
        n += 1
        uuid = f"00000000-0000-4000-8000-{n:012d}"
        line = json.dumps({"parentUuid": parent, "type": kind, "message": message, "uuid": uuid,
                           "sessionId": "9e1b2c3d-0000-4000-8000-000000000005", "cwd": "/w/big"},
                          separators=(",", ":")) + "\n"
        parent = uuid
        out.append(line)
        total += len(line.encode())

    def body(tag, lines):
        return "".join(f"{tag} {i:04d}: the quick brown fox jumps over the lazy dog\n" for i in range(lines))

    while total < size:
        turn += 1
        push("user", {"role": "user", "content": f"Step {turn}: continue"})
        file = f"/w/big/src/file_{turn % 20:02d}.rs"
        cd = ["", "cd crates/a && ", "cd crates/b && "][turn % 3]
        calls = [
            ("Read", {"file_path": file}, body(file, 60), False),
            ("Bash", {"command": f"{cd}cargo test"}, body("test ok", 50), turn % 7 == 0),
            ("Grep", {"pattern": f"needle{turn}"}, body(f"src/hay_{turn}.rs:1", 20), False),
        ]
        if turn % 3 == 0:
            calls.append(("Edit", {"file_path": file, "old_string": "a", "new_string": "b"}, "updated", False))
        for k, (tool, inp, output, failed) in enumerate(calls):
            tid = f"toolu_{turn:05d}_{k}"
            push("assistant", {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": tool, "input": inp}]})
            push("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": output,
                                                       "is_error": failed}]})
        push("assistant", {"role": "assistant", "content": [{"type": "text", "text": f"Done with step {turn}."}]})
    return "".join(out).encode()


def timed(argv, env):
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    return (time.perf_counter() - start) * 1000, done.stdout.decode()


def main():
    tj = sys.argv[1] if len(sys.argv) > 1 else None
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 11
    if tj is None:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
        target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        tj = str(target / "release" / "tj")
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "large.jsonl"
        log.write_bytes(large_log(SIZE))
        data = Path(tmp) / "data"
        data.mkdir(mode=0o700)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "TJ_DATA_DIR": str(data)}
        print(f"log: {log.stat().st_size} bytes, {sum(1 for _ in log.open('rb'))} lines")
        for name, argv in [("audit", [tj, "audit", str(log)]), ("compact --dry-run", [tj, "compact", str(log), "--dry-run"])]:
            times, text = [], ""
            for _ in range(runs):
                ms, text = timed(argv, env)
                times.append(ms)
            median = statistics.median(times)
            verdict = "ok" if median < TARGET_MS else "OVER"
            print(f"{name:<18} median {median:7.1f} ms  min {min(times):7.1f} ms  (target < {TARGET_MS} ms: {verdict})")
            for line in text.splitlines():
                if line.startswith("tokens:") or line.startswith("context:") or "results dropped" in line:
                    print(f"  {line}")


if __name__ == "__main__":
    main()
