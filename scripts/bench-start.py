#!/usr/bin/env python3
"""What tj costs per call, against the floor of the same work without tj (issue 13).

Each row times a tj command and its floor, interleaved (floor, tj, floor, tj, ...) so that
load on the machine hits both alike, and prints the medians, the ratio and the issue's
target for it. Whole processes, spawned directly (no shell in between).

The fifth row is a throughput: 200 MB of text through `tj run -- cat` in terminal mode
(stdout a PTY: `script -qec` runs it), against `script -qec cat` run inside `script` the
same way, so that both relays write into the same kind of outer PTY. Medians in MB/s,
higher is better; the ratio is tj's over the floor's. On Linux a second line gives the CPU
time the whole machine spent per run (every process and kernel thread, from /proc/stat):
that row is bound by CPU, so CPU per byte is what moves it, and it is less noisy than the
throughput on a shared machine. Each of its runs, tj's and the floor's, starts from an
empty store (its `spill/`) with nothing left to write back (`sync`, outside the timing): tj stores the
200 MB it relays, and otherwise one run's writeback, or the dirty-page throttling of the
runs before it, lands in the next run's time, whichever it is. So the CPU line leaves out
the writeback of the stored original, which the kernel does after the run.

Under the third and fourth rows, a line gives the same command under the least a wrapper
can do to run it as `tj run` does (`examples/spawn_floor.rs`: a PTY, a session leader, the
output relayed until its end, nothing else), built and copied as tj is and timed in the
same rounds:
what no wrapper of this design can go below on this machine, and how far tj is above it.

The third row relays through a PTY, and part of its cost is the kernel's whatever relays:
`cargo run --release --example pty_floor -- 31 SHIM` times the least a relay can do, through
a PTY and through a pipe, for the same command.

Usage: scripts/bench-start.py [TJ] [RUNS] [BIG_RUNS]
  TJ        the tj binary (default: this tree's release build, built first as install.sh
            builds it: statically linked on Linux, with musl, whose standard library is
            added with rustup when missing, unless TJ_DYNAMIC=1 or TJ_GLIBC=1; and copied
            as install.sh installs it; also when empty, to give RUNS; the first line of
            the report says which build it timed); examples/spawn_floor.rs is always
            built from this tree, that way
  RUNS      runs per command (default 21)
  BIG_RUNS  runs per command of the throughput row (default 7: each run moves 200 MB)
"""

import base64
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Megabytes of text through the terminal-mode relay in the throughput row.
BIG_MB = 200


def cargo_test_output(path: Path) -> None:
    """About 100 KB of `cargo test` output with one failure, as scripts/bench-process.sh."""
    lines = ["   Compiling bench v0.1.0 (/tmp/bench)", "running 2400 tests"]
    lines += [f"test module_{i % 17}::tests::case_{i:04d} ... ok" for i in range(2550)]
    lines += [
        "test parser::tests::nested ... FAILED",
        "",
        "failures:",
        "",
        "---- parser::tests::nested stdout ----",
        "thread 'parser::tests::nested' panicked at src/parser.rs:325:49:",
        "assertion `left == right` failed",
        "  left: 42",
        " right: 41",
        "",
        "test result: FAILED. 2299 passed; 1 failed; 0 ignored",
    ]
    path.write_text("\n".join(lines) + "\n")


def big_text(path: Path, size: int) -> None:
    """`size` bytes of printable lines 99 characters wide, as scripts/bench-run.sh makes."""
    block = base64.encodebytes(os.urandom(75 * 100_000)).replace(b"\n", b"")
    lines = b"".join(block[i:i + 99] + b"\n" for i in range(0, len(block) - 99, 99))
    with open(path, "wb") as out:
        left = size
        while left > 0:
            out.write(lines[:left])
            left -= min(left, len(lines))


def timed(argv: list[str], stdin_path: str | None, env: dict[str, str]) -> float:
    """Wall-clock seconds of one run of `argv`, its output discarded."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        start = time.perf_counter()
        subprocess.run(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        return time.perf_counter() - start
    finally:
        if stdin_path:
            stdin.close()


def busy_seconds() -> float | None:
    """CPU time the machine has spent busy since boot (every processor, every process and
    kernel thread, not idle or waiting for I/O), from /proc/stat; None where there is none."""
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    # user nice system idle iowait irq softirq steal ...: busy is all but idle and iowait.
    ticks = [int(f) for f in fields[1:]]
    busy = sum(ticks) - ticks[3] - (ticks[4] if len(ticks) > 4 else 0)
    return busy / os.sysconf("SC_CLK_TCK")


def timed_busy(argv: list[str], env: dict[str, str], clean: Path) -> tuple[float, float | None]:
    """Wall-clock seconds of one run of `argv`, and the machine's CPU time meanwhile; first
    `clean` is removed and the disks synced, so that the run starts with nothing to write."""
    shutil.rmtree(clean, ignore_errors=True)
    os.sync()
    before = busy_seconds()
    wall = timed(argv, None, env)
    after = busy_seconds()
    return wall, (after - before) if before is not None and after is not None else None


def has_target(target: str) -> bool:
    """Whether Rust's standard library for `target` is installed, after adding it with rustup
    when it is not, as install.sh does (`has_target`): on a machine without it the bench
    would otherwise time a glibc build, which starts slower than the musl one install.sh
    gives (rows 3 and 4 by about a third on the 2-vCPU VM of issue 13)."""
    def installed() -> bool:
        libdir = subprocess.run(["rustc", "--print", "target-libdir", "--target", target],
                                capture_output=True, text=True, cwd=ROOT).stdout.strip()
        return bool(libdir) and any(Path(libdir).glob("libstd-*"))
    if installed():
        return True
    if not shutil.which("rustup"):
        return False
    print(f"adding Rust's standard library for {target} (rustup target add {target}), as install.sh does",
          file=sys.stderr)
    added = subprocess.run(["rustup", "target", "add", target], cwd=ROOT).returncode == 0
    return added and installed()


def build(what: str = "tj") -> str:
    """This tree's release build of `what` (the tj binary, or an example) as install.sh makes
    tj: on Linux statically linked, with musl (its standard library added with rustup when
    missing; else glibc), the target named so that the flags reach it alone; elsewhere the
    usual one."""
    kind, out = (["--bin", "tj"], "tj") if what == "tj" else (["--example", what], f"examples/{what}")
    host = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    host = next((l.split(": ", 1)[1] for l in host.splitlines() if l.startswith("host: ")), "")
    target_dir = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if host.endswith("-linux-gnu") and not os.environ.get("TJ_DYNAMIC"):
        target = host
        musl = host.removesuffix("-gnu") + "-musl"
        if not os.environ.get("TJ_GLIBC") and has_target(musl):
            target = musl
        flags = "-C target-feature=+crt-static -C relocation-model=static"
        env = dict(os.environ, RUSTFLAGS=(os.environ.get("RUSTFLAGS", "") + " " + flags).strip())
        cmd = ["cargo", "build", "--release", "--quiet", "--locked", "--target", target, *kind]
        subprocess.run(cmd, cwd=ROOT, check=True, env=env)
        return str(target_dir / target / "release" / out)
    subprocess.run(["cargo", "build", "--release", "--quiet", "--locked", *kind], cwd=ROOT, check=True)
    return str(target_dir / "release" / out)


def install_copy(src: str, dest: Path) -> str:
    """`src` copied to `dest` as install.sh installs tj (`copy_binary`: writes of 8 MiB), so
    that the runs time tj as installed: where the filesystem caches files in large folios
    (ext4 since Linux 6.16, XFS), such a copy is cached in 2 MiB folios, which the kernel maps
    with one page-table entry per 2 MiB of tj's code; the linker's output is cached in small
    pieces, mapped 64 KiB per page fault."""
    with open(src, "rb") as source, open(dest, "wb") as out:
        while chunk := source.read(8 << 20):
            out.write(chunk)
    dest.chmod(0o755)
    return str(dest)


def linked(path: str) -> str:
    """How `build` linked the binary it returned as `path`."""
    target = os.path.relpath(path, os.environ.get("CARGO_TARGET_DIR", ROOT / "target")).split(os.sep)[0]
    if target.endswith("-linux-musl"):
        return f"{target}, statically linked"
    if target.endswith("-linux-gnu"):
        return f"{target}, statically linked (musl's standard library could not be had, or TJ_GLIBC is set)"
    return "dynamically linked"


def main() -> int:
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 21
    big_runs = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    built = None
    if len(sys.argv) > 1 and sys.argv[1]:
        tj = sys.argv[1]
    else:
        tj = built = build()
    # The least a wrapper can do to run a command as `tj run` does (a PTY, a session leader),
    # built as tj is: the floor of tj's own fixed cost, beside the command alone.
    least = build("spawn_floor")
    true = shutil.which("true") or "/bin/true"
    cat = shutil.which("cat") or "/bin/cat"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if built:
            tj = install_copy(built, tmp / "tj")
        least = install_copy(least, tmp / "spawn_floor")
        log = tmp / "cargo.log"
        cargo_test_output(log)
        # A shim that prints the same 100 KB, as a test runner would.
        shim = tmp / "cargo"
        shim.write_text(f"#!/bin/sh\nexec {cat} {log}\n")
        shim.chmod(0o755)
        env = dict(os.environ, TJ_DATA_DIR=str(tmp / "data"), TJ_CONFIG_DIR=str(tmp / "config"))
        env.pop("TJ_DISABLE", None)
        rows = [
            # (name, tj argv, tj stdin, floor name, floor argv, floor stdin, target ratio)
            ("tj reduce /dev/null --command 'cargo test'",
             [tj, "reduce", "/dev/null", "--command", "cargo test"], None,
             "tj --version", [tj, "--version"], None, 1.3),
            ("tj reduce, 100 KB of cargo test",
             [tj, "reduce", "--exit-code", "101", "--", "cargo", "test"], str(log),
             "cat of the file", [cat, str(log)], None, 2.0),
            ("tj run --agent -- shim printing 100 KB",
             [tj, "run", "--agent", "--", str(shim), "test"], None,
             "the shim alone", [str(shim), "test"], None, 2.5),
            ("tj run --agent -- true",
             [tj, "run", "--agent", "--", true], None,
             "true", [true], None, 2.0),
        ]
        # For the rows that run a command: the same command under the least wrapper.
        leasts = {2: [least, str(shim), "test"], 3: [least, true]}
        big = tmp / "200mb.txt"
        script = shutil.which("script")
        inner = f"{shlex.quote(tj)} run -- {shlex.quote(cat)} {shlex.quote(str(big))}"
        floor_inner = f"script -qec {shlex.quote(cat + ' ' + shlex.quote(str(big)))} /dev/null"
        throughput = [
            # (name, tj argv, floor name, floor argv, target ratio): MB/s, higher is better.
            (f"tj run -- cat {BIG_MB} MB, terminal (MB/s)",
             [script, "-qec", inner, "/dev/null"],
             "script -qec cat inside script",
             [script, "-qec", floor_inner, "/dev/null"], 1.0),
        ] if script else []
        print(f"tj: {tj}" + (f" (this tree's build: {linked(built)})" if built else ""))
        print(f"{runs} interleaved runs each; medians in ms")
        print(f"{'what':<44} {'tj':>8} {'floor':>8} {'ratio':>6} {'target':>7}  floor")
        for i, (name, argv, stdin, floor_name, floor, floor_stdin, target) in enumerate(rows):
            wrapper = leasts.get(i)
            # One warm-up of each: page cache, dynamic loader.
            timed(argv, stdin, env)
            timed(floor, floor_stdin, env)
            ours, base, least_times = [], [], []
            for _ in range(runs):
                base.append(timed(floor, floor_stdin, env))
                ours.append(timed(argv, stdin, env))
                if wrapper:
                    least_times.append(timed(wrapper, None, env))
            m_ours, m_base = statistics.median(ours) * 1e3, statistics.median(base) * 1e3
            ratio = m_ours / m_base
            mark = "ok" if ratio <= target else "over"
            print(f"{name:<44} {m_ours:8.2f} {m_base:8.2f} {ratio:6.2f} {'≤' + str(target):>7}  {floor_name} ({mark})")
            if wrapper:
                m_least = statistics.median(least_times) * 1e3
                print(f"{'  the least wrapper (examples/spawn_floor.rs)':<44} {m_least:8.2f} {m_base:8.2f} "
                      f"{m_least / m_base:6.2f}          tj over it: {m_ours / m_least:.2f}")
        if not throughput:
            print("(no `script` on PATH: the terminal-mode throughput row is skipped)")
        if throughput:
            # Written only now, so that its writeback does not disturb the rows above.
            big_text(big, BIG_MB * 1000 * 1000)
        for name, argv, floor_name, floor, target in throughput:
            timed(argv, None, env)
            timed(floor, None, env)
            ours, base, cpu_ours, cpu_base = [], [], [], []
            for _ in range(big_runs):
                wall, cpu = timed_busy(floor, env, tmp / "data" / "spill")
                base.append(BIG_MB / wall)
                cpu_base.append(cpu)
                wall, cpu = timed_busy(argv, env, tmp / "data" / "spill")
                ours.append(BIG_MB / wall)
                cpu_ours.append(cpu)
            m_ours, m_base = statistics.median(ours), statistics.median(base)
            ratio = m_ours / m_base
            mark = "ok" if ratio >= target else "under"
            print(f"{name:<44} {m_ours:8.2f} {m_base:8.2f} {ratio:6.2f} {'≥' + str(target):>7}  {floor_name} ({mark})")
            if None not in cpu_ours + cpu_base:
                c_ours, c_base = statistics.median(cpu_ours), statistics.median(cpu_base)
                print(f"{'  CPU s per run, whole machine (/proc/stat)':<44} {c_ours:8.2f} {c_base:8.2f} {c_ours / c_base:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
