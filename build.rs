//! Embeds the builtin rules: walks `rules/`, sorts the paths (sorted order is precedence
//! order, DESIGN.md "Rules"), and writes `OUT_DIR/builtin_rules.rs` as a static slice of
//! `(id, path, json)` with `include_str!` so the JSON is checked by nothing but the tests and
//! `tj rules verify`: a build never fails on a rule.
//!
//! It also compiles every builtin matcher (the rules' patterns, the evidence classifier's)
//! to a dense DFA and embeds them (`OUT_DIR/prebuilt.{bin,rs}`, read by `src/matchers`), so
//! that a run compiles none (issue 13). That needs `regex-automata` and `serde_json` here.

#![allow(clippy::disallowed_methods)]
// The files build.rs shares with the crate (`#[path]` below) are `pub` there.
#![allow(unreachable_pub)] // OUT_DIR is private to this build: no reader to protect from a torn write.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let root =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let rules = root.join("rules");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=rules");
    let mut files = Vec::new();
    walk(&rules, &mut files);
    files.sort();
    let mut out = String::from("&[\n");
    let mut texts = Vec::new();
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
        let rel = file.strip_prefix(&rules).expect("walked below rules/");
        let rel = rel.to_string_lossy().replace('\\', "/");
        let id = rel.trim_end_matches(".json");
        let text = fs::read_to_string(file).unwrap_or_default();
        let (argv0, words) = selectors(&text);
        texts.push((id.to_owned(), text.clone()));
        writeln!(
            out,
            "    Builtin {{ id: {id:?}, path: {path:?}, json: include_str!({abs:?}), argv0: &{argv0:?}, words: &{words:?} }},",
            path = format!("rules/{rel}"),
            abs = file.display().to_string(),
        )
        .expect("writing to a String cannot fail");
    }
    out.push_str("]\n");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(out_dir.join("builtin_rules.rs"), out).expect("OUT_DIR is writable");
    prebuild(&texts, &out_dir);
    link_position_dependent();
    align_segments_to_huge_pages();
    shared_leader();
}

/// `cfg(shared_leader)`: where a PTY run's session leader is started in tj's own memory
/// (`run::exec::start_leader`): Linux, on the architectures whose system calls the leader
/// makes by hand once the command runs (no libc call there may write the errno it shares
/// with tj's thread). Elsewhere the leader is forked by std's spawn.
fn shared_leader() {
    println!("cargo::rustc-check-cfg=cfg(shared_leader)");
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if os == "linux" && matches!(arch.as_str(), "x86_64" | "aarch64") {
        println!("cargo:rustc-cfg=shared_leader");
    }
}

/// Links the `tj` executable at a fixed address on Linux (`-no-pie`), as a position-dependent
/// executable: the code stays position-independent, and the linker resolves every internal
/// pointer (regex-syntax's Unicode tables, clap's, ours: ~14,000 of them) when tj is built.
/// A position-independent executable has the dynamic loader apply them at every start,
/// writing ~70 pages (ld.so's relocation was a third of `tj run`'s page faults): 0.5 ms of
/// a 2 ms start. The cost is that tj's own image is not randomized (ASLR still applies to
/// the stack, the heap and the shared libraries); see ARCHITECTURE.md, "Decisions".
/// Test and bench executables keep the default.
///
/// A static build (`-C target-feature=+crt-static`, and every musl build, static by default)
/// is left to rustc: with the static relocation model it links `-static -no-pie` itself, and
/// without it a static PIE, which an added `-no-pie` would turn into an executable that
/// crashes at start. Cargo does not list musl's default `crt-static` among the target
/// features it gives build scripts, so musl is named.
fn link_position_dependent() {
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" && !static_crt() && env::var_os("TJ_PIE").is_none() {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-env-changed=TJ_PIE");
}

/// Aligns the `tj` executable's segments to 2 MiB on Linux: each starts at the same offset
/// modulo 2 MiB in the file as in memory (GNU ld, which rustc uses for musl, also starts
/// each on a 2 MiB boundary, with padding in the file; rust-lld only keeps them congruent),
/// so that the kernel can map each whole 2 MiB of code and read-only data with one
/// page-table entry where the page cache holds that part of the file in one 2 MiB folio
/// (ext4 since Linux 6.16 and XFS cache a file written in large pieces so; `install.sh`
/// writes it so). A run then maps most of tj's code in a few entries instead of one fault
/// per 64 KiB touched, and its exit unmaps as few: `tj run --agent -- true` took 0.11 ms
/// less, with 45 fewer page faults (ARCHITECTURE.md, "Decisions"). Elsewhere it costs the
/// file up to about 4 MiB of padding and nothing at run time.
///
/// Only for an executable linked at a fixed address (see [`link_position_dependent`]): the
/// kernel aligns where it loads a position-independent one (`TJ_PIE=1`, a static PIE) to
/// its segments' alignment, and 2 MiB would take 9 bits from the randomization such a
/// build is made for. Test and bench executables keep the default.
fn align_segments_to_huge_pages() {
    if env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux") && position_dependent() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,max-page-size=0x200000");
    }
}

/// Whether the `tj` executable is linked at a fixed address on Linux: dynamically linked
/// with `-no-pie` ([`link_position_dependent`]), or statically with the static relocation
/// model (as `install.sh` builds it; without it, rustc links a static PIE).
fn position_dependent() -> bool {
    if static_crt() {
        env::var("CARGO_ENCODED_RUSTFLAGS")
            .is_ok_and(|flags| flags.contains("relocation-model=static"))
    } else {
        env::var_os("TJ_PIE").is_none()
    }
}

/// Whether the C runtime is linked statically: `+crt-static`, or musl, whose default
/// `crt-static` Cargo does not list among the target features it gives build scripts.
fn static_crt() -> bool {
    let features = env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    features.split(',').any(|f| f == "crt-static")
        || env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|env| env == "musl")
}

/// What a rule's `match` says about the command line it can be selected for, read when tj is
/// built so that a run parses only the rules that could match (`rules::Builtin::could_match`):
/// the names of `argv0`, and the first word of each of `subcommands` (one of them must then
/// be a word of the command line: `rules::select::has_subcommand`). Each is empty when the
/// rule does not say (or one subcommand is empty: it matches a command with no word), and
/// both when the file does not read; such a rule is always parsed, so a misread costs
/// start-up time, never a selection.
fn selectors(json: &str) -> (Vec<String>, Vec<String>) {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(json) else {
        return (Vec::new(), Vec::new());
    };
    let strings = |key: &str| -> Option<Vec<&str>> {
        let items = doc.pointer(&format!("/match/{key}"))?.as_array()?;
        items.iter().map(serde_json::Value::as_str).collect()
    };
    let argv0 = strings("argv0").unwrap_or_default().into_iter().map(str::to_owned).collect();
    let firsts: Option<Vec<String>> = strings("subcommands")
        .unwrap_or_default()
        .into_iter()
        .map(|sub| sub.split(' ').next().filter(|w| !w.is_empty()).map(str::to_owned))
        .collect();
    let mut words = firsts.unwrap_or_default();
    words.sort();
    words.dedup();
    (argv0, words)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            walk(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "json") {
            files.push(path);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Prebuilt matchers (issue 13): every builtin rule's patterns and the evidence
// classifier's, compiled to dense DFAs now so that a run compiles none of them.

#[path = "src/matchers/spec.rs"]
#[allow(dead_code)]
mod spec;

#[path = "src/reduce/patterns.rs"]
#[allow(dead_code)]
mod patterns;

#[path = "src/matchers/required.rs"]
mod required;

#[path = "src/matchers/sure.rs"]
mod sure;

use spec::{Flags, Spec};

/// One matcher to prebuild: owned patterns, borrowed into a [`Spec`] when built.
struct Wanted {
    unicode: bool,
    flags: Flags,
    patterns: Vec<String>,
    /// Always embedded dense: the classifier's matchers, searched over every line or the
    /// whole text (a sparse DFA walks a state's transitions one by one).
    dense: bool,
    /// A rule's list of line patterns, searched line by line: embedded with the literals
    /// every match holds one of ([`required`]), its prefilter.
    prefilter: bool,
}

impl Wanted {
    /// A rule's: Unicode syntax when a pattern is not ASCII (`rules::compiled`).
    fn any(patterns: Vec<String>, flags: Flags) -> Wanted {
        let unicode = !patterns.iter().all(|p| p.is_ascii());
        Wanted { unicode, flags, patterns, dense: false, prefilter: false }
    }

    /// The classifier's: ASCII classes on bytes, whatever the text (`matchers::ascii`).
    fn bytes(regex: String, flags: Flags) -> Wanted {
        Wanted { unicode: false, flags, patterns: vec![regex], dense: true, prefilter: false }
    }
}

/// Compiles every wanted matcher, writes the blob and its index, and returns how many
/// matchers and bytes it embedded.
fn prebuild(rules: &[(String, String)], out: &Path) -> (usize, usize) {
    println!("cargo:rerun-if-changed=src/matchers/spec.rs");
    println!("cargo:rerun-if-changed=src/reduce/patterns.rs");
    println!("cargo:rerun-if-changed=src/matchers/required.rs");
    println!("cargo:rerun-if-changed=src/matchers/sure.rs");
    let mut wanted = classifier_matchers();
    for (_, json) in rules {
        wanted.extend(rule_matchers(json));
    }
    let big_endian = env::var("CARGO_CFG_TARGET_ENDIAN").is_ok_and(|e| e == "big");
    let mut index: Vec<(u64, Vec<Part>)> = Vec::new();
    let mut blob: Vec<u8> = Vec::new();
    // What each matcher cost, for whoever tunes the limits: `OUT_DIR/prebuilt-sizes.txt`.
    let mut sizes = String::new();
    // Each embedded line list's prefilter, by the list's key.
    let mut prefilters: Vec<(u64, Vec<String>)> = Vec::new();
    // Each embedded line list's sure shapes, by the list's key.
    let mut sure_shapes: Vec<(u64, Vec<sure::Shape>)> = Vec::new();
    for w in &wanted {
        let patterns: Vec<&str> = w.patterns.iter().map(String::as_str).collect();
        let spec = Spec { unicode: w.unicode, flags: w.flags, patterns: &patterns };
        let key = spec.key();
        if index.iter().any(|(k, _)| *k == key) {
            continue;
        }
        // A spec that does not compile (an invalid rule pattern, one over the size limit)
        // is left out: the run compiles it as before, and reports what is wrong with it.
        let Some(dfas) = build_parts(&spec, &(0..patterns.len()).collect::<Vec<_>>()) else {
            let err = spec.build().err().unwrap_or_default();
            writeln!(sizes, "not embedded\t{err}\t{:?}", spec.patterns)
                .expect("writing to a String");
            continue;
        };
        let mut parts = Vec::new();
        for (ids, anchored, dfa) in dfas {
            let (sparse, (bytes, pad)) = if w.dense || dfa.memory_usage() <= spec::DENSE_LIMIT {
                let bytes = if big_endian {
                    dfa.to_bytes_big_endian()
                } else {
                    dfa.to_bytes_little_endian()
                };
                (false, bytes)
            } else {
                let Ok(sparse) = dfa.to_sparse() else { continue };
                let bytes = if big_endian {
                    sparse.to_bytes_big_endian()
                } else {
                    sparse.to_bytes_little_endian()
                };
                (true, (bytes, 0))
            };
            while !blob.len().is_multiple_of(8) {
                blob.push(0);
            }
            let offset = u32::try_from(blob.len()).expect("the blob stays under 4 GiB");
            let len = u32::try_from(bytes.len() - pad).expect("a DFA stays under 4 GiB");
            blob.extend_from_slice(&bytes[pad..]);
            let head: String = patterns[ids[0]..].join(" | ").chars().take(60).collect();
            parts.push(Part { anchored, sparse, offset, len });
            writeln!(
                sizes,
                "{len}\t{}\t{}\t{head}",
                if sparse { "sparse" } else { "dense" },
                patterns.len()
            )
            .expect("writing to a String");
        }
        index.push((key, parts));
        if w.prefilter
            && let Some(literals) = required::list_literals(&patterns, &w.flags.syntax(w.unicode))
        {
            writeln!(sizes, "prefilter\t{literals:?}\t{:?}", spec.patterns)
                .expect("writing to a String");
            prefilters.push((key, literals));
        }
        if w.prefilter {
            let shapes = sure::list_shapes(&patterns, &w.flags.syntax(w.unicode));
            if !shapes.is_empty() {
                sure_shapes.push((key, shapes));
            }
        }
    }
    fs::write(out.join("prebuilt-sizes.txt"), sizes).expect("OUT_DIR is writable");
    index.sort_unstable_by_key(|(key, _)| *key);
    let bin = out.join("prebuilt.bin");
    fs::write(&bin, &blob).expect("OUT_DIR is writable");
    let mut rs = format!(
        "static BLOB: &Aligned<[u8]> = &Aligned {{ _align: [], bytes: *include_bytes!({:?}) }};\n",
        bin.display().to_string()
    );
    write_keyed(&mut rs, "INDEX", "Part", &index, |p| {
        format!(
            "Part {{ anchored: {}, sparse: {}, offset: {}, len: {} }}",
            p.anchored, p.sparse, p.offset, p.len
        )
    });
    prefilters.sort_unstable_by_key(|(key, _)| *key);
    write_keyed(&mut rs, "PREFILTERS", "&str", &prefilters, |literal| format!("{literal:?}"));
    sure_shapes.sort_unstable_by_key(|(key, _)| *key);
    write_keyed(&mut rs, "SURE", "Sure", &sure_shapes, |s| {
        format!(
            "Sure {{ prefix: {:?}, suffix: {:?}, min: {}, open: {} }}",
            s.prefix, s.suffix, s.min, s.open
        )
    });
    fs::write(out.join("prebuilt.rs"), rs).expect("OUT_DIR is writable");
    (index.len(), blob.len())
}

/// Appends `static NAME: &[(u64, &[TYPE])]` to `rs`: each entry's key with its items, each
/// item as `item` writes it in Rust. `entries` are sorted by key (the matchers search them).
fn write_keyed<T>(
    rs: &mut String,
    name: &str,
    ty: &str,
    entries: &[(u64, Vec<T>)],
    item: impl Fn(&T) -> String,
) {
    writeln!(rs, "static {name}: &[(u64, &[{ty}])] = &[").expect("writing to a String");
    for (key, items) in entries {
        write!(rs, "    ({key:#018x}, &[").expect("writing to a String");
        for it in items {
            write!(rs, "{}, ", item(it)).expect("writing to a String");
        }
        rs.push_str("]),\n");
    }
    rs.push_str("];\n");
}

/// One serialized DFA of a matcher, answering for some of its patterns.
struct Part {
    anchored: bool,
    sparse: bool,
    offset: u32,
    len: u32,
}

/// `spec` compiled as one DFA, or as several each searched apart, with the matcher's
/// index of each of its patterns (`ids`, those of `spec.patterns`). `None` if some pattern
/// does not compile.
///
/// Patterns searched together multiply each other's states when they may start anywhere
/// (`\| .*ERROR` beside `GET /health`), so a matcher with both kinds has its patterns
/// anchored at the start of the line (`^…`) apart from the others; and a DFA still larger
/// than [`spec::SPLIT_LIMIT`] is split in halves, recursively.
fn build_parts(spec: &Spec<'_>, ids: &[usize]) -> Option<Vec<(Vec<usize>, bool, DenseDfa)>> {
    let anchored = |p: &&str| p.starts_with('^');
    if spec.patterns.iter().any(anchored) && !spec.patterns.iter().all(anchored) {
        let mut parts = Vec::new();
        for want in [true, false] {
            let (group, group_ids): (Vec<&str>, Vec<usize>) = spec
                .patterns
                .iter()
                .zip(ids)
                .filter(|(p, _)| anchored(p) == want)
                .map(|(p, i)| (*p, *i))
                .unzip();
            parts.extend(build_parts(&Spec { patterns: &group, ..*spec }, &group_ids)?);
        }
        return Some(parts);
    }
    // Patterns that can only match at the start are searched anchored: the search stops
    // where the last of them fails, usually within a few bytes of the line.
    let anchored = spec.is_anchored();
    let whole = if anchored { spec.build_anchored() } else { spec.build() };
    if let Ok(dfa) = &whole
        && (dfa.memory_usage() <= spec::SPLIT_LIMIT || spec.patterns.len() == 1)
    {
        return whole.ok().map(|dfa| vec![(ids.to_vec(), anchored, dfa)]);
    }
    if spec.patterns.len() == 1 {
        return None;
    }
    let half = spec.patterns.len() / 2;
    let (left, right) = spec.patterns.split_at(half);
    let mut parts = build_parts(&Spec { patterns: left, ..*spec }, &ids[..half])?;
    parts.extend(build_parts(&Spec { patterns: right, ..*spec }, &ids[half..])?);
    Some(parts)
}

type DenseDfa = regex_automata::dfa::dense::DFA<Vec<u32>>;

/// The classifier's matchers, as `reduce::evidence` and `reduce::shape::log` ask for them.
fn classifier_matchers() -> Vec<Wanted> {
    let mut wanted = Vec::new();
    let plain = Flags::default();
    for p in patterns::AT_START {
        wanted.push(Wanted::bytes(format!("^(?:{})", p.regex), plain));
    }
    for p in patterns::ANYWHERE {
        wanted.push(Wanted::bytes(p.regex.to_owned(), plain));
    }
    let mut keys: Vec<&str> =
        patterns::ANYWHERE.iter().flat_map(|p| p.keys.iter().copied()).collect();
    keys.sort_unstable();
    keys.dedup();
    for (literals, flags) in [
        (&keys[..], plain),
        (patterns::FAILURE_KEYS, plain),
        (patterns::ALARM_KEYS, plain),
        (patterns::ALARM_WORDS, Flags { case_insensitive: true, ..plain }),
    ] {
        wanted.push(Wanted::bytes(spec::literal_alternation(literals), flags));
    }
    for regex in [patterns::FAILURE_WORD, patterns::FAILURE_NOISE] {
        wanted.push(Wanted::bytes(regex.to_owned(), plain));
    }
    wanted
}

/// One builtin rule's matchers, as `rules::compiled` and `rules::select` ask for them: the
/// ASCII line patterns of each list (skip, keep, evidence) as one `Any` matcher, the
/// non-ASCII ones of each list as another, and every counter, `matchOutput`,
/// `commandRegex` and `outputRegex` pattern alone.
fn rule_matchers(json: &str) -> Vec<Wanted> {
    let Ok(rule) = serde_json::from_str::<serde_json::Value>(json) else { return Vec::new() };
    let strings = |v: Option<&serde_json::Value>| -> Vec<String> {
        v.and_then(serde_json::Value::as_array)
            .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
            .unwrap_or_default()
    };
    let filters = rule.get("filters");
    let lists = [
        strings(filters.and_then(|f| f.get("skipPatterns"))),
        strings(filters.and_then(|f| f.get("keepPatterns"))),
        strings(rule.get("evidence")),
    ];
    let mut wanted = Vec::new();
    // Each list's ASCII patterns as one `Any` matcher: a line's kinds are which lists match
    // it, and an earliest-match search stops at the first pattern that does.
    for list in &lists {
        let ascii: Vec<String> = list.iter().filter(|p| p.is_ascii()).cloned().collect();
        if !ascii.is_empty() {
            wanted.push(Wanted { prefilter: true, ..Wanted::any(ascii, Flags::default()) });
        }
    }
    for list in &lists {
        let other: Vec<String> = list.iter().filter(|p| !p.is_ascii()).cloned().collect();
        if !other.is_empty() {
            wanted.push(Wanted::any(other, Flags::default()));
        }
    }
    for field in ["counters", "matchOutput"] {
        for item in rule.get(field).and_then(serde_json::Value::as_array).into_iter().flatten() {
            if let Some(pattern) = item.get("pattern").and_then(serde_json::Value::as_str) {
                let flags = Flags::parse(item.get("flags").and_then(serde_json::Value::as_str));
                wanted.push(Wanted::any(vec![pattern.to_owned()], flags));
            }
        }
    }
    for field in ["commandRegex", "outputRegex"] {
        if let Some(re) = rule.get("match").and_then(|m| m.get(field)).and_then(|v| v.as_str()) {
            wanted.push(Wanted::any(vec![re.to_owned()], Flags::default()));
        }
    }
    wanted
}
