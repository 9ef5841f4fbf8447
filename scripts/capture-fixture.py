#!/usr/bin/env python3
"""Captures a real command's output as a fixture skeleton (rules/README.md "Fixtures").

    scripts/capture-fixture.py tests/fixtures/tests/go-test-fail.json \
        --family tests --command "go test ./..." [--pty [--cols 100]] [--cwd DIR] \
        [--env K=V ...] [--tool-cmd "what really runs"]

Runs `--tool-cmd` (default: `--command`) with `sh -c` in `--cwd`, through a pipe (stdout and
stderr merged, as an agent's tool call sees them) or through a pseudo-terminal (`--pty`,
colours and progress as a human sees them), and writes the fixture with `text` exactly as
captured, the exit code, and empty `must_keep`/`must_drop` for you to fill in by reading the
output. An existing file is never overwritten unless `--force` is given.
"""

import argparse
import json
import os
import pty
import select
import shlex
import subprocess
import sys
import time


def run_pipe(cmd, cwd, env):
    proc = subprocess.run(
        ["sh", "-c", cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
    )
    return proc.stdout, proc.returncode


def run_pty(cmd, cwd, env, cols):
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        try:
            import fcntl
            import struct
            import termios

            fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
        except OSError:
            pass
        os.execvpe("sh", ["sh", "-c", cmd], env)
    chunks = []
    while True:
        try:
            ready, _, _ = select.select([fd], [], [], 0.5)
        except InterruptedError:
            continue
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            if not data:
                break
            chunks.append(data)
        else:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                # Drain what is left.
                while True:
                    r, _, _ = select.select([fd], [], [], 0.2)
                    if not r:
                        break
                    try:
                        data = os.read(fd, 65536)
                    except OSError:
                        break
                    if not data:
                        break
                    chunks.append(data)
                os.close(fd)
                return b"".join(chunks), os.waitstatus_to_exitcode(_)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return b"".join(chunks), os.waitstatus_to_exitcode(status)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--family", required=True)
    ap.add_argument("--command", required=True, help="the command as an agent would run it")
    ap.add_argument("--tool-cmd", help="what really runs (default: --command)")
    ap.add_argument("--cwd", default=".")
    ap.add_argument("--pty", action="store_true")
    ap.add_argument("--cols", type=int, default=100)
    ap.add_argument("--env", action="append", default=[], help="K=V, recorded in capture.env")
    ap.add_argument("--notes", default="")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()

    if os.path.exists(args.out) and not args.force:
        sys.exit(f"{args.out} exists; pass --force to replace it")
    env = dict(os.environ)
    extra = dict(kv.split("=", 1) for kv in args.env)
    env.update(extra)
    if args.pty:
        env.setdefault("TERM", "xterm-256color")
    tool_cmd = args.tool_cmd or args.command
    start = time.monotonic()
    if args.pty:
        data, code = run_pty(tool_cmd, args.cwd, env, args.cols)
    else:
        data, code = run_pipe(tool_cmd, args.cwd, env)
    seconds = round(time.monotonic() - start, 1)
    text = data.decode("utf-8", errors="replace")
    case = {
        "id": os.path.splitext(os.path.basename(args.out))[0],
        "source": "real",
        "family": args.family,
        "argv": shlex.split(args.command),
        "command": args.command,
        "exitCode": code,
        "text": text,
        "must_keep": [],
        "must_drop": [],
        "notes": args.notes,
        "capture": {
            "mode": "pty" if args.pty else "pipe",
            "cols": args.cols if args.pty else None,
            "env": extra,
            "seconds": seconds,
            "tool_cmd": tool_cmd,
        },
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(case, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"{args.out}: exit {code}, {len(data)} bytes, {text.count(chr(10))} lines, {seconds}s")


if __name__ == "__main__":
    main()
