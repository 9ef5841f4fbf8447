//! Output that is not text, and the bytes of text output that are not UTF-8 (issue 9).
//!
//! Two decisions live here, both applied by [`super::run`] before the engine sees the input:
//!
//! - **Binary output** ([`detect`]): when at least [`BINARY_SHARE_PERCENT`] % of the bytes
//!   are NULs, control characters no terminal output uses, or bytes that are not UTF-8, the
//!   output is binary (`cat app.gz`, a core dump, UTF-16 text). Rendering it as text gives a
//!   wall of replacement characters larger than the input; the rendition is instead one line
//!   with its size, a type guess from its magic number and how to get the exact bytes back
//!   ([`describe`]), followed by any line of text in it that reads as evidence (an error
//!   printed among the bytes is still signal). `--raw` still asks for the text form.
//! - **Invalid bytes in text** ([`compact`]): a run of bytes that are not UTF-8 becomes one
//!   U+FFFD (3 bytes) when it is 3 bytes or longer, else one `?` per byte. Every run so
//!   shrinks or keeps its size, so the text tj shows of an output is never larger than the
//!   output. U+FFFD per invalid sequence, as `String::from_utf8_lossy` gives, tripled the
//!   size of high bytes (51,200 bytes of `\xff` made 153,600). Escaping (`\xff`) would be
//!   lossless but four times larger, and nothing that is both lossless and never larger
//!   exists for arbitrary bytes; the exact bytes are one `tj expand ID --raw` away, and a
//!   rendition says so ([`note`]) whenever that line still leaves it smaller than the
//!   output (a passthrough of mostly-text output is not made larger by the note).
//!
//! Pure: no I/O.

use std::borrow::Cow;
use std::fmt::Write as _;

use super::{ArtifactRef, Input, Omitted, Options, Reduction, tokens};
use crate::rules::RuleSet;
use crate::rules::select::{self, Query};

/// The share of suspicious bytes (percent) from which an output is binary.
pub const BINARY_SHARE_PERCENT: usize = 10;

/// Bytes looked at to decide: the start of the output, where magic numbers are, and enough
/// of it that a stray byte in a text log does not tip the balance.
const SAMPLE: usize = 64 * 1024;

/// Binary output, as [`detect`] found it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binary {
    /// What it looks like: `"gzip compressed data"`, or `"binary data"` when no magic
    /// number is known.
    pub kind: &'static str,
}

/// Returns the binary output `raw` is, or `None` when it is text.
///
/// Suspicious bytes are NUL, the C0 controls terminal output does not use (all but `\t`,
/// `\n`, `\r`, VT, FF, BEL, BS and ESC), DEL, and every byte of an invalid UTF-8 sequence.
/// A known magic number decides on its own.
///
/// ```
/// use tj::reduce::binary::detect;
///
/// assert_eq!(detect(b"\x1f\x8b\x08\x00rest").unwrap().kind, "gzip compressed data");
/// assert!(detect(&[0xff; 100]).is_some());
/// assert!(detect("héllo \x1b[31mworld\x1b[0m\r\n".as_bytes()).is_none());
/// ```
pub fn detect(raw: &[u8]) -> Option<Binary> {
    if raw.is_empty() {
        return None;
    }
    if let Some(kind) = magic(raw) {
        return Some(Binary { kind });
    }
    let sample = &raw[..raw.len().min(SAMPLE)];
    let suspicious = match std::str::from_utf8(sample) {
        // The common case, text: validated a word at a time, then counted in vectors.
        Ok(text) => odd_controls(text.as_bytes()),
        Err(_) => {
            // A sequence cut off by the end of the sample is not counted: it may be valid.
            let mut suspicious = 0usize;
            let mut chunks = sample.utf8_chunks().peekable();
            while let Some(chunk) = chunks.next() {
                suspicious += odd_controls(chunk.valid().as_bytes());
                if chunks.peek().is_some() || sample.len() == raw.len() {
                    suspicious += chunk.invalid().len();
                }
            }
            suspicious
        }
    };
    (suspicious * 100 >= sample.len() * BINARY_SHARE_PERCENT)
        .then_some(Binary { kind: utf16(sample).unwrap_or("binary data") })
}

/// A control byte that text written to a terminal does not contain. Comparisons joined
/// without branches: see [`odd_controls`].
const fn is_odd_control(b: u8) -> bool {
    let allowed = (b == b'\t')
        | (b == b'\n')
        | (b == b'\r')
        | (b == 0x07)
        | (b == 0x08)
        | (b == 0x0b)
        | (b == 0x0c)
        | (b == 0x1b);
    ((b < 0x20) & !allowed) | (b == 0x7f)
}

/// How many bytes of `bytes` are [`is_odd_control`]. The whole sample of every output
/// passes here, and the test, written without branches, compiles to vector instructions
/// (a table lookup cannot: 4 instructions a byte; a filter and count: 14).
fn odd_controls(bytes: &[u8]) -> usize {
    // At most 255 a chunk: the count fits its byte.
    bytes
        .chunks(255)
        .map(|chunk| usize::from(chunk.iter().fold(0u8, |n, &b| n + u8::from(is_odd_control(b)))))
        .sum()
}

/// The type a magic number at the start of `raw` names.
fn magic(raw: &[u8]) -> Option<&'static str> {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x7fELF", "ELF executable"),
        (b"\x89PNG\r\n\x1a\n", "PNG image"),
        (b"\x89PNG\r\n\x1a\r\n", "PNG image"), // through a PTY, which writes \r\n
        (b"\xff\xd8\xff", "JPEG image"),
        (b"GIF87a", "GIF image"),
        (b"GIF89a", "GIF image"),
        (b"%PDF-", "PDF document"),
        (b"\x1f\x8b", "gzip compressed data"),
        (b"BZh", "bzip2 compressed data"),
        (b"\xfd7zXZ\x00", "xz compressed data"),
        (b"\x28\xb5\x2f\xfd", "zstd compressed data"),
        (b"PK\x03\x04", "zip archive"),
        (b"PK\x05\x06", "zip archive (empty)"),
        (b"7z\xbc\xaf\x27\x1c", "7-zip archive"),
        (b"Rar!\x1a\x07", "RAR archive"),
        (b"\x00asm", "WebAssembly module"),
        (b"\xcf\xfa\xed\xfe", "Mach-O executable"),
        (b"\xce\xfa\xed\xfe", "Mach-O executable"),
        (b"\xca\xfe\xba\xbe", "Mach-O universal binary or Java class file"),
        (b"SQLite format 3\x00", "SQLite database"),
        (b"OggS", "Ogg media"),
        (b"fLaC", "FLAC audio"),
        (b"ID3", "MP3 audio"),
        (b"\x1a\x45\xdf\xa3", "Matroska/WebM video"),
        (b"wOFF", "WOFF font"),
        (b"wOF2", "WOFF2 font"),
        (b"\xed\xab\xee\xdb", "RPM package"),
        (b"!<arch>\n", "ar archive (or .deb package)"),
    ];
    if let Some((_, kind)) = MAGIC.iter().find(|(magic, _)| raw.starts_with(magic)) {
        return Some(kind);
    }
    if raw.starts_with(b"RIFF") && raw.len() >= 12 {
        return Some(match &raw[8..12] {
            b"WEBP" => "WebP image",
            b"WAVE" => "WAV audio",
            b"AVI " => "AVI video",
            _ => "RIFF data",
        });
    }
    if raw.len() >= 262 && &raw[257..262] == b"ustar" {
        return Some("tar archive");
    }
    if raw.len() >= 12 && &raw[4..8] == b"ftyp" {
        return Some("MP4/QuickTime media");
    }
    None
}

/// UTF-16 text: a byte-order mark, or NULs in every other byte of ASCII text.
fn utf16(sample: &[u8]) -> Option<&'static str> {
    if sample.starts_with(b"\xff\xfe") || sample.starts_with(b"\xfe\xff") {
        return Some("UTF-16 text");
    }
    let pairs = sample.len() / 2;
    if pairs < 8 {
        return None;
    }
    let zero_odd = sample.chunks_exact(2).filter(|p| p[1] == 0 && p[0] != 0).count();
    let zero_even = sample.chunks_exact(2).filter(|p| p[0] == 0 && p[1] != 0).count();
    (zero_odd.max(zero_even) * 10 >= pairs * 9).then_some("UTF-16 text")
}

/// The one-line rendition of binary output: its size and type, and how to get it back.
///
/// ```
/// use tj::reduce::binary::{describe, Binary};
/// use tj::reduce::ArtifactRef;
///
/// let art = ArtifactRef { id: "0123456789ab".into(), path: "/s/0123456789ab.log".into() };
/// let text = describe(&Binary { kind: "PNG image" }, 2048, Some(1), Some(&art));
/// assert_eq!(text, "[tj] exit 1\n[tj] binary output: 2,048 bytes of PNG image, not shown as text · exact bytes: tj expand 0123456789ab --raw > FILE");
/// ```
pub fn describe(
    found: &Binary,
    bytes: u64,
    exit_code: Option<i64>,
    artifact: Option<&ArtifactRef>,
) -> String {
    let mut text = String::new();
    super::push_exit_line(&mut text, exit_code);
    let size = super::group(usize::try_from(bytes).unwrap_or(usize::MAX));
    let _ = write!(text, "[tj] binary output: {size} bytes of {}, not shown as text", found.kind);
    match artifact {
        Some(artifact) => {
            let _ = write!(text, " · exact bytes: tj expand {} --raw > FILE", artifact.id);
        }
        None => text.push_str(" · it could not be stored, so tj cannot give it back"),
    }
    text
}

/// The [`Reduction`] of binary output: [`describe`]'s line, then every distinct line of
/// text in it that reads as evidence (an error printed among the bytes), or `None` when that
/// would not be shorter than the output (never worse: the output then goes out as text).
pub fn rendition(
    input: &Input<'_>,
    rules: &RuleSet,
    opts: &Options<'_>,
    found: &Binary,
) -> Option<Reduction> {
    let mut text =
        describe(found, input.raw.len() as u64, opts.shown_exit(input.exit_code), opts.artifact);
    // Never lose the signal: text in the binary that reads as an error is kept, verbatim.
    let (compacted, _) = compact(input.raw);
    let evidence = super::evidence_of(&compacted, input.cols);
    if !evidence.is_empty() {
        let count = super::group(evidence.len());
        let _ = write!(
            text,
            "\n[tj] {count} text {} in it read as evidence:",
            if evidence.len() == 1 { "line" } else { "lines" }
        );
        for line in &evidence {
            text.push('\n');
            text.push_str(line);
        }
    }
    let raw_text = String::from_utf8_lossy(input.raw);
    let raw_chars = raw_text.chars().count();
    if text.len() >= input.raw.len() || text.chars().count() >= raw_chars {
        return None;
    }
    let query = Query {
        argv: input.argv,
        command: input.command,
        tool_name: input.tool_name,
        exit_code: input.exit_code,
    };
    let selection = select::select(rules, &query, None);
    Some(Reduction {
        rule: selection.rule.rule.id.clone(),
        family: selection.rule.rule.family.clone(),
        layer: selection.rule.layer,
        fallback: selection.is_fallback(),
        command: selection.identity.command,
        facts: Vec::new(),
        passthrough: None,
        lossless: false,
        shape: Some("binary"),
        omitted: Omitted::default(),
        exit_code: input.exit_code,
        raw_bytes: input.raw.len(),
        raw_chars,
        reduced_chars: text.chars().count(),
        raw_tokens: tokens::estimate(&raw_text),
        reduced_tokens: tokens::estimate(&text),
        lines: 0,
        artifact: opts.artifact.cloned(),
        problems: Vec::new(),
        replaced_bytes: 0,
        text,
    })
}

/// `raw` with each run of bytes that are not UTF-8 replaced as the [module docs](self)
/// say, and the number of bytes replaced. Borrows when `raw` is valid UTF-8.
///
/// ```
/// use tj::reduce::binary::compact;
///
/// assert_eq!(compact(b"caf\xe9 ok").0, "caf? ok".as_bytes());
/// assert_eq!(compact(b"a\xff\xfe\xfd\xfcb").0, "a\u{fffd}b".as_bytes());
/// assert_eq!(compact(b"plain").1, 0);
/// ```
pub fn compact(raw: &[u8]) -> (Cow<'_, [u8]>, usize) {
    if std::str::from_utf8(raw).is_ok() {
        return (Cow::Borrowed(raw), 0);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut replaced = 0;
    let mut run = 0;
    let flush = |out: &mut Vec<u8>, run: &mut usize| {
        if *run >= 3 {
            out.extend_from_slice("\u{fffd}".as_bytes());
        } else {
            out.resize(out.len() + *run, b'?');
        }
        *run = 0;
    };
    for chunk in raw.utf8_chunks() {
        if !chunk.valid().is_empty() {
            flush(&mut out, &mut run);
            out.extend_from_slice(chunk.valid().as_bytes());
        }
        run += chunk.invalid().len();
        replaced += chunk.invalid().len();
    }
    flush(&mut out, &mut run);
    (Cow::Owned(out), replaced)
}

/// The closing line that says invalid bytes were replaced, so that no one takes the text for
/// the exact bytes.
pub fn note(replaced: usize, artifact: Option<&ArtifactRef>) -> String {
    let count = super::group(replaced);
    let what = if replaced == 1 { "byte that is" } else { "bytes that are" };
    match artifact {
        Some(a) => format!(
            "[tj] {count} {what} not UTF-8 shown as ? or \u{fffd} · exact bytes: tj expand {} --raw",
            a.id
        ),
        None => format!("[tj] {count} {what} not UTF-8 shown as ? or \u{fffd}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_controls_counts_what_is_odd_control_says() {
        let all: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
        let expected = all.iter().filter(|&&b| is_odd_control(b)).count();
        assert_eq!(odd_controls(&all), expected);
        assert_eq!(odd_controls(&[0u8; 600]), 600, "chunks of 255 never overflow");
        assert_eq!(odd_controls(b"plain text\n\t\x1b[0m"), 0);
    }

    /// Seeded pseudo-random bytes.
    fn noise(seed: u64, len: usize) -> Vec<u8> {
        crate::testing::Rng::new(seed).bytes(len)
    }

    #[test]
    fn random_bytes_and_high_bytes_are_binary_and_logs_are_not() {
        assert_eq!(detect(&noise(1, 100_000)).unwrap().kind, "binary data");
        assert!(detect(&[0xff; 51_200]).is_some());
        assert!(detect(&[0u8; 10]).is_some());
        let mut log = Vec::new();
        for i in 0..2000 {
            log.extend_from_slice(format!("\x1b[32mline {i}\x1b[0m café\r\n").as_bytes());
            if i % 50 == 0 {
                log.extend_from_slice(b"stray \xfe\xff bytes\n");
            }
        }
        assert_eq!(detect(&log), None);
    }

    #[test]
    fn magic_numbers_name_the_type() {
        let cases: [(&[u8], &str); 6] = [
            (b"\x7fELF\x02\x01\x01\x00", "ELF executable"),
            (b"%PDF-1.7\n%\xe2\xe3", "PDF document"),
            (b"PK\x03\x04\x14\x00", "zip archive"),
            (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "WebP image"),
            (b"\xff\xfeh\x00i\x00", "UTF-16 text"),
            (b"\x89PNG\r\n\x1a\r\n\x00\x00", "PNG image"),
        ];
        for (raw, kind) in cases {
            assert_eq!(detect(raw).map(|b| b.kind), Some(kind), "{raw:?}");
        }
        let utf16: Vec<u8> =
            "hello world, wide text".encode_utf16().flat_map(u16::to_le_bytes).collect();
        assert_eq!(detect(&utf16).map(|b| b.kind), Some("UTF-16 text"));
    }

    #[test]
    fn compacting_never_grows_the_input() {
        for raw in [noise(2, 10_000), vec![0xff; 51_200], b"a\xffb\xfe\xfdc\xe2\x82".to_vec()] {
            let (text, replaced) = compact(&raw);
            assert!(text.len() <= raw.len(), "{} > {}", text.len(), raw.len());
            assert!(std::str::from_utf8(&text).is_ok());
            assert!(replaced > 0);
        }
        assert_eq!(compact(b"a\xffb\xfe\xfdc").0.as_ref(), b"a?b??c");
        // A valid multi-byte character cut off at the end is a run of its own.
        assert_eq!(compact("x€".as_bytes()[..3].as_ref()).0.as_ref(), b"x??");
    }

    #[test]
    fn a_sequence_cut_by_the_sample_does_not_count() {
        let mut raw = "é".repeat(SAMPLE / 2 + 1).into_bytes();
        raw.insert(0, b'a'); // shifts every é across the sample's end
        assert_eq!(detect(&raw), None);
    }
}
