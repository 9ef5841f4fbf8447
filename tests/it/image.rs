//! The `tj` executable as built: its layout in the file, which decides how cheaply the kernel
//! maps it at every start.

use std::fs;

/// Reads a little-endian integer of `N` bytes at `at`.
fn le<const N: usize>(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word[..N].copy_from_slice(&bytes[at..at + N]);
    u64::from_le_bytes(word)
}

/// Every loadable segment of the 64-bit little-endian ELF file `bytes`: (flags, offset,
/// virtual address, alignment).
fn load_segments(bytes: &[u8]) -> Vec<(u64, u64, u64, u64)> {
    assert_eq!(&bytes[..4], b"\x7fELF", "not an ELF file");
    assert_eq!((bytes[4], bytes[5]), (2, 1), "not a 64-bit little-endian ELF file");
    let (phoff, phentsize, phnum) =
        (le::<8>(bytes, 0x20) as usize, le::<2>(bytes, 0x36) as usize, le::<2>(bytes, 0x38));
    (0..phnum as usize)
        .map(|i| phoff + i * phentsize)
        .filter(|&ph| le::<4>(bytes, ph) == 1) // PT_LOAD
        .map(|ph| (le::<4>(bytes, ph + 4), le::<8>(bytes, ph + 8), le::<8>(bytes, ph + 16), le::<8>(bytes, ph + 48)))
        .collect()
}

/// build.rs links tj with its segments 2 MiB-aligned on Linux, in the file as in memory, so
/// that the kernel can map each 2 MiB of its code that the page cache holds in one folio
/// with one page-table entry (ARCHITECTURE.md, "Decisions"); but only when tj is linked at
/// a fixed address. A position-independent tj (`TJ_PIE=1`, or a static PIE such as the
/// musl build without the static relocation model that the tests use) keeps the usual page
/// alignment: the kernel aligns where it loads one to its segments' alignment, and 2 MiB
/// would cost it 9 bits of address randomization.
#[test]
fn tj_s_segments_are_aligned_to_huge_pages_where_its_address_is_fixed() {
    const HUGE: u64 = 2 << 20;
    let bytes = fs::read(crate::util::tj_bin()).unwrap();
    let position_independent = match le::<2>(&bytes, 0x10) {
        2 => false, // ET_EXEC
        3 => true,  // ET_DYN
        other => panic!("an ELF file of type {other}"),
    };
    let segments = load_segments(&bytes);
    assert!(
        segments.iter().any(|&(flags, ..)| flags & 1 != 0),
        "no executable segment: {segments:x?}"
    );
    for &(flags, offset, vaddr, align) in &segments {
        if position_independent {
            assert!(align < HUGE, "a PIE's segment (flags {flags}) aligned to {align:#x}");
            continue;
        }
        assert!(align >= HUGE, "a segment (flags {flags}) aligned to {align:#x}: {segments:x?}");
        assert_eq!(
            vaddr % HUGE,
            offset % HUGE,
            "a segment (flags {flags}) at {vaddr:#x}, file offset {offset:#x}"
        );
    }
}
