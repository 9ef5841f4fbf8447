//! The builtin patterns of the evidence classifier and of the log shape, as data.
//!
//! They are compiled when tj is built: `build.rs` includes this file, compiles every
//! pattern and literal set here to a dense DFA (`matchers::spec`) and embeds them, and the
//! classifier (`reduce::evidence`) looks them up at run time instead of compiling them.
//! So this file holds nothing but the tables and depends on nothing.

/// A pattern matched at the start of a line (after the indentation it allows itself).
pub(crate) struct StartPattern {
    /// What the pattern recognises, for test failures and review.
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the tests only"))]
    pub(crate) name: &'static str,
    /// Literals one of which the line, with its indentation trimmed, starts with whenever
    /// the pattern matches.
    pub(crate) leads: &'static [&'static str],
    /// The first word that also lets the pattern run, instead of a lead
    /// (`evidence::first_word` judges it); [`FirstWord::Plain`] for none: only a lead does.
    /// The guard judges every line's first word once; this records which patterns rely on
    /// which kind.
    pub(crate) word: FirstWord,
    /// The regex, matched on bytes with ASCII-only classes (Unicode mode off).
    pub(crate) regex: &'static str,
}

/// What the first word of a line (its indentation trimmed, up to the first blank) can
/// lead, besides the fixed leads of [`StartPattern`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FirstWord {
    /// Nothing: neither of the kinds below.
    Plain,
    /// It holds a `:`, a `(` or an exception name (`Error`, `Exception`, `Warning`, `Exit`,
    /// `Interrupt`): a location (`path:12`, `file.ts(3,24)`), the end of a `tool:` prefix
    /// (`collect2:`, `src/main.c:`), an exception (`KeyError:`).
    Located,
    /// Not located, but it starts with a capital and ends with a digit: a lint code (`F401`).
    Code,
}

/// A pattern matched anywhere in a line, on lines that contain one of its keys.
pub(crate) struct AnywherePattern {
    /// What the pattern recognises, for test failures and review.
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the tests only"))]
    pub(crate) name: &'static str,
    /// Literals one of which the line contains whenever the pattern matches.
    pub(crate) keys: &'static [&'static str],
    /// The regex, matched on bytes with ASCII-only classes (Unicode mode off).
    pub(crate) regex: &'static str,
}

/// Pattern led by one of `leads`.
pub(crate) const fn led(
    name: &'static str,
    leads: &'static [&'static str],
    regex: &'static str,
) -> StartPattern {
    StartPattern { name, leads, word: FirstWord::Plain, regex }
}

/// Pattern led by a [`FirstWord::Located`] first word, or by one of `leads`.
pub(crate) const fn tok(
    name: &'static str,
    leads: &'static [&'static str],
    regex: &'static str,
) -> StartPattern {
    StartPattern { name, leads, word: FirstWord::Located, regex }
}

/// Pattern led by a [`FirstWord::Code`] first word (a lint code).
pub(crate) const fn code(name: &'static str, regex: &'static str) -> StartPattern {
    StartPattern { name, leads: &[], word: FirstWord::Code, regex }
}

/// Pattern run on lines that contain one of `keys`.
pub(crate) const fn keyed(
    name: &'static str,
    keys: &'static [&'static str],
    regex: &'static str,
) -> AnywherePattern {
    AnywherePattern { name, keys, regex }
}

/// Leads of the patterns that start with a number (backtrace frames, eslint positions).
pub(crate) const DIGITS: &[&str] = &["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];

/// Patterns matched at the start of the line; each carries its own indentation allowance.
///
/// Each is run, anchored, only on lines that start with one of its leads or whose first
/// word is of the kind it names ([`FirstWord`]): even an automaton that dies within a few
/// bytes costs more per call than those byte comparisons.
pub(crate) const AT_START: &[StartPattern] = &[
    // --- severity headlines ---
    // Deeper indentation is a field in code or data (`        error: e,`), not a headline.
    led(
        "error/warning headline",
        &["error", "warning", "Warning", "WARNING"],
        r"[ \t]{0,4}(?:error|warning|Warning|WARNING)(?:\[[^\]\s]+\])?:(?:[^:]|$)",
    ),
    led("lowercase error word (yarn, tsc)", &["error"], r"error(?: TS\d+:| |$)"),
    led("uppercase ERROR word", &["ERROR"], r"\s*ERROR\b"),
    led("Error: headline (node)", &["Error"], r"\s*Error(?: \[[A-Z0-9_]+\])?(?::(?:[^:]|$)|$)"),
    led(
        "fatal headline",
        &["fatal", "Fatal", "FATAL"],
        r"\s*(?:(?:fatal|Fatal)(?::| error)|FATAL\b)",
    ),
    led("go panic headline", &["panic: ", "PANIC"], r"\s*(?:panic: |PANIC\b)"),
    led("bracketed log level", &["["], r"\s*\[(?:ERROR|FATAL|error|fatal|Error)\]"),
    led("maven warning with location", &["[WARNING] "], r"\[WARNING\] .*?\.\w+:\[?\d+"),
    tok("tool-prefixed error (collect2, clang, cc1)", &[], r"[\w.+/-]+: (?:fatal )?error\b"),
    tok("tool-prefixed location (go vet)", &[], r"[\w.+/-]+: \S+:\d+:\d+: "),
    tok("linker message", &[], r"(?:\S*/)?(?:[\w-]+-)?ld(?:\.\w+)?: "),
    tok("make recipe failure", &[], r"\w*make(?:\[\d+\])?: (?:\*\*\*|Target .* not remade)"),
    led("ninja stop", &["ninja: "], r"ninja: build stopped"),
    led("cmake diagnostic", &["CMake "], r"CMake (?:Error|Warning)\b"),
    tok("kotlin compiler diagnostic", &[], r"[ew]: (?:file://)?\S+\.kts?\b"),
    led("gradle what went wrong", &["* What went wrong:"], r"\* What went wrong:"),
    led("gradle task failure", &["Execution failed for task "], r"Execution failed for task "),
    led("npm error", &["npm "], r"npm (?:ERR!|error)"),
    led("apt error", &["E: "], r"E: [A-Z]"),
    led(
        "go command failure",
        &["go: "],
        r"go: (?:\S+@\S+: |updates to go\.mod needed|[^\s:]+: (?:not found|module|missing|invalid))",
    ),
    led("git push rejection", &["! ["], r"\s*! \[(?:remote )?rejected\]"),
    tok("make stop with a location", &[], r"\S+:\d+: \*\*\* .*\bStop\."),
    // --- exceptions and tracebacks ---
    tok(
        "exception line (Python, JS, JVM)",
        &["Uncaught "],
        r"\s*(?:Uncaught )?[\w.$]*(?:Error|Exception|Warning|Exit|Interrupt)(?:: |:$|$| \[)",
    ),
    led("JVM uncaught exception", &["Exception in thread "], r"Exception in thread "),
    led(
        "Python traceback header",
        &["Traceback "],
        r"\s*Traceback \((?:most recent call|innermost) last\)",
    ),
    led("Python traceback frame", &["File \""], r#"\s*File "[^"]+", line \d+"#),
    led(
        "Python chained exception",
        &["The above exception was", "During handling of the above"],
        r"(?:The above exception was|During handling of the above)",
    ),
    led("cause chain", &["Caused by:", "Suppressed: "], r"\s*(?:Caused by:|Suppressed: )"),
    led("elided JVM frames", &["... "], r"\s*\.\.\. \d+ (?:more|common frames omitted)"),
    // --- stack frames ---
    led(
        "JS/Rust frame ending in a location",
        &["at "],
        r"\s+at (?:async |new )?(?:[^()]+ )?\(?\S*:\d+(?::\d+)?\)?\s*$",
    ),
    led("JVM frame", &["at "], r"\s*at [\w$.<>/-]+\([^)]*\)\s*$"),
    led(".NET frame", &["at "], r"\s*at .+ in \S+:line \d+\s*$"),
    led("vitest frame", &["❯ "], r"\s*❯ .*:\d+:\d+\s*$"),
    led("Rust backtrace frame", DIGITS, r"\s+\d+:\s+(?:0x[0-9a-f]+ - )?(?:<|\S*::)"),
    led("Rust backtrace header", &["stack backtrace:"], r"stack backtrace:"),
    led("Go goroutine header", &["goroutine "], r"goroutine \d+ \["),
    tok("Go frame location", &[], r"\s+\S+\.go:\d+(?: \+0x[0-9a-f]+)?\s*$"),
    led("Go frame creator", &["created by "], r"created by \S"),
    tok("Ruby frame", &["from ", "# "], r"\s*(?:from |# )?\S+:\d+:in (?:[`']|‘)"),
    // --- locations ---
    led("rustc location arrow", &["--> ", "::: "], r"\s*(?:-->|:::) \S+:\d+"),
    tok(
        "location then severity (gcc, mypy, pytest, clang-tidy)",
        &[],
        r"\s*(?:[A-Za-z]:)?[^\s:(]+:\d+(?::\d+)?: ?(?:fatal error|error|warning|note|Error|Warning|ERROR|WARNING|fatal|panic|FAIL\w*|[\w.]*(?:Error|Exception|Warning))\b",
    ),
    tok(
        "location then lint code (flake8, ruff, pylint)",
        &[],
        r"[^\s:]+:\d+:\d+: [A-Z]{1,4}\d{2,4}\b",
    ),
    // Not a klog header (`I1201 10:00:07.000001 …`): a ruff message starts with a word.
    code("lint code headline (ruff)", r"[A-Z]{1,4}\d{3,4} (?:\[\*\] )?[^\s\d]"),
    tok(
        "paren location then severity (tsc, msvc)",
        &[],
        r"\S+\(\d+(?:,\d+)*\) ?: (?:fatal )?(?:error|warning)\b",
    ),
    tok("tsc pretty location", &[], r"\S+:\d+:\d+ - (?:error|warning)\b"),
    tok("go compiler location", &[], r"\s*\S+\.go:\d+:\d+: "),
    tok("go test log location", &[], r"\s+\S+\.go:\d+: "),
    tok("pytest location", &[], r"\S+\.py:\d+:(?: in \S+)?\s*$"),
    tok("node error location", &[], r"\S+\.(?:[cm]?js|jsx|tsx?):\d+\s*$"),
    tok(
        "gcc context",
        &[],
        r"\S+: (?:In (?:function|member function|static member function|constructor|destructor|instantiation|lambda|substitution)\b|At top level:)",
    ),
    tok("gcc template context", &[], r"\S+:\d+(?::\d+)?:\s+required from"),
    led(
        "gcc include chain",
        &["In file included from ", "from "],
        r"(?:In file included from |\s+from \S+:\d+[:,]\s*$)",
    ),
    led("eslint stylish problem", DIGITS, r"\s+\d+:\d+\s+(?:error|warning)\s"),
    // --- test dialects ---
    led(
        "jest/vitest/mocha/eslint failure mark",
        &["×", "✕", "✗", "✘", "✖", "❌", "●"],
        r"\s*(?:×|✕|✗|✘|✖|❌|●) ",
    ),
    // Not a quoted or parenthesised value: redis-cli numbers its replies `1) "job-1"`,
    // `2) (integer) 5`.
    led("numbered failure title (mocha, rspec)", DIGITS, r#"\s*\d+\) [^\s"'(]"#),
    led("TAP failure", &["not ok "], r"\s*not ok \d+"),
    led("TAP/node summary", &["#"], r"#\s*(?:fail|failed|pass|tests)\s+\d+\s*$"),
    led(
        "nextest signal/timeout",
        &["SIG", "TIMEOUT", "LEAK"],
        r"\s*(?:SIG[A-Z]+|TIMEOUT|LEAK)\s+\[",
    ),
    led(
        "failures block header (cargo, rspec)",
        &["failures:", "Failures:"],
        r"(?:failures|Failures):\s*$",
    ),
    led("rspec failure", &["Failure/Error:"], r"\s*Failure/Error:"),
    led("rspec rerun line", &["rspec "], r"rspec \S+:\d+"),
    led("cargo captured output header", &["---- "], r"---- .+ std(?:out|err) ----"),
    led("cargo test summary", &["test result: "], r"test result: "),
    led(
        "libtest should_panic failure",
        &["note: test did not panic"],
        r"note: test did not panic as expected",
    ),
    tok("node test runner location", &[], r"\s*location: '\S+:\d+:\d+'"),
    led("pytest section header", &["___"], r"_{3,} .+ _{3,}\s*$"),
    led(
        "pytest summary header",
        &["="],
        r"=+ (?:FAILURES|ERRORS|short test summary info|warnings summary) =+",
    ),
    led("pytest E line", &["E"], r"E(?:\s|$)"),
    led("pytest failing source line", &[">"], r"> {2,}\S"),
    led("code frame pointer (jest, babel)", &[">"], r"\s*>\s*\d+\s*\|"),
    led(
        "expected/received value",
        &["Expected", "Received", "Actual", "expected", "actual", "got", "Got"],
        r"\s*(?:(?:Expected|Received|Actual|Got)\b[^:]{0,40}|expected|actual|got):(?:\s|$)",
    ),
    led(
        "jest diff header",
        &["- Expected", "- Snapshot", "+ Received", "+ expected - actual", "+ actual - expected"],
        r"\s*(?:- (?:Expected|Snapshot)\b|\+ Received\b|\+ expected - actual|\+ actual - expected)",
    ),
    led(
        "jest matcher hint",
        &["expect("],
        r"\s*expect\((?:received|jest\.fn\(\)|element|value)\)\.",
    ),
    led("rust assertion", &["assertion "], r"\s*assertion (?:failed|`)"),
    led("rust left/right", &["left: ", "right: "], r"\s{0,2}(?:left|right): "),
    led("rustc expected/found note", &["= note: expected"], r"\s*= note: expected\b"),
    led(
        "rustc found note",
        &["found "],
        r"\s+found (?:struct|enum|union|trait|type|reference|raw pointer|fn|closure|opaque|associated|unit|tuple|array|slice|mutable|integer|float|`)",
    ),
    led(
        "surefire tally",
        &["Tests run: ", "["],
        r"(?:\[\w+\] )?Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: \d+\s*$",
    ),
    led("unittest tally", &["Ran "], r"Ran \d+ tests? in "),
    led("rspec tally", DIGITS, r"\s*\d+ examples?, \d+ failures?"),
    led(
        "dotnet outcome",
        &["Passed!", "Failed!", "Failed "],
        r"\s*(?:(?:Passed|Failed)! +- |Failed [\w.]+(?:\(.*\))? \[)",
    ),
];

/// Patterns matched anywhere in the line, run only on lines holding one of their keys.
pub(crate) const ANYWHERE: &[AnywherePattern] = &[
    keyed(
        "rust panic",
        &["panicked at", "has overflowed"],
        r"panicked at|has overflowed its stack",
    ),
    keyed("uppercase FAIL word (go, jest, gradle, gtest)", &["FAIL"], r"\bFAIL(?:ED|URES?)?\b"),
    keyed(
        "uppercase log level",
        &["ERROR", "FATAL", "CRITICAL", "PANIC"],
        r"\b(?:ERROR|FATAL|CRITICAL|PANIC)\b",
    ),
    keyed(
        "structured log level",
        &["level"],
        // Not a URL's query (`GET /log?level=error`).
        r#"(?:^|[^\w?&./-])level=(?:error|fatal|panic|crit)|"level": ?"(?:error|fatal|panic|critical)""#,
    ),
    keyed(
        "signal or crash",
        &[
            "Segmentation fault",
            "core dumped",
            "Killed",
            "Bus error",
            "Illegal instruction",
            "Floating point exception",
            "Aborted",
            "Terminated",
            "SIGSEGV",
            "SIGABRT",
            "SIGBUS",
            "SIGILL",
            "SIGFPE",
            "SIGKILL",
            "ut of memory",
        ],
        r"Segmentation fault|core dumped|\bKilled\b|Bus error|Illegal instruction|Floating point exception|\bAborted\b|^\s*Terminated\s*$|\bSIG(?:SEGV|ABRT|BUS|ILL|FPE|KILL)\b|[Oo]ut of memory",
    ),
    keyed(
        "non-zero exit",
        &["xit ", "xited", "EXIT", "returned "],
        r"(?:[Ee]xit(?:ed)?(?: with)?(?: status| code)|EXIT (?:STATUS|CODE)):? [1-9]|returned [1-9]\d* exit status",
    ),
    keyed(
        "failure count",
        &["fail", "error", "warning", "problem", "broken", "rror(s)", "arning(s)"],
        r"\b[1-9]\d* (?:(?:failed|failing|failures?|errors?|warnings?|problems?|broken)\b|[Ee]rror\(s\)|[Ww]arning\(s\))",
    ),
    keyed("pass tally", &["pass"], r"\b\d+ (?:passed|passing)\b"),
    keyed(
        "vitest failure banner",
        &["Failed ", "Unhandled Error"],
        r"(?:Failed Tests|Failed Suites|Unhandled Errors?) \d+",
    ),
    keyed(
        "surefire failing tally",
        &["Tests run: "],
        r"Tests run: \d+,\s*Failures: (?:[1-9]|\d+,\s*Errors: [1-9])",
    ),
    keyed("expected … found", &[", found "], r"expected .+, found "),
    keyed("assertion failed", &["ssertion"], r"[Aa]ssertion\b.*\bfailed\b"),
    keyed(
        "linker symbol error",
        &["undefined reference to", "multiple definition of", "Undefined symbols"],
        r"undefined reference to|multiple definition of|Undefined symbols for architecture",
    ),
    keyed("eslint unix severity", &["[Error/", "[Warning/"], r"\[(?:Error|Warning)/"),
    // The dialects below are evidence on any run (a log read with `docker logs`, a CI log
    // read with `gh run view --log`, `kubectl describe` all exit 0). Failures that only a
    // failing run prints (`> Build error occurred`, `Failed to compile.`, `error during
    // build`, `Build FAILED.`) are left to the failing-run rule (`mark_failure_words`):
    // every key here costs the literal scan that every line pays, which stays fast only
    // while the keys number at most 64 (the SIMD searcher's limit) and none is shorter
    // than 4 bytes (the searcher's fingerprints are as long as the shortest key).
    keyed(
        "package manager failure (pnpm, npm, node-gyp)",
        &["ERR_PNPM_", "ELIFECYCLE", "ERR!"],
        r"ERR_PNPM_\w+|\bELIFECYCLE\b|\bERR!",
    ),
    // A state quoted as a JSON value (`"reason":"OOMKilled"`) is data: the JSON routes
    // keep it, in a form that is not the line.
    keyed(
        "container runtime failure (docker, Kubernetes)",
        &["OOMKilled", "BackOff", "ErrImagePull", "from daemon"],
        r#"(?:^|[^"\w])(?:OOMKilled|CrashLoopBackOff|ErrImagePull|ImagePullBackOff|BackOff)(?:$|[^"\w])|Error response from daemon"#,
    ),
    keyed(
        "CI runner failure (GitHub Actions, CircleCI)",
        &["##[error]", "with error code"],
        r"##\[error\]|Exited with error code [1-9]",
    ),
    keyed(
        "uncaught exception (.NET, Node, Ruby)",
        &["Unhandled", "Error)"],
        r"Unhandled (?:exception\.|'error' event)|UnhandledPromiseRejection|\((?:\w+::)*\w*Error\)\s*$",
    ),
    keyed(
        "network or auth failure",
        &["ECONN", "ENOTFOUND", "refused", "denied", "curl: (", "certificate"],
        r"\bE(?:CONNREFUSED|CONNRESET|NOTFOUND)\b|(?:^|[:(] ?)[Cc]onnection refused|Permission denied|Access denied|curl: \(\d+\)|certificate (?:verify failed|signed by unknown authority|problem|has expired)",
    ),
    keyed(
        "shell or file failure",
        &["not found", "No such file"],
        r"command not found|No such file or directory|^\S+: \d+: \S+: not found\s*$",
    ),
];

/// Literals one of which a line holds whenever [`FAILURE_WORD`] matches it in lowercase,
/// Capitalised or UPPERCASE form (a mixed case such as `eRRor` is not looked for). Each
/// drops the first letter, so one literal serves the first two forms, and the list stays
/// under the 64 literals of the SIMD searcher that finds them.
pub(crate) const FAILURE_KEYS: &[&str] = &[
    "rror",
    "RROR",
    "atal",
    "ATAL",
    "ailed",
    "AILED",
    "ailure",
    "AILURE",
    "ails",
    "AILS",
    "xception",
    "XCEPTION",
    "enied",
    "ENIED",
    "illed",
    "ILLED",
    "anic",
    "ANIC",
    "bort",
    "BORT",
    "ot found",
    "ot Found",
    "OT FOUND",
    "annot",
    "ANNOT",
    "ould not",
    "OULD NOT",
    "ouldn't",
    "an't",
    "nable to",
    "NABLE TO",
    "efused",
    "EFUSED",
    "o such",
    "O SUCH",
    "nauthorized",
    "NAUTHORIZED",
    "orbidden",
    "ORBIDDEN",
    "imed out",
    "IMED OUT",
    "erminated",
    "ERMINATED",
    "eadline exceeded",
    "EADLINE EXCEEDED",
];

/// A failure word standing as a word of prose: not inside an identifier (`error_count`,
/// `-Werror`, `thiserror`), a path or file name (`errors.go`, `src/error/`), an option
/// (`--on-error`), a call (`abort()`), a Rust path (`Error::new`) or a key (`failed=0`).
pub(crate) const FAILURE_WORD: &str = r"(?i)(?:^|[^\w\-./$@])(?:errors?|fatal|failed|failures?|fails|exceptions?|denied|killed|panic(?:ked|s)?|abort(?:ed|s)?|not found|cannot|could not|couldn't|can't|unable to|refused|no such|unauthorized|forbidden|timed out|terminated|deadline exceeded)(?:$|[^\w\-/(=.:]|[.:](?:$|[^\w:]))";

/// Lines that hold a failure word yet report no failure: a passing test (`test
/// error_paths ... ok`, `PASSED`), a zero count (`0 errors`, `no failures`, `without
/// errors`, `Errors: 0`, `failed=0`), progress chatter naming a package (`Compiling
/// failure v0.1.8`, a bare package name such as `errors` under `go build -v`), a report
/// table row (`|error |2 |`) or heading (`errors / warnings by module`), an option's help
/// (`--retry-all-errors  Retry all errors`), a numbered source excerpt (`204\texcept
/// Exception:`, `  12 | panic!(…)`) and CMake's probes (`-- Looking for kqueue - not found`).
pub(crate) const FAILURE_NOISE: &str = r"(?i)\.\.\. ok\b|\bPASS(?:ED)?\b|\b(?:0|no|zero|without) (?:errors?|failures?|failed|problems?|issues?)\b|\b(?:errors?|failures?|failed)\s*[:=]\s*0\b|^\s*(?:compiling|checking|downloading|downloaded|fresh|installing|collecting|requirement already satisfied)\b|\berrors? / warnings?\b|^\s*\|.*\|\s*$|^\s*--?[a-z][\w-]*(?:[ =,]|$)|^\s*\d+\s*(?:\t|\| )|^\s*-- (?:looking for|check|performing test)|^\s*[\w./-]+\s*$";

/// Literals one of which a line holds whenever
/// [`is_alarm_line`](super::evidence::is_alarm_line) may find it alarming: the anchors of an HTTP status of 400 or more (`" 4`, `HTTP/1.1 5`, `code 4`, `| 5`,
/// `status=4`), of an alarming level in any of its spellings (`ERR` also finds `ERROR`,
/// `Warn` also `Warning`, `"level":5` pino's 50), and of a crash start. Lines without one
/// pay only this scan: in an access log, the `200`s are not even candidates. Kept under
/// the 64 literals of the SIMD searcher (a test checks).
pub(crate) const ALARM_KEYS: &[&str] = &[
    // HTTP statuses of 400 and more: each key holds the status's first digit, so the
    // thousands of `200` lines of an access log are not candidates.
    "\" 4",
    "\" 5",
    "HTTP/1.1 4",
    "HTTP/1.1 5",
    "HTTP/1.0 4",
    "HTTP/1.0 5",
    "HTTP/2 4",
    "HTTP/2 5",
    " ms - ",
    "\" from ",
    "| 4",
    "| 5",
    "Completed 4",
    "Completed 5",
    "code 4",
    "code 5",
    "tatus=4",
    "tatus=5",
    "tatus\":4",
    "tatus\":5",
    "tatus\": 4",
    "tatus\": 5",
    "tatusCode\":4",
    "tatusCode\":5",
    "tatus_code\":4",
    "tatus_code\":5",
    // Levels.
    "WARN",
    "ERR",
    "EROR",
    "FATA",
    "FTL",
    "WRN",
    "CRIT",
    "PANI",
    "SEVERE",
    "EMERG",
    "ALERT",
    "warn",
    "Warn",
    "error",
    "Error",
    "eror",
    "=err",
    "\"err\"",
    "fatal",
    "Fatal",
    "crit",
    "panic",
    "Panic",
    "severe",
    "emerg",
    "alert",
    "fail:",
    "\"level\":4",
    "\"level\":5",
    "\"level\":6",
    "RIORITY",
    "\"s\":\"E\"",
    "\"s\":\"F\"",
    "\"s\":\"W\"",
    // Crash starts behind a log prefix.
    "Traceback",
];

/// Words that make a line a warning or error on its own, matched anywhere in the line and
/// in any ASCII case (`error`, `Error`, `ERROR`, `errors=0`, `WARNING`, `Failed`, …), by
/// the log shape (`reduce::shape::log::is_alarm`).
///
/// Deliberately broad: a line kept that could have been folded costs a few tokens, a
/// warning folded away costs the agent the one line it needed.
pub(crate) const ALARM_WORDS: &[&str] = &[
    "error",
    "warn",
    "fatal",
    "panic",
    "exception",
    "traceback",
    "fail",
    "critical",
    "severe",
    "assert",
];
