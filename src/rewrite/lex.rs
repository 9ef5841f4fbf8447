//! A POSIX-shell lexer that keeps the byte span of every token, for [`super::rewrite`].
//!
//! It splits a line the way `sh`, bash and zsh split it into words, operators, redirections
//! and comments, without expanding anything: quotes (`'…'`, `"…"`, bash's `$'…'` and
//! `$"…"`), backslashes and line continuations are understood and removed from each word's
//! [`Word::text`], while [`Token::start`]..[`Token::end`] still cover the word as written, so
//! a caller can insert text between two tokens and leave every other byte alone.
//!
//! What the rewrite never accepts is reported as a [`LexError`] instead of being lexed
//! further: command substitution (`$(…)`, backquotes), arithmetic expansion (`$((…))`),
//! process substitution (`<(…)`, `>(…)`), heredocs (`<<`, `<<-`, whose body is other
//! lines), control characters, and anything unterminated. The lexer is total: any input,
//! valid UTF-8 or hostile, gives tokens or an error, never a panic (a property test holds it
//! to that).
//!
//! It is deliberately not `rules::identity`'s tokenizer: that one answers "which program is
//! this?" and drops what it does not need; this one answers "where exactly is everything?"
//! for a rewrite that must not change the meaning of the line.

use std::fmt;

/// One token of a shell line, with the bytes it covers in the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: Kind,
    /// Offset of its first byte.
    pub start: usize,
    /// Offset just past its last byte.
    pub end: usize,
}

/// The kinds of token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A word (a command name, an argument, an assignment, a reserved word such as `if`).
    Word(Word),
    /// A control operator or a newline.
    Op(Op),
    /// A redirection: an optional descriptor number, the operator and its target.
    Redirect(Redirect),
    /// A `#` comment, up to (not including) the newline.
    Comment,
}

/// A word, as written and after quote removal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Word {
    /// The word after quote removal (`'a b'"c"` → `a bc`); expansions stay as written
    /// (`$HOME`, `${X:-y}`, `*.rs`), since nothing is expanded.
    pub text: String,
    /// Some part of it was quoted or backslash-escaped.
    pub quoted: bool,
    /// It holds a parameter expansion (`$X`, `${X}`, `$1`, `$@`), quoted or not.
    pub expands: bool,
    /// It holds an unquoted glob character (`*`, `?`, `[`) or brace (`{`): the shell may turn
    /// it into other words.
    pub glob: bool,
}

/// Control operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `&&`
    AndIf,
    /// `||`
    OrIf,
    /// `;`
    Semi,
    /// `;;` (and bash's `;;&`, `;&`): only inside `case`.
    CaseEnd,
    /// `&`
    Amp,
    /// `|`
    Pipe,
    /// `|&` (bash and zsh: a pipe for stdout and stderr)
    PipeAmp,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// A newline (outside quotes and not escaped).
    Newline,
}

impl Op {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::AndIf => "&&",
            Op::OrIf => "||",
            Op::Semi => ";",
            Op::CaseEnd => ";;",
            Op::Amp => "&",
            Op::Pipe => "|",
            Op::PipeAmp => "|&",
            Op::LParen => "(",
            Op::RParen => ")",
            Op::Newline => "newline",
        }
    }
}

/// A redirection such as `2>&1`, `>/dev/null`, `<in`, `&>>log`, `<<<word`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    /// The descriptor number written before the operator (`2` in `2>&1`), if any.
    pub fd: Option<u32>,
    /// The operator: `>`, `>>`, `>|`, `>&`, `<`, `<&`, `<>`, `&>`, `&>>`, `<<<`.
    pub op: &'static str,
    /// The target word.
    pub target: Word,
    /// The target's source text, as written (`/dev/null`, `'/dev/null'`, `1`).
    pub target_raw: String,
}

/// Why a line could not be lexed, or holds something the rewrite never touches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexError {
    /// What was found, for a person: "command substitution `$(…)`".
    pub what: &'static str,
    /// The byte offset where it was found.
    pub at: usize,
}

impl fmt::Display for LexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.at)
    }
}

/// Splits `line` into tokens.
pub fn lex(line: &str) -> Result<Vec<Token>, LexError> {
    let b = line.as_bytes();
    if let Some(at) = b.iter().position(|&c| is_control(c)) {
        return Err(LexError { what: "a control character", at });
    }
    if let Some((at, _)) = line.char_indices().find(|&(_, c)| is_invisible_control(c)) {
        return Err(LexError { what: "an invisible direction or format character", at });
    }
    let mut lexer = Lexer { b, i: 0, tokens: Vec::new() };
    lexer.run()?;
    Ok(lexer.tokens)
}

/// Bytes no shell line of an agent should hold: C0 controls other than tab and newline
/// (a `\r` would silently become part of a word), and DEL.
fn is_control(c: u8) -> bool {
    (c < 0x20 && c != b'\t' && c != b'\n') || c == 0x7f
}

/// Characters that change how a line is displayed without being seen: bidirectional
/// overrides, embeddings, isolates and marks, C1 controls, and zero-width characters. A
/// line holding one may read differently in a permission prompt than it runs.
fn is_invisible_control(c: char) -> bool {
    matches!(c,
        '\u{80}'..='\u{9f}'
            | '\u{61c}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}'
    )
}

/// Returns true if and only if `c` ends an unquoted word.
fn is_metachar(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>')
}

struct Lexer<'a> {
    b: &'a [u8],
    i: usize,
    tokens: Vec<Token>,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.b.get(self.i + ahead).copied()
    }

    fn err<T>(&self, what: &'static str) -> Result<T, LexError> {
        Err(LexError { what, at: self.i })
    }

    fn push(&mut self, kind: Kind, start: usize) {
        self.tokens.push(Token { kind, start, end: self.i });
    }

    fn run(&mut self) -> Result<(), LexError> {
        while let Some(c) = self.peek(0) {
            let start = self.i;
            match c {
                b' ' | b'\t' => self.i += 1,
                b'\\' if self.peek(1) == Some(b'\n') => self.i += 2, // a continuation
                b'\n' => {
                    self.i += 1;
                    self.push(Kind::Op(Op::Newline), start);
                }
                b'#' => {
                    let len = self.b[start..].iter().position(|&c| c == b'\n');
                    self.i = len.map_or(self.b.len(), |n| start + n);
                    self.push(Kind::Comment, start);
                }
                b'&' | b'|' | b';' | b'(' | b')' => self.operator()?,
                b'<' | b'>' => self.redirect(None, start)?,
                _ => self.word_or_number()?,
            }
        }
        Ok(())
    }

    /// A control operator, or `&>`/`&>>`.
    fn operator(&mut self) -> Result<(), LexError> {
        let start = self.i;
        let (op, len) = match (self.peek(0), self.peek(1), self.peek(2)) {
            (Some(b'&'), Some(b'&'), _) => (Op::AndIf, 2),
            (Some(b'&'), Some(b'>'), _) => {
                return self.redirect(None, start);
            }
            (Some(b'&'), _, _) => (Op::Amp, 1),
            (Some(b'|'), Some(b'|'), _) => (Op::OrIf, 2),
            (Some(b'|'), Some(b'&'), _) => (Op::PipeAmp, 2),
            (Some(b'|'), _, _) => (Op::Pipe, 1),
            (Some(b';'), Some(b';'), Some(b'&')) => (Op::CaseEnd, 3),
            (Some(b';'), Some(b';' | b'&'), _) => (Op::CaseEnd, 2),
            (Some(b';'), _, _) => (Op::Semi, 1),
            (Some(b'('), _, _) => (Op::LParen, 1),
            _ => (Op::RParen, 1),
        };
        self.i += len;
        self.push(Kind::Op(op), start);
        Ok(())
    }

    /// A word; or, when it is all digits and a `<`/`>` follows at once, the descriptor number
    /// of a redirection (`2>&1`).
    fn word_or_number(&mut self) -> Result<(), LexError> {
        let start = self.i;
        let word = self.word()?;
        if self.i == start {
            return self.err("an unexpected character"); // unreachable: a word reads a byte
        }
        let raw = &self.b[start..self.i];
        if matches!(self.peek(0), Some(b'<' | b'>')) {
            if !raw.is_empty() && raw.iter().all(u8::is_ascii_digit) {
                let fd = std::str::from_utf8(raw).ok().and_then(|s| s.parse().ok());
                return match fd {
                    Some(fd) => self.redirect(Some(fd), start),
                    None => self.err("a descriptor number too large"),
                };
            }
            if raw.first() == Some(&b'{') && raw.last() == Some(&b'}') {
                return self.err("a named descriptor redirection `{var}>`");
            }
        }
        self.push(Kind::Word(word), start);
        Ok(())
    }

    /// A redirection whose operator starts at `self.i` (after any descriptor number, which
    /// began at `start`).
    fn redirect(&mut self, fd: Option<u32>, start: usize) -> Result<(), LexError> {
        let rest = &self.b[self.i..];
        let op: &'static str = match rest {
            [b'<', b'<', b'<', ..] => "<<<",
            [b'<', b'<', ..] => return self.err("a heredoc `<<`"),
            [b'<' | b'>', b'(', ..] => return self.err("process substitution `<(…)`/`>(…)`"),
            [b'&', b'>', b'>', ..] => "&>>",
            [b'&', b'>', ..] => "&>",
            [b'>', b'>', ..] => ">>",
            [b'>', b'|', ..] => ">|",
            [b'>', b'&', ..] => ">&",
            [b'<', b'&', ..] => "<&",
            [b'<', b'>', ..] => "<>",
            [b'>', ..] => ">",
            _ => "<",
        };
        self.i += op.len();
        if self.peek(0) == Some(b'(') {
            return self.err("process substitution `<(…)`/`>(…)`");
        }
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some(b' ' | b'\t'), _) => self.i += 1,
                (Some(b'\\'), Some(b'\n')) => self.i += 2,
                _ => break,
            }
        }
        let target_start = self.i;
        match self.peek(0) {
            Some(c) if !is_metachar(c) && c != b'#' => {}
            _ => return self.err("a redirection without a target"),
        }
        let target = self.word()?;
        if self.i == target_start {
            return self.err("a redirection without a target");
        }
        let target_raw = String::from_utf8_lossy(&self.b[target_start..self.i]).into_owned();
        self.push(Kind::Redirect(Redirect { fd, op, target, target_raw }), start);
        Ok(())
    }

    /// Reads one word from `self.i` up to the next unquoted metacharacter.
    fn word(&mut self) -> Result<Word, LexError> {
        let mut text = Vec::new();
        let mut word = Word::default();
        while let Some(c) = self.peek(0) {
            match c {
                _ if is_metachar(c) => break,
                b'\\' => match self.peek(1) {
                    None => return self.err("a backslash at the end of the line"),
                    Some(b'\n') => self.i += 2,
                    Some(n) => {
                        text.push(n);
                        word.quoted = true;
                        self.i += 2;
                    }
                },
                b'\'' => {
                    let from = self.i + 1;
                    let Some(len) = self.b[from..].iter().position(|&c| c == b'\'') else {
                        return self.err("an unterminated single quote");
                    };
                    text.extend_from_slice(&self.b[from..from + len]);
                    word.quoted = true;
                    self.i = from + len + 1;
                }
                b'"' => {
                    self.i += 1;
                    self.double_quoted(&mut text, &mut word)?;
                    word.quoted = true;
                }
                b'`' => return self.err("command substitution with backquotes"),
                b'$' => self.dollar(&mut text, &mut word, false)?,
                b'*' | b'?' | b'[' | b'{' => {
                    word.glob = true;
                    text.push(c);
                    self.i += 1;
                }
                _ => {
                    text.push(c);
                    self.i += 1;
                }
            }
        }
        word.text = into_string(text);
        Ok(word)
    }

    /// The inside of `"…"`, from just after the opening quote through the closing one.
    fn double_quoted(&mut self, text: &mut Vec<u8>, word: &mut Word) -> Result<(), LexError> {
        loop {
            match self.peek(0) {
                None => return self.err("an unterminated double quote"),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(());
                }
                Some(b'\\') => match self.peek(1) {
                    None => return self.err("an unterminated double quote"),
                    Some(b'\n') => self.i += 2,
                    Some(n @ (b'"' | b'\\' | b'$' | b'`')) => {
                        text.push(n);
                        self.i += 2;
                    }
                    Some(_) => {
                        text.push(b'\\');
                        self.i += 1;
                    }
                },
                Some(b'`') => return self.err("command substitution with backquotes"),
                Some(b'$') => self.dollar(text, word, true)?,
                Some(c) => {
                    text.push(c);
                    self.i += 1;
                }
            }
        }
    }

    /// A `$` at `self.i`: an expansion (kept as written), `$'…'` or `$"…"` (outside double
    /// quotes, `in_dq` false), or a plain `$`.
    fn dollar(&mut self, text: &mut Vec<u8>, word: &mut Word, in_dq: bool) -> Result<(), LexError> {
        match self.peek(1) {
            Some(b'\'' | b'"') if in_dq => {
                text.push(b'$');
                self.i += 1;
                Ok(())
            }
            Some(b'(') if self.peek(2) == Some(b'(') => self.err("arithmetic expansion `$((…))`"),
            Some(b'(') => self.err("command substitution `$(…)`"),
            Some(b'[') => self.err("arithmetic expansion `$[…]`"),
            Some(b'{') => self.braced_parameter(text, word),
            Some(b'\'') => {
                self.i += 2;
                word.quoted = true;
                self.ansi_c_quoted(text)
            }
            Some(b'"') => {
                // `$"…"`: a string translated by locale, which is a no-op for us.
                self.i += 2;
                word.quoted = true;
                self.double_quoted(text, word)
            }
            Some(c) if c.is_ascii_alphanumeric() || b"_@*#?$!-".contains(&c) => {
                word.expands = true;
                text.push(b'$');
                self.i += 1;
                if c.is_ascii_alphabetic() || c == b'_' {
                    while let Some(c) =
                        self.peek(0).filter(|c| c.is_ascii_alphanumeric() || *c == b'_')
                    {
                        text.push(c);
                        self.i += 1;
                    }
                } else {
                    text.push(c);
                    self.i += 1;
                }
                Ok(())
            }
            _ => {
                text.push(b'$');
                self.i += 1;
                Ok(())
            }
        }
    }

    /// `${…}` kept as written, through its matching `}` (nested `${…}` and quotes inside
    /// are followed).
    fn braced_parameter(&mut self, text: &mut Vec<u8>, word: &mut Word) -> Result<(), LexError> {
        let start = self.i;
        self.i += 2;
        let mut depth = 1usize;
        while depth > 0 {
            match self.peek(0) {
                None => return self.err("an unterminated `${`"),
                Some(b'}') => {
                    depth -= 1;
                    self.i += 1;
                }
                Some(b'$') if self.peek(1) == Some(b'{') => {
                    depth += 1;
                    self.i += 2;
                }
                Some(b'$') if self.peek(1) == Some(b'(') => {
                    return self.err("command substitution `$(…)`");
                }
                Some(b'`') => return self.err("command substitution with backquotes"),
                Some(b'\\') if self.peek(1).is_some() => self.i += 2,
                Some(b'\'') => {
                    let from = self.i + 1;
                    let Some(len) = self.b[from..].iter().position(|&c| c == b'\'') else {
                        return self.err("an unterminated single quote");
                    };
                    self.i = from + len + 1;
                }
                Some(b'"') => {
                    self.i += 1;
                    let mut ignored = Vec::new();
                    let mut inner = Word::default();
                    self.double_quoted(&mut ignored, &mut inner)?;
                }
                Some(_) => self.i += 1,
            }
        }
        word.expands = true;
        text.extend_from_slice(&self.b[start..self.i]);
        Ok(())
    }

    /// The inside of `$'…'`, from just after the opening quote through the closing one,
    /// decoding its escapes as bash does.
    fn ansi_c_quoted(&mut self, text: &mut Vec<u8>) -> Result<(), LexError> {
        loop {
            match self.peek(0) {
                None => return self.err("an unterminated `$'`"),
                Some(b'\'') => {
                    self.i += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    let Some(e) = self.peek(1) else {
                        return self.err("an unterminated `$'`");
                    };
                    self.i += 2;
                    self.ansi_c_escape(e, text);
                }
                Some(c) => {
                    text.push(c);
                    self.i += 1;
                }
            }
        }
    }

    /// One escape of `$'…'`, its letter `e` already consumed.
    fn ansi_c_escape(&mut self, e: u8, text: &mut Vec<u8>) {
        let simple = match e {
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'e' | b'E' => Some(0x1b),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(0x0b),
            b'\\' | b'\'' | b'"' | b'?' => Some(e),
            _ => None,
        };
        if let Some(byte) = simple {
            text.push(byte);
            return;
        }
        let (radix, max, unicode) = match e {
            b'0'..=b'7' => (8, 3, false),
            b'x' => (16, 2, false),
            b'u' => (16, 4, true),
            b'U' => (16, 8, true),
            _ => {
                // Unknown escapes (and `\c`, rare) stay as written.
                text.extend_from_slice(&[b'\\', e]);
                return;
            }
        };
        let mut value: u32 = 0;
        let mut digits = 0;
        if radix == 8 {
            value = u32::from(e - b'0');
            digits = 1;
        }
        while digits < max {
            let Some(d) = self.peek(0).and_then(|c| char::from(c).to_digit(radix)) else { break };
            value = value * radix + d;
            digits += 1;
            self.i += 1;
        }
        if digits == 0 {
            text.extend_from_slice(&[b'\\', e]); // `\x` with no digit stays as written
        } else if unicode {
            let c = char::from_u32(value).unwrap_or(char::REPLACEMENT_CHARACTER);
            text.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        } else {
            text.push((value & 0xff) as u8);
        }
    }
}

/// Lexed bytes as a word. Input comes from a `&str` and is cut at ASCII bytes, but `\xff`
/// in `$'…'` makes bytes that are not UTF-8: those are shown lossily.
fn into_string(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn words(line: &str) -> Vec<String> {
        lex(line)
            .unwrap()
            .into_iter()
            .filter_map(|t| match t.kind {
                Kind::Word(w) => Some(w.text),
                _ => None,
            })
            .collect()
    }

    fn kinds(line: &str) -> Vec<String> {
        lex(line)
            .unwrap()
            .into_iter()
            .map(|t| match t.kind {
                Kind::Word(_) => format!("w:{}", &line[t.start..t.end]),
                Kind::Op(op) => format!("op:{}", op.as_str()),
                Kind::Redirect(r) => format!("r:{:?}{}{}", r.fd, r.op, r.target.text),
                Kind::Comment => format!("c:{}", &line[t.start..t.end]),
            })
            .collect()
    }

    #[test]
    fn quotes_are_removed_and_spans_cover_the_word_as_written() {
        let line = r#"FOO='x y' "a b"c\ d $'e\tf' $"g""#;
        assert_eq!(words(line), ["FOO=x y", "a bc d", "e\tf", "g"]);
        let tokens = lex(line).unwrap();
        assert_eq!(&line[tokens[1].start..tokens[1].end], r#""a b"c\ d"#);
    }

    #[test]
    fn operators_redirects_and_comments_are_tokens() {
        assert_eq!(
            kinds("cd a && b 2>&1 >/dev/null || c; d & e | f |& g ;; (h) # x\n"),
            [
                "w:cd",
                "w:a",
                "op:&&",
                "w:b",
                "r:Some(2)>&1",
                "r:None>/dev/null",
                "op:||",
                "w:c",
                "op:;",
                "w:d",
                "op:&",
                "w:e",
                "op:|",
                "w:f",
                "op:|&",
                "w:g",
                "op:;;",
                "op:(",
                "w:h",
                "op:)",
                "c:# x",
                "op:newline",
            ]
        );
        assert_eq!(
            kinds("a &>x &>>y <<<z 3<>w"),
            ["w:a", "r:None&>x", "r:None&>>y", "r:None<<<z", "r:Some(3)<>w"]
        );
        assert_eq!(kinds("a#b #c"), ["w:a#b", "c:#c"]);
    }

    #[test]
    fn continuations_join_words_and_lines() {
        assert_eq!(words("cargo te\\\nst \\\n --release"), ["cargo", "test", "--release"]);
        assert_eq!(kinds("a \\\n&& b"), ["w:a", "op:&&", "w:b"]);
    }

    #[test]
    fn expansions_and_globs_are_noted_not_expanded() {
        let tokens = lex(r#"x $HOME "${A:-"b c"}" *.rs '*' {a,b} \*"#).unwrap();
        let ws: Vec<&Word> = tokens
            .iter()
            .filter_map(|t| if let Kind::Word(w) = &t.kind { Some(w) } else { None })
            .collect();
        assert!(ws[1].expands && ws[1].text == "$HOME");
        assert!(ws[2].expands && ws[2].text == r#"${A:-"b c"}"#);
        assert!(ws[3].glob && !ws[4].glob && ws[5].glob && !ws[6].glob);
    }

    #[test]
    fn what_the_rewrite_never_touches_is_an_error() {
        for (line, what) in [
            ("echo $(date)", "command substitution `$(…)`"),
            ("echo \"`date`\"", "command substitution with backquotes"),
            ("echo $((1+2))", "arithmetic expansion `$((…))`"),
            ("diff <(a) b", "process substitution `<(…)`/`>(…)`"),
            ("tee >(a)", "process substitution `<(…)`/`>(…)`"),
            ("cat <<EOF\nx\nEOF", "a heredoc `<<`"),
            ("cat <<-EOF", "a heredoc `<<`"),
            ("echo 'a", "an unterminated single quote"),
            ("echo \"a", "an unterminated double quote"),
            ("echo $'a", "an unterminated `$'`"),
            ("echo a\\", "a backslash at the end of the line"),
            ("echo a >", "a redirection without a target"),
            ("echo a\r", "a control character"),
            ("echo a\u{85}", "an invisible direction or format character"),
            ("cargo test -- \u{202e}x", "an invisible direction or format character"),
            ("FOO=\u{2066} cargo test", "an invisible direction or format character"),
            ("cargo\u{200b} test", "an invisible direction or format character"),
            ("echo ${a", "an unterminated `${`"),
            ("echo {fd}>x", "a named descriptor redirection `{var}>`"),
        ] {
            assert_eq!(lex(line).map_err(|e| e.what), Err(what), "{line:?}");
        }
    }

    #[test]
    fn ansi_c_escapes_decode_as_bash_does() {
        assert_eq!(words(r"$'\x41\101\u00e9\n\q\''"), ["AA\u{e9}\n\\q'"]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn never_panics_and_spans_stay_in_order(line in "[ -~\\n\\t\u{e9}\u{1F600}]{0,60}") {
            if let Ok(tokens) = lex(&line) {
                let mut last = 0;
                for t in &tokens {
                    prop_assert!(t.start >= last && t.start < t.end && t.end <= line.len());
                    prop_assert!(line.is_char_boundary(t.start) && line.is_char_boundary(t.end));
                    last = t.end;
                }
            }
        }

        #[test]
        fn never_panics_on_shell_heavy_input(line in proptest::collection::vec(
            prop_oneof![
                Just("'"), Just("\""), Just("\\"), Just("$"), Just("{"), Just("}"), Just("("),
                Just(")"), Just("<"), Just(">"), Just("&"), Just("|"), Just(";"), Just("#"),
                Just("\n"), Just(" "), Just("a"), Just("2"), Just("$'"), Just("${"), Just("`"),
                Just("\\x"), Just("\\u"), Just("é"),
            ],
            0..40,
        )) {
            let line: String = line.concat();
            let _ = lex(&line);
        }
    }
}
