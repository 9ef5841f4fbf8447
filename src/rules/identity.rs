//! Command identity: the words a rule matches on.
//!
//! A rule is chosen by what a command *is*, not by how it was typed (DESIGN.md, "Rules").
//! This module turns a shell command string ([`tokenize`]) or an argv ([`normalize`]) into
//! that identity: the real program and its arguments, with the wrappers that agents and
//! humans put in front of it removed (`env`, `sudo`, `timeout`, `npx`, `uv run`, `bash -c`,
//! `python -m`, path prefixes, git's global options, …).
//!
//! It owns the parsing only. Choosing a rule from the identity is `rules::select`'s job.
//! Everything here is pure and total: no environment, no file system, no `PATH` lookup, and
//! no panic whatever the input (a seeded fuzz test holds us to that). It runs on every
//! command `tj` sees, so it is one pass over the bytes with no regex, and allocates only the
//! words it returns (plus the re-split words of a `bash -c` or `env -S` string).
//!
//! The tokenizer is deliberately not a shell. It knows enough POSIX `sh` to split a simple
//! command into words, and to *recognise* everything else (pipes, lists, subshells,
//! substitutions, heredocs) as [`Parsed::Compound`], so that a caller never mistakes
//! `cd x && cargo test` for `cd`. Nothing is expanded: `$HOME`, `*.rs` and `~` stay literal.
//!
//! ```
//! use tj::rules::identity::{Parsed, git_subcommand, normalize, tokenize};
//!
//! let Parsed::Simple(words) = tokenize("RUST_LOG=debug timeout 60 cargo +nightly test 2>&1")
//! else {
//!     panic!("a simple command");
//! };
//! assert_eq!(normalize(&words), ["cargo", "test"]);
//!
//! let argv = normalize(&["/usr/bin/git".into(), "-C".into(), "sub".into(), "status".into()]);
//! assert_eq!(git_subcommand(&argv), Some("status"));
//! assert_eq!(tokenize("cargo test | tail"), Parsed::Compound);
//! ```

/// Result of splitting a shell command string into words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// A simple command: its words after quote removal, with redirections removed.
    ///
    /// Leading `NAME=value` assignments are kept as words; [`normalize`] strips them. Never
    /// empty.
    Simple(Vec<String>),
    /// Pipes, `;`, `&&`, `||`, `&`, subshells `( )`, `{ }` groups, command substitution
    /// `$( )` or backticks, process substitution, heredocs, a leading shell keyword (`if`,
    /// `for`, `!`, `[[`, …), or more than one line of commands.
    Compound,
    /// No words: nothing but whitespace and comments, or a bare redirection (`> file`),
    /// which runs no program.
    Empty,
    /// An unterminated quote, a trailing backslash, a redirection without a target or a
    /// leading `;`: not a command we can trust.
    Malformed,
}

/// Splits a shell command string into the words of a simple command.
///
/// Follows POSIX `sh` quoting: single quotes are literal; double quotes honour `\"`, `\\`,
/// `\$`, `` \` `` and backslash-newline; outside quotes a backslash escapes the next
/// character and backslash-newline joins lines. Bash's `$'…'` and `$"…"` are understood.
/// Redirections (`2>&1`, `>file`, `&>>log`, `<in`, `N>&M`, `>|f`, …) are dropped. A trailing
/// `;`, newline or comment is fine; anything after one makes the command compound.
///
/// The first problem found, reading left to right, decides between
/// [`Parsed::Compound`] and [`Parsed::Malformed`].
#[must_use]
pub fn tokenize(command: &str) -> Parsed {
    match lex(command.as_bytes()) {
        Ok(words) if words.is_empty() => Parsed::Empty,
        Ok(words) => Parsed::Simple(words),
        Err(Stop::Compound) => Parsed::Compound,
        Err(Stop::Malformed) => Parsed::Malformed,
    }
}

/// Returns the identity of a shell command string: [`tokenize`] then [`normalize`].
///
/// `None` unless the string is a single simple command; a compound command has no single
/// identity.
#[must_use]
pub fn identify(command: &str) -> Option<Vec<String>> {
    match tokenize(command) {
        Parsed::Simple(words) => Some(normalize(&words)),
        Parsed::Compound | Parsed::Empty | Parsed::Malformed => None,
    }
}

/// Returns the real program and its arguments, with wrappers stripped.
///
/// Strips, repeatedly and in any order: leading `NAME=value` assignments; `env`, `sudo`,
/// `doas`, `command`, `builtin`, `exec`, `time`, `nice`, `ionice`, `nohup`, `stdbuf`,
/// `timeout` and `xvfb-run` with their options; the package runners `npx`, `npm exec`,
/// `pnpm exec|dlx`, `pnpx`, `yarn exec|dlx`, `bunx`, `bun x`, `uv run`, `uv tool run`,
/// `uvx`, `poetry run`, `pipx run`, `hatch run`, `pdm run`, `rye run`, `rustup run`,
/// `bundle exec` and `dotenv … --`; `python -m MODULE` (any `python*`, `pypy*` or `py`);
/// and `sh|bash|zsh|dash|ksh -c STRING`, whose string is tokenized and normalized in turn.
/// Then the program loses its directory and a Windows `.exe`/`.cmd`/`.bat` suffix, a
/// version a runner fetches (`jest@29` → `jest`), `cargo`'s `+toolchain` and `git`'s global
/// options.
///
/// Words after the real program are never touched. Where stripping cannot be trusted, it
/// stops and the wrapper is the program: a wrapper with nothing after it (`env`, `sudo -i`),
/// an option we do not know (`sudo -l cargo`), `command -v`, or a `-c` string that is not a
/// simple command (`bash -c "a && b"` → `["bash", "-c", "a && b"]`, which no rule matches
/// by design). Strings nested deeper than four levels are not followed.
#[must_use]
pub fn normalize(argv: &[String]) -> Vec<String> {
    normalize_at(argv, 0)
}

/// Returns git's subcommand after its global options, if `argv[0]` is git.
///
/// Meant for [`normalize`]'s output, but also accepts a raw argv (`/usr/bin/git -C x log`).
/// `None` when the program is not git, there is no subcommand (`git --version`), or an
/// option before it is one we do not know.
#[must_use]
pub fn git_subcommand(argv: &[String]) -> Option<&str> {
    let (first, args) = argv.split_first()?;
    if program_name(first) != "git" {
        return None;
    }
    let sub = args.get(skip_git_globals(args))?;
    (!sub.starts_with('-')).then_some(sub.as_str())
}

// ---------------------------------------------------------------------------------------
// Tokenizer
// ---------------------------------------------------------------------------------------

/// Why lexing stopped early.
enum Stop {
    Compound,
    Malformed,
}

/// Splits `b` into words, or says why it is not one simple command.
///
/// Works on bytes: every character with a meaning to `sh` is ASCII, and UTF-8 never uses
/// ASCII bytes inside a multi-byte character, so words are cut only at char boundaries.
fn lex(b: &[u8]) -> Result<Vec<String>, Stop> {
    let mut words = Vec::new();
    let mut i = 0;
    // A word or redirection has been seen, so a separator now ends a command.
    let mut started = false;
    // A `;` or newline ended the command: anything but blanks and comments is a second one.
    let mut ended = false;
    while let Some(&c) = b.get(i) {
        match c {
            b' ' | b'\t' | b'\r' => i += 1,
            b'\n' => {
                ended |= started;
                i += 1;
            }
            b';' => {
                if !started {
                    return Err(Stop::Malformed); // sh: syntax error near unexpected token `;'
                }
                if b.get(i + 1) == Some(&b';') {
                    return Err(Stop::Compound); // `;;` only exists inside `case`
                }
                ended = true;
                i += 1;
            }
            b'#' => i = b.iter().skip(i).position(|&c| c == b'\n').map_or(b.len(), |n| i + n),
            _ if ended => return Err(Stop::Compound),
            b'|' | b'(' | b')' | b'`' => return Err(Stop::Compound),
            b'&' if b.get(i + 1) == Some(&b'>') => {
                redirect(b, i + 1, &mut i)?;
                started = true;
            }
            b'&' => return Err(Stop::Compound),
            b'<' | b'>' => {
                redirect(b, i, &mut i)?;
                started = true;
            }
            _ => {
                let mut word = Vec::new();
                let quoted = read_word(b, &mut i, &mut word)?;
                if word.is_empty() && !quoted {
                    continue; // only line continuations: not a word
                }
                started = true;
                let is_fd = !quoted && word.iter().all(u8::is_ascii_digit);
                if is_fd && matches!(b.get(i), Some(b'<' | b'>')) {
                    redirect(b, i, &mut i)?; // `2>&1`: the digits name a descriptor
                    continue;
                }
                if words.is_empty() && !quoted && is_reserved(&word) {
                    return Err(Stop::Compound);
                }
                words.push(into_string(word));
            }
        }
    }
    Ok(words)
}

/// Returns true if and only if `b` is a byte that ends an unquoted word.
fn is_metachar(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>')
}

/// Returns true if and only if `word`, first in a command, makes it a shell construct
/// rather than a program run: `{ …; }`, `if`, loops, `[[ … ]]`, `! cmd`, function bodies.
fn is_reserved(word: &[u8]) -> bool {
    matches!(
        word,
        b"{" | b"}"
            | b"!"
            | b"[["
            | b"]]"
            | b"if"
            | b"then"
            | b"else"
            | b"elif"
            | b"fi"
            | b"for"
            | b"while"
            | b"until"
            | b"do"
            | b"done"
            | b"case"
            | b"esac"
            | b"select"
            | b"function"
            | b"coproc"
    )
}

/// Reads one word starting at `*i`, removing quotes, and returns whether any part of it was
/// quoted or escaped (a quoted word is never a descriptor number or a keyword, and `''` is
/// a real empty word).
fn read_word(b: &[u8], i: &mut usize, word: &mut Vec<u8>) -> Result<bool, Stop> {
    let mut quoted = false;
    while let Some(&c) = b.get(*i) {
        match c {
            _ if is_metachar(c) => break,
            b'`' => return Err(Stop::Compound),
            b'\\' => match b.get(*i + 1) {
                None => return Err(Stop::Malformed),
                Some(b'\n') => *i += 2, // line continuation: the word goes on
                Some(&n) => {
                    word.push(n);
                    quoted = true;
                    *i += 2;
                }
            },
            b'\'' => {
                let start = *i + 1;
                let len = b.iter().skip(start).position(|&c| c == b'\'').ok_or(Stop::Malformed)?;
                word.extend(b.iter().skip(start).take(len));
                quoted = true;
                *i = start + len + 1;
            }
            b'"' => {
                *i += 1;
                double_quoted(b, i, word)?;
                quoted = true;
            }
            b'$' => match b.get(*i + 1) {
                Some(b'(') => return Err(Stop::Compound), // `$(…)` and `$((…))`
                Some(b'{') => {
                    // `${a:-x y}` may hold blanks; keep it verbatim, unexpanded.
                    let len = b.iter().skip(*i).position(|&c| c == b'}').ok_or(Stop::Malformed)?;
                    let param = b.get(*i..=*i + len).unwrap_or_default();
                    if param.windows(2).any(|w| w == b"$(") || param.contains(&b'`') {
                        return Err(Stop::Compound);
                    }
                    word.extend_from_slice(param);
                    *i += len + 1;
                }
                Some(b'\'') => {
                    *i += 2;
                    ansi_c_quoted(b, i, word)?;
                    quoted = true;
                }
                // `$"…"` is a locale-translated string; translating is a no-op for us.
                Some(b'"') => *i += 1,
                _ => {
                    word.push(b'$');
                    *i += 1;
                }
            },
            _ => {
                word.push(c);
                *i += 1;
            }
        }
    }
    Ok(quoted)
}

/// Reads the inside of `"…"` from just after the opening quote through the closing one.
fn double_quoted(b: &[u8], i: &mut usize, word: &mut Vec<u8>) -> Result<(), Stop> {
    loop {
        match b.get(*i) {
            None => return Err(Stop::Malformed),
            Some(b'"') => {
                *i += 1;
                return Ok(());
            }
            Some(b'\\') => match b.get(*i + 1) {
                None => return Err(Stop::Malformed),
                Some(b'\n') => *i += 2,
                Some(&n @ (b'"' | b'\\' | b'$' | b'`')) => {
                    word.push(n);
                    *i += 2;
                }
                // Any other backslash is literal inside double quotes (`"%s\n"`).
                Some(_) => {
                    word.push(b'\\');
                    *i += 1;
                }
            },
            Some(b'`') => return Err(Stop::Compound),
            Some(b'$') if b.get(*i + 1) == Some(&b'(') => return Err(Stop::Compound),
            Some(&c) => {
                word.push(c);
                *i += 1;
            }
        }
    }
}

/// Reads the inside of bash's `$'…'` from just after the opening quote through the closing
/// one, decoding the common escapes. Rarer ones (`\x41`, `\u00e9`) stay as written: close
/// enough for an identity, and no rule matches on them.
fn ansi_c_quoted(b: &[u8], i: &mut usize, word: &mut Vec<u8>) -> Result<(), Stop> {
    loop {
        match b.get(*i) {
            None => return Err(Stop::Malformed),
            Some(b'\'') => {
                *i += 1;
                return Ok(());
            }
            Some(b'\\') => {
                let decoded = match b.get(*i + 1).ok_or(Stop::Malformed)? {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'e' | b'E' => 0x1b,
                    &c @ (b'\\' | b'\'' | b'"' | b'?') => c,
                    &c => {
                        word.push(b'\\');
                        c
                    }
                };
                word.push(decoded);
                *i += 2;
            }
            Some(&c) => {
                word.push(c);
                *i += 1;
            }
        }
    }
}

/// Skips the redirection whose operator starts at `op` (a `<` or `>`), and its target,
/// leaving `*i` after it.
fn redirect(b: &[u8], op: usize, i: &mut usize) -> Result<(), Stop> {
    *i = op + 1;
    match (b.get(op), b.get(*i)) {
        // `<<` and `<<-` heredocs, `<<<` here-strings: the command spans other text.
        (Some(b'<'), Some(b'<')) => return Err(Stop::Compound),
        // `<(…)` and `>(…)` process substitution.
        (_, Some(b'(')) => return Err(Stop::Compound),
        (Some(b'<'), Some(b'&' | b'>')) | (Some(b'>'), Some(b'>' | b'&' | b'|')) => *i += 1,
        _ => {}
    }
    loop {
        match (b.get(*i), b.get(*i + 1)) {
            (Some(b' ' | b'\t'), _) => *i += 1,
            (Some(b'\\'), Some(b'\n')) => *i += 2,
            _ => break,
        }
    }
    match b.get(*i) {
        Some(&c) if !is_metachar(c) => {
            let mut target = Vec::new();
            let quoted = read_word(b, i, &mut target)?;
            if target.is_empty() && !quoted { Err(Stop::Malformed) } else { Ok(()) }
        }
        _ => Err(Stop::Malformed), // `cargo test >` with nothing to redirect to
    }
}

/// Turns lexed bytes into a word. They came from a `&str` cut at ASCII bytes only, so the
/// lossy branch is unreachable; it is there so that no input can panic.
fn into_string(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(word) => word,
        Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
    }
}

// ---------------------------------------------------------------------------------------
// Normalizer
// ---------------------------------------------------------------------------------------

/// How deep we follow commands nested in strings (`bash -c "env -S '…'"`). Real commands
/// nest once or twice; the limit bounds the work a hostile string can cause.
const MAX_DEPTH: usize = 4;

/// What one wrapper at the front of an argv amounts to.
enum Step {
    /// The program starts this many words on (always within the argv).
    Skip(usize),
    /// As `Skip`, and the program was named to a package runner, so it may carry a version
    /// to fetch (`jest@29`, `ruff==0.5`).
    Runner(usize),
    /// The command continues as these new words (a `-c` string, `env -S`, `-mMODULE`).
    Rewrite(Vec<String>),
    /// The first word is the program.
    Stop,
}

fn normalize_at(argv: &[String], depth: usize) -> Vec<String> {
    let mut at = 0;
    let mut versioned = false;
    while let Some(rest) = argv.get(at..) {
        match unwrap_once(rest, at == 0, versioned) {
            Step::Skip(n) => (at, versioned) = (at + n, false),
            Step::Runner(n) => (at, versioned) = (at + n, true),
            // An empty rewrite (`sh -c '"$@"'` with no arguments) runs nothing we can name.
            Step::Rewrite(words) if depth < MAX_DEPTH && !words.is_empty() => {
                return normalize_at(&words, depth + 1);
            }
            Step::Rewrite(_) | Step::Stop => break,
        }
    }
    assemble(argv.get(at..).unwrap_or_default(), versioned)
}

/// Builds the identity from the argv of the real program: its bare name, then its
/// arguments minus `cargo +toolchain` and git's global options.
fn assemble(argv: &[String], versioned: bool) -> Vec<String> {
    let Some((first, args)) = argv.split_first() else {
        return Vec::new();
    };
    let name = if versioned { strip_version(program_name(first)) } else { program_name(first) };
    let skip = match name {
        "git" => skip_git_globals(args),
        // rustup's proxy takes exactly one `+toolchain`; a second is cargo's error to report,
        // so such an argv is left alone.
        "cargo" => usize::from(
            args.first().is_some_and(|a| a.len() > 1 && a.starts_with('+'))
                && !args.get(1).is_some_and(|a| a.starts_with('+')),
        ),
        _ => 0,
    };
    let mut out = Vec::with_capacity(1 + args.len().saturating_sub(skip));
    out.push(name.to_owned());
    out.extend(args.iter().skip(skip).cloned());
    out
}

/// Works out what the wrapper at `rest[0]`, if any, does. `leading` says whether `rest`
/// starts a command line, where `NAME=value` words are assignments rather than a program
/// (in `pipx run black==24` it names a package to fetch).
fn unwrap_once(rest: &[String], leading: bool, versioned: bool) -> Step {
    let Some(first) = rest.first() else {
        return Step::Stop;
    };
    if leading && is_assignment(first) {
        return skip_to(rest, Some(past_assignments(rest, 0)));
    }
    let name = if versioned { strip_version(program_name(first)) } else { program_name(first) };
    let sub = rest.get(1).map(String::as_str);
    match name {
        "env" => env(rest),
        // These take `NAME=value` words before the command, as `env` does; `time` because it
        // is a keyword of bash's, prefixing a whole command.
        "sudo" => skip_to(rest, skip_options(rest, 1, &SUDO).map(|at| past_assignments(rest, at))),
        "doas" => skip_to(rest, skip_options(rest, 1, &DOAS).map(|at| past_assignments(rest, at))),
        "command" => skip_to(rest, skip_options(rest, 1, &COMMAND)),
        "builtin" | "nohup" => skip_to(rest, skip_options(rest, 1, &NO_OPTIONS)),
        "exec" => skip_to(rest, skip_options(rest, 1, &EXEC)),
        "time" => skip_to(rest, skip_options(rest, 1, &TIME).map(|at| past_assignments(rest, at))),
        "nice" => skip_to(rest, skip_options(rest, 1, &NICE)),
        "ionice" => skip_to(rest, skip_options(rest, 1, &IONICE)),
        "stdbuf" => skip_to(rest, skip_options(rest, 1, &STDBUF)),
        "xvfb-run" => skip_to(rest, skip_options(rest, 1, &XVFB_RUN)),
        "timeout" => timeout(rest),
        "npx" => npx(rest, 1),
        "npm" if matches!(sub, Some("exec" | "x")) => npx(rest, 2),
        "pnpm" => pnpm(rest),
        "pnpx" => runner_to(rest, skip_options(rest, 1, &PNPM_EXEC)),
        "yarn" if sub == Some("exec") => skip_to(rest, skip_options(rest, 2, &YARN)),
        "yarn" if sub == Some("dlx") => runner_to(rest, skip_options(rest, 2, &YARN)),
        "bunx" => runner_to(rest, skip_options(rest, 1, &BUNX)),
        "bun" if sub == Some("x") => runner_to(rest, skip_options(rest, 2, &BUNX)),
        "uv" => uv(rest),
        "uvx" => runner_to(rest, skip_options(rest, 1, &UV)),
        "poetry" => skip_to(rest, subcommand(rest, &POETRY, "run")),
        "pipx" => runner_to(rest, subcommand(rest, &PIPX_RUN, "run")),
        "pdm" => skip_to(rest, subcommand(rest, &PDM, "run")),
        "rye" => skip_to(rest, subcommand(rest, &RYE, "run")),
        "bundle" => skip_to(rest, subcommand(rest, &BUNDLE, "exec")),
        "hatch" => hatch(rest),
        "rustup" => rustup(rest),
        "dotenv" | "dotenv-cli" => {
            // Its own options vary by flavour (npm's dotenv-cli, python-dotenv); only the
            // `--` form says unambiguously where the command starts.
            skip_to(rest, rest.iter().position(|w| w == "--").map(|at| at + 1))
        }
        "sh" | "bash" | "zsh" | "dash" | "ksh" => shell(rest),
        _ if is_python(name) => python(rest, name == "py"),
        _ => Step::Stop,
    }
}

/// The program at `at`, if there is one there.
fn skip_to(rest: &[String], at: Option<usize>) -> Step {
    match at {
        Some(at) if at > 0 && at < rest.len() => Step::Skip(at),
        _ => Step::Stop,
    }
}

/// The program at `at`, named to a package runner.
fn runner_to(rest: &[String], at: Option<usize>) -> Step {
    match skip_to(rest, at) {
        Step::Skip(at) => Step::Runner(at),
        step => step,
    }
}

/// Returns the program's bare name: no directory (`/` or `\`), no Windows executable
/// suffix.
fn program_name(word: &str) -> &str {
    let base = match word.rfind(['/', '\\']) {
        Some(at) if at + 1 < word.len() => word.get(at + 1..).unwrap_or(word),
        _ => word,
    };
    for suffix in [".exe", ".cmd", ".bat"] {
        let cut = base.len().saturating_sub(suffix.len());
        // Compared as bytes: the suffix is ASCII, so a match puts `cut` on a char boundary,
        // and a mismatch never slices inside a multi-byte character.
        if cut > 0
            && base.as_bytes().get(cut..).is_some_and(|s| s.eq_ignore_ascii_case(suffix.as_bytes()))
        {
            return base.get(..cut).unwrap_or(base);
        }
    }
    base
}

/// Returns `name` without a version a package runner would fetch: `jest@29` → `jest`,
/// `ruff==0.5` → `ruff`. A leading `@` (a scope) is not a version.
fn strip_version(name: &str) -> &str {
    let at = name.char_indices().skip(1).find(|&(_, c)| c == '@').map(|(at, _)| at);
    let cut = match (at, name.find("==")) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => return name,
    };
    match name.get(..cut) {
        Some(bare) if !bare.is_empty() => bare,
        _ => name,
    }
}

/// Returns the index of the first word at or after `at` that is not an assignment.
fn past_assignments(rest: &[String], at: usize) -> usize {
    at + rest.iter().skip(at).take_while(|w| is_assignment(w)).count()
}

/// Returns true if and only if `word` is a shell variable assignment (`NAME=value`, or
/// bash's `NAME+=value`).
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Returns true if and only if `name` is a Python interpreter: `python`, `python3`,
/// `python3.11`, `python3.13t`, `pypy3`, or the Windows launcher `py`.
fn is_python(name: &str) -> bool {
    let Some(version) = name.strip_prefix("python").or_else(|| name.strip_prefix("pypy")) else {
        return name == "py";
    };
    let version = version.strip_suffix('t').unwrap_or(version);
    version.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

// --- Option parsing --------------------------------------------------------------------

/// How a wrapper spells its options, so we can find where its command starts.
///
/// An option we do not know stops the stripping: guessing whether it takes a value could
/// make its value the "program", while stopping just leaves the command unmatched.
struct Opts {
    /// Short options without a value; they may be clustered (`-nE`).
    short: &'static str,
    /// Short options taking a value, inline (`-uroot`) or as the next word.
    short_val: &'static str,
    /// Long options without a value, named without `--`. `--name=value` is accepted for
    /// them too, for those whose value is optional (`--preserve-env=PATH`).
    long: &'static [&'static str],
    /// Long options taking a value, after `=` or as the next word.
    long_val: &'static [&'static str],
    /// Words that are options in a form of their own (`nice -5`, `env -`, `hatch +py=3.12`).
    special: fn(&str) -> bool,
}

/// What a word in a wrapper's option area is.
enum Word {
    /// The first operand: the command, or a wrapper's own operand (a duration, `run`).
    Operand,
    /// `--`: the next word is the first operand.
    EndOfOptions,
    /// An option and its value, this many words long.
    Option(usize),
}

fn never(_: &str) -> bool {
    false
}

const NO_OPTIONS: Opts =
    Opts { short: "", short_val: "", long: &[], long_val: &[], special: never };

/// Classifies `word`, or `None` if it is an option `opts` does not know.
fn classify(word: &str, opts: &Opts) -> Option<Word> {
    if word == "--" {
        return Some(Word::EndOfOptions);
    }
    if (opts.special)(word) {
        return Some(Word::Option(1));
    }
    if let Some(long) = word.strip_prefix("--") {
        return match long.split_once('=') {
            // An inline value cannot swallow the program, so this form is safe to skip
            // even for an option we do not know.
            Some(_) => Some(Word::Option(1)),
            None if opts.long.contains(&long) => Some(Word::Option(1)),
            None if opts.long_val.contains(&long) => Some(Word::Option(2)),
            None => None,
        };
    }
    let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty()) else {
        return Some(Word::Operand); // `-` alone is an operand (stdin) unless `special`
    };
    for (at, b) in cluster.bytes().enumerate() {
        if opts.short_val.as_bytes().contains(&b) {
            return Some(Word::Option(if at + 1 < cluster.len() { 1 } else { 2 }));
        }
        if !opts.short.as_bytes().contains(&b) {
            return None;
        }
    }
    Some(Word::Option(1))
}

/// Returns the index of the first operand at or after `from`, past the options; it may be
/// `args.len()` or more when there is none. `None` if an option is unknown.
fn skip_options(args: &[String], from: usize, opts: &Opts) -> Option<usize> {
    let mut i = from;
    while let Some(word) = args.get(i) {
        match classify(word, opts)? {
            Word::Operand => return Some(i),
            Word::EndOfOptions => return Some(i + 1),
            Word::Option(n) => i += n,
        }
    }
    Some(i)
}

/// Returns the index after `NAME [globals] SUB [globals]`, the start of the command.
fn subcommand(rest: &[String], opts: &Opts, sub: &str) -> Option<usize> {
    let at = skip_options(rest, 1, opts)?;
    if rest.get(at)? != sub {
        return None;
    }
    skip_options(rest, at + 1, opts)
}

/// If `rest[i]` is the option `short`/`--long` whose value is a whole command line
/// (`env -S`, `npx -c`), returns that value and the index after it.
fn string_option<'a>(
    rest: &'a [String],
    i: usize,
    short: &str,
    long: &str,
) -> Option<(&'a str, usize)> {
    let word = rest.get(i)?.as_str();
    if word == short || word.strip_prefix("--") == Some(long) {
        return Some((rest.get(i + 1)?.as_str(), i + 2));
    }
    let inline = word
        .strip_prefix("--")
        .and_then(|w| w.strip_prefix(long))
        .and_then(|w| w.strip_prefix('='))
        .or_else(|| word.strip_prefix(short).filter(|v| !v.is_empty()));
    inline.map(|value| (value, i + 1))
}

/// Splits a command line held in one word into words, if it is a simple command.
fn split_command(line: &str) -> Option<Vec<String>> {
    match tokenize(line) {
        Parsed::Simple(words) => Some(words),
        Parsed::Empty => Some(Vec::new()),
        Parsed::Compound | Parsed::Malformed => None,
    }
}

// --- Wrappers --------------------------------------------------------------------------

const ENV: Opts = Opts {
    short: "i0v",
    short_val: "uC", // `-S` is found first: its value is more arguments, not a value
    long: &[
        "ignore-environment",
        "null",
        "debug",
        "default-signal",
        "ignore-signal",
        "block-signal",
        "list-signal-handling",
    ],
    long_val: &["unset", "chdir"],
    special: |w| w == "-",
};

/// `env [OPTION]… [NAME=VALUE]… COMMAND`; `-S STRING` splits STRING into more arguments,
/// which may hold further options and assignments, so parsing starts over on them.
fn env(rest: &[String]) -> Step {
    let mut i = 1;
    while let Some(word) = rest.get(i) {
        if let Some((line, after)) = string_option(rest, i, "-S", "split-string") {
            let Some(words) = split_command(line) else {
                return Step::Stop;
            };
            let after = rest.get(after..).unwrap_or_default();
            let mut argv = Vec::with_capacity(1 + words.len() + after.len());
            argv.push("env".to_owned());
            argv.extend(words);
            argv.extend_from_slice(after);
            return Step::Rewrite(argv);
        }
        match classify(word, &ENV) {
            Some(Word::Operand) => break,
            Some(Word::EndOfOptions) => {
                i += 1;
                break;
            }
            Some(Word::Option(n)) => i += n,
            None => return Step::Stop,
        }
    }
    skip_to(rest, Some(past_assignments(rest, i)))
}

const SUDO: Opts = Opts {
    // Not here, so they stop stripping: `-e` edits files, `-l`, `-v`, `-V`, `-K` and `-h`
    // run nothing. `-i` and `-s` with a command still run that command.
    short: "AbBEHiknNPSs",
    short_val: "cCDgpRrTtuU",
    long: &[
        "askpass",
        "background",
        "bell",
        "login",
        "no-update",
        "non-interactive",
        "preserve-env",
        "preserve-groups",
        "reset-timestamp",
        "set-home",
        "shell",
        "stdin",
    ],
    long_val: &[
        "chdir",
        "chroot",
        "close-from",
        "command-timeout",
        "group",
        "host",
        "login-class",
        "other-user",
        "prompt",
        "role",
        "type",
        "user",
    ],
    special: never,
};

const DOAS: Opts = Opts { short: "n", short_val: "u", ..NO_OPTIONS };

/// `command -v`/`-V` describe a command rather than run it, so they are unknown here.
const COMMAND: Opts = Opts { short: "p", ..NO_OPTIONS };

const EXEC: Opts = Opts { short: "cl", short_val: "a", ..NO_OPTIONS };

const TIME: Opts = Opts {
    short: "apqv",
    short_val: "fo",
    long: &["append", "portability", "quiet", "verbose"],
    long_val: &["format", "output"],
    special: never,
};

const NICE: Opts = Opts {
    short_val: "n",
    long_val: &["adjustment"],
    // The historical forms: `nice -5 cmd` (+5) and `nice --5 cmd` (-5).
    special: |w| {
        let digits = w.trim_start_matches('-');
        (1..=2).contains(&(w.len() - digits.len()))
            && !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
    },
    ..NO_OPTIONS
};

/// `-p`/`-P`/`-u` act on running processes and take no command, so they are unknown here.
const IONICE: Opts = Opts {
    short: "t",
    short_val: "cn",
    long: &["ignore"],
    long_val: &["class", "classdata"],
    special: never,
};

const STDBUF: Opts =
    Opts { short_val: "eio", long_val: &["error", "input", "output"], ..NO_OPTIONS };

const XVFB_RUN: Opts = Opts {
    short: "al",
    short_val: "efnpsw",
    long: &["auto-servernum", "auto-display", "listen-tcp"],
    long_val: &["error-file", "auth-file", "server-num", "server-args", "xauth-protocol", "wait"],
    special: never,
};

const TIMEOUT: Opts = Opts {
    short: "v",
    short_val: "ks",
    long: &["foreground", "preserve-status", "verbose"],
    long_val: &["kill-after", "signal"],
    special: never,
};

/// `timeout [OPTION]… DURATION COMMAND`.
fn timeout(rest: &[String]) -> Step {
    match skip_options(rest, 1, &TIMEOUT) {
        // A duration starts with a digit (`30`, `1.5m`, `.5`); anything else means we
        // misread the options, and a wrong identity is worse than none.
        Some(at)
            if rest
                .get(at)
                .is_some_and(|d| d.starts_with(|c: char| c.is_ascii_digit() || c == '.')) =>
        {
            skip_to(rest, Some(at + 1))
        }
        _ => Step::Stop,
    }
}

const NPX: Opts = Opts {
    short: "qy",
    short_val: "p", // `-c` is found first: its value is a command line
    long: &[
        "ignore-existing",
        "no",
        "no-install",
        "offline",
        "prefer-offline",
        "prefer-online",
        "quiet",
        "silent",
        "yes",
    ],
    long_val: &["cache", "loglevel", "package", "registry", "userconfig", "workspace"],
    special: never,
};

/// `npx [OPTION]… COMMAND` and `npm exec|x`, from `from`; `-c 'CMD ARGS'` runs a command
/// line, which we split like `sh -c`.
fn npx(rest: &[String], from: usize) -> Step {
    let mut i = from;
    while let Some(word) = rest.get(i) {
        if let Some((line, _)) = string_option(rest, i, "-c", "call") {
            return split_command(line).map_or(Step::Stop, Step::Rewrite);
        }
        match classify(word, &NPX) {
            Some(Word::Operand) => break,
            Some(Word::EndOfOptions) => {
                i += 1;
                break;
            }
            Some(Word::Option(n)) => i += n,
            None => return Step::Stop,
        }
    }
    runner_to(rest, Some(i))
}

const PNPM_GLOBAL: Opts = Opts {
    short: "rsw",
    short_val: "CF",
    long: &["recursive", "silent", "workspace-root"],
    long_val: &["dir", "filter", "loglevel", "reporter"],
    special: never,
};

/// `pnpm exec` and `pnpm dlx` options. `-c`/`--shell-mode` run a shell line we would have
/// to re-split, so they are unknown here.
const PNPM_EXEC: Opts = Opts {
    short: "rs",
    short_val: "",
    long: &["allow-build", "no-bail", "parallel", "recursive", "report-summary", "silent"],
    long_val: &["package", "resume-from"],
    special: never,
};

/// `pnpm [GLOBAL]… exec|dlx [OPTION]… COMMAND`. Only `dlx` fetches, so only its program
/// may carry a version.
fn pnpm(rest: &[String]) -> Step {
    let Some(at) = skip_options(rest, 1, &PNPM_GLOBAL) else {
        return Step::Stop;
    };
    let start = skip_options(rest, at + 1, &PNPM_EXEC);
    match rest.get(at).map(String::as_str) {
        Some("exec") => skip_to(rest, start),
        Some("dlx") => runner_to(rest, start),
        _ => Step::Stop,
    }
}

const YARN: Opts =
    Opts { short: "q", short_val: "p", long: &["quiet"], long_val: &["package"], special: never };

const BUNX: Opts = Opts {
    short_val: "p",
    long: &["bun", "no-install", "silent", "verbose"],
    long_val: &["package"],
    ..NO_OPTIONS
};

/// uv's global, `run` and `tool run` options, merged: uv accepts globals anywhere, and the
/// sets barely differ. `-m`/`--module` is listed as a flag so that its module becomes the
/// program (`uv run -m pytest` → `pytest`).
const UV: Opts = Opts {
    short: "mnqsUv",
    short_val: "CfipPw",
    long: &[
        "active",
        "all-extras",
        "all-groups",
        "all-packages",
        "compile-bytecode",
        "dev",
        "exact",
        "frozen",
        "gui-script",
        "inexact",
        "isolated",
        "locked",
        "managed-python",
        "module",
        "native-tls",
        "no-active",
        "no-binary",
        "no-build",
        "no-build-isolation",
        "no-cache",
        "no-config",
        "no-default-groups",
        "no-dev",
        "no-editable",
        "no-env-file",
        "no-index",
        "no-managed-python",
        "no-progress",
        "no-project",
        "no-python-downloads",
        "no-sources",
        "no-sync",
        "offline",
        "only-dev",
        "preview",
        "quiet",
        "refresh",
        "reinstall",
        "script",
        "upgrade",
        "verbose",
    ],
    long_val: &[
        "allow-insecure-host",
        "cache-dir",
        "color",
        "config-file",
        "config-setting",
        "default-index",
        "directory",
        "env-file",
        "exclude-newer",
        "extra",
        "extra-index-url",
        "find-links",
        "from",
        "group",
        "index",
        "index-strategy",
        "index-url",
        "keyring-provider",
        "link-mode",
        "no-binary-package",
        "no-build-package",
        "no-extra",
        "no-group",
        "only-group",
        "package",
        "prerelease",
        "project",
        "python",
        "python-platform",
        "refresh-package",
        "reinstall-package",
        "resolution",
        "upgrade-package",
        "with",
        "with-editable",
        "with-requirements",
    ],
    special: never,
};

/// `uv [GLOBAL]… run …` and `uv [GLOBAL]… tool run …` (the latter is `uvx`, which fetches).
fn uv(rest: &[String]) -> Step {
    let Some(at) = skip_options(rest, 1, &UV) else {
        return Step::Stop;
    };
    match (rest.get(at).map(String::as_str), rest.get(at + 1).map(String::as_str)) {
        (Some("run"), _) => skip_to(rest, skip_options(rest, at + 1, &UV)),
        (Some("tool"), Some("run")) => runner_to(rest, skip_options(rest, at + 2, &UV)),
        _ => Step::Stop,
    }
}

const POETRY: Opts = Opts {
    short: "nqv",
    short_val: "CP",
    long: &["ansi", "no-ansi", "no-cache", "no-interaction", "no-plugins", "quiet", "verbose"],
    long_val: &["directory", "project"],
    special: never,
};

const PIPX_RUN: Opts = Opts {
    short: "qv",
    short_val: "",
    long: &["no-cache", "path", "pypackages", "quiet", "system-site-packages", "verbose"],
    long_val: &["index-url", "pip-args", "python", "spec"],
    special: never,
};

/// `pdm run -l` lists scripts and runs nothing: with no command after it, stripping stops.
const PDM: Opts = Opts {
    short: "gIqsv",
    short_val: "p",
    long: &["global", "ignore-python", "quiet", "recreate", "site-packages", "verbose"],
    long_val: &["project", "venv"],
    special: never,
};

const RYE: Opts =
    Opts { short: "qv", long: &["quiet", "verbose"], long_val: &["pyproject"], ..NO_OPTIONS };

const BUNDLE: Opts =
    Opts { long: &["keep-file-descriptors"], long_val: &["gemfile"], ..NO_OPTIONS };

const HATCH: Opts = Opts {
    short: "qv",
    short_val: "e",
    long: &["color", "interactive", "no-color", "no-interactive", "quiet", "verbose"],
    long_val: &["cache-dir", "config", "data-dir", "env"],
    // Matrix selections before the command: `hatch run +py=3.12 test`.
    special: |w| w.starts_with('+') && w.len() > 1,
};

/// `hatch [GLOBAL]… run [ENV:]COMMAND`: the `ENV:` prefix names an environment, not the
/// program.
fn hatch(rest: &[String]) -> Step {
    let Some(at) = subcommand(rest, &HATCH, "run") else {
        return Step::Stop;
    };
    let Some(word) = rest.get(at) else {
        return Step::Stop;
    };
    match word.split_once(':') {
        Some((env, program)) if !env.is_empty() && !program.is_empty() => {
            let mut argv = Vec::with_capacity(rest.len() - at);
            argv.push(program.to_owned());
            argv.extend_from_slice(rest.get(at + 1..).unwrap_or_default());
            Step::Rewrite(argv)
        }
        _ => skip_to(rest, Some(at)),
    }
}

const RUSTUP_RUN: Opts = Opts { long: &["install"], ..NO_OPTIONS };

/// `rustup run [--install] TOOLCHAIN COMMAND`.
fn rustup(rest: &[String]) -> Step {
    if rest.get(1).map(String::as_str) != Some("run") {
        return Step::Stop;
    }
    skip_to(rest, skip_options(rest, 2, &RUSTUP_RUN).map(|toolchain| toolchain + 1))
}

/// `sh [OPTION]… -c STRING [NAME [ARG]…]`: the identity is STRING's, when it is a simple
/// command. Without `-c` the shell runs a script or reads stdin and is itself the program.
fn shell(rest: &[String]) -> Step {
    let mut i = 1;
    let mut command_string = false;
    while let Some(word) = rest.get(i) {
        if word == "--" || word == "-" {
            i += 1;
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            i += match long {
                "debugger" | "login" | "noediting" | "noprofile" | "norc" | "posix"
                | "restricted" | "verbose" => 1,
                "init-file" | "rcfile" => 2,
                _ => return Step::Stop,
            };
            continue;
        }
        let Some(cluster) = word.strip_prefix(['-', '+']).filter(|c| !c.is_empty()) else {
            break;
        };
        if !cluster.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Step::Stop;
        }
        command_string |= word.starts_with('-') && cluster.contains('c');
        // `-o NAME` (set options) and bash's `-O NAME` (shopt) take the next word.
        i += 1 + cluster.bytes().filter(|&b| b == b'o' || b == b'O').count();
    }
    let Some(line) = rest.get(i).filter(|_| command_string) else {
        return Step::Stop;
    };
    let Some(words) = split_command(line) else {
        return Step::Stop;
    };
    // `sh -c 'exec "$@"' sh cargo test` hands the command over as positional arguments.
    if words.iter().any(|w| w == "$@") {
        let positional = rest.get(i + 2..).unwrap_or_default();
        let mut argv = Vec::with_capacity(words.len() + positional.len());
        for word in words {
            if word == "$@" {
                argv.extend_from_slice(positional);
            } else {
                argv.push(word);
            }
        }
        return Step::Rewrite(argv);
    }
    Step::Rewrite(words)
}

/// `python [OPTION]… -m MODULE [ARG]…`: the identity is MODULE's. `-c` and scripts leave
/// the interpreter as the program.
fn python(rest: &[String], launcher: bool) -> Step {
    let mut i = 1;
    'words: while let Some(word) = rest.get(i) {
        // The Windows launcher picks a version first: `py -3.11 -m pytest`, `py -V:3.12`.
        if launcher
            && (word.starts_with("-V:")
                || word.starts_with('-') && word.as_bytes().get(1).is_some_and(u8::is_ascii_digit))
        {
            i += 1;
            continue;
        }
        if word == "--check-hash-based-pycs" {
            i += 2;
            continue;
        }
        let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty() && !c.starts_with('-'))
        else {
            return Step::Stop; // a script, `-` (stdin), `--` or a long option we don't know
        };
        for (at, b) in cluster.bytes().enumerate() {
            match b {
                b'm' => {
                    return match cluster.get(at + 1..) {
                        Some("") | None => skip_to(rest, Some(i + 1)),
                        Some(module) => {
                            let args = rest.get(i + 1..).unwrap_or_default();
                            let mut argv = Vec::with_capacity(1 + args.len());
                            argv.push(module.to_owned());
                            argv.extend_from_slice(args);
                            Step::Rewrite(argv)
                        }
                    };
                }
                b'W' | b'X' => {
                    i += if at + 1 < cluster.len() { 1 } else { 2 };
                    continue 'words;
                }
                b'b' | b'B' | b'd' | b'E' | b'i' | b'I' | b'O' | b'P' | b'q' | b'R' | b's'
                | b'S' | b'u' | b'v' | b'x' => {}
                _ => return Step::Stop, // `-c`, `-h`, `-V`, or one we don't know
            }
        }
        i += 1;
    }
    Step::Stop
}

/// Returns the number of git global options at the front of `args` (git's own arguments).
fn skip_git_globals(args: &[String]) -> usize {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        i += match word.as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env"
            | "--super-prefix" => 2,
            "-p"
            | "-P"
            | "--paginate"
            | "--no-pager"
            | "--bare"
            | "--no-replace-objects"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--no-optional-locks"
            | "--no-lazy-fetch"
            | "--no-advice"
            | "--exec-path" => 1,
            w if [
                "--git-dir=",
                "--work-tree=",
                "--namespace=",
                "--config-env=",
                "--super-prefix=",
                "--exec-path=",
            ]
            .iter()
            .any(|prefix| w.starts_with(prefix)) =>
            {
                1
            }
            _ => break,
        };
    }
    i.min(args.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    /// What a tokenize row expects.
    #[derive(Debug)]
    enum Want {
        Simple(&'static [&'static str]),
        Compound,
        Empty,
        Malformed,
    }

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    const TOKENIZE: &[(&str, Want)] = &[
        ("cargo test", Want::Simple(&["cargo", "test"])),
        ("  cargo   test  ", Want::Simple(&["cargo", "test"])),
        ("cargo test;", Want::Simple(&["cargo", "test"])),
        ("cargo test ;  \n", Want::Simple(&["cargo", "test"])),
        ("cargo test\r\n", Want::Simple(&["cargo", "test"])),
        ("echo 'a|b'", Want::Simple(&["echo", "a|b"])),
        (r#"printf "%s\n" "a;b""#, Want::Simple(&["printf", r"%s\n", "a;b"])),
        (r#"FOO=1 BAR="a b" cargo test"#, Want::Simple(&["FOO=1", "BAR=a b", "cargo", "test"])),
        ("echo '' \"\" x", Want::Simple(&["echo", "", "", "x"])),
        ("echo a''b", Want::Simple(&["echo", "ab"])),
        (r"echo a\ b \$HOME \\", Want::Simple(&["echo", "a b", "$HOME", "\\"])),
        (r#"echo "a \"q\" \$x \`y\` \\ \n""#, Want::Simple(&["echo", r#"a "q" $x `y` \ \n"#])),
        ("echo 'it'\\''s'", Want::Simple(&["echo", "it's"])),
        ("cargo test \\\n  --release", Want::Simple(&["cargo", "test", "--release"])),
        ("echo \"a\\\nb\"", Want::Simple(&["echo", "ab"])),
        ("echo 'a\nb'", Want::Simple(&["echo", "a\nb"])),
        ("echo $'a\\tb\\'c'", Want::Simple(&["echo", "a\tb'c"])),
        ("echo $\"hi there\"", Want::Simple(&["echo", "hi there"])),
        (
            "echo $VAR *.rs ~ ${A:-x y} a=b",
            Want::Simple(&["echo", "$VAR", "*.rs", "~", "${A:-x y}", "a=b"]),
        ),
        ("echo a#b # a comment | not a pipe", Want::Simple(&["echo", "a#b"])),
        ("cargo test # run; it", Want::Simple(&["cargo", "test"])),
        ("# leading comment\ncargo test", Want::Simple(&["cargo", "test"])),
        ("cargo test 2>&1", Want::Simple(&["cargo", "test"])),
        ("cargo test >&2", Want::Simple(&["cargo", "test"])),
        ("cargo test >out.log", Want::Simple(&["cargo", "test"])),
        ("cargo test > 'out file.log' --release", Want::Simple(&["cargo", "test", "--release"])),
        ("cargo test >>log 2>/dev/null", Want::Simple(&["cargo", "test"])),
        ("cargo test &>log", Want::Simple(&["cargo", "test"])),
        ("cargo test &>> log", Want::Simple(&["cargo", "test"])),
        ("wc -l <input.txt", Want::Simple(&["wc", "-l"])),
        ("cargo test 3>&1 1>&2 2>&3 2>&-", Want::Simple(&["cargo", "test"])),
        ("cargo test >|clobber", Want::Simple(&["cargo", "test"])),
        (">log cargo test", Want::Simple(&["cargo", "test"])),
        ("echo 2 >x '2'>y", Want::Simple(&["echo", "2", "2"])),
        ("echo {a,b} }", Want::Simple(&["echo", "{a,b}", "}"])),
        ("time cargo test", Want::Simple(&["time", "cargo", "test"])),
        ("echo héllo 日本", Want::Simple(&["echo", "héllo", "日本"])),
        ("cargo test | tail", Want::Compound),
        ("cargo test || true", Want::Compound),
        ("cd x && cargo test", Want::Compound),
        ("cargo build; cargo test", Want::Compound),
        ("cargo build\ncargo test", Want::Compound),
        ("cargo test &", Want::Compound),
        ("(cd x; make)", Want::Compound),
        ("{ cargo test; }", Want::Compound),
        ("echo $(date)", Want::Compound),
        ("echo \"$(date)\"", Want::Compound),
        ("echo `date`", Want::Compound),
        ("echo $((1 + 2))", Want::Compound),
        ("echo ${X:-$(date)}", Want::Compound),
        ("cat <<EOF\nhi\nEOF", Want::Compound),
        ("cat <<<hi", Want::Compound),
        ("diff <(ls a) <(ls b)", Want::Compound),
        ("if true; then make; fi", Want::Compound),
        ("! cargo test", Want::Compound),
        ("[[ -f x ]]", Want::Compound),
        ("", Want::Empty),
        ("   \n\t ", Want::Empty),
        ("# just a comment", Want::Empty),
        ("> truncated.log", Want::Empty),
        ("echo \"abc", Want::Malformed),
        ("echo 'abc", Want::Malformed),
        ("echo abc\\", Want::Malformed),
        ("echo $'abc", Want::Malformed),
        ("echo ${abc", Want::Malformed),
        ("cargo test >", Want::Malformed),
        ("cargo test 2>&1 >", Want::Malformed),
        ("; cargo test", Want::Malformed),
    ];

    #[test]
    fn tokenize_table() {
        for (command, want) in TOKENIZE {
            let got = tokenize(command);
            let ok = match (want, &got) {
                (Want::Simple(words), Parsed::Simple(got)) => got == &strings(words),
                (Want::Compound, Parsed::Compound)
                | (Want::Empty, Parsed::Empty)
                | (Want::Malformed, Parsed::Malformed) => true,
                _ => false,
            };
            assert!(ok, "tokenize({command:?}) = {got:?}, want {want:?}");
        }
    }

    /// Command strings, tokenized then normalized.
    const NORMALIZE: &[(&str, &[&str])] = &[
        ("cargo test", &["cargo", "test"]),
        ("FOO=1 BAR=\"a b\" cargo test", &["cargo", "test"]),
        ("A+=x _B=1 make", &["make"]),
        ("FOO=1", &["FOO=1"]),
        ("env", &["env"]),
        ("env RUST_LOG=debug cargo test", &["cargo", "test"]),
        ("env -u X RUST_LOG=debug cargo test", &["cargo", "test"]),
        ("env -i - --unset=Y -C dir --chdir=d -- A=1 make", &["make"]),
        ("/usr/bin/env -uX -Cdir make check", &["make", "check"]),
        ("env -S 'A=1 cargo test' --lib", &["cargo", "test", "--lib"]),
        ("env --split-string='-i cargo' build", &["cargo", "build"]),
        ("env -S 'a | b'", &["env", "-S", "a | b"]),
        ("sudo -E -u root apt-get install -y x", &["apt-get", "install", "-y", "x"]),
        ("sudo --preserve-env=PATH -n -- make install", &["make", "install"]),
        ("sudo -uroot FOO=1 make", &["make"]),
        ("sudo -i", &["sudo", "-i"]),
        ("sudo -s", &["sudo", "-s"]),
        ("sudo -i make", &["make"]),
        ("sudo -l make", &["sudo", "-l", "make"]),
        ("doas -u www npm ci", &["npm", "ci"]),
        ("command cargo test", &["cargo", "test"]),
        ("command -p make", &["make"]),
        ("command -v cargo", &["command", "-v", "cargo"]),
        ("builtin exec cargo", &["cargo"]),
        ("exec -a name -c cargo test", &["cargo", "test"]),
        ("time", &["time"]),
        ("time -p cargo build", &["cargo", "build"]),
        ("time -f '%e s' -o t.txt make", &["make"]),
        ("time nice -n 5 make -j4", &["make", "-j4"]),
        ("time -p CI=1 make", &["make"]),
        ("nohup CI=1 make", &["CI=1", "make"]),
        ("nice -10 make", &["make"]),
        ("nice --adjustment=3 ionice -c 3 -n7 make", &["make"]),
        ("nohup cargo build", &["cargo", "build"]),
        ("stdbuf -oL -e L -i0 pytest", &["pytest"]),
        ("timeout -s KILL 30s npm test", &["npm", "test"]),
        ("timeout --signal=TERM -k 5 --preserve-status 1m cargo test", &["cargo", "test"]),
        ("timeout 30", &["timeout", "30"]),
        ("timeout npm test", &["timeout", "npm", "test"]),
        ("xvfb-run -a --server-args='-screen 0 1x1x24' npm test", &["npm", "test"]),
        ("npx --yes jest --ci", &["jest", "--ci"]),
        ("npx -y -p typescript tsc --noEmit", &["tsc", "--noEmit"]),
        ("npx --package=@scope/x -- x-cli run", &["x-cli", "run"]),
        ("npx jest@29 --ci", &["jest", "--ci"]),
        ("npx @biomejs/biome@1.9.0 check .", &["biome", "check", "."]),
        ("npx -c 'eslint --fix .'", &["eslint", "--fix", "."]),
        ("npm exec -- vitest run", &["vitest", "run"]),
        ("npm test", &["npm", "test"]),
        ("pnpm exec vitest run", &["vitest", "run"]),
        ("pnpm -C web exec playwright test", &["playwright", "test"]),
        ("pnpm dlx create-vite@latest app", &["create-vite", "app"]),
        ("pnpm test", &["pnpm", "test"]),
        ("pnpx tsc -b", &["tsc", "-b"]),
        ("yarn exec jest", &["jest"]),
        ("yarn dlx -q eslint .", &["eslint", "."]),
        ("bunx --bun vitest", &["vitest"]),
        ("bun x tsc", &["tsc"]),
        ("bun test", &["bun", "test"]),
        ("uv run --with pytest-xdist pytest -n 4", &["pytest", "-n", "4"]),
        ("uv run --frozen -p 3.12 --extra dev -q pytest", &["pytest"]),
        ("uv --directory api run --no-sync python -m pytest", &["pytest"]),
        ("uv run -m mypy src", &["mypy", "src"]),
        ("uv pip install x", &["uv", "pip", "install", "x"]),
        ("uvx ruff@0.6.0 check", &["ruff", "check"]),
        ("uv tool run --from black black .", &["black", "."]),
        ("poetry run python -m pytest -q", &["pytest", "-q"]),
        ("poetry -C svc run pytest", &["pytest"]),
        ("pipx run --spec black==24 black .", &["black", "."]),
        ("pipx run pycowsay==0.0.0.2 moo", &["pycowsay", "moo"]),
        ("hatch run test:pytest -x", &["pytest", "-x"]),
        ("hatch -e lint run ruff check", &["ruff", "check"]),
        ("pdm run -s pytest", &["pytest"]),
        ("rye run pytest", &["pytest"]),
        ("bundle exec rspec spec/a_spec.rb", &["rspec", "spec/a_spec.rb"]),
        ("dotenv -e .env.test -- jest", &["jest"]),
        ("dotenv list", &["dotenv", "list"]),
        ("rustup run nightly cargo test", &["cargo", "test"]),
        ("python -m pytest -x", &["pytest", "-x"]),
        ("python3 -m pip install x", &["pip", "install", "x"]),
        ("python -m unittest", &["unittest"]),
        ("python3.11 -u -X dev -W error -B -O -m pytest", &["pytest"]),
        ("python -Wd -mpytest -q", &["pytest", "-q"]),
        ("py -3.12 -m pytest", &["pytest"]),
        ("/opt/venv/bin/python3 -m mypy .", &["mypy", "."]),
        ("python script.py -m x", &["python", "script.py", "-m", "x"]),
        ("python -c 'import x' -m y", &["python", "-c", "import x", "-m", "y"]),
        ("python -m", &["python", "-m"]),
        ("cargo +nightly test", &["cargo", "test"]),
        ("cargo +1.80.0 clippy -- -D warnings", &["cargo", "clippy", "--", "-D", "warnings"]),
        ("bash -c 'cargo test'", &["cargo", "test"]),
        ("bash -lc \"cargo build --release\"", &["cargo", "build", "--release"]),
        ("bash -l -c 'FOO=1 make'", &["make"]),
        ("sh -euc 'npm test'", &["npm", "test"]),
        ("bash --noprofile --norc -o pipefail -ec 'go test ./...'", &["go", "test", "./..."]),
        ("zsh -c 'sudo -E bash -c \"pytest -q\"'", &["pytest", "-q"]),
        ("bash -c 'cd x && make'", &["bash", "-c", "cd x && make"]),
        ("sudo bash -c 'a | b'", &["bash", "-c", "a | b"]),
        ("bash -c 'echo \"abc'", &["bash", "-c", "echo \"abc"]),
        ("sh -c 'exec \"$@\"' sh cargo test", &["cargo", "test"]),
        ("bash script.sh -c x", &["bash", "script.sh", "-c", "x"]),
        ("/usr/local/bin/cargo clippy", &["cargo", "clippy"]),
        ("./node_modules/.bin/jest --ci", &["jest", "--ci"]),
        ("~/.cargo/bin/cargo build", &["cargo", "build"]),
        ("git.exe status", &["git", "status"]),
        ("C:\\\\tools\\\\npx.CMD jest", &["jest"]),
        ("git -C sub -c core.pager=cat --no-pager status --short", &["git", "status", "--short"]),
        ("git -C x -c a=b --no-pager log -n 5", &["git", "log", "-n", "5"]),
        ("git --git-dir=.git --work-tree w -P --no-optional-locks diff", &["git", "diff"]),
        ("git --literal-pathspecs --exec-path=/x --config-env=a.b=E show", &["git", "show"]),
        ("git --version", &["git", "--version"]),
        ("sudo git -C repo pull", &["git", "pull"]),
        ("cargo test -- --nocapture time", &["cargo", "test", "--", "--nocapture", "time"]),
        ("make env sudo", &["make", "env", "sudo"]),
        ("env sudo -E timeout 5 nice npx -y jest", &["jest"]),
    ];

    #[test]
    fn normalize_table() {
        for (command, want) in NORMALIZE {
            let Parsed::Simple(words) = tokenize(command) else {
                panic!("{command:?} does not tokenize as simple: {:?}", tokenize(command));
            };
            let got = normalize(&words);
            assert_eq!(got, strings(want), "normalize({command:?})");
            // Stripping is complete: a second pass finds nothing more to strip (unless the
            // program is named like an assignment, which only leads a command line).
            if !is_assignment(&got[0]) {
                assert_eq!(normalize(&got), got, "normalize is not idempotent on {command:?}");
            }
        }
    }

    #[test]
    fn normalize_argv_forms() {
        let rows: &[(&[&str], &[&str])] = &[
            (&[], &[]),
            (&[""], &[""]),
            (&["", "x"], &["", "x"]),
            (&["/"], &["/"]),
            (&["bin/"], &["bin/"]),
            (&["C:\\Program Files\\Git\\bin\\git.exe", "status"], &["git", "status"]),
            (&["env", "A=a b", "cargo", "test", ""], &["cargo", "test", ""]),
            (&["sudo", "-u"], &["sudo", "-u"]),
            (&["git", "-C"], &["git"]),
            (&[".exe"], &[".exe"]),
            (&["x.é"], &["x.é"]),
        ];
        for (argv, want) in rows {
            assert_eq!(normalize(&strings(argv)), strings(want), "normalize({argv:?})");
        }
    }

    #[test]
    fn nested_strings_stop_at_the_depth_limit() {
        // Five levels of `bash -c`: the fifth is left as the shell.
        let mut command = "cargo test".to_owned();
        for _ in 0..5 {
            command = format!("bash -c {}", quote(&command));
        }
        let Parsed::Simple(words) = tokenize(&command) else { panic!("simple") };
        assert_eq!(normalize(&words).first().map(String::as_str), Some("bash"));

        let mut command = "cargo test".to_owned();
        for _ in 0..4 {
            command = format!("bash -c {}", quote(&command));
        }
        assert_eq!(identify(&command), Some(strings(&["cargo", "test"])));
    }

    /// Single-quotes `s` for sh.
    fn quote(s: &str) -> String {
        format!("'{}'", s.replace('\'', r"'\''"))
    }

    #[test]
    fn git_subcommand_table() {
        let rows: &[(&str, Option<&str>)] = &[
            ("git status", Some("status")),
            ("git -C x -c a=b --no-pager log -n 5", Some("log")),
            ("/usr/bin/git --git-dir .git --bare fetch", Some("fetch")),
            ("git --version", None),
            ("git --bogus status", None),
            ("git -C", None),
            ("git", None),
            ("cargo status", None),
            ("gitk status", None),
        ];
        for (command, want) in rows {
            let Parsed::Simple(words) = tokenize(command) else { panic!("simple") };
            assert_eq!(git_subcommand(&words), *want, "git_subcommand({command:?})");
            assert_eq!(git_subcommand(&normalize(&words)), *want, "normalized {command:?}");
        }
        assert_eq!(git_subcommand(&[]), None);
    }

    #[test]
    fn identify_needs_a_simple_command() {
        assert_eq!(identify("sudo -E cargo test 2>&1"), Some(strings(&["cargo", "test"])));
        assert_eq!(identify("cargo test | tail"), None);
        assert_eq!(identify("  # nothing"), None);
        assert_eq!(identify("echo 'x"), None);
    }

    #[test]
    fn never_panics_on_random_input() {
        const PIECES: &[&str] = &[
            " ",
            " ",
            "a",
            "b",
            "=",
            "-",
            "--",
            "'",
            "\"",
            "\\",
            "\n",
            "\t",
            "$",
            "(",
            ")",
            "{",
            "}",
            "`",
            "|",
            "&",
            ";",
            "<",
            ">",
            "#",
            "2",
            "é",
            "日",
            "/",
            ".",
            "@",
            ":",
            "+",
            "$(",
            "${",
            "$'",
            "<<",
            "2>&1",
            "-c",
            "-m",
            "-S",
            "env ",
            "sudo ",
            "bash -c ",
            "python -m ",
            "npx ",
            "uv run ",
            "timeout 5 ",
            "git -C x ",
            "cargo +n ",
            "X=1 ",
        ];
        const WORDS: &[&str] = &[
            "env",
            "sudo",
            "-u",
            "-S",
            "-i",
            "-",
            "--",
            "bash",
            "sh",
            "-c",
            "-lc",
            "-o",
            "python",
            "py",
            "-m",
            "-mx",
            "-W",
            "-3",
            "npx",
            "-y",
            "-p",
            "pnpm",
            "exec",
            "dlx",
            "yarn",
            "bun",
            "x",
            "uv",
            "uvx",
            "run",
            "tool",
            "--with",
            "poetry",
            "hatch",
            "a:b",
            "pipx",
            "pdm",
            "rye",
            "bundle",
            "dotenv",
            "rustup",
            "timeout",
            "30",
            "-s",
            "nice",
            "-5",
            "--5",
            "time",
            "-f",
            "nohup",
            "stdbuf",
            "-oL",
            "ionice",
            "xvfb-run",
            "command",
            "builtin",
            "exec",
            "doas",
            "git",
            "-C",
            "--git-dir",
            "--no-pager",
            "cargo",
            "+nightly",
            "test",
            "FOO=1",
            "A=",
            "=",
            "",
            "a b",
            "a | b",
            "cargo test",
            "/usr/bin/git",
            "x.exe",
            "é@1",
            "@",
            "@x@y",
            "$@",
            "'",
            "\"",
            "\\",
            "jest@29",
        ];
        let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let mut command = String::new();
            for _ in 0..rng.below(16) {
                command.push_str(rng.pick(PIECES));
            }
            if let Parsed::Simple(words) = tokenize(&command) {
                assert!(!words.is_empty(), "{command:?}");
                // Quoting the words back gives the same words.
                let requoted: Vec<String> = words.iter().map(|w| quote(w)).collect();
                assert_eq!(tokenize(&requoted.join(" ")), Parsed::Simple(words.clone()));
                let _ = git_subcommand(&normalize(&words));
            }

            let argv: Vec<String> =
                (0..rng.below(10)).map(|_| rng.pick(WORDS).to_owned()).collect();
            let got = normalize(&argv);
            assert!(argv.is_empty() == got.is_empty(), "{argv:?} → {got:?}");
            // Idempotent, except that a wrapper may run a program whose name looks like an
            // assignment (`nohup A=1`), which a second pass reads as leading the command.
            if !got.first().is_some_and(|w| is_assignment(w)) {
                assert_eq!(normalize(&got), got, "not idempotent on {argv:?}");
            }
            let _ = git_subcommand(&got);
        }
    }
}
