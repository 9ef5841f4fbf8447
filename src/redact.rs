//! Secret redaction (issue 14): every secret in a text becomes a marker that names its
//! kind, `[tj: redacted github-token]`, and nothing else changes.
//!
//! [`redact`] replaces only the secret's own bytes. The key, the quotes, the header's
//! scheme, the URL's user, the rest of the line and every line break stay byte for byte, so
//! a line stays one line (an evidence line keeps everything but its secret) and the line
//! count never changes. A PEM private key keeps its `BEGIN` and `END` lines, and each line
//! of its body becomes one marker. Redacting a redacted text changes nothing. This module
//! only transforms text; whether and where it runs (renditions, harness output, never the
//! stored original) is its callers' to decide.
//!
//! What is a secret (each [`Kind`] says its marker's name):
//! - by its shape, anywhere on a line: AWS access key ids, GitHub, GitLab, Slack, Stripe
//!   (secret, restricted and webhook keys; a publishable `pk_` key is public by design),
//!   OpenAI, Anthropic and Google keys and tokens, the path of a Slack webhook, and JWTs
//!   (three dot-separated base64url parts, the first two JSON objects, a signature);
//! - by its place: the body of a PEM private key; the credentials of an `Authorization`
//!   header (`Basic` → `basic-auth`, any other scheme → `bearer-token`), and a
//!   token-looking word after `Bearer` anywhere; the password of a URL
//!   (`scheme://user:PASS@host`: the user stays, it names the account); the value of a key
//!   that ends in `password`, `passwd`, `passphrase`, `_pwd`, `_pass`, `secret`, `secret_key`,
//!   `secret_key_base`, `token`, `api_key` or `private_key` — spelt in lowercase, uppercase
//!   or capitalized, with `_`, `-`, `.` or nothing between the words, as a suffix of a
//!   longer name (`DB_PASSWORD`, `GITHUB_TOKEN`, `client_secret`, `apiKey`), never as a
//!   prefix (`password_hash`, `token_type`, `max_tokens` are not secrets). An AWS
//!   `secret_access_key`, or a secret key under a name with `aws` in it, is an
//!   `aws-secret-key`.
//!
//! A value is what follows `=`, `:`, `:=` or `=>` (env, `.env`, shell, YAML, JSON, TOML, INI,
//! logfmt, query strings, Python and Ruby literals), or a space after a `--flag`. Quoted, it
//! is the text between its quotes (the quotes stay); unquoted, it ends at a blank or one of
//! ``, ; & ) ] } " ' ` ``, less a sentence's final `.` or `:`. When a secret of a
//! known shape sits within a value or a header, the marker names the shape
//! (`GITHUB_TOKEN=[tj: redacted github-token]`).
//!
//! Decisions on ambiguous cases (the tests' near-miss table holds an example of each):
//! - **Placeholders stay**: an empty value, a mask (`***`, `xxx`, `•••`, `...`), a reference
//!   or template (`$VAR`, `${VAR}`, `$(cmd)`, `{{ var }}`, `%s`, `<your-token>`), a bracketed
//!   note (`[REDACTED]`, and tj's own markers), a YAML tag, anchor or block (`!vault |`,
//!   `*alias`, `|`), the name of the key itself (`f(password=password)`), an all-caps
//!   metavariable (`--token=TOKEN`, `YOUR_API_KEY`), anything starting `your_`/`your-`,
//!   and a few words: booleans and nulls, type names (`str`, `string`, `int`, …), states
//!   (`expired`, `invalid`, `missing`, `required`, …), `redacted`, `hidden`, `changeme`,
//!   `example`, `dummy`, `test`, `password`, `secret`, `token`. A real secret equal to one
//!   of them is in every dictionary already.
//! - **Prose and code stay**: a key followed by anything but a separator ("the password
//!   is wrong", `token::Token`, `token.rs:12`, `test auth::token::tests::x ... ok`), a
//!   comparison (`token == x`), and, unquoted after `:`, a spaced `=` or a `--flag`: a
//!   dotted name (`self.token`), a call, index, path or type (`os.Getenv("TOKEN")`,
//!   `Option<String>`, `&str`), a number of at most five digits (`token: 42`), and a word
//!   of letters that is code after ` = ` (`token = tok`), a type or an identifier
//!   (`token: Token`, `api_key: String,`, `x: my_token`) or a sentence's first word
//!   ("password: must be at least 8 characters"). A quoted value of three or more words
//!   of letters and numbers is a sentence too ("This field is required.").
//! - **Values are values**: a lowercase word that ends its line after `:` or a flag
//!   (`token: abc` in YAML, `--password hunter`) is redacted; so is anything after a tight
//!   `KEY=value` (no blank around `=`: environments, `.env` files, command lines, query
//!   strings), even a word (`password=hunter`), where only placeholders, calls and dotted
//!   names without digits (`f(token=self.token)`) stay.
//! - **Not credentials**: a version (`"pbkdf2-password": "1.2.1"`, a package's), and
//!   pagination cursors and idempotency keys (`NextToken`, `nextPageToken`,
//!   `ClientToken`, …: an agent pages on them).
//! - **Known misses**, each to keep prose and code intact: a password of letters only after
//!   ` = ` (`password = hunter` in an INI file) or before more text, an all-caps one, a short
//!   numeric one after `:`, a passphrase of three or more plain words in quotes,
//!   mixed-case key spellings (`PassWord`), keys without a separator (`.netrc`'s
//!   `password x`, `-p x`, `curl -u user:x`, `<password>x</password>`), cookies and
//!   session ids, and a PEM
//!   body whose lines do not repeat the `BEGIN` line's prefix.
//!
//! Counts: one per secret. A PEM body of many lines is one private key.
//!
//! Performance: clean text costs one SIMD scan (Teddy) for a few dozen trigger literals
//! (`ghp_`, `AKIA`, `eyJ`, `://`, `oken`, `assw`, …), in a few case spellings each. Each
//! trigger calls for one detector, a few comparisons around it: there are no regexes to
//! compile (a short-lived process would pay milliseconds for them). Nothing is allocated
//! unless a secret is found; a text without one comes back as [`Cow::Borrowed`].

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind, Span, packed};
use memchr::memmem;

macro_rules! kinds {
    ($($(#[doc = $doc:literal])* $variant:ident => $name:literal,)*) => {
        /// A kind of secret, named in its marker (`[tj: redacted NAME]`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Kind {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Kind {
            /// Every kind, in the order [`Redacted::counts`] lists them.
            pub const ALL: &'static [Kind] = &[$(Kind::$variant,)*];

            /// The kind's name: lowercase, words joined by `-`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Kind::$variant => $name,)*
                }
            }

            /// The marker that replaces a secret of this kind.
            pub fn marker(self) -> &'static str {
                match self {
                    $(Kind::$variant => concat!("[tj: redacted ", $name, "]"),)*
                }
            }
        }
    };
}

kinds! {
    /// An AWS access key id: `AKIA` (long-term) or `ASIA` (temporary) and 16 more.
    AwsAccessKey => "aws-access-key",
    /// An AWS secret access key: the value of `aws_secret_access_key`, `SecretAccessKey`, ….
    AwsSecretKey => "aws-secret-key",
    /// A GitHub token: `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` or `github_pat_`.
    GithubToken => "github-token",
    /// A GitLab token: `glpat-`, `gldt-`, `glrt-`, `glptt-` or `glcbt-`.
    GitlabToken => "gitlab-token",
    /// A Slack token: `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`, `xoxe-` or `xapp-`.
    SlackToken => "slack-token",
    /// The secret path of a Slack webhook (`https://hooks.slack.com/services/…`).
    SlackWebhook => "slack-webhook",
    /// A Stripe secret or restricted key (`sk_live_`, `rk_test_`, …) or webhook secret.
    StripeKey => "stripe-key",
    /// An OpenAI key (`sk-proj-…`, `sk-svcacct-…`, or `sk-` and 32 or more letters and
    /// digits, the form several other providers use too).
    OpenaiKey => "openai-key",
    /// An Anthropic key: `sk-ant-…`.
    AnthropicKey => "anthropic-key",
    /// A Google API key: `AIza` and 35 more.
    GoogleApiKey => "google-api-key",
    /// A Google OAuth access token (`ya29.…`) or client secret (`GOCSPX-…`).
    GoogleOauth => "google-oauth",
    /// A JSON Web Token.
    Jwt => "jwt",
    /// A private key: a PEM body, or the value of a `private_key` key.
    PrivateKey => "private-key",
    /// The credentials of an `Authorization` header other than `Basic`, or a token after
    /// `Bearer`.
    BearerToken => "bearer-token",
    /// The credentials of an `Authorization: Basic` header.
    BasicAuth => "basic-auth",
    /// The password of a URL (`scheme://user:PASSWORD@host`).
    UrlCredentials => "url-credentials",
    /// The value of a `password`, `passwd`, `passphrase`, `_pwd` or `_pass` key.
    Password => "password",
    /// The value of a `secret`, `secret_key` or `secret_key_base` key.
    Secret => "secret",
    /// The value of a `token` key.
    Token => "token",
    /// The value of an `api_key` key.
    ApiKey => "api-key",
}

impl Kind {
    /// Which kind names a secret that two detectors found: a shape (0) is more precise
    /// than a place in a header or URL (1), which is more precise than a key's name (2).
    fn rank(self) -> u8 {
        match self {
            Kind::PrivateKey | Kind::BearerToken | Kind::BasicAuth | Kind::UrlCredentials => 1,
            Kind::Password | Kind::Secret | Kind::Token | Kind::ApiKey => 2,
            _ => 0,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How many kinds there are.
const KINDS: usize = Kind::ALL.len();

/// What every marker starts with.
pub const MARKER_PREFIX: &str = "[tj: redacted ";

/// A redacted text and what was redacted in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redacted<'a> {
    /// The text with every secret replaced by its marker; borrowed if there was none.
    pub text: Cow<'a, str>,
    /// Per kind that was found, in [`Kind::ALL`]'s order, how many secrets of it were
    /// redacted (a PEM private key counts once, whatever its number of lines).
    pub counts: Vec<(Kind, usize)>,
}

impl Redacted<'_> {
    /// How many secrets were redacted, of every kind.
    pub fn total(&self) -> usize {
        self.counts.iter().map(|&(_, n)| n).sum()
    }
}

/// `text` with every secret replaced by `[tj: redacted KIND]` (see the module
/// documentation); borrowed when there was none.
///
/// ```
/// use tj::redact::redact;
///
/// assert_eq!(redact("password=hunter2 user=bob"), "password=[tj: redacted password] user=bob");
/// assert_eq!(redact("the password is wrong"), "the password is wrong");
/// ```
pub fn redact(text: &str) -> Cow<'_, str> {
    redact_counted(text).text
}

/// [`redact`], and how many secrets of each kind it redacted.
pub fn redact_counted(text: &str) -> Redacted<'_> {
    let edits = edits(text);
    if edits.is_empty() {
        return Redacted { text: Cow::Borrowed(text), counts: Vec::new() };
    }
    let mut out = String::with_capacity(text.len() + 16 * edits.len());
    let mut counts = [0usize; KINDS];
    let mut copied = 0;
    for edit in &edits {
        out.push_str(&text[copied..edit.start]);
        out.push_str(edit.kind.marker());
        copied = edit.end;
        if edit.counted {
            counts[edit.kind as usize] += 1;
        }
    }
    out.push_str(&text[copied..]);
    let counts =
        Kind::ALL.iter().filter(|&&k| counts[k as usize] > 0).map(|&k| (k, counts[k as usize]));
    Redacted { text: Cow::Owned(out), counts: counts.collect() }
}

/// One secret's bytes, `start..end`, within one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Edit {
    start: usize,
    end: usize,
    kind: Kind,
    /// Counts as one secret: false for a PEM body's lines after its first.
    counted: bool,
}

/// The secrets of `text`: sorted, disjoint, non-empty, on character boundaries, none
/// holding a line break. Overlapping finds are merged, named by the most precise kind.
fn edits(text: &str) -> Vec<Edit> {
    let mut found = candidates(text);
    // Each detector finds spans within one line (a test checks); this only guards the
    // slicing that builds the output.
    found.retain(|e: &Edit| {
        e.start < e.end
            && text.is_char_boundary(e.start)
            && text.is_char_boundary(e.end)
            && !text[e.start..e.end].contains('\n')
    });
    found.sort_unstable_by_key(|e| (e.start, e.kind.rank(), e.kind, e.end));
    let mut merged: Vec<Edit> = Vec::with_capacity(found.len());
    for edit in found {
        match merged.last_mut() {
            Some(last) if edit.start < last.end => {
                last.end = last.end.max(edit.end);
                if edit.kind.rank() < last.kind.rank() {
                    last.kind = edit.kind;
                }
                last.counted |= edit.counted;
            }
            _ => merged.push(edit),
        }
    }
    merged
}

/// Every secret the detectors find in `text`: in no particular order, perhaps
/// overlapping. Each trigger calls for one detector, which examines the text around it.
fn candidates(text: &str) -> Vec<Edit> {
    if text.len() <= SMALL_TEXT {
        let mut small = SmallFinder::new(text);
        return candidates_with(text, |at| small.find(at));
    }
    let Some(finder) = FINDER.as_ref() else { return Vec::new() };
    candidates_with(text, |at| finder.find(text, at))
}

/// [`candidates`], with `find` giving the leftmost trigger at or after a byte offset.
fn candidates_with(
    text: &str,
    mut find: impl FnMut(usize) -> Option<(usize, usize, Detector)>,
) -> Vec<Edit> {
    let mut found = Vec::new();
    let mut line: Option<(usize, usize)> = None;
    let mut at = 0;
    while let Some((hit, len, detector)) = find(at) {
        at = hit + 1;
        let (start, end) = match line {
            Some((start, end)) if hit < end => (start, end),
            _ => {
                let start = text[..hit].rfind('\n').map_or(0, |i| i + 1);
                let end = text[hit..].find('\n').map_or(text.len(), |i| hit + i);
                line = Some((start, end));
                (start, end)
            }
        };
        if let Detector::Pem = detector {
            if let Some(resume) = pem_block(text, start, end, &mut found) {
                at = resume;
            }
            continue;
        }
        let mut push = |from: usize, to: usize, kind: Kind| {
            found.push(Edit { start: start + from, end: start + to, kind, counted: true });
        };
        detect(&text[start..end], hit - start, len, detector, &mut push);
    }
    found
}

// ---------------------------------------------------------------------------------------
// Triggers

/// What a trigger calls for: the detector that examines the text at it.
#[derive(Clone, Copy, Debug)]
enum Detector {
    /// A token that starts with the trigger.
    Prefixed(Prefixed),
    /// `sk-`: an Anthropic or OpenAI key.
    Sk,
    /// `xox`, `xapp-`: a Slack token.
    Slack,
    /// `hooks.slack.com/`: the path of a Slack webhook.
    Webhook,
    /// `eyJ`: a JWT.
    Jwt,
    /// `-----BEGIN`: a PEM private key.
    Pem,
    /// `://`: the password of a URL.
    Url,
    /// `uthorization`, one byte into its word: the credentials of an `Authorization` header.
    Authorization,
    /// `earer`, one byte into its word: a token after `Bearer`.
    Bearer,
    /// A word that ends a secret's key, starting this many bytes before the trigger.
    Key(usize),
}

/// A token that starts with its trigger, then at least `min` bytes of `body`, and no more
/// word characters.
#[derive(Clone, Copy, Debug)]
struct Prefixed {
    kind: Kind,
    body: fn(u8) -> bool,
    min: usize,
    /// Exactly `min` bytes of `body` (an AWS access key id).
    exact: bool,
    /// Then any number of `.` and more `body` (a GitLab token's routing parts).
    dotted: bool,
}

/// A [`Detector::Prefixed`] of at least `min` bytes of `body`.
const fn prefixed(kind: Kind, body: fn(u8) -> bool, min: usize) -> Detector {
    Detector::Prefixed(Prefixed { kind, body, min, exact: false, dotted: false })
}

/// An AWS access key id after its trigger.
const AWS_KEY_ID: Detector = Detector::Prefixed(Prefixed {
    kind: Kind::AwsAccessKey,
    body: is_upper_or_digit,
    min: 16,
    exact: true,
    dotted: false,
});

/// A GitLab token after its trigger.
const GITLAB: Detector = Detector::Prefixed(Prefixed {
    kind: Kind::GitlabToken,
    body: is_url_safe,
    min: 20,
    exact: false,
    dotted: true,
});

/// The literals of which every secret holds one, and the detector each calls for. Case
/// matters (Teddy, the SIMD search, is case-sensitive): a word that keys a value is listed
/// in the spellings names use (`token`, `Token`, `TOKEN`), less its first letter where that
/// covers two of them (`oken`).
const TRIGGERS: &[(&str, Detector)] = &[
    ("AKIA", AWS_KEY_ID),
    ("ASIA", AWS_KEY_ID),
    ("ghp_", prefixed(Kind::GithubToken, is_alnum, 36)),
    ("gho_", prefixed(Kind::GithubToken, is_alnum, 36)),
    ("ghu_", prefixed(Kind::GithubToken, is_alnum, 36)),
    ("ghs_", prefixed(Kind::GithubToken, is_alnum, 36)),
    ("ghr_", prefixed(Kind::GithubToken, is_alnum, 36)),
    ("github_pat_", prefixed(Kind::GithubToken, is_word, 40)),
    ("glpat-", GITLAB),
    ("gldt-", GITLAB),
    ("glrt-", GITLAB),
    ("glptt-", GITLAB),
    ("glcbt-", GITLAB),
    ("xox", Detector::Slack),
    ("xapp-", Detector::Slack),
    ("hooks.slack.com/", Detector::Webhook),
    ("sk_live_", prefixed(Kind::StripeKey, is_alnum, 10)),
    ("sk_test_", prefixed(Kind::StripeKey, is_alnum, 10)),
    ("rk_live_", prefixed(Kind::StripeKey, is_alnum, 10)),
    ("rk_test_", prefixed(Kind::StripeKey, is_alnum, 10)),
    ("whsec_", prefixed(Kind::StripeKey, is_alnum, 20)),
    ("sk-", Detector::Sk),
    ("AIza", prefixed(Kind::GoogleApiKey, is_url_safe, 35)),
    ("ya29.", prefixed(Kind::GoogleOauth, is_url_safe, 20)),
    ("GOCSPX-", prefixed(Kind::GoogleOauth, is_url_safe, 20)),
    ("eyJ", Detector::Jwt),
    ("-----BEGIN", Detector::Pem),
    ("://", Detector::Url),
    ("uthorization", Detector::Authorization),
    ("UTHORIZATION", Detector::Authorization),
    ("earer", Detector::Bearer),
    ("EARER", Detector::Bearer),
    ("assw", Detector::Key(1)),
    ("ASSW", Detector::Key(1)),
    ("assphrase", Detector::Key(1)),
    ("ASSPHRASE", Detector::Key(1)),
    ("_pwd", Detector::Key(0)),
    ("_PWD", Detector::Key(0)),
    ("-pwd", Detector::Key(0)),
    ("_pass", Detector::Key(0)),
    ("_PASS", Detector::Key(0)),
    ("-pass", Detector::Key(0)),
    ("ecret", Detector::Key(1)),
    ("ECRET", Detector::Key(1)),
    ("oken", Detector::Key(1)),
    ("OKEN", Detector::Key(1)),
    ("pi_key", Detector::Key(1)),
    ("pi_Key", Detector::Key(1)),
    ("PI_KEY", Detector::Key(1)),
    ("pikey", Detector::Key(1)),
    ("piKey", Detector::Key(1)),
    ("PIKey", Detector::Key(1)),
    ("PIKEY", Detector::Key(1)),
    ("pi-key", Detector::Key(1)),
    ("pi-Key", Detector::Key(1)),
    ("PI-KEY", Detector::Key(1)),
    ("rivate_key", Detector::Key(1)),
    ("rivateKey", Detector::Key(1)),
    ("rivate-key", Detector::Key(1)),
    ("RIVATE_KEY", Detector::Key(1)),
];

/// Finds the [`TRIGGERS`].
enum Finder {
    /// Teddy: a SIMD search for up to a few dozen literals.
    Teddy(packed::Searcher),
    /// An automaton, where Teddy is not available.
    Automaton(AhoCorasick),
}

/// The finder of [`TRIGGERS`]; `None` only if neither could be built for a few dozen fixed
/// literals, which cannot happen (a test checks).
static FINDER: LazyLock<Option<Finder>> = LazyLock::new(|| {
    let literals = TRIGGERS.iter().map(|&(literal, _)| literal);
    let mut config = packed::Config::new();
    config.match_kind(packed::MatchKind::LeftmostFirst).heuristic_pattern_limits(false);
    if let Some(searcher) = config.builder().extend(literals.clone()).build() {
        return Some(Finder::Teddy(searcher));
    }
    let automaton = AhoCorasick::builder().match_kind(MatchKind::LeftmostFirst).build(literals);
    automaton.ok().map(Finder::Automaton)
});

impl Finder {
    /// The leftmost trigger in `text[at..]`: where it starts, its length, its detector.
    fn find(&self, text: &str, at: usize) -> Option<(usize, usize, Detector)> {
        let found = match self {
            Finder::Teddy(searcher) => searcher.find_in(text, Span { start: at, end: text.len() }),
            Finder::Automaton(automaton) => {
                automaton.find(aho_corasick::Input::new(text).span(at..text.len()))
            }
        }?;
        let &(_, detector) = TRIGGERS.get(found.pattern().as_usize())?;
        Some((found.start(), found.len(), detector))
    }
}

/// Texts up to this many bytes are searched trigger by trigger ([`SmallFinder`]): most
/// renditions are a few lines, and building the packed searcher (about 100,000
/// instructions) would cost them more than redacting them.
const SMALL_TEXT: usize = 2048;

/// Finds the [`TRIGGERS`] in a short text one literal at a time, as [`Finder`] does
/// (leftmost first; at one offset, the trigger listed first), without building anything.
struct SmallFinder<'t> {
    text: &'t str,
    /// Per trigger, its first occurrence at or after the offset last asked for, if any.
    next: Vec<Option<usize>>,
}

impl<'t> SmallFinder<'t> {
    fn new(text: &'t str) -> SmallFinder<'t> {
        let next = TRIGGERS
            .iter()
            .map(|(literal, _)| memmem::find(text.as_bytes(), literal.as_bytes()))
            .collect();
        SmallFinder { text, next }
    }

    /// The leftmost trigger in `text[at..]`; `at` never decreases from call to call.
    fn find(&mut self, at: usize) -> Option<(usize, usize, Detector)> {
        let mut best: Option<(usize, usize)> = None;
        for (i, ((literal, _), next)) in TRIGGERS.iter().zip(&mut self.next).enumerate() {
            if next.is_some_and(|start| start < at) {
                let rest = self.text.as_bytes().get(at..).unwrap_or_default();
                *next = memmem::find(rest, literal.as_bytes()).map(|q| at + q);
            }
            if let Some(start) = *next
                && best.is_none_or(|(best_start, _)| start < best_start)
            {
                best = Some((start, i));
            }
        }
        let (start, i) = best?;
        let (literal, detector) = TRIGGERS[i];
        Some((start, literal.len(), detector))
    }
}

/// Runs `detector` for the trigger of `len` bytes at `hit` in `line`.
fn detect(
    line: &str,
    hit: usize,
    len: usize,
    detector: Detector,
    push: &mut impl FnMut(usize, usize, Kind),
) {
    let bytes = line.as_bytes();
    let found = match detector {
        Detector::Prefixed(token) => {
            prefixed_token(bytes, hit, len, token).map(|end| (hit, end, token.kind))
        }
        Detector::Sk => sk_key(bytes, hit).map(|(end, kind)| (hit, end, kind)),
        Detector::Slack => slack_token(bytes, hit).map(|end| (hit, end, Kind::SlackToken)),
        Detector::Webhook => {
            webhook(bytes, hit + len).map(|(from, to)| (from, to, Kind::SlackWebhook))
        }
        Detector::Jwt => jwt(bytes, hit).map(|end| (hit, end, Kind::Jwt)),
        Detector::Url => url_password(line, hit).map(|(from, to)| (from, to, Kind::UrlCredentials)),
        Detector::Authorization => authorization(line, hit),
        Detector::Bearer => bearer(line, hit).map(|(from, to)| (from, to, Kind::BearerToken)),
        Detector::Key(back) => hit.checked_sub(back).and_then(|start| assignment(line, start)),
        Detector::Pem => None,
    };
    if let Some((from, to, kind)) = found {
        push(from, to, kind);
    }
}

/// Is `b` a word character: a letter, a digit or `_`.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Is `b` a letter or a digit.
fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// Is `b` an uppercase letter or a digit.
fn is_upper_or_digit(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}

/// Is `b` a character of base64url: a letter, a digit, `-` or `_`.
fn is_url_safe(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// Is `b` a character of an HTTP token (RFC 6750's `b64token`).
fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b)
}

/// Is `b` a character of a URL's user or password (unreserved, sub-delimiters, `%`), less
/// the quotes that end a URL in a string.
fn is_userinfo(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~%!$&*+,;=()".contains(&b)
}

/// How many bytes of `class` start `bytes[at..]`.
fn run(bytes: &[u8], at: usize, class: impl Fn(u8) -> bool) -> usize {
    bytes.get(at..).map_or(0, |rest| rest.iter().take_while(|&&b| class(b)).count())
}

/// Does a word character come right before `at`: `at` starts no word.
fn word_before(bytes: &[u8], at: usize) -> bool {
    at > 0 && is_word(bytes[at - 1])
}

/// Does `bytes[at..]` start with `word`, in any ASCII case.
fn starts_with_word(bytes: &[u8], at: usize, word: &[u8]) -> bool {
    bytes.get(at..at + word.len()).is_some_and(|b| b.eq_ignore_ascii_case(word))
}

// ---------------------------------------------------------------------------------------
// Secrets of a known shape

/// The end of the token of `shape` whose `len`-byte trigger is at `hit`.
fn prefixed_token(bytes: &[u8], hit: usize, len: usize, shape: Prefixed) -> Option<usize> {
    if word_before(bytes, hit) {
        return None;
    }
    let body = hit + len;
    let n = run(bytes, body, shape.body);
    if n < shape.min || (shape.exact && n != shape.min) {
        return None;
    }
    let mut end = body + n;
    while shape.dotted
        && bytes.get(end) == Some(&b'.')
        && bytes.get(end + 1).is_some_and(|&b| (shape.body)(b))
    {
        end += 1 + run(bytes, end + 1, shape.body);
    }
    (!bytes.get(end).is_some_and(|&b| is_word(b))).then_some(end)
}

/// The end and kind of the key whose `sk-` is at `hit`: `sk-ant-…` (Anthropic),
/// `sk-proj-…` and its siblings, or `sk-` and 32 or more letters and digits (OpenAI).
fn sk_key(bytes: &[u8], hit: usize) -> Option<(usize, Kind)> {
    if word_before(bytes, hit) {
        return None;
    }
    let at = hit + "sk-".len();
    let named: [(&[u8], Kind); 5] = [
        (b"ant-", Kind::AnthropicKey),
        (b"proj-", Kind::OpenaiKey),
        (b"svcacct-", Kind::OpenaiKey),
        (b"admin-", Kind::OpenaiKey),
        (b"None-", Kind::OpenaiKey),
    ];
    if let Some(&(name, kind)) = named.iter().find(|(name, _)| bytes[at..].starts_with(name)) {
        let n = run(bytes, at + name.len(), is_url_safe);
        return (n >= 20).then_some((at + name.len() + n, kind));
    }
    let n = run(bytes, at, is_alnum);
    let end = at + n;
    (n >= 32 && !bytes.get(end).is_some_and(|&b| is_word(b))).then_some((end, Kind::OpenaiKey))
}

/// The end of the Slack token at `hit`: `xox` and a type letter (`xoxe.xoxp-` for a
/// rotating one), or `xapp`; then `-`, digits, `-` and the rest.
fn slack_token(bytes: &[u8], hit: usize) -> Option<usize> {
    if word_before(bytes, hit) {
        return None;
    }
    let typed = |at: usize| bytes.get(at).is_some_and(|b| b"abeprs".contains(b));
    let (mut at, min) = if bytes[hit..].starts_with(b"xapp-") {
        (hit + "xapp-".len(), 10)
    } else {
        let mut at = hit + "xox".len();
        if !typed(at) {
            return None;
        }
        at += 1;
        if bytes[at..].starts_with(b".xox") && typed(at + 4) {
            at += 5;
        }
        if bytes.get(at) != Some(&b'-') {
            return None;
        }
        (at + 1, 8)
    };
    let digits = run(bytes, at, |b| b.is_ascii_digit());
    if digits == 0 || bytes.get(at + digits) != Some(&b'-') {
        return None;
    }
    at += digits + 1;
    let n = run(bytes, at, |b| b.is_ascii_alphanumeric() || b == b'-');
    (n >= min).then_some(at + n)
}

/// The secret path of a Slack webhook whose `hooks.slack.com/` ends at `at`.
fn webhook(bytes: &[u8], at: usize) -> Option<(usize, usize)> {
    let kinds: [&[u8]; 3] = [b"services/", b"workflows/", b"triggers/"];
    let kind = kinds.iter().find(|kind| bytes[at..].starts_with(kind))?;
    let start = at + kind.len();
    let n = run(bytes, start, |b| b.is_ascii_alphanumeric() || b"_/-".contains(&b));
    (n >= 10).then_some((start, start + n))
}

/// The end of the JWT at `hit`: three base64url parts, the first two JSON objects
/// (`eyJ…`), each of at least 11 characters.
fn jwt(bytes: &[u8], hit: usize) -> Option<usize> {
    if word_before(bytes, hit) {
        return None;
    }
    let mut at = hit;
    for (i, lead) in [&b"eyJ"[..], b"eyJ", b""].into_iter().enumerate() {
        if i > 0 {
            if bytes.get(at) != Some(&b'.') {
                return None;
            }
            at += 1;
        }
        if !bytes[at..].starts_with(lead) {
            return None;
        }
        let n = run(bytes, at + lead.len(), is_url_safe);
        if n < 8 {
            return None;
        }
        at += lead.len() + n;
    }
    Some(at)
}

// ---------------------------------------------------------------------------------------
// Secrets in a place: URLs, Authorization headers, Bearer

/// The password of the URL whose `://` is at `hit` in `line`: `scheme://user:PASSWORD@`,
/// unless a placeholder.
fn url_password(line: &str, hit: usize) -> Option<(usize, usize)> {
    let bytes = line.as_bytes();
    let scheme_byte = |b: u8| b.is_ascii_alphanumeric() || b"+.-".contains(&b);
    let mut start = hit;
    while start > 0 && scheme_byte(bytes[start - 1]) {
        start -= 1;
    }
    // A scheme starts a word with a letter.
    (start..hit).find(|&i| bytes[i].is_ascii_alphabetic() && !word_before(bytes, i))?;
    let user_end = hit + 3 + run(bytes, hit + 3, is_userinfo);
    if bytes.get(user_end) != Some(&b':') {
        return None;
    }
    let from = user_end + 1;
    let to = from + run(bytes, from, |b| is_userinfo(b) || b == b':');
    let password = to > from && bytes.get(to) == Some(&b'@');
    (password && !is_placeholder(&line[from..to], "")).then_some((from, to))
}

/// The `Authorization` schemes told apart from a value: any other first word is the value.
const SCHEMES: &[&str] =
    &["apikey", "basic", "bearer", "bot", "negotiate", "ntlm", "ssws", "token"];

/// `at` past a quote (`"`, `'`, or either escaped), if one is there.
fn skip_quote(bytes: &[u8], at: usize) -> usize {
    match bytes.get(at..) {
        Some([b'\\', b'"' | b'\'', ..]) => at + 2,
        Some([b'"' | b'\'', ..]) => at + 1,
        _ => at,
    }
}

/// The credentials of the `Authorization` header whose `uthorization` is at `hit` in
/// `line`: `Basic` ones are `basic-auth`, any other a `bearer-token`. A word of letters
/// stays (`Authorization: required`, `Authorization: token expired`).
fn authorization(line: &str, hit: usize) -> Option<(usize, usize, Kind)> {
    let bytes = line.as_bytes();
    if !hit.checked_sub(1).is_some_and(|a| bytes[a].eq_ignore_ascii_case(&b'a')) {
        return None;
    }
    let mut at = skip_quote(bytes, hit + "uthorization".len());
    at += blanks(bytes, at);
    if !matches!(bytes.get(at), Some(b':' | b'=')) {
        return None;
    }
    at += 1;
    at += blanks(bytes, at);
    at = skip_quote(bytes, at);
    at += blanks(bytes, at);
    let word = run(bytes, at, |b| b.is_ascii_alphabetic());
    let scheme = &line[at..at + word];
    let gap = blanks(bytes, at + word);
    let known = gap > 0 && SCHEMES.iter().any(|s| scheme.eq_ignore_ascii_case(s));
    let after = at + word + gap;
    let (scheme, at) = if known && run(bytes, after, is_credential) > 0 {
        (Some(scheme), after)
    } else {
        (None, at)
    };
    let value = &line[at..at + run(bytes, at, is_credential)];
    let keep = value.is_empty()
        || is_placeholder(value, "")
        || match scheme {
            Some(_) => value.bytes().all(|b| b.is_ascii_lowercase()),
            None => value.bytes().all(|b| b.is_ascii_alphabetic()),
        };
    let basic = scheme.is_some_and(|s| s.eq_ignore_ascii_case("basic"));
    let kind = if basic { Kind::BasicAuth } else { Kind::BearerToken };
    (!keep).then_some((at, at + value.len(), kind))
}

/// Is `b` a character of an `Authorization` header's credentials.
fn is_credential(b: u8) -> bool {
    is_token_char(b) || b == b':'
}

/// The token after the `Bearer` whose `earer` is at `hit` in `line`: 16 or more token
/// characters, letters and digits both (so not "Bearer authentication_required").
fn bearer(line: &str, hit: usize) -> Option<(usize, usize)> {
    let bytes = line.as_bytes();
    let b = hit.checked_sub(1)?;
    if !bytes[b].eq_ignore_ascii_case(&b'b') || word_before(bytes, b) {
        return None;
    }
    let gap = blanks(bytes, hit + "earer".len());
    let start = hit + "earer".len() + gap;
    let token = &line[start..start + run(bytes, start, is_token_char)];
    let tokenish = token.len() >= 16
        && token.bytes().any(|b| b.is_ascii_digit())
        && token.bytes().any(|b| b.is_ascii_alphabetic());
    (gap > 0 && tokenish && !is_placeholder(token, "")).then_some((start, start + token.len()))
}

// ---------------------------------------------------------------------------------------
// Secrets by their key's name

/// The end of the word that ends a secret's key, if one starts at `at`, in any case:
/// `password`, `passwd`, `passphrase`, `_pwd`, `_pass`, `token`, `secret` (and
/// `_access`, `_key`, `_base` after it), `api_key`, `private_key` (with `_`, `-`, `.` or
/// nothing before `key`).
fn key_word(bytes: &[u8], at: usize) -> Option<usize> {
    // `[_.-]?part` at `at`: its end.
    let part = |at: usize, part: &[u8]| {
        let sep = usize::from(matches!(bytes.get(at), Some(b'_' | b'.' | b'-')));
        [at, at + sep]
            .into_iter()
            .find(|&i| starts_with_word(bytes, i, part))
            .map(|i| i + part.len())
    };
    if starts_with_word(bytes, at, b"secret") {
        let mut end = at + "secret".len();
        for optional in [&b"access"[..], b"key", b"base"] {
            end = part(end, optional).unwrap_or(end);
        }
        return Some(end);
    }
    let words: [&[u8]; 8] =
        [b"password", b"passwd", b"passphrase", b"token", b"_pwd", b"-pwd", b"_pass", b"-pass"];
    if let Some(word) = words.iter().find(|word| starts_with_word(bytes, at, word)) {
        return Some(at + word.len());
    }
    let lead =
        [&b"api"[..], b"private"].into_iter().find(|lead| starts_with_word(bytes, at, lead))?;
    part(at + lead.len(), b"key")
}

/// The value of the secret key whose final word starts at `at` in `line` (see the module
/// documentation), and its kind.
fn assignment(line: &str, at: usize) -> Option<(usize, usize, Kind)> {
    let bytes = line.as_bytes();
    let word_end = key_word(bytes, at)?;
    // The word must end the key's name: `password_hash` is not a password.
    if bytes.get(word_end).is_some_and(|&b| is_word(b)) {
        return None;
    }
    let word = &line[at..word_end];
    let mut key_start = at;
    while key_start > 0 && is_key_byte(bytes[key_start - 1]) {
        key_start -= 1;
    }
    let before = &line[..key_start];
    // A URL's user (the URL detector's), a `$REFERENCE`, a marker's kind.
    if before.ends_with("//") || before.ends_with('$') || before.ends_with(MARKER_PREFIX) {
        return None;
    }
    let key = &line[key_start..word_end];
    if OPAQUE_TOKENS.iter().any(|name| ends_with_name(key, name)) {
        return None;
    }
    let (at, style) = separator(bytes, word_end, key.starts_with('-'))?;
    let (start, end, quoted) = value_span(line, at)?;
    let value = &line[start..end];
    let last = line[end..].trim_start();
    let ends_line = last.is_empty() || last.starts_with('#') || last.starts_with("//");
    // `tests_pass=3` counts; `DB_PASS=3` is a poor password, and a rare one.
    let pass = word.get(1..).is_some_and(|w| w.eq_ignore_ascii_case("pass"));
    let count = pass && value.bytes().all(|b| b.is_ascii_digit());
    let keep = count
        || is_version(value)
        || if quoted {
            is_placeholder(value, key) || is_prose(value) || is_template(value)
        } else {
            keep_unquoted(value, key, style, ends_line)
        };
    (!keep).then(|| (start, end, key_kind(key, word)))
}

/// How a value follows its key, which decides how much of it may be code or prose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    /// `KEY=value`, no blank around the `=`: an environment, a command line, a query.
    Tight,
    /// `key: value`: YAML, JSON, logs, HTTP headers, type annotations.
    Colon,
    /// `key = value`, `key := value`, `key => value`: code, TOML, INI.
    Spaced,
    /// `--key value`.
    Flag,
}

/// Is `b` a byte of a key's name.
fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// The start of the value after a key that ends at `at` (and its closing quote and blanks,
/// and the separator), and the style of the assignment; `None` if no value follows.
fn separator(bytes: &[u8], mut at: usize, flag: bool) -> Option<(usize, Style)> {
    let mut quoted_key = false;
    if bytes[at..].starts_with(b"\\\"") || bytes[at..].starts_with(b"\\'") {
        at += 2;
        quoted_key = true;
    } else if matches!(bytes.get(at), Some(b'"' | b'\'')) {
        at += 1;
        quoted_key = true;
    }
    if quoted_key && bytes.get(at) == Some(&b']') {
        at += 1; // `env["TOKEN"] = …`
    }
    let blank_before = blanks(bytes, at);
    at += blank_before;
    let (len, style) = match (bytes.get(at), bytes.get(at + 1)) {
        (Some(b':'), Some(b'=')) | (Some(b'='), Some(b'>')) => (2, Style::Spaced),
        (Some(b'='), Some(b'=' | b'~')) | (Some(b':'), Some(b':')) => return None,
        (Some(b'='), _) if blank_before == 0 && !quoted_key => (1, Style::Tight),
        (Some(b'='), _) => (1, Style::Spaced),
        (Some(b':'), _) => (1, Style::Colon),
        _ if flag && blank_before > 0 && !quoted_key => (0, Style::Flag),
        _ => return None,
    };
    at += len;
    let blank_after = blanks(bytes, at);
    let style = if style == Style::Tight && blank_after > 0 { Style::Spaced } else { style };
    at += blank_after;
    (at < bytes.len()).then_some((at, style))
}

/// How many spaces and tabs start `bytes[at..]`.
fn blanks(bytes: &[u8], at: usize) -> usize {
    bytes[at.min(bytes.len())..].iter().take_while(|&&b| b == b' ' || b == b'\t').count()
}

/// The value starting at `at`: its span (inside its quotes, if quoted) and whether it is
/// quoted.
fn value_span(line: &str, mut at: usize) -> Option<(usize, usize, bool)> {
    let bytes = line.as_bytes();
    // Rust's `Some("…")` (a `Debug` of an `Option<String>`).
    if bytes[at..].starts_with(b"Some(") && matches!(bytes.get(at + 5), Some(b'"' | b'\'')) {
        at += 5;
    }
    // A Python string prefix: `b"…"`, `r'…'`, `rb"…"`.
    let prefix = bytes[at..].iter().take_while(|b| b"bBrRuUfF".contains(b)).count();
    if prefix <= 2 && matches!(bytes.get(at + prefix), Some(b'"' | b'\'')) {
        at += prefix;
    }
    let quote_len = match bytes.get(at..) {
        Some([b'\\', b'"' | b'\'', ..]) => 2,
        Some([b'"' | b'\'' | b'`', ..]) => 1,
        _ => 0,
    };
    if quote_len == 0 {
        let len = bytes[at..]
            .iter()
            .position(|&b| b.is_ascii_whitespace() || b",;&\"'`)]}".contains(&b))
            .unwrap_or(bytes.len() - at);
        let value = line[at..at + len].trim_end_matches(['.', ':']);
        return (!value.is_empty()).then_some((at, at + value.len(), false));
    }
    let quote = &bytes[at..at + quote_len];
    let start = at + quote_len;
    let end =
        closing_quote(bytes, start, quote).unwrap_or_else(|| line.trim_end().len().max(start));
    Some((start, end, true))
}

/// Where the string that starts at `start` closes with `quote` (one byte, or `\` and one).
fn closing_quote(bytes: &[u8], start: usize, quote: &[u8]) -> Option<usize> {
    if quote.len() == 2 {
        return bytes[start..].windows(2).position(|w| w == quote).map(|i| start + i);
    }
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote[0] => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The kind of a secret keyed by `key`, whose final word is `word`.
fn key_kind(key: &str, word: &str) -> Kind {
    let has = |s: &str, w: &str| {
        s.as_bytes().windows(w.len()).any(|x| x.eq_ignore_ascii_case(w.as_bytes()))
    };
    match word.as_bytes().first().map(u8::to_ascii_lowercase) {
        Some(b's') if has(word, "access") || (has(word, "key") && has(key, "aws")) => {
            Kind::AwsSecretKey
        }
        Some(b's') => Kind::Secret,
        Some(b't') => Kind::Token,
        Some(b'a') => Kind::ApiKey,
        Some(b'p') if has(word, "private") => Kind::PrivateKey,
        _ => Kind::Password,
    }
}

/// Names of tokens that are no credentials: pagination cursors and idempotency keys
/// (`NextToken`, `nextPageToken`, `ClientToken`), which an agent needs to page on.
const OPAQUE_TOKENS: &[&str] = &[
    "clienttoken",
    "continuationtoken",
    "idempotencytoken",
    "nexttoken",
    "pagetoken",
    "paginationtoken",
    "startingtoken",
    "synctoken",
];

/// Does `key`, less its `_`, `-` and `.`, end with `name` (lowercase) in any case.
fn ends_with_name(key: &str, name: &str) -> bool {
    let mut key = key.bytes().rev().filter(|b| b.is_ascii_alphanumeric());
    name.bytes().rev().all(|b| key.next().is_some_and(|k| k.to_ascii_lowercase() == b))
}

/// Is `value` a version or a version requirement (`1.2.1`, `^4.18.2`, `>=2.0`): the value
/// of a package whose name ends like a key (`pbkdf2-password`), not a secret.
fn is_version(value: &str) -> bool {
    let number = value.trim_start_matches(['^', '~', '=', '>', '<', 'v', ' ']);
    let core = number.split(['-', '+']).next().unwrap_or(number);
    core.contains('.')
        && core.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'x' || b == b'*')
        && core.bytes().next().is_some_and(|b| b.is_ascii_digit())
}

/// Words that are not secrets whatever key they are the value of.
const PLACEHOLDER_WORDS: &[&str] = &[
    "any",
    "bool",
    "boolean",
    "bytes",
    "changeme",
    "change_me",
    "change-me",
    "dummy",
    "denied",
    "empty",
    "example",
    "expired",
    "false",
    "fake",
    "filtered",
    "hidden",
    "int",
    "invalid",
    "malformed",
    "masked",
    "missing",
    "nil",
    "no",
    "none",
    "notset",
    "null",
    "number",
    "object",
    "off",
    "ok",
    "omitted",
    "on",
    "passwd",
    "password",
    "placeholder",
    "redacted",
    "rejected",
    "removed",
    "required",
    "revoked",
    "sample",
    "secret",
    "str",
    "string",
    "test",
    "token",
    "true",
    "undefined",
    "unknown",
    "unset",
    "valid",
    "yes",
];

/// Is `value` (of `key`) a stand-in for a secret rather than one (see the module
/// documentation).
fn is_placeholder(value: &str, key: &str) -> bool {
    let value = value.trim();
    let Some(&first) = value.as_bytes().first() else { return true };
    let mask =
        |c: char| matches!(c, '*' | 'x' | 'X' | '•' | '●' | '.' | '…' | '#' | '-' | '_' | '?');
    value.chars().all(mask)
        || b"<[{$%!&*|>#(".contains(&first)
        || value.starts_with("-----")
        || PLACEHOLDER_WORDS.iter().any(|w| value.eq_ignore_ascii_case(w))
        || value.eq_ignore_ascii_case(key.trim_start_matches('-'))
        || value
            .get(..5)
            .is_some_and(|p| p.eq_ignore_ascii_case("your_") || p.eq_ignore_ascii_case("your-"))
        || (value.len() >= 2
            && value.bytes().all(|b| b.is_ascii_uppercase() || b == b'_' || b == b'-')
            && value.bytes().any(|b| b.is_ascii_uppercase()))
}

/// Is the quoted `value` a sentence: three or more words of letters or digits, two of
/// letters ("This field is required.", "must be at least 8 characters").
fn is_prose(value: &str) -> bool {
    let (mut words, mut lettered) = (0, 0);
    for word in value.split_whitespace() {
        let word = word.trim_matches(|c: char| ".,;:!?()".contains(c));
        if word.is_empty() {
            continue;
        }
        if word.chars().all(|c| c.is_alphabetic() || c == '\'' || c == '-') {
            lettered += 1;
        } else if !word.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        words += 1;
    }
    words >= 3 && lettered >= 2
}

/// Does the quoted `value` interpolate (`f"Bearer {token}"`, `"{}"`, `"#{key}"`).
fn is_template(value: &str) -> bool {
    value.find('{').is_some_and(|open| value[open..].contains('}'))
}

/// Is `value` a dotted name starting with a lowercase word (`self.token`, `os.environ`,
/// `settings.SECRET_KEY`): code that names a secret.
fn is_dotted_name(value: &str) -> bool {
    let mut parts = value.split('.');
    let first_lower = value.bytes().next().is_some_and(|b| b.is_ascii_lowercase() || b == b'_');
    let is_word = |p: &str| {
        p.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    };
    first_lower && value.contains('.') && parts.all(is_word)
}

/// Does the unquoted `value` of `key` stay (see the module documentation); `ends_line`:
/// nothing but blanks or a comment follows it.
fn keep_unquoted(value: &str, key: &str, style: Style, ends_line: bool) -> bool {
    if is_placeholder(value, key) || value.contains('(') {
        return true;
    }
    let word = value.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_');
    match style {
        // `f(token=self.token)`; but `token=v1.K8s2.aB3` is a token.
        Style::Tight => is_dotted_name(value) && !value.bytes().any(|b| b.is_ascii_digit()),
        Style::Colon | Style::Spaced | Style::Flag => {
            (style == Style::Flag && value.starts_with('-'))
                || is_dotted_name(value)
                || value.contains('[')
                || value.contains("::")
                || value.contains("->")
                || value.contains('<')
                || (value.len() <= 5 && value.bytes().all(|b| b.is_ascii_digit()))
                // A word: code after ` = ` (`token = tok`), a type (`token: Token`), an
                // identifier (`x: my_token`), or the first word of a sentence
                // ("password: must be at least 8 characters"). A lowercase word alone
                // after `:` or a flag is a value (`token: abc` in YAML).
                || (word
                    && (style == Style::Spaced
                        || !ends_line
                        || value.contains('_')
                        || value.starts_with(|c: char| c.is_ascii_uppercase())))
        }
    }
}

// ---------------------------------------------------------------------------------------
// PEM private keys

/// The byte where `-----BEGIN … PRIVATE KEY-----` starts on `line`, and where it ends.
fn private_key_header(line: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(i) = line[from..].find("-----BEGIN ") {
        let begin = from + i;
        let label_start = begin + "-----BEGIN ".len();
        if let Some(len) = line[label_start..].find("-----") {
            let label = &line[label_start..label_start + len];
            let private = label.ends_with("PRIVATE KEY") || label.ends_with("PRIVATE KEY BLOCK");
            if private
                && label.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' ')
            {
                return Some((begin, label_start + len + "-----".len()));
            }
        }
        from = label_start;
    }
    None
}

/// Is `b` a byte of standard base64.
fn is_base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}

/// Redacts the private key whose `BEGIN` line is `text[start..end]`, if it is one; returns
/// where the search for triggers resumes if the key's body is on the lines after (past
/// them).
///
/// On one line (JSON's `"-----BEGIN …-----\nMII…\n-----END …-----"`), the text between
/// the armor lines, less its escaped line breaks, becomes one marker. Over several lines,
/// each body line after the `BEGIN` line's prefix (indentation, a diff's `+`) becomes one
/// marker; header lines (`Proc-Type: …`) and blank lines before the body stay. The body
/// ends at the `END` line, or, if that is missing (a truncated output), at the first line
/// that cannot be one: not base64, longer than the first body line, after a shorter one
/// (the last), or after a blank line.
fn pem_block(text: &str, start: usize, end: usize, found: &mut Vec<Edit>) -> Option<usize> {
    let line = &text[start..end];
    let (begin, header_end) = private_key_header(line)?;
    let rest = &line[header_end..];
    let inline = |from: usize, to: usize, found: &mut Vec<Edit>| {
        let (from, to) = trim_escapes(line, header_end + from, header_end + to);
        if from < to && &line[from..to] != Kind::PrivateKey.marker() {
            found.push(Edit {
                start: start + from,
                end: start + to,
                kind: Kind::PrivateKey,
                counted: true,
            });
        }
    };
    if let Some(armor) = rest.find("-----END ") {
        inline(0, armor, found);
        return None;
    }
    if !rest.trim().is_empty() {
        let run = rest.bytes().take_while(|&b| is_base64(b) || b == b'\\').count();
        inline(0, run, found);
        return None;
    }
    let prefix = &line[..begin];
    let mut at = end; // the line break before the next line
    let mut width = None;
    let mut last = false;
    let mut counted = false;
    while at < text.len() {
        let line_start = at + 1;
        let line_end = text[line_start..].find('\n').map_or(text.len(), |i| line_start + i);
        let next = &text[line_start..line_end];
        let Some(body) = next.strip_prefix(prefix) else { return Some(at) };
        let trimmed = body.trim();
        if trimmed.starts_with("-----END ") {
            return Some(line_end);
        }
        let before_body = width.is_none();
        let header = || {
            trimmed.split_once(": ").is_some_and(|(name, _)| {
                name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            })
        };
        if trimmed == Kind::PrivateKey.marker() || (before_body && (trimmed.is_empty() || header()))
        {
            at = line_end;
            continue;
        }
        if last || trimmed.is_empty() || !trimmed.bytes().all(is_base64) {
            return Some(at);
        }
        let full = *width.get_or_insert(trimmed.len());
        if trimmed.len() > full {
            return Some(at);
        }
        last = trimmed.len() < full;
        let offset = line_start + prefix.len() + (body.len() - body.trim_start().len());
        found.push(Edit {
            start: offset,
            end: offset + trimmed.len(),
            kind: Kind::PrivateKey,
            counted: !counted,
        });
        counted = true;
        at = line_end;
    }
    Some(text.len())
}

/// `line[from..to]` less blanks and escaped line breaks (`\n`, `\r`) at either end.
fn trim_escapes(line: &str, mut from: usize, mut to: usize) -> (usize, usize) {
    loop {
        let part = &line[from..to];
        if part.starts_with("\\n") || part.starts_with("\\r") {
            from += 2;
        } else if part.starts_with(|c: char| c.is_ascii_whitespace()) {
            from += 1;
        } else if part.ends_with("\\n") || part.ends_with("\\r") {
            to -= 2;
        } else if part.ends_with(|c: char| c.is_ascii_whitespace()) {
            to -= 1;
        } else {
            return (from, to);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const UPPER_DIGITS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    const URL_SAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const BASE64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const HEX: &str = "0123456789abcdef";
    const DIGITS: &str = "0123456789";

    /// `len` characters of `alphabet`, the same for the same `seed`: a fake secret's body.
    fn fake(alphabet: &str, len: usize, seed: u64) -> String {
        let alphabet = alphabet.as_bytes();
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                char::from(alphabet[(state >> 33) as usize % alphabet.len()])
            })
            .collect()
    }

    /// The fakes the tables name as `{name}`. Each is assembled here, its prefix in pieces,
    /// so that no whole token sits in the source (a secret scanner would rightly flag one).
    fn fakes() -> Vec<(&'static str, String)> {
        vec![
            ("ghp", ["gh", "p_"].concat() + &fake(ALNUM, 36, 1)),
            ("gho", ["gh", "o_"].concat() + &fake(ALNUM, 36, 2)),
            ("ghs", ["gh", "s_"].concat() + &fake(ALNUM, 36, 3)),
            (
                "github_pat",
                ["github", "_pat_"].concat() + &fake(ALNUM, 22, 4) + "_" + &fake(ALNUM, 59, 5),
            ),
            ("glpat", ["gl", "pat-"].concat() + &fake(URL_SAFE, 20, 6)),
            ("glpat_routable", ["gl", "pat-"].concat() + &fake(ALNUM, 27, 36) + ".01.0w1a2b3c4"),
            (
                "xoxb",
                ["xo", "xb-"].concat()
                    + &fake(DIGITS, 12, 7)
                    + "-"
                    + &fake(DIGITS, 13, 8)
                    + "-"
                    + &fake(ALNUM, 24, 9),
            ),
            (
                "xoxe",
                ["xo", "xe.xo", "xp-1-"].concat()
                    + &fake(UPPER_DIGITS, 40, 37)
                    + "-"
                    + &fake(HEX, 32, 38),
            ),
            (
                "xapp",
                ["xa", "pp-1-"].concat() + &fake(UPPER_DIGITS, 11, 10) + "-" + &fake(HEX, 64, 11),
            ),
            (
                "slack_hook",
                format!(
                    "T{}/B{}/{}",
                    fake(UPPER_DIGITS, 8, 12),
                    fake(UPPER_DIGITS, 10, 13),
                    fake(ALNUM, 24, 14)
                ),
            ),
            ("sk_live", ["sk", "_live_"].concat() + &fake(ALNUM, 24, 15)),
            ("rk_test", ["rk", "_test_"].concat() + &fake(ALNUM, 24, 16)),
            ("pk_live", ["pk", "_live_"].concat() + &fake(ALNUM, 24, 17)),
            ("whsec", ["wh", "sec_"].concat() + &fake(ALNUM, 32, 18)),
            ("openai_proj", ["sk-", "proj-"].concat() + &fake(URL_SAFE, 48, 19)),
            (
                "openai_legacy",
                ["s", "k-"].concat()
                    + &fake(ALNUM, 20, 20)
                    + "T3Blbk"
                    + "FJ"
                    + &fake(ALNUM, 20, 21),
            ),
            ("anthropic", ["sk-", "ant-", "api03-"].concat() + &fake(URL_SAFE, 93, 22) + "AA"),
            ("aiza", ["AI", "za"].concat() + &fake(URL_SAFE, 35, 23)),
            ("ya29", ["ya", "29."].concat() + &fake(URL_SAFE, 60, 24)),
            ("gocspx", ["GOC", "SPX-"].concat() + &fake(URL_SAFE, 28, 25)),
            (
                "jwt",
                ["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "eyJzdWIiOiIxMjM0NTY3ODkwIn0"].join(".")
                    + "."
                    + &fake(URL_SAFE, 43, 26),
            ),
            ("akia", ["AK", "IA"].concat() + &fake(UPPER_DIGITS, 16, 27)),
            ("asia", ["AS", "IA"].concat() + &fake(UPPER_DIGITS, 16, 28)),
            ("aws_secret", fake(BASE64, 40, 29)),
            ("basic", fake(BASE64, 24, 30)),
            ("b64", fake(BASE64, 44, 31)),
            ("hex40", fake(HEX, 40, 32)),
            ("hex64", fake(HEX, 64, 33)),
            ("opaque", fake(ALNUM, 32, 34)),
            ("npm", ["np", "m_"].concat() + &fake(ALNUM, 36, 35)),
            ("BEGIN_PK", ["-----BEGIN ", "PRIVATE KEY-----"].concat()),
            ("END_PK", ["-----END ", "PRIVATE KEY-----"].concat()),
        ]
    }

    /// `template` with each `{name}` of [`fakes`] replaced by its fake.
    fn expand(template: &str) -> String {
        let mut text = template.to_owned();
        for (name, value) in fakes() {
            text = text.replace(&format!("{{{name}}}"), &value);
        }
        text
    }

    /// Lines with a secret, and what they become.
    const REDACTED: &[(&str, &str)] = &[
        ("export GITHUB_TOKEN={ghp}", "export GITHUB_TOKEN=[tj: redacted github-token]"),
        (
            "remote: Invalid username or token={gho} for 'https://github.com/org/repo.git'",
            "remote: Invalid username or token=[tj: redacted github-token] for 'https://github.com/org/repo.git'",
        ),
        (r#"  "token": "{ghs}","#, r#"  "token": "[tj: redacted github-token]","#),
        ("GH_PAT={github_pat} ./release.sh", "GH_PAT=[tj: redacted github-token] ./release.sh"),
        (
            "git clone https://{ghp}@github.com/org/repo.git",
            "git clone https://[tj: redacted github-token]@github.com/org/repo.git",
        ),
        (
            "git clone https://oauth2:{glpat}@gitlab.com/org/repo.git",
            "git clone https://oauth2:[tj: redacted gitlab-token]@gitlab.com/org/repo.git",
        ),
        ("CI_REGISTRY_PASSWORD: {glpat}", "CI_REGISTRY_PASSWORD: [tj: redacted gitlab-token]"),
        ("slack: posting as bot {xoxb}", "slack: posting as bot [tj: redacted slack-token]"),
        ("refreshed {xoxe}.", "refreshed [tj: redacted slack-token]."),
        ("GITLAB={glpat_routable}, ok", "GITLAB=[tj: redacted gitlab-token], ok"),
        ("SLACK_APP_TOKEN={xapp}", "SLACK_APP_TOKEN=[tj: redacted slack-token]"),
        (
            "curl -X POST https://hooks.slack.com/services/{slack_hook} -d @msg.json",
            "curl -X POST https://hooks.slack.com/services/[tj: redacted slack-webhook] -d @msg.json",
        ),
        (r#"stripe.api_key = "{sk_live}""#, r#"stripe.api_key = "[tj: redacted stripe-key]""#),
        (
            "Using restricted key {rk_test} for fixtures",
            "Using restricted key [tj: redacted stripe-key] for fixtures",
        ),
        ("STRIPE_WEBHOOK_SECRET={whsec}", "STRIPE_WEBHOOK_SECRET=[tj: redacted stripe-key]"),
        ("OPENAI_API_KEY={openai_proj}", "OPENAI_API_KEY=[tj: redacted openai-key]"),
        (
            "openai.AuthenticationError: Incorrect API key provided: {openai_legacy}.",
            "openai.AuthenticationError: Incorrect API key provided: [tj: redacted openai-key].",
        ),
        ("x-api-key: {anthropic}", "x-api-key: [tj: redacted anthropic-key]"),
        (
            r#"ANTHROPIC_API_KEY="{anthropic}" claude -p hi"#,
            r#"ANTHROPIC_API_KEY="[tj: redacted anthropic-key]" claude -p hi"#,
        ),
        (
            "GET https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={aiza} 403",
            "GET https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=[tj: redacted google-api-key] 403",
        ),
        ("Authorization: Bearer {ya29}", "Authorization: Bearer [tj: redacted google-oauth]"),
        (
            r#"  "client_secret": "{gocspx}","#,
            r#"  "client_secret": "[tj: redacted google-oauth]","#,
        ),
        (
            "GET /callback?id_token={jwt}&state=af0ifjsldkj",
            "GET /callback?id_token=[tj: redacted jwt]&state=af0ifjsldkj",
        ),
        ("> authorization: Bearer {jwt}", "> authorization: Bearer [tj: redacted jwt]"),
        ("aws_access_key_id = {akia}", "aws_access_key_id = [tj: redacted aws-access-key]"),
        (
            r#"        "AccessKeyId": "{asia}","#,
            r#"        "AccessKeyId": "[tj: redacted aws-access-key]","#,
        ),
        (
            "aws_secret_access_key = {aws_secret}",
            "aws_secret_access_key = [tj: redacted aws-secret-key]",
        ),
        (
            r#"        "SecretAccessKey": "{aws_secret}","#,
            r#"        "SecretAccessKey": "[tj: redacted aws-secret-key]","#,
        ),
        (
            "export AWS_SECRET_KEY={aws_secret}",
            "export AWS_SECRET_KEY=[tj: redacted aws-secret-key]",
        ),
        (
            "AWS_ACCESS_KEY_ID={akia} AWS_SECRET_ACCESS_KEY={aws_secret} aws s3 ls",
            "AWS_ACCESS_KEY_ID=[tj: redacted aws-access-key] AWS_SECRET_ACCESS_KEY=[tj: redacted aws-secret-key] aws s3 ls",
        ),
        (
            "curl -H 'Authorization: Basic {basic}' https://api.example.com/v1",
            "curl -H 'Authorization: Basic [tj: redacted basic-auth]' https://api.example.com/v1",
        ),
        ("Authorization: token {hex40}", "Authorization: token [tj: redacted bearer-token]"),
        (
            "Proxy-Authorization: Negotiate {b64}",
            "Proxy-Authorization: Negotiate [tj: redacted bearer-token]",
        ),
        (
            r#"{"headers": {"Authorization": "Bearer {opaque}"}}"#,
            r#"{"headers": {"Authorization": "Bearer [tj: redacted bearer-token]"}}"#,
        ),
        ("HTTP_AUTHORIZATION={opaque}", "HTTP_AUTHORIZATION=[tj: redacted bearer-token]"),
        (
            "request rejected: bearer {opaque} is expired",
            "request rejected: bearer [tj: redacted bearer-token] is expired",
        ),
        (
            "DATABASE_URL=postgres://app:Tr0ub4dor-3@db.internal:5432/app",
            "DATABASE_URL=postgres://app:[tj: redacted url-credentials]@db.internal:5432/app",
        ),
        (
            "connecting to redis://:s3cr3t-redis@localhost:6379/0",
            "connecting to redis://:[tj: redacted url-credentials]@localhost:6379/0",
        ),
        (
            "fatal: unable to access 'https://bob:hunter2@git.example.com/repo.git/': The requested URL returned error: 403",
            "fatal: unable to access 'https://bob:[tj: redacted url-credentials]@git.example.com/repo.git/': The requested URL returned error: 403",
        ),
        (
            "MONGO_URI=mongodb+srv://admin:p4ssw0rd@cluster0.example.net/test?retryWrites=true",
            "MONGO_URI=mongodb+srv://admin:[tj: redacted url-credentials]@cluster0.example.net/test?retryWrites=true",
        ),
        ("password=hunter2", "password=[tj: redacted password]"),
        ("password=hunter", "password=[tj: redacted password]"),
        (r#"DB_PASSWORD: "correct-horse""#, r#"DB_PASSWORD: "[tj: redacted password]""#),
        ("  password: s3cr3t!", "  password: [tj: redacted password]"),
        (
            "PGPASSWORD=pg-pass-42 psql -h localhost -U app",
            "PGPASSWORD=[tj: redacted password] psql -h localhost -U app",
        ),
        ("MYSQL_PWD=hunter2 mysql -u root", "MYSQL_PWD=[tj: redacted password] mysql -u root"),
        ("SMTP_PASS=hunter2", "SMTP_PASS=[tj: redacted password]"),
        ("--access-token=v1.K8s2.aB3", "--access-token=[tj: redacted token]"),
        (
            "+ mysql --user=root --password=hunter2 app",
            "+ mysql --user=root --password=[tj: redacted password] app",
        ),
        (
            "+ docker login --username ci --password dckr1x2y3z registry.example.com",
            "+ docker login --username ci --password [tj: redacted password] registry.example.com",
        ),
        (r#"    "passphrase": "tr0ub4dor&3","#, r#"    "passphrase": "[tj: redacted password]","#),
        (
            r#"password: "hunter2" # set by CI"#,
            r#"password: "[tj: redacted password]" # set by CI"#,
        ),
        (
            "E       AssertionError: assert {'password': 'hunter2'} == {}",
            "E       AssertionError: assert {'password': '[tj: redacted password]'} == {}",
        ),
        (
            "[2024-05-01T12:00:00Z] ERROR auth: login failed password=hunter2 user=bob",
            "[2024-05-01T12:00:00Z] ERROR auth: login failed password=[tj: redacted password] user=bob",
        ),
        ("SECRET_KEY_BASE={hex64}", "SECRET_KEY_BASE=[tj: redacted secret]"),
        (
            "DJANGO_SECRET_KEY='django-insecure-9x!k2@m'",
            "DJANGO_SECRET_KEY='[tj: redacted secret]'",
        ),
        ("client_secret=abc123def456", "client_secret=[tj: redacted secret]"),
        (r#"  jwt_secret: "k9#Lm2$pQ""#, r#"  jwt_secret: "[tj: redacted secret]""#),
        (
            r#"left: Credentials { user: "bob", secret: "abc123" }"#,
            r#"left: Credentials { user: "bob", secret: "[tj: redacted secret]" }"#,
        ),
        ("secret: 1234567", "secret: [tj: redacted secret]"),
        ("export NPM_TOKEN={npm}", "export NPM_TOKEN=[tj: redacted token]"),
        (
            "//registry.npmjs.org/:_authToken=abc123def456",
            "//registry.npmjs.org/:_authToken=[tj: redacted token]",
        ),
        ("access_token: 1a2b3c4d5e6f", "access_token: [tj: redacted token]"),
        (
            r#"requests.get(url, params={"access_token": "{opaque}"})"#,
            r#"requests.get(url, params={"access_token": "[tj: redacted token]"})"#,
        ),
        ("token      = '{opaque}'", "token      = '[tj: redacted token]'"),
        (
            r#"os.environ["GITHUB_TOKEN"] = "{opaque}""#,
            r#"os.environ["GITHUB_TOKEN"] = "[tj: redacted token]""#,
        ),
        ("token=abc", "token=[tj: redacted token]"),
        ("  token: abc", "  token: [tj: redacted token]"),
        ("  password: hunter # staging", "  password: [tj: redacted password] # staging"),
        ("+ ./deploy --password hunter", "+ ./deploy --password [tj: redacted password]"),
        (
            r#"left: Config { user: "bob", password: Some("hunter2") }"#,
            r#"left: Config { user: "bob", password: Some("[tj: redacted password]") }"#,
        ),
        ("X-Api-Key: {opaque}", "X-Api-Key: [tj: redacted api-key]"),
        (r#"  apiKey: "{opaque}","#, r#"  apiKey: "[tj: redacted api-key]","#),
        ("  API_KEY = {opaque}", "  API_KEY = [tj: redacted api-key]"),
        ("settings.api_key=abc123", "settings.api_key=[tj: redacted api-key]"),
        ("--retries=3 --token=2", "--retries=3 --token=[tj: redacted token]"),
        ("PRIVATE_KEY=0x{hex64}", "PRIVATE_KEY=[tj: redacted private-key]"),
        (
            r#"{"type": "service_account", "private_key": "{BEGIN_PK}\nMIIEv{b64}\n{END_PK}\n"}"#,
            r#"{"type": "service_account", "private_key": "{BEGIN_PK}\n[tj: redacted private-key]\n{END_PK}\n"}"#,
        ),
    ];

    /// Lines without a secret (near-misses among them), which must stay as they are.
    const KEPT: &[&str] = &[
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "HEAD is now at 3f78685 Fix token refresh race",
        "request_id=9f1c2b3a-4d5e-6f70-8192-a3b4c5d6e7f8 status=200",
        r#"  "id": "123e4567-e89b-12d3-a456-426614174000","#,
        "digest: sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
        r#"      "integrity": "sha512-{b64}{b64}==","#,
        "test data: {b64} decodes to 33 bytes",
        "the password is wrong",
        "Error: password: must be at least 8 characters",
        "Enter password:",
        "password=",
        r#"password="""#,
        r#"password: "********""#,
        "DB_PASSWORD=${DB_PASSWORD}",
        "TOKEN=$GITHUB_TOKEN",
        "api_key: <YOUR_API_KEY>",
        "GITHUB_TOKEN: ***",
        "password=xxx",
        "PASSWORD=changeme",
        "password_hash_algorithm=bcrypt",
        r#"  "token_type": "bearer","#,
        r#"  "max_tokens": 4096,"#,
        "tokenizer: gpt2",
        "token: null",
        "secret: true",
        "token: 42",
        "error: token: expired",
        "    password: str",
        "    token: Token",
        "    token = tok",
        "token: my_token",
        "  --token string   Auth token (default: none)",
        "test auth::token::tests::refresh_expired ... ok",
        "test tests::rejects_wrong_password ... FAILED",
        "thread 'auth::token::tests::parse' panicked at src/auth/token.rs:41:9:",
        "  --> src/secret.rs:12:5",
        "12 |     let token = tokens.next();",
        "pub fn new(token: &str, password: Option<String>) -> Self {",
        "    api_key: String,",
        "    let secret = Secret::new(key);",
        "password = self.password",
        "client.login(password=password)",
        "client.login(token=self.token)",
        "tests_pass=3 tests_fail=0",
        r#"token := os.Getenv("TOKEN")"#,
        "token == expected_token",
        "password: !vault |",
        "      secretName: db-credentials",
        "kind: Secret",
        "assertion failed: token.is_valid()",
        "Secret scanning found 0 alerts",
        "error: broken pipe while writing to stdout",
        r#"{"password": ["This field may not be blank."]}"#,
        r#"{"password": "This field is required."}"#,
        "password: (none)",
        "    token_count: 128,",
        "mailto:password-reset@example.com",
        "api_key=your_api_key_here",
        "  --password-file <PATH>  read the password from PATH",
        "  --token <TOKEN>    GitHub token to use",
        "  --api-key TEXT     The API key",
        r#"eos_token: "</s>""#,
        "401 Unauthorized: missing Bearer token",
        r#"WWW-Authenticate: Bearer realm="api", error="invalid_token""#,
        "Authorization: Bearer $TOKEN",
        r#"curl -H "Authorization: Bearer ${API_TOKEN}" https://api.example.com"#,
        "authorization: required",
        "see AKIAMARU and AKIAIOSFODNN7EXAMPL",
        "cached eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0 (unsigned, two parts)",
        r#"{"data": "eyJmb28iOiJiYXIifQ=="}"#,
        "ghp_tooShort123",
        "{ghp}_v2_is_an_identifier",
        "sk-ant-short",
        "glpat-short",
        "pip install scikit-learn sk-learn task-runner",
        "publishable key {pk_live}",
        "git@github.com:org/repo.git",
        "ssh://git@github.com/org/repo.git",
        "https://user@example.com/path",
        "postgres://localhost:5432/app",
        "https://user:password@example.com",
        "Listening on http://localhost:8080/api/v1/token",
        "redirect https://example.com/login?next=/account/password",
        "-----BEGIN CERTIFICATE-----",
        "-----BEGIN PUBLIC KEY-----",
        r#"    "pbkdf2-password": "1.2.1","#,
        r#"    "ClientToken": "terraform-2915b727827cfda20fc9","#,
        r#"    "NextToken": "{b64}","#,
        "nextPageToken: CAoQAA",
        "Downloaded tokio v1.38.0",
        "   Compiling secrecy v0.8.0",
        "[tj: redacted github-token]",
        "password=[tj: redacted password]",
        "https://bob:[tj: redacted url-credentials]@git.example.com/repo.git",
        "Authorization: Bearer [tj: redacted jwt]",
    ];

    #[test]
    fn the_table_has_at_least_60_rows_of_both_kinds() {
        assert!(REDACTED.len() + KEPT.len() >= 60);
        assert!(REDACTED.len() >= 30 && KEPT.len() >= 30, "{} {}", REDACTED.len(), KEPT.len());
    }

    #[test]
    fn every_secret_in_the_table_is_replaced_by_its_kind_and_nothing_else() {
        let mut failures = Vec::new();
        for (input, expected) in REDACTED {
            let (input, expected) = (expand(input), expand(expected));
            let got = redact(&input);
            if got != expected {
                failures.push(format!("\n  input: {input}\n    got: {got}\n   want: {expected}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.concat());
    }

    #[test]
    fn every_near_miss_in_the_table_stays_borrowed() {
        let mut failures = Vec::new();
        for line in KEPT {
            let line = expand(line);
            if let Cow::Owned(got) = redact(&line) {
                failures.push(format!("\n  input: {line}\n    got: {got}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.concat());
    }

    #[test]
    fn the_table_finds_every_kind() {
        let mut seen = std::collections::BTreeSet::new();
        for (input, _) in REDACTED {
            seen.extend(redact_counted(&expand(input)).counts.into_iter().map(|(kind, _)| kind));
        }
        let missing: Vec<Kind> = Kind::ALL.iter().copied().filter(|k| !seen.contains(k)).collect();
        // A PEM body over several lines is the private-key test's; the table has an inline one.
        assert!(missing.is_empty(), "{missing:?}");
    }

    #[test]
    fn redacting_twice_changes_nothing_more() {
        let mut texts: Vec<String> = REDACTED.iter().map(|(input, _)| expand(input)).collect();
        texts.extend(KEPT.iter().map(|line| expand(line)));
        texts.push(texts.join("\n"));
        texts.push(pem_text("", 3));
        for text in &texts {
            let once = redact(text);
            assert!(matches!(redact(&once), Cow::Borrowed(_)), "{once}");
        }
    }

    #[test]
    fn kinds_are_named_in_lowercase_with_dashes_and_their_markers_say_so() {
        let mut names = std::collections::BTreeSet::new();
        for kind in Kind::ALL {
            let name = kind.name();
            assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'), "{name}");
            assert!(names.insert(name), "{name} twice");
            assert_eq!(kind.marker(), format!("{MARKER_PREFIX}{name}]"));
            assert_eq!(kind.to_string(), name);
        }
        assert_eq!(Kind::GithubToken.marker(), "[tj: redacted github-token]");
    }

    #[test]
    fn the_trigger_finder_builds_and_finds_every_trigger() {
        assert!(FINDER.is_some());
        let finder = FINDER.as_ref().unwrap();
        for &(literal, _) in TRIGGERS {
            let text = format!("x {literal} y");
            let (at, len, _) = finder.find(&text, 0).unwrap();
            assert_eq!((at, len), (2, literal.len()), "{literal}");
        }
        // Distinct, or a trigger could hide another at the same place.
        let mut literals: Vec<&str> = TRIGGERS.iter().map(|&(literal, _)| literal).collect();
        literals.sort_unstable();
        literals.dedup();
        assert_eq!(literals.len(), TRIGGERS.len());
    }

    #[test]
    fn clean_text_is_borrowed() {
        let text = include_str!("../README.md");
        assert!(matches!(redact(text), Cow::Borrowed(_)));
        let counted = redact_counted(text);
        assert!(counted.counts.is_empty());
        assert_eq!(counted.total(), 0);
        assert!(matches!(redact(""), Cow::Borrowed("")));
    }

    #[test]
    fn no_fixture_holds_a_secret() {
        // Eight megabytes of real tool output: compilers, test runners, package managers,
        // cloud CLIs, JSON. Not one line is a secret, so none may change.
        let mut changed = Vec::new();
        for case in crate::testing::fixtures() {
            if let Cow::Owned(out) = redact(&case.text) {
                let lines = case.text.split('\n').zip(out.split('\n'));
                changed.extend(
                    lines.filter(|(a, b)| a != b).map(|(a, b)| format!("\n{}: {a} → {b}", case.id)),
                );
            }
        }
        assert!(changed.is_empty(), "{}", changed.concat());
    }

    #[test]
    fn counts_say_how_many_secrets_of_each_kind() {
        let text = expand("a={ghp}\nb={gho} password=hunter2\n{BEGIN_PK}\nMIIE\n{END_PK}\n");
        let redacted = redact_counted(&text);
        assert_eq!(
            redacted.counts,
            vec![(Kind::GithubToken, 2), (Kind::PrivateKey, 1), (Kind::Password, 1)]
        );
        assert_eq!(redacted.total(), 4);
    }

    /// A PEM private key after `prefix` on every line, its body `lines` long, between two
    /// lines of cargo output.
    fn pem_text(prefix: &str, lines: usize) -> String {
        let mut text = String::from("   Compiling app v0.1.0\n");
        text.push_str(&format!(
            "{prefix}{}\n",
            expand("{BEGIN_PK}").replace("PRIVATE", "RSA PRIVATE")
        ));
        for i in 0..lines {
            let width = if i + 1 == lines { 20 } else { 64 };
            text.push_str(&format!("{prefix}{}\n", fake(BASE64, width, 100 + i as u64)));
        }
        text.push_str(&format!(
            "{prefix}{}\n",
            expand("{END_PK}").replace("PRIVATE", "RSA PRIVATE")
        ));
        text.push_str("error: could not compile `app`\n");
        text
    }

    #[test]
    fn a_pem_private_key_keeps_its_armor_and_each_body_line_becomes_one_marker() {
        for prefix in ["", "    ", "+", "key: |\n"] {
            // The last "prefix" puts the key in a YAML block: the BEGIN line has none.
            let (prefix, text) = match prefix.strip_suffix('\n') {
                Some(yaml) => ("  ", format!("{yaml}\n{}", pem_text("  ", 3))),
                None => (prefix, pem_text(prefix, 3)),
            };
            let redacted = redact_counted(&text);
            let out = redacted.text.as_ref();
            assert_eq!(out.lines().count(), text.lines().count(), "{out}");
            let marker = format!("{prefix}{}", Kind::PrivateKey.marker());
            let mut body = false;
            for (before, after) in text.lines().zip(out.lines()) {
                if before.contains("-----") {
                    body = before.contains("BEGIN");
                    assert_eq!(before, after);
                } else if body {
                    assert_eq!(after, marker);
                } else {
                    assert_eq!(before, after);
                }
            }
            assert_eq!(out.matches(Kind::PrivateKey.marker()).count(), 3, "{out}");
            assert_eq!(redacted.counts, vec![(Kind::PrivateKey, 1)]);
        }
    }

    #[test]
    fn a_pem_block_ends_where_it_must() {
        // CRLF line ends stay; headers before the body stay.
        let text = expand(
            "{BEGIN_PK}\r\nProc-Type: 4,ENCRYPTED\r\nDEK-Info: AES-128-CBC,0A1B\r\n\r\nMIIEvQIBADANBgkqhkiG\r\n{END_PK}\r\nok\r\n",
        )
        .replace("PRIVATE", "RSA PRIVATE");
        let want = expand(
            "{BEGIN_PK}\r\nProc-Type: 4,ENCRYPTED\r\nDEK-Info: AES-128-CBC,0A1B\r\n\r\n[tj: redacted private-key]\r\n{END_PK}\r\nok\r\n",
        )
        .replace("PRIVATE", "RSA PRIVATE");
        assert_eq!(redact(&text), want);

        // Truncated: no END line; the body ends at the first line that cannot be one.
        let body = [fake(BASE64, 64, 1), fake(BASE64, 64, 2)].join("\n");
        let text = expand(&format!("{{BEGIN_PK}}\n{body}\nerror: output truncated\nDone\n"));
        let want = expand(
            "{BEGIN_PK}\n[tj: redacted private-key]\n[tj: redacted private-key]\nerror: output truncated\nDone\n",
        );
        assert_eq!(redact(&text), want);
        let text = expand(&format!("{{BEGIN_PK}}\n{body}\nabc\nDone\n"));
        let want = expand(
            "{BEGIN_PK}\n[tj: redacted private-key]\n[tj: redacted private-key]\n[tj: redacted private-key]\nDone\n",
        );
        assert_eq!(redact(&text), want);

        // A certificate is no secret; a public key neither.
        let cert = format!(
            "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
            fake(BASE64, 64, 3)
        );
        assert!(matches!(redact(&cert), Cow::Borrowed(_)));

        // Other secrets after the key are still found.
        let text = expand("{BEGIN_PK}\nMIIE\n{END_PK}\npassword=hunter2\n");
        assert_eq!(
            redact(&text),
            expand(
                "{BEGIN_PK}\n[tj: redacted private-key]\n{END_PK}\npassword=[tj: redacted password]\n"
            )
        );
    }

    /// Checks that `output` is `input` with some spans, each within a line, replaced by
    /// markers: every other byte, and every line break, the same.
    fn assert_only_secrets_replaced(input: &str, output: &str) {
        assert_eq!(input.split('\n').count(), output.split('\n').count(), "line count");
        for (before, after) in input.split('\n').zip(output.split('\n')) {
            // Every piece of `after` between markers appears in `before`, in order, the
            // first at its start and the last at its end.
            let mut pieces: Vec<&str> = Vec::new();
            let mut rest = after;
            while let Some(at) = rest.find(MARKER_PREFIX) {
                let end = at + rest[at..].find(']').unwrap() + 1;
                assert!(Kind::ALL.iter().any(|k| k.marker() == &rest[at..end]), "{after}");
                pieces.push(&rest[..at]);
                rest = &rest[end..];
            }
            pieces.push(rest);
            if pieces.len() == 1 || before.contains(MARKER_PREFIX) {
                assert_eq!(before, after);
                continue;
            }
            assert!(before.starts_with(pieces[0]), "{before:?} → {after:?}");
            assert!(before.ends_with(pieces[pieces.len() - 1]), "{before:?} → {after:?}");
            let mut at = pieces[0].len();
            for piece in &pieces[1..pieces.len() - 1] {
                let found =
                    before[at..].find(piece).unwrap_or_else(|| panic!("{before:?} → {after:?}"));
                at += found + piece.len();
            }
            assert!(at + pieces[pieces.len() - 1].len() <= before.len(), "{before:?} → {after:?}");
        }
    }

    #[test]
    fn lines_and_every_byte_outside_a_secret_are_preserved() {
        let fixture = include_str!("../tests/fixtures/tests/cargo-test-failures.json");
        let fixture: serde_json::Value = serde_json::from_str(fixture).unwrap();
        let output = fixture["text"].as_str().unwrap();
        let mut text = String::new();
        let mut secrets = REDACTED.iter().cycle();
        for (i, line) in output.split('\n').enumerate() {
            text.push_str(line);
            text.push(if i % 7 == 3 { '\r' } else { ' ' });
            if i % 5 == 0 {
                text.push_str(&expand(secrets.next().unwrap().0));
            }
            text.push('\n');
        }
        text.push_str(&pem_text("  ", 4));
        let out = redact(&text);
        assert!(matches!(out, Cow::Owned(_)));
        assert_only_secrets_replaced(&text, &out);
        for edit in candidates(&text) {
            assert!(edit.start < edit.end, "{edit:?}");
            assert!(!text[edit.start..edit.end].contains('\n'), "{edit:?}");
        }
        // The fixture's own lines are untouched.
        assert!(matches!(redact(output), Cow::Borrowed(_)));
    }

    #[test]
    fn an_evidence_line_keeps_everything_but_its_secret() {
        use crate::reduce::evidence::is_evidence;
        let cases = [
            (
                "error: failed to authenticate to https://bob:hunter2@git.example.com/repo.git: 401",
                "error: failed to authenticate to https://bob:[tj: redacted url-credentials]@git.example.com/repo.git: 401",
            ),
            (
                "thread 'api::tests::login' panicked at src/api.rs:12:5: token={ghp} rejected",
                "thread 'api::tests::login' panicked at src/api.rs:12:5: token=[tj: redacted github-token] rejected",
            ),
            (
                r#"E       AssertionError: assert {'password': 'hunter2'} == {}"#,
                r#"E       AssertionError: assert {'password': '[tj: redacted password]'} == {}"#,
            ),
        ];
        for (line, want) in cases {
            let line = expand(line);
            assert!(is_evidence(&line), "{line}");
            let got = redact(&line);
            assert_eq!(got, want);
            assert!(is_evidence(&got), "{got}");
        }
    }

    proptest! {
        #[test]
        fn any_mix_of_lines_keeps_its_line_breaks_and_redacts_once(
            picks in proptest::collection::vec((0usize..1000, 0u8..4), 0..40)
        ) {
            let lines: Vec<String> = REDACTED
                .iter()
                .map(|(input, _)| expand(input))
                .chain(KEPT.iter().map(|line| expand(line)))
                .collect();
            let mut text = String::new();
            for (pick, end) in picks {
                text.push_str(&lines[pick % lines.len()]);
                text.push_str(["\n", "\r\n", " ", "\n\n"][usize::from(end)]);
            }
            // Short texts are searched trigger by trigger: the packed searcher finds the same.
            if let Some(finder) = FINDER.as_ref() {
                let packed = candidates_with(&text, |at| finder.find(&text, at));
                let mut small = SmallFinder::new(&text);
                prop_assert_eq!(candidates_with(&text, |at| small.find(at)), packed);
            }
            let out = redact(&text);
            prop_assert_eq!(out.split('\n').count(), text.split('\n').count());
            prop_assert!(matches!(redact(&out), Cow::Borrowed(_)));
            for edit in candidates(&text) {
                prop_assert!(!text[edit.start..edit.end].contains('\n'));
            }
        }
    }
}
