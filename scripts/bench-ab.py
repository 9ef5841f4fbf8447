#!/usr/bin/env python3
"""Interleaved whole-process timings of two commands: A B, B A, A B, ... so both meet the
same load (criterion's wall clock on a shared machine moved untouched code by 30 %).
Reports the median and 10th percentile of wall time and of CPU time (user + system, from
wait4). Every run must exit 0.

Usage: scripts/bench-ab.py RUNS STDIN_FILE CWD :: CMD_A... :: CMD_B...
(`::` separates the commands, which may hold `--`; paths must be absolute: each run starts
in CWD.)

Example, the start-up of `tj reduce` before and after a change:
  scripts/bench-ab.py 200 /tmp/in.log /tmp/repo :: /tmp/tj-old reduce --exit-code 0 -- cargo test \\
      :: /tmp/tj-new reduce --exit-code 0 -- cargo test
"""
import os
import statistics
import sys
import time


def run(cmd, stdin, cwd):
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            os.dup2(os.open(stdin, os.O_RDONLY), 0)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.execv(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{cmd} failed: status {status}")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def main():
    runs, stdin, cwd = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    if sys.argv[4] != "::":
        sys.exit(__doc__)
    rest = sys.argv[5:]
    split = rest.index("::")
    cmds = [rest[:split], rest[split + 1 :]]
    for _ in range(10):  # warm-up: page cache, the store's directories
        for cmd in cmds:
            run(cmd, stdin, cwd)
    results = [([], []), ([], [])]
    for k in range(runs):
        for j in (0, 1) if k % 2 == 0 else (1, 0):
            wall, cpu = run(cmds[j], stdin, cwd)
            results[j][0].append(wall)
            results[j][1].append(cpu)
    for name, (wall, cpu) in zip("AB", results):
        wall.sort()
        cpu.sort()
        p10 = len(wall) // 10
        print(
            f"{name}: wall median {1e3 * statistics.median(wall):.2f} ms p10 {1e3 * wall[p10]:.2f}"
            f" | cpu median {1e3 * statistics.median(cpu):.2f} ms p10 {1e3 * cpu[p10]:.2f}"
            f" (n={len(wall)})"
        )


main()
