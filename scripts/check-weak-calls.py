#!/usr/bin/env python3
"""Fails if a statically linked tj calls a function that the link left unresolved.

A weak reference to a symbol does not pull the symbol's object out of a static archive. When
Rust's standard library refers to a libc function weakly (to check at run time whether
libc has it) and tj's own code calls the same function, LTO can leave the weak reference as
the only one the linker sees: the function is never linked in, its GOT slot stays 0, and
tj's call jumps to address 0. That is how `libc::gettid` made the installed tj die of
SIGSEGV whenever its command died of a signal (docs/ARCHITECTURE.md, the musl build), while
every test build, which has no LTO, passed.

So: in a static executable (no program interpreter, no dynamic section), every GOT slot the
file leaves 0 is such a symbol, and every `call`/`jmp` through one must come after a
comparison of that slot with 0 (std's own weak calls all do). Needs `objdump` (binutils).

Usage: scripts/check-weak-calls.py BINARY
"""

import re
import shutil
import struct
import subprocess
import sys

# How many instructions before a call through a slot its null check may be.
WINDOW = 40


def static_got_zero_slots(data: bytes) -> set[int] | None:
    """Addresses of the GOT slots that are 0 in the file, or None if the executable is not
    statically linked (a loader fills its GOT at run time)."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit("not a 64-bit little-endian ELF file")
    phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
    phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", data, 0x36)
    for i in range(phnum):
        p_type = struct.unpack_from("<I", data, phoff + i * phentsize)[0]
        if p_type in (2, 3):  # PT_DYNAMIC, PT_INTERP
            return None
    sections = []
    for i in range(shnum):
        at = shoff + i * shentsize
        name, _, _, addr, offset, size = struct.unpack_from("<IIQQQQ", data, at)
        sections.append((name, addr, offset, size))
    strtab_offset = sections[shstrndx][2]
    zeros = set()
    for name, addr, offset, size in sections:
        end = data.index(b"\0", strtab_offset + name)
        if data[strtab_offset + name:end] not in (b".got", b".got.plt"):
            continue
        for i in range(0, size - size % 8, 8):
            if struct.unpack_from("<Q", data, offset + i)[0] == 0:
                zeros.add(addr + i)
    return zeros


def unguarded_calls(binary: str, zeros: set[int]) -> list[str]:
    """Every call or jump through a zero slot with no comparison of the slot with 0 in the
    `WINDOW` instructions before it, within the same function."""
    listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary],
                             capture_output=True, text=True, check=True).stdout.splitlines()
    # objdump names the slot's address after `#`: `23ffd98 <_GLOBAL_OFFSET_TABLE_+0x90>`, or
    # `0x23ffd98` in a stripped binary.
    through = re.compile(r"\b(call|jmp)\s+\*0x[0-9a-f]+\(%rip\)\s+# (?:0x)?([0-9a-f]+)")
    compared = re.compile(r"\bcmpq?\s+\$0x0,0x[0-9a-f]+\(%rip\)\s+# (?:0x)?([0-9a-f]+)")
    function, since = "?", 0
    found = []
    for i, line in enumerate(listing):
        if line.endswith(">:"):
            function, since = line, i
            continue
        m = through.search(line)
        if not m or int(m.group(2), 16) not in zeros:
            continue
        before = listing[max(since, i - WINDOW):i]
        if not any((c := compared.search(b)) and c.group(1) == m.group(2) for b in before):
            found.append(f"{function} {line.strip()}")
    return found


def main() -> int:
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    binary = sys.argv[1]
    if not shutil.which("objdump"):
        sys.exit("check-weak-calls: objdump is needed (Debian: apt-get install binutils)")
    with open(binary, "rb") as f:
        zeros = static_got_zero_slots(f.read())
    if zeros is None:
        print(f"check-weak-calls: {binary} is dynamically linked; its loader resolves its GOT: not checked")
        return 0
    found = unguarded_calls(binary, zeros)
    for call in found:
        print(f"check-weak-calls: a call through an unresolved symbol (GOT slot 0, no null check): {call}")
    print(f"check-weak-calls: {binary}: {len(zeros)} unresolved GOT slots, {len(found)} called unchecked")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
