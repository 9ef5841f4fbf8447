#!/usr/bin/env python3
"""How long `tj stats` takes on a 100,000-line ledger, whole process (issue 14).

Writes a deterministic ledger (a fixed seed: the same bytes on every run) of LINES lines,
shaped like a real one (about 300 commands over 60 days and 40 sessions, a few with JSON
escapes), into a temporary TJ_DATA_DIR, then times `tj stats` in text and in JSON, RUNS
times each, interleaved, and prints the medians of wall time and of CPU time (user + system,
from the children's rusage: what a busy machine cannot inflate much). The target is under
200 ms of wall time.

Usage: scripts/bench-stats.py [TJ] [RUNS] [LINES]
  TJ     the tj binary (default: this tree's release build, built first)
  RUNS   runs per format (default 21)
  LINES  ledger lines (default 100000)
"""

import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_MS = 200

FAMILIES = {
    "tests": ["cargo test", "pytest", "npm test", "go test ./...", "jest"],
    "build": ["cargo build", "make", "tsc --noEmit", "go build ./..."],
    "lint": ["cargo clippy --all-targets", "ruff check .", "eslint src"],
    "git": ["git status", "git diff", "git log --oneline -20", "git show HEAD"],
    "search": ["rg -n TODO", "grep -rn error src", "fd .rs"],
    "filesystem": ["ls -la", "find . -name '*.py'", "tree -L 2"],
}


def ledger(path: Path, lines: int) -> None:
    """Writes `lines` ledger lines as `Store::append_ledger` does (camelCase, one per line)."""
    rng = random.Random(14)
    start = 1_760_000_000
    commands = []
    for family, bases in FAMILIES.items():
        for base in bases:
            rule = f"{family}/{base.split()[0]}"
            for variant in range(10):
                suffix = "" if variant == 0 else f" --filter case_{variant}"
                commands.append((base + suffix, rule, family))
    with open(path, "w", encoding="utf-8") as out:
        for i in range(lines):
            command, rule, family = rng.choice(commands)
            if i % 97 == 0:
                command += ' -- "quoted, with a comma"'  # an escape: the owned-string path
            raw = rng.randint(50, 60_000)
            reduced = rng.random() < 0.8
            rendition = rng.randint(40, max(41, raw // 4)) if reduced else raw
            entry = {
                "time": start + i * 50 + rng.randint(0, 40),
                "id": f"{rng.getrandbits(48):012x}",
                "command": command,
                "rule": rule,
                "family": family,
                "session": f"session-{rng.randint(0, 39)}",
                "cwd": f"/home/user/src/project-{rng.randint(0, 9)}",
                "exitCode": rng.choice([0, 0, 0, 1, 101]),
                "chars": [raw * 4, rendition * 4],
                "tokens": [raw, rendition],
                "reduced": reduced,
                "lossless": reduced and rng.random() < 0.3,
                "deduped": rng.random() < 0.02,
            }
            out.write(json.dumps(entry, separators=(",", ":")) + "\n")


def main() -> None:
    tj = sys.argv[1] if len(sys.argv) > 1 else None
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 21
    lines = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    if tj is None:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
        target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        tj = str(target / "release" / "tj")
    with tempfile.TemporaryDirectory(prefix="tj-bench-stats-") as tmp:
        data = Path(tmp) / "data"
        data.mkdir(mode=0o700)
        ledger(data / "ledger.jsonl", lines)
        size = (data / "ledger.jsonl").stat().st_size
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "TJ_DATA_DIR": str(data)}
        formats = {"text": ["stats"], "json": ["stats", "--format", "json"]}
        times = {name: [] for name in formats}
        cpu = {name: [] for name in formats}
        for name, args in formats.items():  # warm the page cache and check it works
            done = subprocess.run([tj, *args], env=env, capture_output=True, check=True)
            assert done.stderr == b"", done.stderr
        for _ in range(runs):
            for name, args in formats.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                began = time.perf_counter()
                subprocess.run([tj, *args], env=env, stdout=subprocess.DEVNULL, check=True)
                times[name].append((time.perf_counter() - began) * 1000)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                cpu[name].append(used * 1000)
        print(f"tj stats over {lines:,} ledger lines ({size / 1e6:.1f} MB), {runs} runs each")
        for name, samples in times.items():
            median = statistics.median(samples)
            verdict = "ok" if median < TARGET_MS else "OVER"
            print(
                f"  {name:<5} wall median {median:7.1f} ms (min {min(samples):6.1f})"
                f"   cpu median {statistics.median(cpu[name]):7.1f} ms"
                f"   target < {TARGET_MS} ms: {verdict}"
            )


if __name__ == "__main__":
    main()
