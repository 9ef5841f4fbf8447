//! Renders raw terminal output into the plain text the screen finally showed.
//!
//! This module owns the first step of the reduction (DESIGN "Reduction", step 1). A child run
//! under a PTY writes `\r\n` line endings, `\r` redraws, erase-in-line, cursor-up redraws of
//! progress areas, backspaces, colours, window titles and hyperlinks. [`render`] plays those
//! bytes on a model terminal of infinite width and infinite scrollback and returns what was
//! left on it, with every escape sequence removed, in one pass over the input.
//! [`render_width`] does the same on a screen of a given width, which wraps.
//!
//! It does not trim, dedupe or judge the text (the transforms after it do), it does no I/O,
//! and it is not a terminal emulator: there are no wide characters, no tab stops, no scroll
//! regions and no attributes. A cell is a `char`; a tab is one cell.
//!
//! # Width and autowrap
//!
//! Some programs rely on the terminal's autowrap (DECAWM) to move to the next row: indicatif,
//! the progress bar under cargo-nextest, pads every line it prints above its bar with spaces
//! to exactly the terminal's width and writes no line feed, then moves up over its bar and
//! erases it row by row. On a screen of infinite width that is all one line, which the erases
//! wipe. So when the capture's width is known, the model wraps as a terminal does: a
//! character printed in the last column leaves the cursor there with a wrap pending, and the
//! next printed character goes to column 0 of the next row (a *soft* wrap, which creates
//! the row at the bottom like a line feed); `\r`, `\n`, cursor movement and erasing cancel a
//! pending wrap. Cursor movement, erase-in-line and erase-in-display then act on screen rows,
//! so a line that wrapped over two rows takes two erases to remove, as on a terminal.
//!
//! The rendition joins rows back into logical lines the way a terminal reflows its text on a
//! resize: a row the text soft-wrapped out of continues on the next one with no `\n`, so a
//! long compiler message comes out as one line. One heuristic overrides that: a soft-wrapped
//! row whose last two cells are spaces is taken to end in padding and ends a line of its own,
//! which is what indicatif's padded lines need (the last cell of such a row was printed, as
//! only printing in the last column wraps, and erasing a row's end forgets the wrap). A long
//! line of ordinary text whose row break falls just after two spaces is split there; nothing
//! of it is lost. Trailing spaces, padding included, stay in the rendition; the lines taken
//! from it are trimmed later, as without a width. A cell is a `char` here too: a wide (CJK,
//! emoji) character counts one column where a terminal gives it two and a tab counts one
//! where a terminal moves to the next tab stop, so such text wraps later here than on screen.
//! Autowrap is always on: a program that turns it off (`CSI ? 7 l`) and writes past the last
//! column is wrapped anyway, where a terminal would overwrite that column.
//!
//! Input with no control character besides `\n` and `\t` is returned as it is, width or
//! not: its long lines would wrap and join back into themselves, and text that nothing drew
//! has no padding to look for.
//!
//! Where a real terminal would destroy text the agent may need, the model keeps it instead,
//! and says so where it does: clearing the screen keeps what was on it (`CSI 2J`), and an
//! alternate screen still open when the output ends is appended rather than lost.
//!
//! # Full-screen programs
//!
//! A full-screen program (`less`, `vim`, `top`) draws on the alternate screen (`CSI ? 1049 h`,
//! `? 1047 h`, `? 47 h`) and gives it back when it ends, so a terminal shows nothing of it
//! afterwards, and neither would the rendition. The model keeps the text of the last
//! alternate screen that held any, and when the main screen is left blank, the output is
//! that screen under one line, [`FULL_SCREEN`], so the agent knows what it looked at. An
//! alternate screen still open at the end gets the same line. A program that printed
//! something on the main screen too keeps only that, as on a terminal. The line counts
//! towards the size of the rendition, which must not exceed the input's (see
//! `crate::reduce::screen`): a screen drawn with next to no escape sequences, as no real
//! program draws one, is stripped instead and loses the line, not its text.
//!
//! Child output is untrusted, so every cost is bounded by the input: CSI parameters stop at
//! 65535, the cursor stays within 4096 cells of its row's end, and the padding and rows that
//! cursor movement alone conjures are charged to a budget of the input's length plus 4096,
//! which keeps the rendition under `4 × input + 4096` bytes. Memory is the rendition's
//! buffer, reserved once at the input's length, plus the few hundred rows the cursor can
//! still reach.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::ops::Range;

/// The line above the text of a full-screen program's last screen (see the
/// [module docs](self#full-screen-programs)).
pub const FULL_SCREEN: &str = "[tj] full-screen program; last screen:";

/// Height of the screen that `CSI H` addresses, counted up from the last row written.
///
/// The real height is unknown here (the capture records the width only), and a program that
/// positions the cursor absolutely outside the alternate screen is rare; 24 rows is the VT100
/// default that such a program assumes when it never asked.
const SCREEN_ROWS: usize = 24;

/// How many rows, counting up from the last one, the cursor can still move back into.
///
/// Relative moves (`CSI A`, `ESC M`) are not limited to [`SCREEN_ROWS`]: a program moving up
/// n rows knows its screen has them, and progress areas taller than 24 rows exist. Rows above
/// this window are final, which is what keeps the working state small: only their count is
/// remembered.
const REACHABLE_ROWS: usize = 256;

/// How far past the end of its row a cursor movement may take the cursor.
const MAX_GAP: usize = 4096;

/// Padding spaces and rows that cursor movement may add to one rendering beyond the input's
/// length. Together with the input-proportional share this bounds the output to
/// `4 × input + PAD_ALLOWANCE` bytes whatever the input asks for.
const PAD_ALLOWANCE: usize = 4096;

/// Largest value a CSI parameter keeps; `ESC[999999999C` moves as far as `ESC[65535C`.
const MAX_PARAM: usize = 65_535;

/// CSI parameters kept per sequence; later ones are parsed and ignored.
const MAX_PARAMS: usize = 16;

const BEL: u8 = 0x07;
const BS: u8 = 0x08;
const VT: u8 = 0x0B;
const FF: u8 = 0x0C;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1A;
const ESC: u8 = 0x1B;
const DEL: u8 = 0x7F;
/// Lead byte of the UTF-8 encoding of U+0080..U+00BF, which holds the C1 controls.
const C1_LEAD: u8 = 0xC2;

/// Renders raw terminal bytes to the plain text the screen finally showed.
///
/// Plays `bytes` on a terminal of infinite width and scrollback: a printed character
/// overwrites the cell under the cursor, `\r` returns to column 0 so that
/// `"Downloading 50%\rDone"` leaves `"Doneloading 50%"`, `\n` starts the next row at column 0
/// (so `\r\n` and `\n` are both one line break), `\b` moves left without erasing, `\t` is
/// kept as one cell, and erase-in-line, cursor movement, save/restore and the alternate
/// screen act as on a VT100/xterm, except that a full-screen program's last screen is kept
/// when nothing else is left (see the [module docs](self#full-screen-programs)). Everything
/// else that is not text — SGR colours, OSC titles and hyperlinks (the link text stays),
/// DCS/APC/PM/SOS strings, private modes, other C0 and C1 controls, an escape cut off by the
/// end of the input — is dropped.
///
/// Rows are joined with `\n`; no trailing spaces are trimmed, and output that ended with a
/// line break still ends with `\n`. Invalid UTF-8 becomes U+FFFD, one per invalid sequence,
/// as in [`String::from_utf8_lossy`]. Never panics, and the result is at most
/// `4 × bytes.len() + 4096` bytes whatever the input asks for.
///
/// Returns the input borrowed when it is valid UTF-8 holding no control other than `\n` and
/// `\t`, which is the common case of a pipe capture. [`render_width`] renders on a screen of
/// known width instead, which wraps.
///
/// ```
/// use tj::reduce::terminal::render;
///
/// assert_eq!(render(b"Downloading 50%\rDone"), "Doneloading 50%");
/// assert_eq!(render(b"\x1b[1m\x1b[31merror\x1b[0m: boom\r\n"), "error: boom\n");
/// assert_eq!(render(b"   Building [=>  ] 1/9\r\x1b[K   Compiling x\r\n"), "   Compiling x\n");
/// ```
#[must_use]
pub fn render(bytes: &[u8]) -> Cow<'_, str> {
    render_width(bytes, None)
}

/// Renders raw terminal bytes as [`render`] does, on a screen `cols` cells wide when given.
///
/// `None` (and `Some(0)`) is the infinite width of [`render`], with the same result byte for
/// byte. With a width the screen wraps: a character printed in the last column leaves a wrap
/// pending, the next one starts the next row, and `\r`, `\n`, cursor movement and erasing
/// cancel a pending wrap, so exactly `cols` characters and `\r\n` are one row, not two.
/// Cursor movement and erasing act on those rows. In the result a soft-wrapped row runs on
/// into the next one unless its last two cells are spaces (padding to the width, which ends
/// the line there); see the [module docs](self) for why. Input holding no control besides
/// `\n` and `\t` is returned borrowed and unchanged, long lines included.
///
/// ```
/// use tj::reduce::terminal::render_width;
///
/// // A progress line that wrapped over two rows of a 10-column screen takes two erases.
/// let bar = b"[=====>   ] 50%\r\x1b[2K\x1b[1A\r\x1b[2KDone\r\n";
/// assert_eq!(render_width(bar, Some(10)), "Done\n");
/// // Lines padded to the width end where the padding does; a long line is joined back.
/// let padded = b"ok 1      ok 2      \x1b[1mthe rest of a long line\x1b[0m\r\n";
/// assert_eq!(render_width(padded, Some(10)), "ok 1      \nok 2      \nthe rest of a long line\n");
/// ```
#[must_use]
pub fn render_width(bytes: &[u8], cols: Option<u16>) -> Cow<'_, str> {
    if is_plain(bytes) {
        // `from_utf8` first: it has a word-at-a-time ASCII path that `from_utf8_lossy`'s
        // chunk iterator lacks, and valid input is the rule.
        return match std::str::from_utf8(bytes) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(bytes),
        };
    }
    let width = cols.filter(|&cols| cols > 0).map_or(usize::MAX, usize::from);
    if let Some(text) = crlf_text(bytes, width) {
        return Cow::Owned(text);
    }
    Cow::Owned(Terminal::new(bytes.len(), width).play(bytes))
}

/// The rendering of `bytes` if they are plain text but for lines that end in `\r\n`, as
/// a PTY writes every line (ONLCR): the text without the `\r` of each `\r\n`, which is
/// what the screen model makes of it. `None` for anything else.
///
/// A line wider than `width` wraps on the screen and is joined back, but for a `\n` after
/// each row it wrapped out of that ends in two spaces (padding: see the module docs), which
/// [`push_wrapped`] puts where the model would. A line that is not UTF-8 is left to the
/// model.
///
/// Plain output through a PTY is the common case of `tj run`, and playing it on the screen
/// model cost more than the rest of the reduction of a `cargo test` run.
fn crlf_text(bytes: &[u8], width: usize) -> Option<String> {
    // No `\r` at all is not this path's input: the plain path had its chance.
    memchr::memchr(b'\r', bytes)?;
    if !plain_but::<true>(bytes) {
        return None;
    }
    // Every `\r` must end a line, right before its `\n`: one that does not is a redraw, for
    // the screen model.
    if has_bare_cr(bytes) {
        return None;
    }
    let out = match without_crs(bytes, width) {
        Some(out) => out,
        None => wrapped_without_crs(bytes, width)?,
    };
    Some(match String::from_utf8(out) {
        Ok(text) => text,
        Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
    })
}

/// Returns true if and only if a `\r` in `bytes` is not followed by a `\n`.
///
/// Tested 64 byte pairs at a time, branch-free (in vector registers), rather than by a
/// search per `\r`: a PTY's output has one on every line.
fn has_bare_cr(bytes: &[u8]) -> bool {
    let Some((&last, _)) = bytes.split_last() else { return false };
    let (firsts, seconds) = (&bytes[..bytes.len() - 1], &bytes[1..]);
    last == b'\r'
        || firsts.chunks(64).zip(seconds.chunks(64)).any(|(firsts, seconds)| {
            firsts
                .iter()
                .zip(seconds)
                .fold(0u8, |bare, (&a, &b)| bare | u8::from((a == b'\r') & (b != b'\n')))
                != 0
        })
}

/// The lines of `bytes` (every `\r` of which is before a `\n`) without their `\r`, when none
/// is wider than `width`; `None` when one is.
///
/// One pass over the line ends, each line copied 16 bytes at a time into a buffer with room
/// to spare (the bytes copied past a line's end are overwritten by what follows it): a copy
/// call per line (a `memcpy` of 40 bytes or so) cost more than the rest of the rendering.
fn without_crs(bytes: &[u8], width: usize) -> Option<Vec<u8>> {
    const BLOCK: usize = 16;
    // The result is never longer than the input: it only loses the `\r`s.
    let mut out = vec![0u8; bytes.len() + BLOCK];
    let mut len = 0;
    for (start, line, ended) in crlf_lines(bytes) {
        if line.len() > width {
            return None;
        }
        let mut at = 0;
        while at < line.len() {
            let from = start + at;
            match bytes.get(from..from + BLOCK) {
                Some(block) => out[len + at..len + at + BLOCK].copy_from_slice(block),
                // The last bytes of the input.
                None => {
                    let rest = &line[at..];
                    out[len + at..len + at + rest.len()].copy_from_slice(rest);
                }
            }
            at += BLOCK;
        }
        len += line.len();
        if ended {
            out[len] = b'\n';
            len += 1;
        }
    }
    out.truncate(len);
    Some(out)
}

/// [`without_crs`] for text with lines wider than `width`: each wraps as the screen model
/// wraps it ([`push_wrapped`]). `None` if such a line is not UTF-8.
fn wrapped_without_crs(bytes: &[u8], width: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len());
    for (_, line, ended) in crlf_lines(bytes) {
        if line.len() <= width {
            out.extend_from_slice(line);
        } else {
            push_wrapped(&mut out, line, width)?;
        }
        if ended {
            out.push(b'\n');
        }
    }
    Some(out)
}

/// The lines of `bytes`, each with where it starts, without the `\r` before its `\n`, and
/// whether a `\n` ends it (all but the last do).
fn crlf_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8], bool)> {
    let mut ends = memchr::memchr_iter(b'\n', bytes);
    let mut next = Some(0);
    std::iter::from_fn(move || {
        let start = next?;
        let end = ends.next();
        next = end.map(|end| end + 1);
        let line = &bytes[start..end.unwrap_or(bytes.len())];
        Some((start, line.strip_suffix(b"\r").unwrap_or(line), end.is_some()))
    })
}

/// Appends `line` (no `\n` in it) as the screen model renders a plain line `width` cells
/// wide (a cell a `char`): whole, but for a `\n` after each row that the line wrapped out
/// of and whose last two cells are spaces. `None` if the line is not UTF-8.
fn push_wrapped(out: &mut Vec<u8>, line: &[u8], width: usize) -> Option<()> {
    // A row the line wrapped out of, and a `\n` after it if it ends in padding.
    let mut end_row = |row: &[u8]| {
        out.extend_from_slice(row);
        if row.ends_with(b"  ") {
            out.push(b'\n');
        }
    };
    if line.is_ascii() {
        // A cell a byte: every row but the last is `width` bytes.
        let mut rows = line.chunks(width);
        let last = rows.next_back().unwrap_or_default();
        rows.for_each(&mut end_row);
        out.extend_from_slice(last);
        return Some(());
    }
    let line = std::str::from_utf8(line).ok()?;
    let (mut row, mut cells) = (0, 0);
    for (at, _) in line.char_indices() {
        if cells == width {
            // This character wraps: the row before it ends here.
            end_row(&line.as_bytes()[row..at]);
            (row, cells) = (at, 0);
        }
        cells += 1;
    }
    out.extend_from_slice(&line.as_bytes()[row..]);
    Some(())
}

/// Removes escape sequences and control characters without playing them: no cursor
/// movement, no overwriting. `\r\n` and a lone `\r` end a line.
///
/// The fallback when [`render`] would show more than the bytes hold (cursor moves pad lines
/// with blank cells): a rendition must never be larger than its input.
///
/// ```
/// use tj::reduce::terminal::strip;
///
/// assert_eq!(strip(b"\x1b[31merror\x1b[0m\x1b[99C: boom\r\n"), "error: boom\n");
/// ```
#[must_use]
pub fn strip(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                // CSI: parameters and intermediates, then one final byte.
                Some('[') => {
                    while let Some(&n) = chars.peek() {
                        chars.next();
                        if ('\u{40}'..='\u{7e}').contains(&n) {
                            break;
                        }
                    }
                }
                // OSC, DCS, SOS, PM, APC: a string up to BEL or ST.
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    while let Some(n) = chars.next() {
                        if n == '\x07' || (n == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                // Charset designations carry one more byte.
                Some('(' | ')' | '*' | '+') => {
                    chars.next();
                }
                _ => {}
            },
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Returns true if and only if `bytes` hold nothing a terminal acts on besides `\n` and `\t`.
///
/// This decides the fast path, so it must cost about what a `memchr` would: fixed-size chunks
/// are OR-reduced without branches, which the compiler turns into vector compares, and only a
/// chunk that trips is looked at byte by byte.
fn is_plain(bytes: &[u8]) -> bool {
    plain_but::<false>(bytes)
}

/// [`is_plain`], taking `\r` for plain too when `CR` (for [`crlf_text`]).
fn plain_but<const CR: bool>(bytes: &[u8]) -> bool {
    const CHUNK: usize = 64;
    let mut at = 0;
    for chunk in bytes.chunks_exact(CHUNK) {
        let hits = chunk.iter().fold(0u8, |hits, &b| hits | u8::from(is_suspect_but::<CR>(b)));
        // A `0xC2` is usually the lead byte of `°`, `±` or `µ`, not of a C1 control, so a
        // tripped chunk is re-checked exactly before giving up on the fast path.
        if hits != 0 && has_control_but::<CR>(bytes, at..at + CHUNK) {
            return false;
        }
        at += CHUNK;
    }
    !has_control_but::<CR>(bytes, at..bytes.len())
}

/// Returns true if and only if `b` is a control byte other than `\n` and `\t`, or the lead
/// byte `0xC2` that may start a C1 control.
#[inline]
#[allow(clippy::needless_bitwise_bool, reason = "branch-free, so that `is_plain` vectorises")]
fn is_suspect(b: u8) -> bool {
    ((b < 0x20) & (b != b'\n') & (b != b'\t')) | (b == DEL) | (b == C1_LEAD)
}

/// Returns true if and only if `bytes[range]` holds a control byte other than `\n` and `\t`
/// (and `\r` when `CR`), or the start of a UTF-8 encoded C1 control (U+0080..U+009F).
fn has_control_but<const CR: bool>(bytes: &[u8], range: Range<usize>) -> bool {
    range.into_iter().any(|i| match bytes.get(i) {
        Some(&C1_LEAD) => is_c1_tail(bytes.get(i + 1)),
        Some(&b) => is_suspect_but::<CR>(b),
        None => false,
    })
}

/// [`is_suspect`], not counting `\r` when `CR`.
#[inline]
#[allow(clippy::needless_bitwise_bool, reason = "branch-free, so that `plain_but` vectorises")]
fn is_suspect_but<const CR: bool>(b: u8) -> bool {
    is_suspect(b) & !(CR & (b == b'\r'))
}

/// Returns true if and only if `b` is the second byte of a UTF-8 encoded C1 control.
#[inline]
fn is_c1_tail(b: Option<&u8>) -> bool {
    matches!(b, Some(0x80..=0x9F))
}

/// Finds the end of the printable run starting at `from`: the index of the next control other
/// than `\t` (which prints as a cell), and whether the run is all ASCII, in which case its
/// length in bytes is its length in cells.
///
/// This scan is a large share of the time spent on coloured output, whose runs are mostly a
/// few bytes between two escape sequences, while plain output has long ones: a short run is
/// read byte by byte, and a long one in branch-free chunks that vectorise.
fn scan_text(bytes: &[u8], from: usize) -> (usize, bool) {
    const CHUNK: usize = 16;
    let mut high = 0u8;
    let mut i = from;
    loop {
        let short = bytes.get(i..).map_or(&[][..], |rest| &rest[..rest.len().min(CHUNK)]);
        for &b in short {
            if is_stop(b) && (b != C1_LEAD || is_c1_tail(bytes.get(i + 1))) {
                return (i, high < 0x80);
            }
            high |= b;
            i += 1;
        }
        if short.len() < CHUNK {
            return (i, high < 0x80);
        }
        while let Some(chunk) = bytes.get(i..i + CHUNK) {
            if chunk.iter().fold(false, |hit, &b| hit | is_stop(b)) {
                break;
            }
            high |= chunk.iter().fold(0, |acc, &b| acc | b);
            i += CHUNK;
        }
    }
}

/// Returns true if and only if `b` ends a printable run: a control other than `\t`, DEL, or
/// the lead byte `0xC2` that may start a C1 control.
#[inline]
#[allow(clippy::needless_bitwise_bool, reason = "branch-free, so that `scan_text` vectorises")]
fn is_stop(b: u8) -> bool {
    ((b < 0x20) & (b != b'\t')) | (b == DEL) | (b == C1_LEAD)
}

/// Returns the index of the first byte from `from` on that is not a CSI parameter digit or
/// separator.
fn skip_params(bytes: &[u8], from: usize) -> usize {
    bytes
        .get(from..)
        .and_then(|rest| rest.iter().position(|b| !matches!(b, b'0'..=b';')))
        .map_or(bytes.len(), |at| from + at)
}

/// Skips a string's payload from `from`; returns the index of the next byte that may end it
/// (BEL, ESC, CAN, SUB, or the lead byte of a C1 ST).
fn skip_string(bytes: &[u8], from: usize) -> usize {
    bytes
        .get(from..)
        .and_then(|rest| rest.iter().position(|&b| matches!(b, BEL | ESC | CAN | SUB | C1_LEAD)))
        .map_or(bytes.len(), |at| from + at)
}

/// Where the parser is inside an escape sequence.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    /// Printing text.
    Ground,
    /// After `ESC`.
    Escape,
    /// After `ESC` and one or more intermediates (`ESC ( B`, `ESC # 8`).
    EscIntermediate,
    /// Inside `ESC [`, collecting parameters.
    Csi,
    /// Inside an OSC (`bel_ends`) or a DCS/SOS/PM/APC string, dropping it until ST.
    Str { bel_ends: bool },
    /// After an `ESC` inside a string: `\` ends the string, anything else starts a new
    /// escape sequence, as on a VT500.
    StrEscape,
}

/// The parameters of the CSI sequence being parsed.
#[derive(Debug, Default)]
struct Csi {
    params: [usize; MAX_PARAMS],
    /// Parameters started so far; may exceed `MAX_PARAMS`, whose excess is ignored.
    count: usize,
    /// The private marker (`?`, `>`, `<`, `=`) when the sequence opened with one.
    private: Option<u8>,
    intermediate: bool,
    malformed: bool,
}

impl Csi {
    /// Starts a new sequence. Parameter slots are written as they end, not zeroed here: most
    /// sequences are SGRs with one or two parameters.
    fn reset(&mut self) {
        self.count = 0;
        self.private = None;
        self.intermediate = false;
        self.malformed = false;
    }

    /// Stores `value` as the parameter being read, the last of `count`.
    fn store(&mut self, value: Option<usize>) {
        if let Some(slot) = self.count.checked_sub(1).and_then(|at| self.params.get_mut(at)) {
            *slot = value.unwrap_or(0);
        }
    }

    fn marker(&mut self, b: u8) {
        if self.count == 0 && self.private.is_none() && !self.intermediate {
            self.private = Some(b);
        } else {
            self.malformed = true;
        }
    }

    /// The `i`th parameter, 0 when absent (which every sequence we act on reads as its
    /// default).
    fn get(&self, i: usize) -> usize {
        if i < self.count { self.params.get(i).copied().unwrap_or(0) } else { 0 }
    }

    /// The `i`th parameter as a count or a 1-based position: absent and 0 both mean 1.
    fn count_at(&self, i: usize) -> usize {
        self.get(i).max(1)
    }
}

/// The parser and the two screens, main and alternate.
struct Terminal {
    main: Screen,
    /// The alternate screen while a full-screen program has it open.
    alt: Option<Screen>,
    /// The text of the last alternate screen that held any, once given back.
    last_alt: Option<String>,
    state: State,
    csi: Csi,
    /// What cursor movement may still add to the output: padding spaces and rows it reaches
    /// without a line feed. Charged by [`Screen::materialize`] and [`Screen::print`].
    budget: usize,
}

impl Terminal {
    /// A terminal `width` cells wide (`usize::MAX` for no wrapping) for `input_len` bytes.
    fn new(input_len: usize, width: usize) -> Self {
        Terminal {
            // The rendition is rarely longer than its input, so reserving that much once
            // keeps the output buffer from growing, and is the whole of the memory cost.
            main: Screen::new(input_len, true, width),
            alt: None,
            last_alt: None,
            state: State::Ground,
            csi: Csi::default(),
            budget: input_len.saturating_add(PAD_ALLOWANCE),
        }
    }

    fn play(mut self, bytes: &[u8]) -> String {
        // One U+FFFD per maximal invalid sequence, as `from_utf8_lossy` places them; every
        // byte the parser acts on is ASCII or a whole C1 character, so no control can hide
        // inside an invalid sequence. `from_utf8` rather than `utf8_chunks` for its
        // word-at-a-time ASCII path.
        let mut rest = bytes;
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.feed(text);
                    break;
                }
                Err(err) => {
                    let (valid, after) = rest.split_at(err.valid_up_to());
                    self.feed(std::str::from_utf8(valid).unwrap_or_default());
                    self.invalid();
                    match err.error_len() {
                        Some(len) => rest = after.get(len..).unwrap_or_default(),
                        None => break,
                    }
                }
            }
        }
        self.finish()
    }

    /// The output: the main screen, then an alternate screen still open at the end, or the
    /// last one given back when the main screen is blank, under [`FULL_SCREEN`].
    fn finish(self) -> String {
        let mut out = self.main.into_text();
        // Lossless: a program that died (or was cut off) inside the alternate screen never
        // switched back, so what it last showed is the only trace of it.
        let open = self.alt.map(Screen::into_text).filter(|alt| !is_blank(alt));
        let shown = match open {
            Some(alt) => Some(alt),
            // Lossy: once given back, a full-screen program's screen is gone from a terminal,
            // so it is shown only when nothing else was left.
            None if is_blank(&out) => self.last_alt,
            None => None,
        };
        if let Some(alt) = shown {
            if is_blank(&out) {
                out.clear();
            } else if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(FULL_SCREEN);
            out.push('\n');
            out.push_str(&alt);
        }
        out
    }

    /// The screen being drawn on, and the budget its drawing is charged to.
    fn parts(&mut self) -> (&mut Screen, &mut usize) {
        let screen = match &mut self.alt {
            Some(alt) => alt,
            None => &mut self.main,
        };
        (screen, &mut self.budget)
    }

    fn screen(&mut self) -> &mut Screen {
        self.parts().0
    }

    /// Feeds a valid UTF-8 piece of the input.
    ///
    /// The states that cover long stretches of input — text, CSI parameters, string payloads
    /// — are run in tight loops here; every other byte goes through [`Terminal::step`] one
    /// at a time.
    fn feed(&mut self, s: &str) {
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            i = match self.state {
                State::Ground => self.ground(s, i),
                State::Csi => {
                    let end = self.csi_params(bytes, i);
                    self.step(bytes, end)
                }
                State::Str { .. } => {
                    let end = skip_string(bytes, i);
                    self.step(bytes, end)
                }
                _ => self.step(bytes, i),
            };
        }
    }

    /// Prints text from `s[i..]` and acts on the sequences that come with it until the parser
    /// leaves the ground state or `s` ends; returns where it stopped.
    ///
    /// Coloured output is short runs of text between complete SGRs, `\r`, `\n` and `CSI K`,
    /// so those are handled here without a round trip through the state dispatch.
    fn ground(&mut self, s: &str, mut i: usize) -> usize {
        let bytes = s.as_bytes();
        loop {
            let (end, ascii) = scan_text(bytes, i);
            if let Some(run) = s.get(i..end).filter(|run| !run.is_empty()) {
                let cells = if ascii { run.len() } else { run.chars().count() };
                let (screen, budget) = self.parts();
                screen.print(run, cells, budget);
            }
            match (bytes.get(end), bytes.get(end + 1)) {
                (Some(&ESC), Some(&b'[')) => {
                    // An SGR changes nothing here, so it is skipped without reading its
                    // parameters.
                    let fin = skip_params(bytes, end + 2);
                    if bytes.get(fin) == Some(&b'm') {
                        i = fin + 1;
                        continue;
                    }
                    self.csi.reset();
                    let fin = self.csi_params(bytes, end + 2);
                    let Some(&b @ 0x40..=0x7E) = bytes.get(fin) else {
                        // Split by the end of this piece, or unusual: go byte by byte.
                        self.state = State::Csi;
                        return fin;
                    };
                    self.dispatch_csi(b);
                    i = fin + 1;
                }
                (Some(&b'\r'), _) => {
                    self.screen().col = 0;
                    i = end + 1;
                }
                (Some(&b'\n'), _) => {
                    let (screen, budget) = self.parts();
                    screen.newline(budget);
                    i = end + 1;
                }
                (None, _) => return end,
                _ => return self.step(bytes, end),
            }
        }
    }

    /// Reads CSI parameter digits and separators from `bytes[i..]`; returns the index of the
    /// first other byte.
    fn csi_params(&mut self, bytes: &[u8], mut i: usize) -> usize {
        let csi = &mut self.csi;
        if csi.intermediate {
            // Digits after an intermediate make the sequence malformed; `step` marks it.
            return i;
        }
        // The parameter being read stays in a local until it ends: this loop runs for every
        // digit of every colour code.
        let mut value = csi.count.checked_sub(1).and_then(|at| csi.params.get(at)).copied();
        while let Some(&b) = bytes.get(i) {
            match b {
                b'0'..=b'9' => {
                    let d = usize::from(b - b'0');
                    value = Some((value.unwrap_or(0) * 10 + d).min(MAX_PARAM));
                    if csi.count == 0 {
                        csi.count = 1;
                    }
                }
                b';' | b':' => {
                    csi.count = csi.count.max(1);
                    csi.store(value);
                    csi.count = csi.count.saturating_add(1);
                    value = Some(0);
                }
                _ => break,
            }
            i += 1;
        }
        csi.store(value);
        i
    }

    /// Consumes the control, C1 character or sequence byte at `bytes[i]`; returns where to
    /// go on. Only ever stops on a character boundary while in [`State::Ground`], because
    /// states change only on ASCII bytes and whole C1 characters.
    fn step(&mut self, bytes: &[u8], i: usize) -> usize {
        let Some(&b) = bytes.get(i) else { return bytes.len() };
        if b < 0x80 {
            self.byte(b);
            return i + 1;
        }
        if b == C1_LEAD
            && let Some(&tail @ 0x80..=0x9F) = bytes.get(i + 1)
        {
            self.c1(tail);
            return i + 2;
        }
        match self.state {
            // A string's payload is dropped, text or not.
            State::Str { .. } => i + 1,
            // A character inside a sequence cancels it and is printed, as the DEC parser's
            // "anywhere" rules would for a GL character: no text is lost to a broken
            // sequence.
            State::Escape | State::EscIntermediate | State::Csi | State::StrEscape => {
                self.state = State::Ground;
                i
            }
            // `scan_text` stops in ground only on a control; step over a whole character
            // anyway so a mismatch could never loop.
            State::Ground => i + utf8_len(b),
        }
    }

    /// An invalid UTF-8 sequence, rendered as U+FFFD.
    fn invalid(&mut self) {
        match self.state {
            State::Str { .. } => {}
            State::Ground => self.print_char('\u{FFFD}'),
            State::Escape | State::EscIntermediate | State::Csi | State::StrEscape => {
                self.state = State::Ground;
                self.print_char('\u{FFFD}');
            }
        }
    }

    fn print_char(&mut self, c: char) {
        let mut buf = [0; 4];
        let (screen, budget) = self.parts();
        screen.print(c.encode_utf8(&mut buf), 1, budget);
    }

    /// A C1 control U+0080..U+009F, given its second UTF-8 byte.
    ///
    /// Each is the one-byte form of `ESC` followed by the same code minus 0x40 (U+009B is
    /// `ESC [`), and xterm and VTE interpret them in UTF-8 mode, so they go through the
    /// escape dispatcher; dropping U+009B alone would leak its parameters as text.
    fn c1(&mut self, tail: u8) {
        let fe = tail - 0x40;
        match self.state {
            State::Str { .. } | State::StrEscape if fe == b'\\' => self.state = State::Ground,
            State::Str { .. } => {}
            _ => {
                self.state = State::Escape;
                self.escape(fe);
            }
        }
    }

    /// One ASCII byte in the current state.
    fn byte(&mut self, b: u8) {
        match self.state {
            State::Ground => self.control(b),
            State::Escape => self.escape(b),
            State::EscIntermediate => match b {
                0x20..=0x2F => {}
                0x30..=0x7E => self.state = State::Ground,
                _ => self.control_in_sequence(b),
            },
            State::Csi => match b {
                b'<'..=b'?' => self.csi.marker(b),
                // Only reached after an intermediate: `csi_params` takes them otherwise.
                b'0'..=b';' => self.csi.malformed = true,
                0x20..=0x2F => self.csi.intermediate = true,
                0x40..=0x7E => {
                    self.state = State::Ground;
                    self.dispatch_csi(b);
                }
                _ => self.control_in_sequence(b),
            },
            State::Str { bel_ends } => match b {
                ESC => self.state = State::StrEscape,
                BEL if bel_ends => self.state = State::Ground,
                CAN | SUB => self.state = State::Ground,
                _ => {}
            },
            State::StrEscape => {
                if b == b'\\' {
                    self.state = State::Ground;
                } else {
                    // The string was cut short; this byte belongs to a new sequence.
                    self.state = State::Escape;
                    self.escape(b);
                }
            }
        }
    }

    /// A C0 control (or DEL) met while printing text.
    fn control(&mut self, b: u8) {
        match b {
            // VT and FF move down like LF on a VT100; printing them as nothing would glue
            // two lines together.
            b'\n' | VT | FF => {
                let (screen, budget) = self.parts();
                screen.newline(budget);
            }
            b'\r' => self.screen().col = 0,
            BS => self.screen().back(1),
            b'\t' => self.print_char('\t'),
            ESC => self.state = State::Escape,
            // Lossy: BEL, NUL, SO/SI, CAN, SUB, DEL and the rest show nothing.
            _ => {}
        }
    }

    /// A C0 control met inside an escape sequence: executed without ending the sequence,
    /// except that CAN and SUB abort it and ESC starts a new one (the DEC parser's rules,
    /// which xterm and VTE follow).
    fn control_in_sequence(&mut self, b: u8) {
        match b {
            CAN | SUB => self.state = State::Ground,
            _ => self.control(b),
        }
    }

    /// The byte after `ESC`.
    fn escape(&mut self, b: u8) {
        self.state = State::Ground;
        match b {
            b'[' => {
                self.csi.reset();
                self.state = State::Csi;
            }
            b']' => self.state = State::Str { bel_ends: true },
            b'P' | b'X' | b'^' | b'_' => self.state = State::Str { bel_ends: false },
            // Charset designations (`ESC ( B`) and the like carry one more byte.
            0x20..=0x2F => self.state = State::EscIntermediate,
            b'7' => self.screen().save(),
            b'8' => self.screen().restore(),
            b'M' => self.screen().up(1),
            // IND and NEL are line feeds by another name; dropping them would merge lines.
            b'D' => {
                let (screen, budget) = self.parts();
                screen.index(budget);
            }
            b'E' => {
                let (screen, budget) = self.parts();
                screen.newline(budget);
            }
            // Lossy: keypad modes, RIS, single shifts and the rest change nothing visible
            // that the model keeps.
            0x30..=0x7E => {}
            _ => {
                self.state = State::Escape;
                self.control_in_sequence(b);
            }
        }
    }

    fn dispatch_csi(&mut self, fin: u8) {
        // SGR first: it is most of the sequences in coloured output, and changes nothing here.
        if fin == b'm' || self.csi.malformed || self.csi.intermediate {
            return;
        }
        if let Some(marker) = self.csi.private {
            if marker == b'?' && matches!(fin, b'h' | b'l') {
                self.private_mode(fin == b'h');
            }
            return;
        }
        let (mode, n, second) = (self.csi.get(0), self.csi.count_at(0), self.csi.count_at(1));
        let screen = self.screen();
        match fin {
            b'K' => screen.erase_in_line(mode),
            b'J' => screen.erase_in_display(mode),
            b'G' | b'`' => screen.set_col(n - 1),
            b'A' => screen.up(n),
            b'F' => {
                screen.up(n);
                screen.col = 0;
            }
            b'B' => screen.down(n),
            b'E' => {
                screen.down(n);
                screen.col = 0;
            }
            b'C' => screen.set_col(screen.col.saturating_add(n)),
            b'D' => screen.back(n),
            b'H' | b'f' => screen.position(n - 1, second - 1),
            b's' => screen.save(),
            b'u' => screen.restore(),
            // Lossy: SGR, scroll regions, insert/delete, reports and the rest.
            _ => {}
        }
    }

    /// `CSI ? … h` / `CSI ? … l`: only the alternate screen and its cursor save matter here.
    fn private_mode(&mut self, set: bool) {
        let (params, count) = (self.csi.params, self.csi.count.min(MAX_PARAMS));
        for &mode in &params[..count] {
            match (mode, set) {
                (47 | 1047 | 1049, true) => {
                    let width = self.main.width;
                    self.alt.get_or_insert_with(|| Screen::new(0, false, width));
                }
                // What a full-screen program drew is gone from a terminal once it gives the
                // screen back; its last text is kept for `finish`.
                (47 | 1047 | 1049, false) => {
                    if let Some(text) = self.alt.take().map(Screen::into_text)
                        && !is_blank(&text)
                    {
                        self.last_alt = Some(text);
                    }
                }
                (1048, true) => self.screen().save(),
                (1048, false) => self.screen().restore(),
                _ => {}
            }
        }
    }
}

/// Bytes in the UTF-8 sequence that `lead` starts (1 for a stray continuation byte).
/// Returns true if and only if `text` holds nothing but whitespace.
fn is_blank(text: &str) -> bool {
    text.chars().all(char::is_whitespace)
}

fn utf8_len(lead: u8) -> usize {
    match lead {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// One row the cursor can still reach: its cells, and whether text wrapped out of it.
#[derive(Debug)]
struct Row {
    line: Line,
    /// Autowrap took the cursor from this row's last column to the next row, and nothing has
    /// erased the row's end since.
    wrapped: bool,
}

impl Row {
    fn new(text: String) -> Self {
        Row { line: Line::new(text), wrapped: false }
    }

    /// Whether the row runs on into the next one in the rendition: text wrapped out of it and
    /// it does not end in padding (see the module docs).
    fn joins_next(&self) -> bool {
        self.wrapped && !self.line.ends_in_padding()
    }
}

/// The cells of a row.
#[derive(Debug)]
enum Line {
    /// A row that has only been appended to, cut short or cleared, which is nearly every row.
    /// `cells` is its length in `char`s.
    Text { text: String, cells: usize },
    /// A row written over in the middle, kept as one `char` per cell so that each overwrite
    /// costs what it writes. In a `String`, replacing a character by one of another width
    /// shifts the rest of the row, and a long row redrawn that way turns quadratic.
    ///
    /// `blank` is how many leading cells are known to be spaces, so that erasing to the
    /// cursor again and again (`CSI 1K`) only writes the cells that changed since.
    Cells { cells: Vec<char>, blank: usize },
}

impl Line {
    fn new(text: String) -> Self {
        Line::Text { text, cells: 0 }
    }

    fn cells(&self) -> usize {
        match self {
            Line::Text { cells, .. } => *cells,
            Line::Cells { cells, .. } => cells.len(),
        }
    }

    fn is_blank(&self) -> bool {
        self.cells() == 0
    }

    /// Whether the last two cells are spaces.
    fn ends_in_padding(&self) -> bool {
        match self {
            Line::Text { text, .. } => text.ends_with("  "),
            Line::Cells { cells, .. } => matches!(cells.as_slice(), [.., ' ', ' ']),
        }
    }

    /// Edits the row as cells and its known-blank prefix, converting it to that form first.
    fn edit_cells(&mut self, edit: impl FnOnce(&mut Vec<char>, &mut usize)) {
        match self {
            Line::Cells { cells, blank } => edit(cells, blank),
            Line::Text { text, .. } => {
                let (mut cells, mut blank) = (text.chars().collect(), 0);
                edit(&mut cells, &mut blank);
                *self = Line::Cells { cells, blank };
            }
        }
    }

    fn append(&mut self, run: &str, n: usize) {
        match self {
            Line::Text { text, cells } => {
                text.push_str(run);
                *cells += n;
            }
            Line::Cells { cells, .. } => cells.extend(run.chars()),
        }
    }

    fn pad(&mut self, n: usize) {
        match self {
            Line::Text { text, cells } => {
                text.extend(std::iter::repeat_n(' ', n));
                *cells += n;
            }
            Line::Cells { cells, .. } => cells.extend(std::iter::repeat_n(' ', n)),
        }
    }

    /// Writes `run`, `n` cells wide, over the cells from `col`, which is inside the row.
    fn overwrite(&mut self, col: usize, run: &str, n: usize) {
        if let Line::Text { text, cells } = self
            && text.len() == *cells
            && run.len() == n
        {
            // ASCII over ASCII: byte offsets are cell offsets and nothing shifts.
            if col + n >= *cells {
                text.truncate(col);
                text.push_str(run);
                *cells = col + n;
            } else {
                text.replace_range(col..col + n, run);
            }
            return;
        }
        self.edit_cells(|cells, blank| {
            *blank = (*blank).min(col);
            for (at, c) in (col..).zip(run.chars()) {
                match cells.get_mut(at) {
                    Some(cell) => *cell = c,
                    None => cells.push(c),
                }
            }
        });
    }

    /// Erases from cell `col` to the end of the row.
    fn truncate(&mut self, col: usize) {
        match self {
            Line::Text { text, cells } if col == 0 || text.len() == *cells => {
                text.truncate(col);
                *cells = col;
            }
            _ => self.edit_cells(|cells, blank| {
                cells.truncate(col);
                *blank = (*blank).min(col);
            }),
        }
    }

    /// Blanks cells `..=col`, which end inside the row.
    ///
    /// Done on cells, skipping the prefix already known blank: on a real terminal the width
    /// bounds this work, here a row can be as long as the input.
    fn blank_through(&mut self, col: usize) {
        self.edit_cells(|cells, blank| {
            if let Some(span) = cells.get_mut(*blank..=col) {
                span.fill(' ');
            }
            *blank = (*blank).max(col + 1);
        });
    }

    /// Appends the row's text to `out`; returns the row's buffer when it is worth reusing.
    fn finish_into(self, out: &mut String) -> Option<String> {
        match self {
            Line::Text { mut text, .. } => {
                out.push_str(&text);
                text.clear();
                // A buffer grown by one very long row is not kept for the short ones after.
                (text.capacity() <= 4096).then_some(text)
            }
            Line::Cells { cells, .. } => {
                out.extend(cells);
                None
            }
        }
    }
}

/// A screen: every row ever written, and a cursor.
///
/// Rows the cursor can no longer reach are final and already joined into `done`, which is the
/// start of the rendition; only the last [`REACHABLE_ROWS`] rows are kept apart, each in its
/// own buffer so that redrawing one never moves the others.
#[derive(Debug)]
struct Screen {
    /// The rows before `rows[0]`, each followed by `\n`.
    done: String,
    /// The rows the cursor can still reach; never empty.
    rows: VecDeque<Row>,
    /// How many rows `done` holds.
    flushed: usize,
    /// Cursor row as an index into `rows`. It may point past the last row after a move
    /// down: those rows are blank, so they are only created once something is written
    /// there, and a move that leads nowhere adds nothing.
    row: usize,
    /// Cursor column in cells; may be past the end of its row.
    col: usize,
    /// Saved cursor: absolute row and column.
    saved: (usize, usize),
    /// Absolute row where the screen starts after a clear (see
    /// [`Screen::erase_in_display`]).
    floor: usize,
    /// False for the alternate screen, which has no scrollback to push a cleared screen to.
    keeps_history: bool,
    /// Cells in a row, `usize::MAX` for no wrapping. The cursor column is at most this: equal
    /// to it when a wrap is pending after a character printed in the last column.
    width: usize,
    /// The buffer of the last row that went into `done`, for the next new row.
    spare: Option<String>,
    /// Whether anything was printed since the last `CSI 2J`; if not, the screen it left is
    /// still blank and another one need not look for its last row again.
    printed: bool,
}

impl Screen {
    fn new(capacity: usize, keeps_history: bool, width: usize) -> Self {
        Screen {
            done: String::with_capacity(capacity),
            rows: VecDeque::from([Row::new(String::new())]),
            flushed: 0,
            row: 0,
            col: 0,
            saved: (0, 0),
            floor: 0,
            keeps_history,
            width,
            spare: None,
            printed: false,
        }
    }

    /// The rendition: finished rows, then the reachable ones, joined by `\n` where a row
    /// does not run on into the next.
    fn into_text(mut self) -> String {
        let mut out = self.done;
        let mut joins = false;
        for (i, row) in self.rows.drain(..).enumerate() {
            if i > 0 && !joins {
                out.push('\n');
            }
            joins = row.joins_next();
            row.line.finish_into(&mut out);
        }
        out
    }

    fn cells(&self, r: usize) -> usize {
        self.rows.get(r).map_or(0, |row| row.line.cells())
    }

    /// Creates the rows up to the cursor's, if it is past the last one. `free` of them come
    /// with the line feed that asked and the rest are charged to `budget`; if that runs out
    /// the cursor stops at the last row that could be made.
    fn materialize(&mut self, free: usize, budget: &mut usize) {
        let have = self.rows.len();
        if self.row < have {
            return;
        }
        let need = self.row + 1 - have;
        let charged = need.saturating_sub(free).min(*budget);
        *budget -= charged;
        let create = need.min(free) + charged;
        self.row = have - 1 + create;
        for _ in 0..create {
            let buffer = self.spare.take().unwrap_or_default();
            self.rows.push_back(Row::new(buffer));
            // Rows are only ever created under the cursor, so the row let go of here is
            // far above it.
            if self.rows.len() > REACHABLE_ROWS
                && let Some(row) = self.rows.pop_front()
            {
                let joins = row.joins_next();
                self.spare = row.line.finish_into(&mut self.done);
                if !joins {
                    self.done.push('\n');
                }
                self.flushed += 1;
                self.row -= 1;
            }
        }
    }

    /// Writes `run`, which is `cells` cells wide, at the cursor and moves past it, wrapping
    /// at the screen's width.
    fn print(&mut self, run: &str, cells: usize, budget: &mut usize) {
        self.printed = true;
        let room = self.width - self.col;
        // The common case by far: text appended where the cursor's row ends.
        if let Some(row) = self.rows.get_mut(self.row)
            && row.line.cells() == self.col
            && cells <= room
        {
            row.line.append(run, cells);
            self.col += cells;
            return;
        }
        if cells <= room {
            self.put(run, cells, budget);
        } else {
            self.print_wrapping(run, cells, budget);
        }
    }

    /// Prints `run`, which is wider than what is left of the cursor's row (or a wrap is
    /// pending): a row's worth at a time, soft-wrapping between them.
    fn print_wrapping(&mut self, mut run: &str, mut cells: usize, budget: &mut usize) {
        loop {
            if self.col >= self.width {
                self.wrap(budget);
            }
            // At least 1: no wrap is pending now.
            let room = self.width - self.col;
            if cells <= room {
                self.put(run, cells, budget);
                return;
            }
            let at = if run.len() == cells {
                room
            } else {
                run.char_indices().nth(room).map_or(run.len(), |(at, _)| at)
            };
            let Some((head, tail)) = run.split_at_checked(at) else { return };
            self.put(head, room, budget);
            (run, cells) = (tail, cells - room);
        }
    }

    /// A pending wrap carried out: the row is marked soft-wrapped and the cursor goes to
    /// column 0 of the next row, which is created like a line feed's.
    fn wrap(&mut self, budget: &mut usize) {
        if let Some(row) = self.rows.get_mut(self.row) {
            row.wrapped = true;
        }
        self.row = self.row.saturating_add(1);
        self.materialize(1, budget);
        self.col = 0;
    }

    /// Writes `run`, which is `cells` cells wide and fits in the row, at the cursor and moves
    /// past it.
    fn put(&mut self, run: &str, cells: usize, budget: &mut usize) {
        self.materialize(0, budget);
        let Some(Row { line: row, .. }) = self.rows.get_mut(self.row) else { return };
        let have = row.cells();
        if self.col >= have {
            let pad = (self.col - have).min(*budget);
            *budget -= pad;
            row.pad(pad);
            row.append(run, cells);
            self.col = have + pad + cells;
        } else {
            row.overwrite(self.col, run, cells);
            self.col += cells;
        }
    }

    /// `\n` (and NEL): the next row, column 0.
    ///
    /// A PTY's `onlcr` turns `\n` into `\r\n`, and in a pipe capture a bare `\n` means the
    /// same, so both return to column 0.
    fn newline(&mut self, budget: &mut usize) {
        self.index(budget);
        self.col = 0;
    }

    /// IND: the next row, creating it, same column.
    fn index(&mut self, budget: &mut usize) {
        self.row = self.row.saturating_add(1);
        self.materialize(1, budget);
        self.clamp_col();
    }

    fn up(&mut self, n: usize) {
        self.row = self.row.saturating_sub(n);
        self.clamp_col();
    }

    fn down(&mut self, n: usize) {
        self.row = self.row.saturating_add(n);
        self.clamp_col();
    }

    fn set_col(&mut self, col: usize) {
        self.col = col;
        self.clamp_col();
    }

    /// `\b` and `CSI D`: `n` cells left, from the last column when a wrap is pending.
    fn back(&mut self, n: usize) {
        self.settle();
        self.col = self.col.saturating_sub(n);
    }

    /// Cancels a pending wrap, leaving the cursor in the last column.
    fn settle(&mut self) {
        self.col = self.col.min(self.width - 1);
    }

    /// Keeps the cursor within [`MAX_GAP`] cells of its row's end, so that no single
    /// movement can ask for a gigabyte of padding, and inside the screen's width, which
    /// also cancels a pending wrap.
    fn clamp_col(&mut self) {
        self.col = self.col.min(self.cells(self.row) + MAX_GAP).min(self.width - 1);
    }

    /// `CSI row ; col H`, both 0-based here.
    ///
    /// Rows count from the top of a [`SCREEN_ROWS`]-high screen whose bottom is the last
    /// row written (or from where the screen was last cleared), since that is where a
    /// program that thinks it is at the bottom of its screen has its top.
    fn position(&mut self, row: usize, col: usize) {
        self.row = (self.top() + row).saturating_sub(self.flushed);
        self.set_col(col);
    }

    /// Absolute row of the screen's top.
    fn top(&self) -> usize {
        let total = self.flushed + self.rows.len();
        self.floor.max(total.saturating_sub(SCREEN_ROWS))
    }

    fn save(&mut self) {
        self.saved = (self.flushed + self.row, self.col);
    }

    fn restore(&mut self) {
        let (row, col) = self.saved;
        self.row = row.saturating_sub(self.flushed);
        self.set_col(col);
    }

    /// `CSI K`: 0 erases to the end of the row, 1 blanks from its start through the cursor,
    /// 2 clears it; the cursor stays. A row left blank is left empty, not full of spaces.
    /// Erasing a row's last column also erases the mark that text wrapped out of it.
    fn erase_in_line(&mut self, mode: usize) {
        self.settle();
        let col = self.col;
        let ends_row = mode == 0 || mode == 2 || (mode == 1 && col + 1 >= self.width);
        let Some(Row { line: row, wrapped }) = self.rows.get_mut(self.row) else { return };
        match mode {
            0 if col < row.cells() => row.truncate(col),
            1 if col + 1 < row.cells() => row.blank_through(col),
            1 | 2 => row.truncate(0),
            _ => {}
        }
        if ends_row {
            *wrapped = false;
        }
    }

    /// `CSI J`.
    ///
    /// 0 erases below: the rest of the cursor's row and every row after it, which is how
    /// progress areas clear themselves. 1, 2 and 3 would erase the visible screen or the
    /// scrollback, and those hold the output the agent ran the command for (a test runner
    /// that clears the screen before its summary, a `clear` in a script), so they keep
    /// every row. 2 starts a fresh screen below the last non-blank row, the way VTE pushes a
    /// cleared screen into the scrollback, so that what is drawn next with `CSI H` lands on
    /// new rows instead of overwriting old ones; the cursor keeps its place on the screen.
    fn erase_in_display(&mut self, mode: usize) {
        self.settle();
        match mode {
            0 if self.row < self.rows.len() => {
                self.erase_in_line(0);
                self.rows.truncate(self.row + 1);
            }
            2 => {
                let on_screen = (self.flushed + self.row).saturating_sub(self.top());
                if !self.keeps_history {
                    *self = Screen { col: self.col, ..Screen::new(0, false, self.width) };
                    self.row = on_screen;
                    return;
                }
                if self.printed {
                    let last = self.rows.iter().rposition(|row| !row.line.is_blank());
                    self.floor = self.flushed + last.map_or(0, |r| r + 1);
                    self.printed = false;
                }
                self.row = (self.floor + on_screen).saturating_sub(self.flushed);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    fn r(bytes: &[u8]) -> String {
        render(bytes).into_owned()
    }

    /// The screen model, bypassing the fast path.
    fn screen(bytes: &[u8]) -> String {
        Terminal::new(bytes.len(), usize::MAX).play(bytes)
    }

    fn assert_clean(out: &str) {
        assert!(
            !out.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
            "control left in {out:?}"
        );
    }

    fn assert_lines(out: &str, lines: &[&str]) {
        for line in lines {
            assert!(out.lines().any(|l| l == *line), "missing line {line:?} in:\n{out}");
        }
    }

    fn assert_no_line_contains(out: &str, needle: &str) {
        assert!(!out.contains(needle), "{needle:?} should be gone from:\n{out}");
    }

    // Fast path.

    /// A line of text as a PTY may carry it: ASCII, tabs, spaces, multi-byte and wide
    /// characters, the lead byte of a C1 control's encoding in `°`, invalid UTF-8, and now
    /// and then a lone `\r` or an escape, which keep the input off the CRLF path.
    fn crlf_line() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            8 => Just(&b"a"[..]),
            4 => Just(&b" "[..]),
            2 => Just(&b"\t"[..]),
            2 => Just("°".as_bytes()),
            2 => Just("漢".as_bytes()),
            1 => Just("🦀".as_bytes()),
            1 => Just(&b"\xff"[..]),
            1 => Just(&b"\xe2\x82"[..]),
            1 => Just(&b"\r"[..]),
            1 => Just(&b"\x1b[K"[..]),
        ];
        prop::collection::vec(piece, 0..16).prop_map(|pieces| pieces.concat())
    }

    #[test]
    fn crlf_lines_render_without_the_screen_model() {
        let input = b"   Compiling x v0.1.0\r\ntest a ... ok\r\n\tat f (a.js:1)\r\nlast";
        assert_eq!(
            crlf_text(input, usize::MAX).as_deref(),
            Some("   Compiling x v0.1.0\ntest a ... ok\n\tat f (a.js:1)\nlast")
        );
        assert_eq!(render_width(input, Some(500)), screen(input));
        // Lines as wide as the screen do not wrap; a wider one wraps and joins back, but
        // where a row it wrapped out of ends in padding; a wide line not UTF-8 goes to the
        // model.
        assert_eq!(crlf_text(b"abcde\r\nfghij\r\n", 5).as_deref(), Some("abcde\nfghij\n"));
        assert_eq!(crlf_text(b"abcde\r\nfghijk\r\n", 5).as_deref(), Some("abcde\nfghijk\n"));
        assert_eq!(crlf_text(b"ab  cdef\r\n", 4).as_deref(), Some("ab  \ncdef\n"));
        assert_eq!(crlf_text(b"abc\nab  c\r\n", 4).as_deref(), Some("abc\nab  \nc\n"));
        assert_eq!(crlf_text(b"abcd\xff\r\n", 4), None);
        for input in [&b"abcde\r\nfghijk\r\n"[..], b"ab  cdef\r\n", b"abc\nab  c\r\n", b"ab  \r\n"]
        {
            assert_eq!(render_width(input, Some(4)), Terminal::new(input.len(), 4).play(input));
        }
        // A lone `\r` overwrites, an escape acts, and plain text has its own path.
        assert_eq!(crlf_text(b"50%\rDone\r\n", usize::MAX), None);
        assert_eq!(crlf_text(b"\x1b[1mok\r\n", usize::MAX), None);
        assert_eq!(crlf_text(b"plain\n", usize::MAX), None);
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let input = b"line one\n\tindented\nlast";
        assert!(matches!(render(input), Cow::Borrowed("line one\n\tindented\nlast")));
    }

    #[test]
    fn plain_text_with_non_ascii_stays_on_fast_path() {
        // `°` and `±` start with 0xC2 like the C1 controls do.
        let input = "25 °C ± 1 µs ✓\n".as_bytes();
        assert!(matches!(render(input), Cow::Borrowed(_)));
    }

    #[test]
    fn empty_input_renders_empty() {
        assert_eq!(render(b""), "");
    }

    #[test]
    fn invalid_utf8_plain_text_is_replaced_lossily() {
        let input = b"ok \xff\xfe done\n";
        assert_eq!(render(input), String::from_utf8_lossy(input));
        assert_eq!(render(input), "ok \u{FFFD}\u{FFFD} done\n");
    }

    #[test]
    fn fast_path_matches_the_screen_model() {
        for input in [&b"a\nb\n"[..], b"\n\n", b"x\ty", "caf\u{e9}\n".as_bytes(), b"a\xffb"] {
            assert_eq!(r(input), screen(input), "input {input:?}");
        }
    }

    // Line endings and carriage returns.

    #[test]
    fn a_bare_cr_is_found_wherever_it_is() {
        // Around the 64-byte blocks the test works in, and at the very end.
        let naive = |bytes: &[u8]| {
            bytes.iter().enumerate().any(|(i, &b)| b == b'\r' && bytes.get(i + 1) != Some(&b'\n'))
        };
        for len in [0, 1, 2, 63, 64, 65, 127, 128, 129, 200] {
            for at in 0..len {
                for (cr, after) in [(b'\r', b'\n'), (b'\r', b'x'), (b'x', b'\r')] {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = cr;
                    if let Some(next) = bytes.get_mut(at + 1) {
                        *next = after;
                    }
                    assert_eq!(has_bare_cr(&bytes), naive(&bytes), "{len} bytes, {at}: {bytes:?}");
                }
            }
        }
    }

    #[test]
    fn crlf_line_endings_become_newlines() {
        assert_eq!(r(b"a\r\nb\r\n"), "a\nb\n");
        assert_eq!(r(b"a\r\nb"), "a\nb");
    }

    #[test]
    fn trailing_newline_is_kept() {
        assert_eq!(r(b"a\nb\n"), "a\nb\n");
        assert_eq!(r(b"a\r\n\r\n"), "a\n\n");
    }

    #[test]
    fn carriage_return_overwrites_in_place() {
        assert_eq!(r(b"Downloading 50%\rDone"), "Doneloading 50%");
    }

    #[test]
    fn carriage_return_redraws_leave_the_last_frame() {
        assert_eq!(r(b"10%\r20%\r100%\n"), "100%\n");
    }

    #[test]
    fn carriage_return_overwrites_non_ascii_cells() {
        assert_eq!(r("\u{280b} ünïcödé\r\u{2819}".as_bytes()), "\u{2819} ünïcödé");
        assert_eq!(r("äöü\rab".as_bytes()), "abü");
        assert_eq!(r("abc\r\u{e9}".as_bytes()), "\u{e9}bc");
    }

    #[test]
    fn backspace_moves_left_without_erasing() {
        assert_eq!(r(b"abc\x08"), "abc");
        assert_eq!(r(b"abc\x08\x08X"), "aXc");
        // The classic `_\bx` underline overstrike shows the second character.
        assert_eq!(r(b"_\x08x"), "x");
    }

    #[test]
    fn backspace_stops_at_column_zero() {
        assert_eq!(r(b"ab\x08\x08\x08\x08X"), "Xb");
    }

    #[test]
    fn tab_is_kept_as_one_cell() {
        assert_eq!(r(b"a\tb\rX"), "X\tb");
        assert_eq!(r(b"a\tb\r\x1b[2CY"), "a\tY");
    }

    #[test]
    fn other_c0_controls_and_del_are_dropped() {
        assert_eq!(r(b"a\x07b\x00c\x0ed\x0fe\x7ff\x18g\x1ah\r"), "abcdefgh");
    }

    #[test]
    fn vertical_tab_and_form_feed_are_line_feeds() {
        assert_eq!(r(b"page1\x0cpage2"), "page1\npage2");
        assert_eq!(r(b"a\x0bb"), "a\nb");
    }

    // CSI.

    #[test]
    fn sgr_is_dropped() {
        assert_eq!(r(b"\x1b[1m\x1b[31merror\x1b[0m: \x1b[38;5;208mboom\x1b[m\n"), "error: boom\n");
        assert_eq!(r(b"\x1b[38:2:255:0:0mred\x1b[0m"), "red");
    }

    #[test]
    fn erase_in_line_to_end() {
        assert_eq!(r(b"hello world\r\x1b[6C\x1b[K"), "hello ");
        assert_eq!(r(b"hello\r\x1b[0Kbye"), "bye");
        assert_eq!(r(b"hello\x1b[K"), "hello");
    }

    #[test]
    fn erase_in_line_from_start_blanks_through_cursor() {
        assert_eq!(r(b"hello world\r\x1b[4C\x1b[1K"), "      world");
        // Blanking the whole row leaves it empty rather than full of spaces.
        assert_eq!(r(b"hello\x1b[1K"), "");
        assert_eq!(r(b"hello\x1b[1K!"), "     !");
    }

    #[test]
    fn erase_whole_line_keeps_the_cursor_column() {
        assert_eq!(r(b"hello\x1b[2K"), "");
        assert_eq!(r(b"hello\x1b[2Kx"), "     x");
    }

    #[test]
    fn erase_in_line_counts_cells_not_bytes() {
        assert_eq!(r("ääää\r\x1b[2C\x1b[K".as_bytes()), "ää");
        assert_eq!(r("ääää\r\x1b[1C\x1b[1K".as_bytes()), "  ää");
    }

    #[test]
    fn cursor_horizontal_absolute() {
        assert_eq!(r(b"abcdef\x1b[3GX"), "abXdef");
        assert_eq!(r(b"abcdef\x1b[GX"), "Xbcdef");
        assert_eq!(r(b"abcdef\x1b[0GX"), "Xbcdef");
        assert_eq!(r(b"abcdef\x1b[5`X"), "abcdXf");
    }

    #[test]
    fn cursor_forward_pads_with_spaces() {
        assert_eq!(r(b"a\x1b[3Cb"), "a   b");
        assert_eq!(r(b"abcdef\r\x1b[2CX"), "abXdef");
        // Moving without printing adds nothing.
        assert_eq!(r(b"a\x1b[3C"), "a");
    }

    #[test]
    fn cursor_back_stops_at_column_zero() {
        assert_eq!(r(b"abcdef\x1b[2DX"), "abcdXf");
        assert_eq!(r(b"abc\x1b[999DX"), "Xbc");
        assert_eq!(r(b"abc\x1b[DX"), "abX");
    }

    #[test]
    fn cursor_up_overwrites_earlier_rows() {
        assert_eq!(r(b"one\ntwo\nthree\x1b[2A\rONE"), "ONE\ntwo\nthree");
        assert_eq!(r(b"one\ntwo\x1b[AX"), "oneX\ntwo");
    }

    #[test]
    fn cursor_up_stops_at_the_first_row() {
        assert_eq!(r(b"one\ntwo\x1b[99A\rX"), "Xne\ntwo");
    }

    #[test]
    fn cursor_previous_and_next_line_go_to_column_zero() {
        assert_eq!(r(b"one\ntwo\x1b[FX"), "Xne\ntwo");
        assert_eq!(r(b"one\ntwo\nthree\x1b[2F\x1b[EX"), "one\nXwo\nthree");
    }

    #[test]
    fn cursor_down_creates_rows_only_when_written() {
        assert_eq!(r(b"a\x1b[2Bb"), "a\n\n b");
        assert_eq!(r(b"a\x1b[2Eb"), "a\n\nb");
        // A move into blank rows that prints nothing shows nothing.
        assert_eq!(r(b"a\x1b[5B"), "a");
    }

    #[test]
    fn cursor_position_is_relative_to_the_screen_top() {
        assert_eq!(r(b"one\ntwo\x1b[HX"), "Xne\ntwo");
        assert_eq!(r(b"one\ntwo\x1b[2;3HX"), "one\ntwX");
        assert_eq!(r(b"one\ntwo\x1b[1;5fX"), "one X\ntwo");
        // With more rows than a screen holds, row 1 is 24 rows up from the last.
        let mut input = Vec::new();
        for i in 0..30 {
            input.extend_from_slice(format!("row{i}\n").as_bytes());
        }
        input.extend_from_slice(b"\x1b[1;1HX");
        let out = r(&input);
        assert_eq!(out.lines().nth(7), Some("Xow7"));
        assert_eq!(out.lines().nth(6), Some("row6"));
    }

    #[test]
    fn erase_below_deletes_following_rows() {
        assert_eq!(r(b"one\ntwo\nthree\x1b[2A\r\x1b[3C\x1b[J"), "one");
        assert_eq!(r(b"one\ntwo\nthree\n\x1b[2A\x1b[0J"), "one\n");
    }

    #[test]
    fn erase_screen_keeps_scrollback() {
        assert_eq!(r(b"one\ntwo\n\x1b[1J\x1b[3J"), "one\ntwo\n");
        // `clear` then more output: the old rows stay and the new ones go below them.
        assert_eq!(r(b"one\ntwo\n\x1b[H\x1b[2J\x1b[3Jthree\n"), "one\ntwo\nthree\n");
        assert_eq!(r(b"one\ntwo\n\x1b[2J\x1b[Hthree\n"), "one\ntwo\nthree\n");
    }

    #[test]
    fn private_modes_and_unknown_csi_are_dropped() {
        assert_eq!(r(b"\x1b[?25la\x1b[?25h\x1b[?2004hb\x1b[>4;1mc\x1b[6nd\x1b[1 qe"), "abcde");
        assert_eq!(r(b"a\x1b[2Sb\x1b[3Lc\x1b[r"), "abc");
    }

    #[test]
    fn save_and_restore_cursor() {
        assert_eq!(r(b"ab\x1b7cd\ne\x1b8X"), "abXd\ne");
        assert_eq!(r(b"ab\x1b[scd\ne\x1b[uX"), "abXd\ne");
    }

    #[test]
    fn restore_without_save_goes_home() {
        assert_eq!(r(b"abc\x1b8X"), "Xbc");
    }

    #[test]
    fn reverse_index_moves_up_one_row() {
        assert_eq!(r(b"one\ntwo\x1bMX"), "oneX\ntwo");
        assert_eq!(r(b"one\x1bMX"), "oneX");
    }

    #[test]
    fn index_and_next_line_move_down() {
        assert_eq!(r(b"ab\x1bDc"), "ab\n  c");
        assert_eq!(r(b"ab\x1bEc"), "ab\nc");
    }

    // Real progress output.

    #[test]
    fn cargo_building_frame_vanishes() {
        let input = b"\x1b[1m\x1b[92m    Checking\x1b[0m lints v0.1.0 (/w/lints)\r\n\
            \x1b[1m\x1b[96m    Building\x1b[0m [          ] 0/1: lints        \r\x1b[K\
            \x1b[1m\x1b[33mwarning\x1b[0m\x1b[1m: unneeded `return` statement\x1b[0m\r\n";
        assert_eq!(
            r(input),
            "    Checking lints v0.1.0 (/w/lints)\nwarning: unneeded `return` statement\n"
        );
    }

    #[test]
    fn npm_spinner_frames_vanish() {
        let mut input = Vec::new();
        for frame in ["⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏", "⠋"] {
            input.extend_from_slice(frame.as_bytes());
            input.extend_from_slice(b"\x1b[1G\x1b[0K");
        }
        input.extend_from_slice("\r\nadded 123 packages in 4s\r\n⠹\x1b[1G\x1b[0K".as_bytes());
        assert_eq!(r(&input), "\nadded 123 packages in 4s\n");
    }

    #[test]
    fn docker_like_cursor_up_redraw_ends_in_final_state() {
        // buildkit draws a progress area, then moves up over it and redraws each row,
        // erasing what the new text does not cover.
        let input = b"#1 [internal] load build definition 0.1s\n\
            #2 [1/2] FROM alpine 0.2s\n\
            #3 [2/2] RUN make 0.0s\n\
            \x1b[3A\r#1 [internal] load build definition 0.1s done\x1b[K\n\
            #2 [1/2] FROM alpine 0.5s done\x1b[K\n\
            #3 [2/2] RUN make 1.9s\x1b[K\n\
            \x1b[3A\r#1 [internal] load build definition 0.1s done\x1b[K\n\
            #2 [1/2] FROM alpine 0.5s done\x1b[K\n\
            #3 [2/2] RUN make 4.2s done\x1b[K\n";
        assert_eq!(
            r(input),
            "#1 [internal] load build definition 0.1s done\n\
             #2 [1/2] FROM alpine 0.5s done\n\
             #3 [2/2] RUN make 4.2s done\n"
        );
    }

    #[test]
    fn shrinking_redraw_of_an_upper_row_keeps_rows_below() {
        let input = b"long first row\nsecond\n\x1b[2A\rshort\x1b[K\n";
        assert_eq!(r(input), "short\nsecond\n");
    }

    #[test]
    fn vitest_like_bottom_up_clear_then_redraw() {
        let input = b" \xc2\xb7 a.test.js\r\n \xc2\xb7 b.test.js\r\n\
            \x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2K\x1b[G \xe2\x9c\x93 a.test.js\r\n \xe2\x9c\x93 b.test.js\r\n";
        assert_eq!(r(input), " ✓ a.test.js\n ✓ b.test.js\n");
    }

    // OSC, DCS and friends.

    #[test]
    fn osc_hyperlink_text_is_kept() {
        let bel = b"see \x1b]8;;https://example.com/a\x07the docs\x1b]8;;\x07.";
        assert_eq!(r(bel), "see the docs.");
        let st = b"see \x1b]8;id=1;https://example.com\x1b\\the docs\x1b]8;;\x1b\\.";
        assert_eq!(r(st), "see the docs.");
    }

    #[test]
    fn osc_title_is_dropped() {
        assert_eq!(r(b"\x1b]0;cargo build\x07a\x1b]2;t\xc3\xa9st\x1b\\b"), "ab");
    }

    #[test]
    fn osc_cut_by_another_escape_ends_there() {
        assert_eq!(r(b"\x1b]0;title\x1b[31mred"), "red");
    }

    #[test]
    fn dcs_sos_pm_apc_strings_are_dropped() {
        assert_eq!(r(b"a\x1bPq#0;2;0;0;0\x07still dcs\x1b\\b"), "ab");
        assert_eq!(r(b"a\x1bXsos\x1b\\b\x1b^pm\x1b\\c\x1b_Gf=100;AAAA\x1b\\d"), "abcd");
    }

    #[test]
    fn string_aborted_by_can_resumes_text() {
        assert_eq!(r(b"a\x1b]0;title\x18b"), "ab");
    }

    #[test]
    fn charset_designations_are_dropped_with_their_designator() {
        assert_eq!(r(b"\x1b(Ba\x1b)0b\x1b*Ac\x1b+Bd\x1b#8e\x1b%Gf"), "abcdef");
    }

    #[test]
    fn other_two_byte_escapes_are_dropped() {
        assert_eq!(r(b"a\x1b=b\x1b>c\x1bcd\x1bNe"), "abcde");
    }

    #[test]
    fn c1_controls_act_like_their_escape_forms() {
        assert_eq!(r("\u{9b}31mred\u{9b}0m".as_bytes()), "red");
        assert_eq!(r("a\u{9d}0;title\u{9c}b".as_bytes()), "ab");
        assert_eq!(r("a\u{85}\u{88}b".as_bytes()), "a\nb");
        assert_eq!(r("ab\u{9b}1Dc".as_bytes()), "ac");
    }

    // Alternate screen.

    #[test]
    fn alternate_screen_is_discarded() {
        for mode in ["1049", "1047", "47"] {
            let input = format!("before\n\x1b[?{mode}hfull screen\nstuff\x1b[?{mode}lafter\n");
            assert_eq!(r(input.as_bytes()), "before\nafter\n", "mode {mode}");
        }
    }

    #[test]
    fn leaving_the_alternate_screen_restores_the_main_cursor() {
        assert_eq!(r(b"abc\x1b[?1049h\x1b[Hxyz\x1b[?1049l\rX"), "Xbc");
    }

    #[test]
    fn unterminated_alternate_screen_is_appended() {
        assert_eq!(
            r(b"before\n\x1b[?1049h\x1b[Hpanicked here\n"),
            format!("before\n{FULL_SCREEN}\npanicked here\n")
        );
        assert_eq!(r(b"before\x1b[?1049hpanicked"), format!("before\n{FULL_SCREEN}\npanicked"));
        assert_eq!(r(b"before\n\x1b[?1049h"), "before\n");
    }

    #[test]
    fn clearing_the_alternate_screen_clears_it() {
        assert_eq!(r(b"\x1b[?1049hframe 1\x1b[2J\x1b[Hframe 2"), format!("{FULL_SCREEN}\nframe 2"));
    }

    /// What `less` 590 wrote for a five-line file on TERM=xterm, `q` pressed: it draws the
    /// file and its `(END)` prompt on the alternate screen, erases the prompt, gives the
    /// screen back, and leaves the main screen blank.
    const LESS: &[u8] = b"\x1b[?1049h\x1b[22;0;0t\x1b[?1h\x1b=\rline 1 of the file\r\nline 2 of the file\r\n\
        line 3 of the file\r\nline 4 of the file\r\nline 5 of the file\r\n\x1b[7mf.txt (END)\x1b[27m\
        \x1b[K\r\x1b[K\x1b[?1l\x1b>\x1b[?1049l\x1b[23;0;0t";

    #[test]
    fn a_full_screen_program_leaves_its_last_screen_under_one_line() {
        let text = "line 1 of the file\nline 2 of the file\nline 3 of the file\n\
                    line 4 of the file\nline 5 of the file\n";
        assert_eq!(r(LESS), format!("{FULL_SCREEN}\n{text}"));
        assert_eq!(rw(LESS, 80), format!("{FULL_SCREEN}\n{text}"));
        // Smaller than what was drawn, so `reduce::screen` keeps it.
        assert!(r(LESS).len() < LESS.len());
    }

    #[test]
    fn every_alternate_screen_mode_leaves_its_last_screen() {
        for mode in ["1049", "1047", "47"] {
            let input = format!("\x1b[?{mode}h\x1b[Hfull screen\r\nstuff\x1b[?{mode}l\r\x1b[K");
            assert_eq!(r(input.as_bytes()), format!("{FULL_SCREEN}\nfull screen\nstuff"), "{mode}");
        }
    }

    #[test]
    fn the_last_alternate_screen_with_text_is_the_one_shown() {
        let input =
            b"\x1b[?1049hfirst\x1b[?1049l\x1b[?1049hsecond\x1b[?1049l\x1b[?1049h\x1b[?1049l\n";
        assert_eq!(r(input), format!("{FULL_SCREEN}\nsecond"));
        // Lossy: a screen cleared before it is given back left nothing to show, and the
        // frames before the clear are gone, as on a terminal.
        assert_eq!(r(b"\x1b[?1049hshown\x1b[2J\x1b[?1049l"), "");
    }

    #[test]
    fn output_on_the_main_screen_hides_a_closed_alternate_screen() {
        let input = b"\x1b[?1049hpager text\x1b[?1049l[main abc123] commit message\r\n";
        assert_eq!(r(input), "[main abc123] commit message\n");
    }

    // Malformed input.

    #[test]
    fn unterminated_escape_at_end_is_dropped() {
        for tail in [&b"\x1b"[..], b"\x1b[", b"\x1b[31", b"\x1b[?25", b"\x1b]0;tit", b"\x1b("] {
            let mut input = b"done\n".to_vec();
            input.extend_from_slice(tail);
            assert_eq!(r(&input), "done\n", "tail {tail:?}");
        }
    }

    #[test]
    fn stray_escape_is_dropped() {
        assert_eq!(r(b"a\x1b\x1b[31mb"), "ab");
        assert_eq!(r(b"a\x1b\x1b\x1b\x1b]0;t\x07b"), "ab");
        assert_eq!(r("a\x1b\u{e9}b".as_bytes()), "a\u{e9}b");
    }

    #[test]
    fn controls_inside_a_sequence_are_executed() {
        assert_eq!(r(b"ab\x1b[\r31mX"), "Xb");
        assert_eq!(r(b"a\x1b[3\x18b"), "ab");
        // As on xterm, the line feed is executed and the escape still takes the next byte.
        assert_eq!(r(b"a\x1b\nbc"), "a\nc");
    }

    #[test]
    fn invalid_utf8_is_replaced_lossily_in_the_screen_model() {
        assert_eq!(r(b"\x1b[1mok \xff\xe2\x82 done\x1b[0m\r\n"), "ok \u{FFFD}\u{FFFD} done\n");
        // An invalid byte inside a sequence cancels it and is still shown.
        assert_eq!(r(b"a\x1b[3\xffm"), "a\u{FFFD}m");
        assert_eq!(r(b"\xff\rX"), "X");
    }

    #[test]
    fn raw_8_bit_c1_bytes_are_invalid_utf8_not_controls() {
        // xterm and VTE in UTF-8 mode do the same: 0x9B alone is not a CSI.
        assert_eq!(r(b"a\x9b31mb"), "a\u{FFFD}31mb");
        assert_eq!(r(b"a\x9b31mb\r"), "a\u{FFFD}31mb");
    }

    #[test]
    fn working_memory_stays_within_the_input_size() {
        let input = JEST_FAILURES_PTY.repeat(20);
        let Cow::Owned(out) = render(input.as_bytes()) else { panic!("expected the screen model") };
        assert!(out.capacity() <= input.len(), "{} > {}", out.capacity(), input.len());
    }

    #[test]
    fn huge_csi_parameter_does_not_allocate() {
        let out = r(b"a\x1b[999999999Cb");
        assert_eq!(out.len(), 2 + MAX_GAP);
        assert!(out.starts_with('a') && out.ends_with('b'));
        let input = b"a\x1b[999999999;999999999Hb\x1b[999999999Bc\x1b[99999999999999999999999Gd";
        let out = r(input);
        assert!(out.len() <= input.len() * 4 + PAD_ALLOWANCE, "{} bytes", out.len());
    }

    #[test]
    fn repeated_padding_is_bounded_by_the_input() {
        let input = b"\x1b[4096Cx".repeat(1000);
        let out = r(&input);
        assert!(out.len() <= input.len() * 4 + PAD_ALLOWANCE, "{} bytes", out.len());
        let input = b"\x1b[65535Bx".repeat(1000);
        let out = r(&input);
        assert!(out.len() <= input.len() * 4 + PAD_ALLOWANCE, "{} bytes", out.len());
    }

    #[test]
    fn too_many_parameters_are_ignored() {
        let mut input = b"\x1b[".to_vec();
        for _ in 0..100 {
            input.extend_from_slice(b"1;");
        }
        input.extend_from_slice(b"mok");
        assert_eq!(r(&input), "ok");
    }

    #[test]
    fn rows_written_over_with_wider_characters_stay_whole() {
        assert_eq!(r("abc\r\u{e9}\u{e9}d".as_bytes()), "\u{e9}\u{e9}d");
        assert_eq!(r("abcdef\r\u{e9}x\u{2713}".as_bytes()), "\u{e9}x\u{2713}def");
        assert_eq!(r("\u{e9}\u{e9}\u{e9}\rab\x1b[Cxyz".as_bytes()), "ab\u{e9}xyz");
    }

    #[test]
    fn edited_rows_come_out_intact_once_out_of_reach() {
        let mut input = "caf\u{e9}\rC".as_bytes().to_vec();
        input.extend_from_slice(&b"\n".repeat(REACHABLE_ROWS + 5));
        input.extend_from_slice(b"end");
        let out = r(&input);
        assert!(out.starts_with("Caf\u{e9}\n\n"), "{out:?}");
        assert!(out.ends_with("\nend"));
        assert_eq!(out.matches('\n').count(), REACHABLE_ROWS + 5);
    }

    #[test]
    fn tall_progress_area_redraws_in_place() {
        // Taller than the 24 rows `CSI H` assumes; relative moves still reach its top.
        let mut input = Vec::new();
        for frame in 0..3 {
            if frame > 0 {
                input.extend_from_slice(b"\x1b[40A");
            }
            for row in 0..40 {
                input.extend_from_slice(format!("\rstep {row}: frame {frame}\x1b[K\n").as_bytes());
            }
        }
        let out = r(&input);
        assert_eq!(out.lines().count(), 40);
        assert!(out.lines().all(|line| line.ends_with("frame 2")), "{out}");
    }

    #[test]
    fn rows_far_above_the_cursor_are_final() {
        let mut input = Vec::new();
        for i in 0..(REACHABLE_ROWS + 10) {
            input.extend_from_slice(format!("row{i}\r\n").as_bytes());
        }
        input.extend_from_slice(b"\x1b[9999A\rX");
        let out = r(&input);
        assert!(out.starts_with("row0\n"));
        assert_eq!(out.lines().nth(11), Some("Xow11"));
        assert_eq!(out.lines().count(), REACHABLE_ROWS + 10);
    }

    // Corpus excerpts (shared/corpus/*-pty.json), kept literal so the test stands alone.

    const CARGO_CLIPPY_PTY: &str = "\x1b[1m\x1b[92m    Checking\x1b[0m lints v0.1.0 (/home/dev/work/lints)\r\n\x1b[1m\x1b[96m    Building\x1b[0m [                             ] 0/1: lints                                                               \r\x1b[K\x1b[1m\x1b[33mwarning\x1b[0m\x1b[1m: unneeded `return` statement\x1b[0m\r\n \x1b[1m\x1b[94m--> \x1b[0msrc/lib.rs:2:5\r\n  \x1b[1m\x1b[94m|\x1b[0m\r\n\x1b[1m\x1b[94m2\x1b[0m \x1b[1m\x1b[94m|\x1b[0m     return v.len() == 0;\r\n  \x1b[1m\x1b[94m|\x1b[0m     \x1b[1m\x1b[33m^^^^^^^^^^^^^^^^^^^\x1b[0m\r\n  \x1b[1m\x1b[94m|\x1b[0m\r\n\r\n\x1b[1m\x1b[96m    Building\x1b[0m [                             ] 0/1: lints                                                               \r\x1b[K\x1b[1m\x1b[33mwarning\x1b[0m: `lints` (lib) generated 7 warnings (run `cargo clippy --fix --lib -p lints -- ` to apply 5 suggestions)\r\n\x1b[1m\x1b[92m    Finished\x1b[0m `dev` profile [unoptimized + debuginfo] target(s) in 0.10s\r\n";

    const JEST_FAILURES_PTY: &str = "\x1b[1m\x1b[2mDetermining test suites to run...\x1b[22m\x1b[22m\x1b[999D\x1b[K\r\n\r\x1b[K\r\x1b[1A\r\n\x1b[0m\x1b[7m\x1b[33m\x1b[1m RUNS \x1b[22m\x1b[39m\x1b[27m\x1b[0m \x1b[2m__tests__/\x1b[22m\x1b[1mcoupon.test.js\x1b[22m\r\n\r\x1b[K\r\x1b[1A\r\x1b[K\r\x1b[1A\r\n\x1b[0m\x1b[7m\x1b[33m\x1b[1m RUNS \x1b[22m\x1b[39m\x1b[27m\x1b[0m \x1b[2m__tests__/\x1b[22m\x1b[1mcoupon.test.js\x1b[22m\r\n\r\x1b[K\r\x1b[1A\r\x1b[K\r\x1b[1A\x1b[0m\x1b[7m\x1b[1m\x1b[31m FAIL \x1b[39m\x1b[22m\x1b[27m\x1b[0m \x1b[2m__tests__/\x1b[22m\x1b[1mcoupon.test.js\x1b[22m\r\n\r\n\x1b[0m\x1b[7m\x1b[33m\x1b[1m RUNS \x1b[22m\x1b[39m\x1b[27m\x1b[0m \x1b[2m__tests__/\x1b[22m\x1b[1mcoupon.test.js\x1b[22m\r\n\r\x1b[K\r\x1b[1A\r\x1b[K\r\x1b[1A\x1b[1m\x1b[31m  \x1b[1m\u{25cf} \x1b[22m\x1b[1mapplyCoupon \u{203a} unknown code keeps cart and records code\x1b[39m\x1b[22m\r\n\r\n    \x1b[2mexpect(\x1b[22m\x1b[31mreceived\x1b[39m\x1b[2m).\x1b[22mtoEqual\x1b[2m(\x1b[22m\x1b[32mexpected\x1b[39m\x1b[2m) // deep equality\x1b[22m\r\n\r\n    \x1b[32m-   \"rejectedCode\": \"BOGUS\",\x1b[39m\r\n\x1b[2m      \x1b[2mat Object.toEqual (\x1b[22m\x1b[2m\x1b[0m\x1b[36m__tests__/coupon.test.js\x1b[39m\x1b[0m\x1b[2m:8:58)\x1b[22m\x1b[2m\x1b[22m\r\n\r\n\x1b[0m\x1b[7m\x1b[33m\x1b[1m RUNS \x1b[22m\x1b[39m\x1b[27m\x1b[0m \x1b[2m__tests__/\x1b[22m\x1b[1msuite2.test.js\x1b[22m\r\n\r\x1b[K\r\x1b[1A\r\x1b[K\r\x1b[1A\x1b[0m\x1b[7m\x1b[1m\x1b[32m PASS \x1b[39m\x1b[22m\x1b[27m\x1b[0m \x1b[2m__tests__/\x1b[22m\x1b[1msuite2.test.js\x1b[22m\r\n\r\n\x1b[0m\x1b[7m\x1b[33m\x1b[1m RUNS \x1b[22m\x1b[39m\x1b[27m\x1b[0m \x1b[2m__tests__/\x1b[22m\x1b[1msuite2.test.js\x1b[22m\r\n\r\x1b[K\r\x1b[1A\r\x1b[K\r\x1b[1A\x1b[999D\x1b[K\r\n\x1b[1mTest Suites: \x1b[22m\x1b[1m\x1b[31m1 failed\x1b[39m\x1b[22m, \x1b[1m\x1b[32m8 passed\x1b[39m\x1b[22m, 9 total\r\n\x1b[1mTests:       \x1b[22m\x1b[1m\x1b[31m2 failed\x1b[39m\x1b[22m, \x1b[1m\x1b[32m242 passed\x1b[39m\x1b[22m, 244 total\r\n\x1b[2mRan all test suites\x1b[22m\x1b[2m.\x1b[22m\r\n\u{2819}\x1b[1G\x1b[0K";

    const NPM_INSTALL_PTY: &str = "\u{2819}\x1b[1G\x1b[0K\u{2839}\x1b[1G\x1b[0K\u{2838}\x1b[1G\x1b[0K\u{283c}\x1b[1G\x1b[0K\u{2834}\x1b[1G\x1b[0K\u{2819}\x1b[1G\x1b[0K\u{2839}\x1b[1G\x1b[0K\r\nadded 123 packages in 4s\r\n\u{2839}\x1b[1G\x1b[0K\r\n\u{2839}\x1b[1G\x1b[0K20 packages are looking for funding\r\n\u{2839}\x1b[1G\x1b[0K  run `npm fund` for details\r\n\u{2839}\x1b[1G\x1b[0K";

    const VITEST_FAILURES_PTY: &str = "\r\n\x1b[1m\x1b[7m\x1b[36m RUN \x1b[39m\x1b[27m\x1b[22m \x1b[36mv2.1.8 \x1b[39m\x1b[90m/home/dev/work/vitestproj\x1b[39m\r\n\r\n\x1b[?25l \x1b[32m\u{2713}\x1b[39m \x1b[2mtest/\x1b[22mformat0\x1b[2m.test.js\x1b[22m\x1b[2m (25)\x1b[22m\r\n \x1b[90m\u{b7}\x1b[39m \x1b[2mtest/\x1b[22minvoice\x1b[2m.test.js\x1b[22m\x1b[2m (3)\x1b[22m\r\n\x1b[?25l\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2K\x1b[G \x1b[32m\u{2713}\x1b[39m \x1b[2mtest/\x1b[22mformat0\x1b[2m.test.js\x1b[22m\x1b[2m (25)\x1b[22m\r\n \x1b[31m\u{276f}\x1b[39m \x1b[2mtest/\x1b[22minvoice\x1b[2m.test.js\x1b[22m\x1b[2m (3)\x1b[22m\r\n   \x1b[31m\u{276f}\x1b[39m splitInvoice\x1b[2m (1)\x1b[22m\r\n     \x1b[31m\u{d7}\x1b[39m distributes the remainder\r\n\r\n\x1b[31m\x1b[1m\x1b[7m FAIL \x1b[27m\x1b[22m\x1b[39m test/invoice.test.js\x1b[2m > \x1b[22msplitInvoice\x1b[2m > \x1b[22mdistributes the remainder\r\n\x1b[31m\x1b[1mAssertionError\x1b[22m: expected [ 333, 333, 333 ] to deeply equal [ 334, 333, 333 ]\x1b[39m\r\n\x1b[32m-   334,\x1b[39m\r\n\x1b[31m+   333,\x1b[39m\r\n\x1b[36m \x1b[2m\u{276f}\x1b[22m test/invoice.test.js:\x1b[2m6:35\x1b[22m\x1b[39m\r\n\r\n\x1b[2m Test Files \x1b[22m \x1b[1m\x1b[31m1 failed\x1b[39m\x1b[22m\x1b[2m | \x1b[22m\x1b[1m\x1b[32m6 passed\x1b[39m\x1b[22m\x1b[90m (7)\x1b[39m\r\n\x1b[2m      Tests \x1b[22m \x1b[1m\x1b[31m2 failed\x1b[39m\x1b[22m\x1b[2m | \x1b[22m\x1b[1m\x1b[32m151 passed\x1b[39m\x1b[22m\x1b[90m (153)\x1b[39m\r\n\r\n\x1b[?25h\x1b[?25h\u{2819}\x1b[1G\x1b[0K";

    #[test]
    fn corpus_cargo_clippy_pty_keeps_warnings_and_drops_the_progress_bar() {
        let out = r(CARGO_CLIPPY_PTY.as_bytes());
        assert_clean(&out);
        assert_lines(
            &out,
            &[
                "    Checking lints v0.1.0 (/home/dev/work/lints)",
                "warning: unneeded `return` statement",
                " --> src/lib.rs:2:5",
                "2 |     return v.len() == 0;",
                "  |     ^^^^^^^^^^^^^^^^^^^",
                "warning: `lints` (lib) generated 7 warnings (run `cargo clippy --fix --lib -p lints -- ` to apply 5 suggestions)",
                "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.10s",
            ],
        );
        assert_no_line_contains(&out, "Building");
        assert!(out.ends_with("0.10s\n"));
    }

    #[test]
    fn corpus_jest_failures_pty_keeps_results_and_drops_runs_lines() {
        let out = r(JEST_FAILURES_PTY.as_bytes());
        assert_clean(&out);
        assert_lines(
            &out,
            &[
                " FAIL  __tests__/coupon.test.js",
                "  ● applyCoupon › unknown code keeps cart and records code",
                "    expect(received).toEqual(expected) // deep equality",
                "    -   \"rejectedCode\": \"BOGUS\",",
                "      at Object.toEqual (__tests__/coupon.test.js:8:58)",
                " PASS  __tests__/suite2.test.js",
                "Test Suites: 1 failed, 8 passed, 9 total",
                "Tests:       2 failed, 242 passed, 244 total",
                "Ran all test suites.",
            ],
        );
        assert_no_line_contains(&out, "RUNS");
        assert_no_line_contains(&out, "\u{2819}");
        assert!(out.ends_with("Ran all test suites.\n"));
    }

    #[test]
    fn corpus_npm_install_pty_keeps_the_summary_and_drops_the_spinner() {
        let out = r(NPM_INSTALL_PTY.as_bytes());
        assert_clean(&out);
        assert_eq!(
            out,
            "\nadded 123 packages in 4s\n\n20 packages are looking for funding\n  run `npm fund` for details\n"
        );
    }

    #[test]
    fn corpus_vitest_failures_pty_keeps_the_final_tree_and_failures() {
        let out = r(VITEST_FAILURES_PTY.as_bytes());
        assert_clean(&out);
        assert_lines(
            &out,
            &[
                " RUN  v2.1.8 /home/dev/work/vitestproj",
                " ✓ test/format0.test.js (25)",
                " ❯ test/invoice.test.js (3)",
                "     × distributes the remainder",
                " FAIL  test/invoice.test.js > splitInvoice > distributes the remainder",
                "AssertionError: expected [ 333, 333, 333 ] to deeply equal [ 334, 333, 333 ]",
                "-   334,",
                "+   333,",
                " ❯ test/invoice.test.js:6:35",
                " Test Files  1 failed | 6 passed (7)",
                "      Tests  2 failed | 151 passed (153)",
            ],
        );
        // The in-progress frame (`·` = still running) was redrawn away.
        assert_no_line_contains(&out, "\u{b7} test/invoice");
        assert_eq!(out.matches("format0").count(), 1);
    }

    // Width and autowrap.

    fn rw(bytes: &[u8], cols: u16) -> String {
        render_width(bytes, Some(cols)).into_owned()
    }

    /// `\x1b[0m` in front keeps a test input off the fast path.
    fn drawn(text: &str) -> Vec<u8> {
        format!("\x1b[0m{text}").into_bytes()
    }

    #[test]
    fn no_width_renders_as_render_does() {
        for input in [
            &b"a\r\nb"[..],
            JEST_FAILURES_PTY.as_bytes(),
            CARGO_CLIPPY_PTY.as_bytes(),
            b"plain\n",
            b"\x1b[?1049hfull\x1b[2J",
        ] {
            assert_eq!(render_width(input, None), render(input));
            assert_eq!(render_width(input, Some(0)), render(input));
        }
    }

    #[test]
    fn long_plain_line_renders_unchanged_at_any_width() {
        let text = format!("{}  {}\nshort\n", "x".repeat(98), "y".repeat(150));
        assert!(matches!(render_width(text.as_bytes(), Some(100)), Cow::Borrowed(_)));
        assert_eq!(rw(text.as_bytes(), 100), text);
        // Drawn through the screen model, its soft-wrapped rows join back into one line.
        let long = "z".repeat(250);
        assert_eq!(rw(&drawn(&format!("{long}\r\n{long}")), 100), format!("{long}\n{long}"));
    }

    #[test]
    fn exactly_the_width_then_a_line_break_is_one_row() {
        assert_eq!(rw(&drawn("0123456789\r\nnext\r\n"), 10), "0123456789\nnext\n");
        assert_eq!(rw(&drawn("0123456789\nnext"), 10), "0123456789\nnext");
        assert_eq!(rw(&drawn("0123456789\r\n\r\n"), 10), "0123456789\n\n");
        // And at the end of the input, a pending wrap adds no row.
        assert_eq!(rw(&drawn("0123456789"), 10), "0123456789");
    }

    #[test]
    fn pending_wrap_waits_for_the_next_printed_character() {
        assert_eq!(rw(&drawn("0123456789X"), 10), "0123456789X");
        assert_eq!(rw(&drawn("0123456789\rX"), 10), "X123456789");
        // Cursor movement and erasing cancel it, acting from the last column.
        assert_eq!(rw(&drawn("0123456789\x08X"), 10), "01234567X9");
        assert_eq!(rw(&drawn("0123456789\x1b[KX"), 10), "012345678X");
        assert_eq!(rw(&drawn("0123456789\x1b[3CX"), 10), "012345678X");
        assert_eq!(rw(&drawn("0123456789\x1b[GX"), 10), "X123456789");
        // A colour between the two does not.
        assert_eq!(rw(&drawn("0123456789\x1b[31mX"), 10), "0123456789X");
    }

    #[test]
    fn a_progress_line_wrapped_over_two_rows_takes_two_erases() {
        let frame = "Fetching crates [=======>    ] 12/40"; // 36 cells: two rows of 20
        let two = format!("{frame}\r\x1b[2K\x1b[1A\r\x1b[2KDone\r\n");
        assert_eq!(rw(&drawn(&two), 20), "Done\n");
        // One erase clears only the row the cursor is on; the first stays, as on a screen.
        let one = format!("{frame}\r\x1b[2KDone\r\n");
        let out = rw(&drawn(&one), 20);
        assert_eq!(out, "Fetching crates [===Done\n");
        // Without a width one erase is enough: the frame was one row.
        assert_eq!(r(&drawn(&one)), "Done\n");
    }

    #[test]
    fn cursor_moves_count_screen_rows() {
        let a25 = "a".repeat(25);
        let out = rw(&drawn(&format!("{a25}\x1b[2A\rX")), 10);
        assert_eq!(out, format!("X{}", "a".repeat(24)));
        // Erasing below from the first row removes all three.
        assert_eq!(rw(&drawn(&format!("{a25}\x1b[2A\r\x1b[Jok")), 10), "ok");
        // `CSI C` stops at the last column.
        assert_eq!(rw(&drawn("ab\x1b[99CZ"), 10), "ab       Z");
    }

    #[test]
    fn rows_padded_to_the_width_end_their_lines() {
        let padded = |text: &str| format!("{text:<20}");
        let input = format!(
            "{}{}{}\x1b[1mthis line is longer than the screen\x1b[0m{}\r\n",
            padded("   PASS a"),
            padded(""),
            padded("   FAIL b"),
            " ".repeat(5)
        );
        let out = rw(&drawn(&input), 20);
        let lines: Vec<&str> = out.lines().map(str::trim_end).collect();
        assert_eq!(lines, ["   PASS a", "", "   FAIL b", "this line is longer than the screen"]);
    }

    #[test]
    fn erasing_a_rows_end_forgets_that_it_wrapped() {
        // Row 1 wrapped into row 2, then was cut short: the two are separate lines again.
        let out = rw(&drawn("0123456789abc\x1b[1A\x1b[6G\x1b[K\x1b[1B\r\x1b[2Knew"), 10);
        assert_eq!(out, "01234\nnew");
        // Blanking up to the cursor keeps the mark unless the cursor is in the last column.
        assert_eq!(rw(&drawn("0123456789abc\x1b[1A\x1b[2G\x1b[1K"), 10), "  23456789abc");
    }

    #[test]
    fn non_ascii_characters_count_one_column() {
        let out = rw(&drawn(&format!("{}\r\x1b[K", "ä".repeat(12))), 10);
        assert_eq!(out, "ä".repeat(10));
        let out = rw(&drawn(&format!("{}\x1b[1A\rX", "✓".repeat(12))), 10);
        assert_eq!(out, format!("X{}", "✓".repeat(11)));
    }

    #[test]
    fn a_row_of_one_column_wraps_every_character() {
        assert_eq!(rw(&drawn("abc\x1b[1A\x08X"), 1), "aXc");
        // A row of one cell cannot end in two spaces: everything joins.
        assert_eq!(rw(&drawn("a b  c\r\nd"), 1), "a b  c\nd");
    }

    #[test]
    fn the_alternate_screen_wraps_at_the_same_width() {
        let out = rw(b"main\r\n\x1b[?1049h0123456789abc\x1b[1A\rX", 10);
        assert_eq!(out, format!("main\n{FULL_SCREEN}\nX123456789abc"));
    }

    #[test]
    fn wrapped_rows_far_above_the_cursor_stay_joined() {
        // Each line wraps over three rows, so most rows are flushed while the screen plays.
        let line = "w".repeat(25);
        let input = format!("{line}\r\n").repeat(REACHABLE_ROWS);
        let out = rw(&drawn(&input), 10);
        assert_eq!(out, format!("{line}\n").repeat(REACHABLE_ROWS));
    }

    /// A real `cargo nextest run` in a 100-column PTY: indicatif pads each line it prints
    /// above its three-row progress area to the width, writes no line feed, and redraws the
    /// area with `CSI 2A` and row-by-row erases.
    const NEXTEST_PROGRESS_PTY: &str =
        include_str!("../../tests/fixtures/tests/cargo-nextest-progressbar-pty.json");

    #[test]
    fn corpus_nextest_progress_bar_pty_keeps_every_line_at_its_width() {
        let case: serde_json::Value =
            serde_json::from_str(NEXTEST_PROGRESS_PTY).unwrap_or_default();
        let text = case["text"].as_str().unwrap_or_default().as_bytes();
        let cols = case["capture"]["cols"].as_u64().and_then(|c| u16::try_from(c).ok());
        assert_eq!(cols, Some(100));
        let out = render_width(text, cols);
        assert_clean(&out);
        let keep: Vec<&str> =
            case["must_keep"].as_array().into_iter().flatten().filter_map(|v| v.as_str()).collect();
        assert!(keep.len() >= 8, "{keep:?}");
        for line in keep {
            assert!(out.contains(line), "missing {line:?} in:\n{out}");
        }
        let lines: Vec<&str> = out.lines().map(str::trim_end).collect();
        assert_lines(
            &lines.join("\n"),
            &[
                "────────────",
                " Nextest run ID 3d1d651a-a3c5-4dd1-9d91-b14d4762449b with nextest profile: default",
                "    Starting 113 tests across 1 binary (1 test skipped)",
                "        FAIL [   0.245s] invoice tests::split_preserves_total",
                "  stdout ───",
                "    test tests::split_preserves_total ... FAILED",
                "    thread 'tests::split_preserves_total' (13307) panicked at src/lib.rs:234:9:",
                "    assertion `left == right` failed",
                "      left: 99",
                "     right: 100",
                "        PASS [   0.005s] invoice tests::total_case_000",
                "        PASS [   0.009s] invoice tests::total_case_101",
                "     Summary [   0.878s] 113 tests run: 110 passed, 3 failed, 1 skipped",
                "        FAIL [   0.256s] invoice tests::tax_rounds_half_up",
                "error: test run failed",
            ],
        );
        // A backtrace frame wider than the screen comes out whole, on one line.
        assert!(lines.iter().any(|l| {
            l.len() > 100 && l.trim_start().starts_with("at /rustc/") && l.ends_with(":689:5")
        }));
        assert_eq!(lines.iter().filter(|l| l.contains("PASS [")).count(), 110);
        // No frame of the progress area survives its redraws.
        assert_no_line_contains(&out, "Running [");
        assert_no_line_contains(&out, " running, ");
        // Without the width every padded line is one logical line, which the erases wiped:
        // the bug this width exists for.
        assert_eq!(render(text).trim(), "error: test run failed");
    }

    // Properties.

    /// Bytes biased towards what terminals act on, so that sequences actually form.
    fn ansi_soup() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(b"\x1b".to_vec()),
            Just(b"\x1b[".to_vec()),
            Just(b"\x1b]8;;".to_vec()),
            Just(b"\x1b\\".to_vec()),
            Just(b"\x1bP".to_vec()),
            Just(b"\x1b[?1049h".to_vec()),
            Just(b"\x1b[?1049l".to_vec()),
            Just("\u{9b}".as_bytes().to_vec()),
            Just("\u{9c}".as_bytes().to_vec()),
            Just("ä✓".as_bytes().to_vec()),
            (0usize..100_000, prop::sample::select(&b"ABCDEFGHJKfmsu`"[..]))
                .prop_map(|(n, f)| format!("\x1b[{n}{}", char::from(f)).into_bytes()),
            prop::sample::select(&b"\r\n\x08\t\x07\x18\x1a\x7f;?0123456789 abc"[..])
                .prop_map(|b| vec![b]),
            prop::collection::vec(any::<u8>(), 0..4),
        ];
        prop::collection::vec(piece, 0..64).prop_map(|pieces| pieces.concat())
    }

    fn long_lines() -> impl Strategy<Value = Vec<u8>> {
        (prop::collection::vec(("[a-z ✓]{0,400}", 0u8..4), 0..8)).prop_map(|lines| {
            let mut out = Vec::new();
            for (text, end) in lines {
                out.extend_from_slice(text.as_bytes());
                out.extend_from_slice([&b"\n"[..], b"\r\n", b"\r", b"\x1b[K\r"][usize::from(end)]);
            }
            out
        })
    }

    fn check_invariants(input: &[u8]) -> Result<(), TestCaseError> {
        let out = render(input);
        prop_assert!(
            !out.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
            "control left in {:?}",
            out
        );
        prop_assert!(out.len() <= input.len() * 4 + PAD_ALLOWANCE, "{} bytes", out.len());
        prop_assert_eq!(&out, &render(input));
        Ok(())
    }

    /// A straightforward grid of cells to check the screen model against, for inputs that
    /// stay inside its limits (few rows, short moves).
    fn reference(pieces: &[Piece]) -> String {
        let mut grid: Vec<Vec<char>> = vec![Vec::new()];
        let (mut row, mut col) = (0usize, 0usize);
        for piece in pieces {
            match piece {
                Piece::Text(text) => {
                    while grid.len() <= row {
                        grid.push(Vec::new());
                    }
                    let line = &mut grid[row];
                    for c in text.chars() {
                        while line.len() < col {
                            line.push(' ');
                        }
                        if col < line.len() {
                            line[col] = c;
                        } else {
                            line.push(c);
                        }
                        col += 1;
                    }
                }
                Piece::Newline => {
                    row += 1;
                    while grid.len() <= row {
                        grid.push(Vec::new());
                    }
                    col = 0;
                }
                Piece::Return => col = 0,
                Piece::Backspace => col = col.saturating_sub(1),
                Piece::EraseInLine(mode) => {
                    if let Some(line) = grid.get_mut(row) {
                        match mode {
                            1 if col + 1 < line.len() => line[..=col].fill(' '),
                            1 | 2 => line.clear(),
                            _ => line.truncate(col),
                        }
                    }
                }
                Piece::Csi(n, fin) => {
                    let n = (*n).max(1);
                    match fin {
                        b'A' => row = row.saturating_sub(n),
                        b'B' => row += n,
                        b'C' => col += n,
                        b'D' => col = col.saturating_sub(n),
                        b'G' => col = n - 1,
                        b'K' | b'J' => {
                            if let Some(line) = grid.get_mut(row) {
                                line.truncate(col);
                            }
                            if *fin == b'J' && row < grid.len() {
                                grid.truncate(row + 1);
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        let rows: Vec<String> = grid.iter().map(|line| line.iter().collect()).collect();
        rows.join("\n")
    }

    #[derive(Clone, Debug)]
    enum Piece {
        Text(String),
        Newline,
        Return,
        Backspace,
        EraseInLine(u8),
        Csi(usize, u8),
    }

    impl Piece {
        fn bytes(&self) -> Vec<u8> {
            match self {
                Piece::Text(text) => text.as_bytes().to_vec(),
                Piece::Newline => b"\r\n".to_vec(),
                Piece::Return => b"\r".to_vec(),
                Piece::Backspace => b"\x08".to_vec(),
                Piece::EraseInLine(mode) => format!("\x1b[{mode}K").into_bytes(),
                // `K` and `J` here are mode 0, which is what a parameter of 0 or none means.
                Piece::Csi(n, fin @ (b'K' | b'J')) if *n > 0 => vec![0x1b, b'[', *fin],
                Piece::Csi(n, fin) => format!("\x1b[{n}{}", char::from(*fin)).into_bytes(),
            }
        }
    }

    fn pieces() -> impl Strategy<Value = Vec<Piece>> {
        let piece = prop_oneof![
            3 => "[a-c\u{e9}\u{2713}\t]{1,6}".prop_map(Piece::Text),
            1 => Just(Piece::Newline),
            1 => Just(Piece::Return),
            1 => Just(Piece::Backspace),
            1 => (0u8..3).prop_map(Piece::EraseInLine),
            2 => (0usize..4, prop::sample::select(&b"ABCDGKJ"[..])).prop_map(|(n, f)| Piece::Csi(n, f)),
        ];
        prop::collection::vec(piece, 0..40)
    }

    /// [`reference`] on a screen `width` cells wide, with the pending wrap, row flags and
    /// joining rule the module docs describe.
    fn reference_width(pieces: &[Piece], width: usize) -> String {
        let mut grid: Vec<(Vec<char>, bool)> = vec![(Vec::new(), false)];
        let (mut row, mut col) = (0usize, 0usize);
        let last = width - 1;
        for piece in pieces {
            match piece {
                Piece::Text(text) => {
                    for c in text.chars() {
                        if col == width {
                            if let Some(line) = grid.get_mut(row) {
                                line.1 = true;
                            }
                            row += 1;
                            col = 0;
                        }
                        while grid.len() <= row {
                            grid.push((Vec::new(), false));
                        }
                        let line = &mut grid[row].0;
                        while line.len() < col {
                            line.push(' ');
                        }
                        if col < line.len() {
                            line[col] = c;
                        } else {
                            line.push(c);
                        }
                        col += 1;
                    }
                }
                Piece::Newline => {
                    row += 1;
                    while grid.len() <= row {
                        grid.push((Vec::new(), false));
                    }
                    col = 0;
                }
                Piece::Return => col = 0,
                Piece::Backspace => col = col.min(last).saturating_sub(1),
                Piece::EraseInLine(mode) => {
                    col = col.min(last);
                    if let Some((line, wrapped)) = grid.get_mut(row) {
                        match mode {
                            1 if col + 1 < line.len() => line[..=col].fill(' '),
                            1 | 2 => line.clear(),
                            _ => line.truncate(col),
                        }
                        if *mode != 1 || col == last {
                            *wrapped = false;
                        }
                    }
                }
                Piece::Csi(n, fin) => {
                    let n = (*n).max(1);
                    col = col.min(last);
                    match fin {
                        b'A' => row = row.saturating_sub(n),
                        b'B' => row += n,
                        b'C' => col = (col + n).min(last),
                        b'D' => col = col.saturating_sub(n),
                        b'G' => col = (n - 1).min(last),
                        b'K' | b'J' => {
                            if let Some((line, wrapped)) = grid.get_mut(row) {
                                line.truncate(col);
                                *wrapped = false;
                            }
                            if *fin == b'J' && row < grid.len() {
                                grid.truncate(row + 1);
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        let mut out = String::new();
        let mut joins = false;
        for (i, (line, wrapped)) in grid.iter().enumerate() {
            if i > 0 && !joins {
                out.push('\n');
            }
            joins = *wrapped && !line.ends_with(&[' ', ' ']);
            out.extend(line);
        }
        out
    }

    proptest! {
        #[test]
        fn screen_model_matches_a_plain_cell_grid(pieces in pieces()) {
            let input: Vec<u8> = pieces.iter().flat_map(Piece::bytes).collect();
            prop_assert_eq!(r(&input), reference(&pieces), "input {:?}", String::from_utf8_lossy(&input));
        }

        #[test]
        fn wrapping_screen_matches_a_cell_grid_of_that_width(
            pieces in pieces(),
            width in 1usize..8,
        ) {
            let mut input = b"\x1b[0m".to_vec();
            input.extend(pieces.iter().flat_map(Piece::bytes));
            let cols = u16::try_from(width).unwrap_or(1);
            prop_assert_eq!(
                rw(&input, cols),
                reference_width(&pieces, width),
                "input {:?}",
                String::from_utf8_lossy(&input)
            );
        }

        /// Plain lines that end in `\r\n`, wider than the screen or not, render without
        /// the screen model as they do with it.
        #[test]
        fn crlf_text_only_drops_the_cr_of_each_crlf(
            lines in prop::collection::vec("[ -~é漢]{0,70}", 1..40),
            end in prop_oneof![Just("\r\n"), Just("\n"), Just("")],
        ) {
            // Lines of every length around the 16-byte blocks the copy moves, the last one
            // ending at the input's end or not: the result is the input less its `\r`s.
            let input = format!("{}{end}", lines.join("\r\n"));
            prop_assume!(input.contains('\r'));
            prop_assert_eq!(
                crlf_text(input.as_bytes(), usize::MAX),
                Some(input.replace("\r\n", "\n")),
                "input {:?}", input
            );
        }

        #[test]
        fn crlf_text_wraps_as_the_screen_model_does(
            lines in prop::collection::vec(
                prop::collection::vec(
                    prop_oneof![Just("a"), Just(" "), Just("  "), Just("\t"), Just("é"), Just("漢"), Just("🦀")],
                    0..24,
                ),
                1..6,
            ),
            width in 1usize..12,
            end in prop_oneof![Just("\r\n"), Just("")],
        ) {
            let lines: Vec<String> = lines.into_iter().map(|pieces| pieces.concat()).collect();
            let input = format!("{}{end}", lines.join("\r\n"));
            // Without a `\r` the text is plain, and another path takes it.
            prop_assume!(input.contains('\r'));
            let played = Terminal::new(input.len(), width).play(input.as_bytes());
            prop_assert_eq!(crlf_text(input.as_bytes(), width), Some(played), "input {:?}", input);
        }

        #[test]
        fn any_width_renders_clean_and_bounded(input in ansi_soup(), cols in 0u16..130) {
            let out = render_width(&input, Some(cols));
            prop_assert!(
                !out.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
                "control left in {:?}",
                out
            );
            prop_assert!(out.len() <= input.len() * 4 + PAD_ALLOWANCE, "{} bytes", out.len());
            prop_assert_eq!(&out, &render_width(&input, Some(cols)));
        }

        #[test]
        fn long_lines_at_a_width_keep_their_text(input in long_lines(), cols in 1u16..130) {
            let out = render_width(&input, Some(cols));
            prop_assert!(out.len() <= input.len() * 4 + PAD_ALLOWANCE, "{} bytes", out.len());
            // Drawn text with no carriage return and no double space (which might end a
            // row in padding) wraps and joins back into itself.
            let text = String::from_utf8_lossy(&input);
            if !text.contains('\r') && !text.contains("  ") {
                let drawn = [b"\x1b[0m", &input[..]].concat();
                prop_assert_eq!(render_width(&drawn, Some(cols)), text);
            }
        }

        #[test]
        fn arbitrary_bytes_render_clean_and_bounded(input in prop::collection::vec(any::<u8>(), 0..512)) {
            check_invariants(&input)?;
        }

        #[test]
        fn ansi_soup_renders_clean_and_bounded(input in ansi_soup()) {
            check_invariants(&input)?;
        }

        #[test]
        fn long_lines_render_clean_and_bounded(input in long_lines()) {
            check_invariants(&input)?;
        }

        #[test]
        fn plain_text_renders_to_itself(text in "[^\\x00-\\x08\\x0b-\\x1f\\x7f-\\u{9f}]{0,300}") {
            prop_assert_eq!(render(text.as_bytes()), text.as_str());
            prop_assert_eq!(screen(text.as_bytes()), text);
        }

        #[test]
        fn fast_path_agrees_with_the_screen_model(input in prop::collection::vec(any::<u8>(), 0..256)) {
            if is_plain(&input) {
                prop_assert_eq!(render(&input).into_owned(), screen(&input));
            }
        }

        #[test]
        fn crlf_path_agrees_with_the_screen_model(
            lines in prop::collection::vec(crlf_line(), 0..12),
            ends in prop::collection::vec(prop_oneof![Just(&b"\r\n"[..]), Just(&b"\n"[..])], 12),
            last_end in any::<bool>(),
            cols in prop_oneof![Just(None), (1u16..12).prop_map(Some)],
        ) {
            let mut input = Vec::new();
            for (i, line) in lines.iter().enumerate() {
                input.extend_from_slice(line);
                if i + 1 < lines.len() || last_end {
                    input.extend_from_slice(ends[i]);
                }
            }
            // Plain input has its own path, which does not wrap (see `render_width`).
            if is_plain(&input) {
                return Ok(());
            }
            let width = cols.map_or(usize::MAX, usize::from);
            let model = Terminal::new(input.len(), width).play(&input);
            prop_assert_eq!(render_width(&input, cols).into_owned(), model);
        }
    }
}
