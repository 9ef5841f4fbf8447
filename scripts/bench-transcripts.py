#!/usr/bin/env python3
"""How long `tj stats --transcripts` takes on 50 MB of session logs (issue 14: under 1 s).

Generates about 50 MB of transcripts, deterministically (a fixed seed), half Claude Code's
(`projects/<project>/<session>.jsonl`: streamed assistant lines repeating their usage, Bash
calls, tool results of a few hundred bytes to 40 KB, with `toolUseResult` repeating them, as
Claude Code writes) and half Codex's (`sessions/YYYY/MM/DD/rollout-*.jsonl`: token counts,
shell calls and their outputs, reasoning and messages). Then times the whole process of
`tj stats --transcripts --transcripts-dir DIR` (and `--format json`, and `tj discover`),
interleaved with `cat` of every file to /dev/null as the floor of reading them, and prints
the medians. The data directory is empty: no ledger to join.

Usage: scripts/bench-transcripts.py [TJ] [RUNS]
  TJ    the tj binary (default: this tree's release build, built first)
  RUNS  runs per command (default 11)
"""

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_MB = 50
SEED = 14

WORDS = ("error warning note test ok failed src lib main parser config module build cargo "
         "expected found value type mismatch line column file path result unwrap panic").split()
COMMANDS = ["cargo test", "cargo build 2>&1 | tail -40", "git status", "git diff", "npm test",
            "rg -n TODO src", "ls -la", "pytest -q", "make", "tj run -- cargo clippy",
            "cd /home/dev/app && go test ./...", "cat src/main.rs"]


def text(rng: random.Random, size: int) -> str:
    """About `size` characters of output-like lines."""
    lines, total = [], 0
    while total < size:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14)))
        if rng.random() < 0.1:
            line = f"src/{rng.choice(WORDS)}.rs:{rng.randint(1, 900)}:{rng.randint(1, 80)}: {line}"
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def claude_session(rng: random.Random, path: Path, sid: str, size: int) -> int:
    """Writes one Claude Code transcript of about `size` bytes; returns its size."""
    base = {"parentUuid": None, "isSidechain": False, "userType": "external",
            "cwd": "/home/dev/app", "sessionId": sid, "version": "2.0.14", "gitBranch": "main"}
    out, total, n, t = [], 0, 0, 1_796_000_000

    def line(kind, message, **extra):
        nonlocal n, t
        n += 1
        t += rng.randint(1, 30)
        d = dict(base, message=message, **extra, type=kind, uuid=f"{sid[:8]}-{n:08d}",
                 timestamp=time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t)))
        return dumps(d)

    read = 8000
    while total < size:
        mid = f"msg_{sid[:8]}_{n}"
        read += rng.randint(200, 3000)
        usage = {"input_tokens": rng.randint(1, 20), "cache_creation_input_tokens": rng.randint(100, 4000),
                 "cache_read_input_tokens": read, "output_tokens": 1, "service_tier": "standard"}
        tool = f"toolu_{sid[:8]}_{n}"
        blocks = [{"type": "thinking", "thinking": text(rng, 300), "signature": "c2ln" * 40},
                  {"type": "text", "text": text(rng, 120)},
                  {"type": "tool_use", "id": tool, "name": "Bash",
                   "input": {"command": rng.choice(COMMANDS), "description": "Run it"}}]
        for i, block in enumerate(blocks):
            usage = dict(usage, output_tokens=1 if i < len(blocks) - 1 else rng.randint(20, 400))
            msg = {"id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                   "content": [block], "stop_reason": None, "stop_sequence": None, "usage": usage}
            out.append(line("assistant", msg, requestId=f"req_{mid}"))
        result = text(rng, int(rng.choice([300, 800, 2000, 6000, 20000, 40000]) * rng.random()) + 50)
        msg = {"role": "user", "content": [{"tool_use_id": tool, "type": "tool_result",
                                            "content": result, "is_error": False}]}
        out.append(line("user", msg, toolUseResult={"stdout": result, "stderr": "",
                                                    "interrupted": False, "isImage": False}))
        total = sum(len(x) + 1 for x in out[-4:]) + total
    path.write_text("\n".join(out) + "\n")
    return path.stat().st_size


def codex_session(rng: random.Random, path: Path, sid: str, size: int) -> int:
    """Writes one Codex rollout of about `size` bytes; returns its size."""
    out, total, t = [], 0, 1_796_000_000

    def line(kind, payload):
        nonlocal t
        t += rng.randint(1, 30)
        return dumps({"timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t)),
                      "type": kind, "payload": payload})

    out.append(line("session_meta", {"id": sid, "timestamp": "2026-11-29T09:00:00.000Z",
                                     "cwd": "/home/dev/web", "originator": "codex_cli_rs",
                                     "cli_version": "0.63.0", "instructions": None, "source": "cli",
                                     "model_provider": "openai"}))
    totals = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0,
              "reasoning_output_tokens": 0, "total_tokens": 0}
    n = 0
    while total < size:
        n += 1
        call = f"call_{sid[:8]}_{n}"
        args = {"command": ["bash", "-lc", rng.choice(COMMANDS)], "workdir": "/home/dev/web"}
        new = [line("event_msg", {"type": "agent_reasoning", "text": text(rng, 200)}),
               line("response_item", {"type": "function_call", "name": "shell",
                                      "arguments": dumps(args), "call_id": call}),
               line("response_item", {"type": "function_call_output", "call_id": call,
                                      "output": text(rng, int(rng.choice([300, 2000, 8000, 30000]) * rng.random()) + 50)})]
        last = {"input_tokens": rng.randint(5000, 60000), "output_tokens": rng.randint(50, 800),
                "reasoning_output_tokens": rng.randint(0, 300)}
        last["cached_input_tokens"] = int(last["input_tokens"] * rng.random())
        last["total_tokens"] = last["input_tokens"] + last["output_tokens"]
        totals = {k: totals[k] + last[k] for k in totals}
        new.append(line("event_msg", {"type": "token_count", "info": {
            "total_token_usage": totals, "last_token_usage": last, "model_context_window": 272000},
            "rate_limits": None}))
        out.extend(new)
        total += sum(len(x) + 1 for x in new)
    path.write_text("\n".join(out) + "\n")
    return path.stat().st_size


def generate(root: Path) -> tuple[int, int]:
    """About TARGET_MB megabytes under `root`; returns (files, bytes)."""
    rng = random.Random(SEED)
    half = TARGET_MB * 1_000_000 // 2
    files, written = 0, 0
    while written < half:
        project = root / "claude" / "projects" / f"-home-dev-app{files % 5}"
        project.mkdir(parents=True, exist_ok=True)
        sid = f"{rng.getrandbits(32):08x}-0000-4000-8000-{rng.getrandbits(48):012x}"
        written += claude_session(rng, project / f"{sid}.jsonl", sid, rng.randint(200_000, 1_500_000))
        files += 1
    while written < 2 * half:
        day = root / "codex" / "sessions" / "2026" / "11" / f"{1 + files % 28:02d}"
        day.mkdir(parents=True, exist_ok=True)
        sid = f"0199{rng.getrandbits(16):04x}-0000-7000-8000-{rng.getrandbits(48):012x}"
        written += codex_session(rng, day / f"rollout-2026-11-01T09-00-00-{sid}.jsonl", sid,
                                 rng.randint(200_000, 1_500_000))
        files += 1
    return files, written


def timed(argv: list[str], env: dict[str, str]) -> float:
    """Wall-clock seconds of one run of `argv`, its output discarded."""
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - start


def main() -> int:
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 11
    if len(sys.argv) > 1:
        tj = sys.argv[1]
    else:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
        target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        tj = str(target / "release" / "tj")
    with tempfile.TemporaryDirectory(prefix="tj-bench-transcripts-") as tmp:
        tmp = Path(tmp)
        files, size = generate(tmp / "logs")
        (tmp / "data").mkdir(mode=0o700)
        env = {"HOME": str(tmp), "PATH": os.environ.get("PATH", ""), "TJ_DATA_DIR": str(tmp / "data"),
               "TJ_CONFIG_DIR": str(tmp / "config")}
        every = sorted(str(p) for p in (tmp / "logs").rglob("*.jsonl"))
        logs = str(tmp / "logs")
        rows = [
            ("cat every file (the floor)", ["cat", *every]),
            ("tj stats --transcripts", [tj, "stats", "--transcripts", "--transcripts-dir", logs]),
            ("tj stats --transcripts --format json",
             [tj, "stats", "--transcripts", "--format", "json", "--transcripts-dir", logs]),
            ("tj discover", [tj, "discover", "--transcripts-dir", logs]),
        ]
        print(f"{size / 1e6:.1f} MB in {files} files; {runs} interleaved runs each; medians in ms")
        for _, argv in rows:
            timed(argv, env)  # warm the page cache
        times: list[list[float]] = [[] for _ in rows]
        for _ in range(runs):
            for i, (_, argv) in enumerate(rows):
                times[i].append(timed(argv, env))
        for (name, _), ts in zip(rows, times):
            print(f"{name:40} {statistics.median(ts) * 1e3:8.1f}   (min {min(ts) * 1e3:.1f}, max {max(ts) * 1e3:.1f})")
        verdict = statistics.median(times[1]) < 1.0
        print(f"target: tj stats --transcripts under 1000 ms: {'met' if verdict else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
