#!/usr/bin/env python3
"""tj vs tokenjuice on a corpus of recorded outputs: must_keep recall and tokens.

Usage: scripts/compare-tokenjuice.py [CORPUS_DIR ...]
  CORPUS_DIR defaults to ../shared/corpus (the shared corpus) if present, else
  tests/fixtures. Fixture files may sit in sub-directories.
  TJ=path/to/tj          (default: target/release/tj, built if missing)
  TOKENJUICE=path/to/cli (default: `tokenjuice` on PATH; install with
                          `npm install tokenjuice@0.8.5` and point at node_modules/.bin)

Both tools get the same tokenjuice ToolExecutionInput on `reduce-json`. Tokens are
estimated with tj's estimator (3.8 chars per Latin token, 0.75 per CJK char) on both
outputs, so the comparison is like for like. Recall is the share of must_keep strings
found in each tool's inlineText.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def estimate(text: str) -> int:
    cjk = sum(1 for c in text if is_cjk(ord(c)))
    return math.ceil((len(text) - cjk) * 10 / 38) + math.ceil(cjk * 3 / 4)


def is_cjk(c: int) -> bool:
    return (0x2E80 <= c <= 0x2FDF or 0x3000 <= c <= 0x30FF or 0x3100 <= c <= 0x31FF
            or 0x3400 <= c <= 0x4DBF or 0x4E00 <= c <= 0x9FFF or 0xAC00 <= c <= 0xD7AF
            or 0xF900 <= c <= 0xFAFF or 0xFF00 <= c <= 0xFFEF or 0x20000 <= c <= 0x3FFFF)


def run(cmd, payload, env):
    out = subprocess.run(cmd, input=json.dumps(payload).encode(), capture_output=True, env=env, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({out.returncode}): {out.stderr.decode(errors='replace')[:400]}")
    return json.loads(out.stdout)


def main() -> int:
    dirs = [Path(a) for a in sys.argv[1:]]
    if not dirs:
        shared = ROOT.parent / "shared" / "corpus"
        dirs = [shared if shared.is_dir() else ROOT / "tests" / "fixtures"]
    tj = os.environ.get("TJ") or str(ROOT / "target" / "release" / "tj")
    if not Path(tj).exists():
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    tokenjuice = os.environ.get("TOKENJUICE") or shutil.which("tokenjuice")
    if not tokenjuice:
        print("tokenjuice not found: npm install tokenjuice@0.8.5 and set TOKENJUICE", file=sys.stderr)
        return 2
    home = tempfile.mkdtemp(prefix="tj-compare-")
    env = dict(os.environ, HOME=home, TJ_DATA_DIR=f"{home}/tj", TJ_CONFIG_DIR=f"{home}/cfg")
    cases = sorted(p for d in dirs for p in d.rglob("*.json"))
    rows = []
    skipped = []
    for path in cases:
        case = json.loads(path.read_text())
        payload = {"toolName": "exec", "command": case.get("command") or " ".join(case["argv"]),
                   "argv": case["argv"], "combinedText": case["text"], "exitCode": case.get("exitCode", 0)}
        capture = case.get("capture") or {}
        if capture.get("mode") == "pty" and capture.get("cols"):
            # tj's extension: the PTY's width, for progress bars that rely on autowrap.
            payload["cols"] = capture["cols"]
        raw_tokens = estimate(json.loads(json.dumps(case["text"])))
        res = {}
        try:
            for name, cmd in (("tj", [tj, "reduce-json"]), ("tokenjuice", [tokenjuice, "reduce-json"])):
                out = run(cmd, payload, env)
                text = out["inlineText"]
                keep = case.get("must_keep", [])
                kept = sum(1 for k in keep if k in text)
                res[name] = (estimate(text), kept, len(keep))
        except subprocess.TimeoutExpired as err:
            # Left out of both totals, and named: a tool that hangs is a finding too.
            skipped.append(f"{case['id']}: {Path(err.cmd[0]).name} took over {err.timeout:.0f} s")
            continue
        rows.append((case["id"], raw_tokens, res))
    print(f"{'case':28} {'raw tok':>8} | {'tj tok':>7} {'ratio':>6} {'recall':>7} | {'tokenjuice':>10} {'ratio':>6} {'recall':>7}")
    totals = {"raw": 0, "tj": [0, 0, 0], "tokenjuice": [0, 0, 0]}
    for cid, raw, res in rows:
        totals["raw"] += raw
        cells = []
        for name in ("tj", "tokenjuice"):
            tok, kept, n = res[name]
            totals[name][0] += tok
            totals[name][1] += kept
            totals[name][2] += n
            cells.append(f"{tok:>7} {tok / max(raw, 1):>6.2f} {kept:>3}/{n:<3}")
        print(f"{cid:28} {raw:>8} | {cells[0]} | {'':>3}{cells[1]}")
    raw = totals["raw"]
    line = f"{'TOTAL':28} {raw:>8}"
    for name in ("tj", "tokenjuice"):
        tok, kept, n = totals[name]
        line += f" | {name} {tok} tokens ({tok / max(raw, 1):.3f}), recall {kept}/{n} ({100 * kept / max(n, 1):.1f}%)"
    print(line)
    for why in skipped:
        print(f"left out: {why}")
    shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
