//! What tj prints about an output and its original, through the binary (issues 9 and 10):
//! escaping of stored data, lenient input, big and binary outputs, full disks, `tj expand`'s
//! ranges and `tj run`'s argument parsing.

use crate::util::*;

/// `sh -c script` in `env`'s working directory, with the environment `TestEnv::cmd` gives tj.
fn shell(env: &TestEnv, script: &str) -> std::process::Command {
    let tj = env.cmd(&[]);
    let mut sh = std::process::Command::new("sh");
    sh.env_clear().current_dir(env.work()).args(["-c", script]);
    for (key, value) in tj.get_envs() {
        if let Some(value) = value {
            sh.env(key, value);
        }
    }
    sh
}

#[test]
fn ls_escapes_control_characters_of_a_stored_command() {
    let env = TestEnv::new();
    let hostile = "\u{1b}]0;PWNED\u{7}\u{1b}[2J";
    let out = env.run(&["reduce", "--command", hostile], b"some output\n");
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["ls"], b"");
    let text = stdout(&out);
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{text:?}");
    assert!(text.contains(r"\e]0;PWNED\x07\e[2J"), "{text}");
}

#[test]
fn expand_errors_escape_the_id_they_quote() {
    let env = TestEnv::new();
    let out = env.run(&["expand", "\u{1b}[2J\u{9b}31m"], b"");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(!err.contains('\u{1b}') && !err.contains('\u{9b}'), "{err:?}");
    assert!(err.contains(r"\e[2J\u{9b}31m"), "{err}");
}

#[test]
fn warnings_naming_a_command_escape_its_control_characters() {
    let env = TestEnv::new();
    let out = env.run(&["run", "--agent", "--no-pty", "--", "\u{1b}]0;PWNED\u{7}nope"], b"");
    assert_eq!(out.status.code(), Some(127));
    let err = stderr(&out);
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
    assert!(err.contains(r"\e]0;PWNED\x07nope: command not found"), "{err}");
}

#[test]
fn ls_counts_corrupt_entries_instead_of_calling_the_store_empty() {
    let env = TestEnv::new();
    env.write("data/spill/0123456789ab.json", "{ not json");
    env.write("data/spill/ba9876543210.json", "");
    let out = env.run(&["ls"], b"");
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("2 corrupt entries"), "{text}");
    assert!(!text.contains("no artifacts stored yet"), "{text}");
    assert!(stderr(&out).contains("2 artifacts have unreadable metadata"), "{}", stderr(&out));
}

#[test]
fn reduce_json_passes_nul_and_lone_surrogates_through() {
    let env = TestEnv::new();
    let request = br#"{"toolName":"exec","command":"printf x","combinedText":"before\u0000after \ud83d cut\nerror: SIGNAL"}"#;
    let out = env.run(&["reduce-json"], request);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = json["inlineText"].as_str().unwrap();
    assert!(text.contains("error: SIGNAL"), "{text}");
    assert!(text.contains("\u{fffd} cut"), "{text}");
    assert!(text.contains("before") && text.contains("after"), "{text}");
}

#[test]
fn run_in_a_deleted_working_directory_still_runs_the_command() {
    let env = TestEnv::new();
    let tj = crate::util::tj_bin_str();
    // The shell enters a directory, removes it, then execs tj there.
    let script = format!(
        "mkdir gone && cd gone && rmdir ../gone && exec {tj} run --agent --no-pty -- sh -c 'echo ran here; exit 3'"
    );
    let out = env.run_cmd(shell(&env, &script), b"");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stdout(&out).contains("ran here"), "{}", stdout(&out));
}

#[test]
fn run_takes_the_command_without_a_double_dash() {
    let env = TestEnv::new();
    // tj's own flags come first; everything from the command on is the command's, `--`
    // included.
    let out = env.run(&["run", "--agent", "--no-pty", "printf", "%s|", "a", "--", "--agent"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim_end(), "a|--|--agent|");
    // The explicit form keeps working, and an unknown option before the command is refused.
    let out = env.run(&["run", "--agent", "--no-pty", "--", "printf", "%s|", "b"], b"");
    assert_eq!(stdout(&out).trim_end(), "b|");
    let out = env.run(&["run", "--bogus", "printf", "x"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--bogus"), "{}", stderr(&out));
}

/// The id of the only artifact in `env`'s store.
fn only_id(env: &TestEnv) -> String {
    let mut ids: Vec<String> = std::fs::read_dir(env.data().join("spill"))
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".log").map(str::to_owned))
        .collect();
    assert_eq!(ids.len(), 1, "{ids:?}");
    ids.remove(0)
}

/// The `(La–b)` ranges of the markers in `text`.
fn marker_ranges(text: &str) -> Vec<(usize, usize)> {
    text.lines()
        .filter(|l| l.starts_with("… "))
        .map(|l| {
            let range = l.split("(L").nth(1).unwrap().split(')').next().unwrap();
            match range.split_once('–') {
                Some((a, b)) => (a.parse().unwrap(), b.parse().unwrap()),
                None => (range.parse().unwrap(), range.parse().unwrap()),
            }
        })
        .collect()
}

/// Over the budget tj reduces whole (6 MiB): 70,000 repeated lines of 101 bytes between
/// two short runs, as `seq 1 3; yes | head; seq 100 102` gives.
#[test]
fn big_output_repeats_are_numbered_as_expand_numbers_them() {
    let env = TestEnv::new();
    let y = "y".repeat(100);
    let script = format!("seq 1 3; yes {y} | head -n 70000; seq 100 102");
    let out = env.run(&["run", "--agent", "--no-pty", "--", "sh", "-c", &script], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let expected =
        format!("1\n2\n3\n{y}\n… 69999 repeated lines omitted (L5–70003) …\n100\n101\n102\n");
    assert!(text.starts_with(&expected), "{text}");
    assert!(text.contains("of 70,006 lines omitted"), "{text}");
    let id = only_id(&env);
    let found = env.run(&["expand", &id, "--grep", "^10[0-2]$"], b"");
    assert_eq!(stdout(&found), "70004:100\n70005:101\n70006:102\n");
    let marked = env.run(&["expand", &id, "--lines", "L5–70003"], b"");
    assert_eq!(stdout(&marked).lines().count(), 69_999);
}

/// `seq 1 25000000`'s shape, over the budget: the rendition is bounded, and every gap in it
/// is a marker whose range `tj expand --lines` gives back.
#[test]
fn big_output_has_a_marker_at_every_gap_and_a_bounded_rendition() {
    let env = TestEnv::new();
    let out =
        env.run(&["run", "--agent", "--no-pty", "--", "seq", "-f", "%0100g", "1", "70000"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.len() < 16 * 1024, "{} bytes", text.len());
    let number = |line: &str| line.trim_start_matches('0').parse::<usize>().ok();
    let mut next = 1;
    let ranges = marker_ranges(&text);
    assert!(!ranges.is_empty(), "{text}");
    for line in text.lines().filter(|l| !l.starts_with("[tj]")) {
        match line.strip_prefix("… ") {
            Some(_) => {
                let (a, b) = marker_ranges(line)[0];
                assert_eq!(a, next, "{line}");
                next = b + 1;
            }
            None => {
                assert_eq!(number(line), Some(next), "{line}\n{text}");
                next += 1;
            }
        }
    }
    assert_eq!(next, 70_001, "{text}");
    let id = only_id(&env);
    let (a, b) = ranges[0];
    let lines = stdout(&env.run(&["expand", &id, "--lines", &format!("{a}:{b}")], b""));
    let got: Vec<usize> = lines.lines().map(|l| number(l).unwrap()).collect();
    assert_eq!(got, (a..=b).collect::<Vec<_>>());
}

#[test]
fn big_output_keeps_an_error_in_the_middle() {
    let env = TestEnv::new();
    let script =
        "seq -f '%0100g' 1 40000; echo 'error: MIDDLE-SIGNAL'; seq -f '%0100g' 40001 80000";
    let out = env.run(&["run", "--agent", "--no-pty", "--", "sh", "-c", script], b"");
    let text = stdout(&out);
    assert!(text.contains("\nerror: MIDDLE-SIGNAL\n"), "{text}");
    // Line 40001 is the error; one line of context each side, markers around them.
    let ranges = marker_ranges(&text);
    assert!(ranges.iter().any(|&(_, b)| b == 39_999), "{ranges:?}");
    assert!(ranges.iter().any(|&(a, _)| a == 40_003), "{ranges:?}");
}

#[test]
fn expand_rejects_reversed_and_out_of_range_lines_naming_the_valid_range() {
    let env = TestEnv::new();
    let body: String = (1..=20).map(|n| format!("line {n}\n")).collect();
    assert!(env.run(&["reduce"], body.as_bytes()).status.success());
    let id = only_id(&env);
    let reversed = env.run(&["expand", &id, "--lines", "15:2"], b"");
    assert_eq!(reversed.status.code(), Some(125), "{}", stderr(&reversed));
    assert!(stderr(&reversed).contains("ends before it starts"), "{}", stderr(&reversed));
    assert_eq!(stdout(&reversed), "");
    let past = env.run(&["expand", &id, "--lines", "30:40"], b"");
    assert_ne!(past.status.code(), Some(0));
    assert!(stderr(&past).contains("has 20 lines (1–20)"), "{}", stderr(&past));
    // The en dash markers print, an `L` before it, and an end past the last line.
    assert_eq!(stdout(&env.run(&["expand", &id, "--lines", "L2–3"], b"")), "line 2\nline 3\n");
    assert_eq!(stdout(&env.run(&["expand", &id, "--lines", "19:99"], b"")), "line 19\nline 20\n");
}

#[test]
fn expand_lf_turns_a_pty_runs_crlf_into_lf() {
    let env = TestEnv::new();
    assert!(env.run(&["reduce"], b"one\r\ntwo\r\nlone\rcr\r\n").status.success());
    let id = only_id(&env);
    assert_eq!(env.run(&["expand", &id, "--raw"], b"").stdout, b"one\r\ntwo\r\nlone\rcr\r\n");
    assert_eq!(env.run(&["expand", &id, "--lf"], b"").stdout, b"one\ntwo\nlone\rcr\n");
    let help = stdout(&env.run(&["expand", "--help"], b""));
    assert!(help.contains("what the terminal received"), "{help}");
}

/// `head -c N FILE` through `tj run`: the output is FILE's first N bytes.
fn run_bytes(env: &TestEnv, bytes: &[u8]) -> (std::process::Output, usize) {
    let path = env.root.join("input.bin");
    #[allow(clippy::disallowed_methods)]
    std::fs::write(&path, bytes).unwrap();
    let path = path.display().to_string();
    (env.run(&["run", "--agent", "--no-pty", "--", "cat", &path], b""), bytes.len())
}

/// Seeded pseudo-random bytes.
fn noise(len: usize) -> Vec<u8> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

#[test]
fn binary_output_is_one_line_with_size_type_and_raw_hint() {
    let env = TestEnv::new();
    let (out, len) = run_bytes(&env, &noise(1_000_000));
    let text = stdout(&out);
    // One line, and any line of the bytes that reads as evidence (noise may, rarely).
    assert!(text.len() < 4096, "{text}");
    assert!(text.starts_with("[tj] binary output: 1,000,000 bytes of binary data"), "{text}");
    let id = only_id(&env);
    assert!(text.contains(&format!("tj expand {id} --raw")), "{text}");
    assert_eq!(env.run(&["expand", &id, "--raw"], b"").stdout.len(), len);
    // The text form is refused with the same hint, not printed as replacement characters.
    let refused = env.run(&["expand", &id], b"");
    assert!(stderr(&refused).contains("--raw"), "{}", stderr(&refused));
    assert!(refused.stdout.is_empty());

    let env = TestEnv::new();
    let mut gz = b"\x1f\x8b\x08\x00\x00\x00\x00\x00".to_vec();
    gz.extend(noise(5000));
    let (out, _) = run_bytes(&env, &gz);
    assert!(stdout(&out).contains("5,008 bytes of gzip compressed data"), "{}", stdout(&out));
}

#[test]
fn an_error_printed_among_binary_bytes_is_kept() {
    let env = TestEnv::new();
    let mut bytes = vec![0u8; 5000];
    bytes.extend_from_slice(b"\nerror: could not decode frame 7\n");
    bytes.extend(noise(5000));
    let (out, _) = run_bytes(&env, &bytes);
    let text = stdout(&out);
    assert!(text.starts_with("[tj] binary output: 10,033 bytes of binary data"), "{text}");
    assert!(text.lines().any(|l| l == "error: could not decode frame 7"), "{text}");
}

#[test]
fn text_with_invalid_bytes_is_never_larger_than_the_output() {
    for bytes in [vec![0xffu8; 51_200], {
        let mut mixed = Vec::new();
        for n in 0..20_000 {
            mixed.extend_from_slice(format!("line {n} caf").as_bytes());
            mixed.extend_from_slice(if n % 50 == 0 { b"\xe9\xfe\xff\n" } else { b"e\n" });
        }
        mixed
    }] {
        let env = TestEnv::new();
        let (out, len) = run_bytes(&env, &bytes);
        assert!(out.stdout.len() <= len, "{} > {len}", out.stdout.len());
        assert!(!stdout(&out).contains("\u{fffd}\u{fffd}"), "a wall of replacement characters");
    }
}

#[test]
fn text_whose_invalid_bytes_were_replaced_is_not_called_lossless() {
    let env = TestEnv::new();
    let mut bytes = b"plain line\n".repeat(50);
    bytes.extend_from_slice(b"caf\xe9 \xfe\xff\xfd\xfc\n");
    let out = env.run(&["reduce", "--format", "json", "--", "cat", "x"], &bytes);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["lossless"], false, "{json}");
    let clean = env.run(&["reduce", "--format", "json", "--", "cat", "x"], b"plain line\n");
    let json: serde_json::Value = serde_json::from_slice(&clean.stdout).unwrap();
    assert_eq!(json["lossless"], true, "{json}");
}

/// A 1 MB tmpfs mounted for one test and unmounted on drop: a full disk for the store.
struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    /// `None`, after saying why, when this machine will not mount one (not root, no
    /// CAP_SYS_ADMIN): the capture's tests with an injected failing writer
    /// (`capture::tests::a_full_disk_streams_the_whole_output_to_the_agent` and the tests
    /// around it) cover the mechanism then.
    #[allow(clippy::print_stdout)] // a skip is said, never silent (see init.rs `skip`)
    fn mount(dir: &std::path::Path) -> Option<SmallDisk> {
        std::fs::create_dir_all(dir).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::piped())
            .output();
        match mounted {
            Ok(out) if out.status.success() => Some(SmallDisk(dir.to_owned())),
            Ok(out) => {
                println!("skipping: cannot mount a tmpfs here: {}", stderr(&out).trim());
                None
            }
            Err(err) => {
                println!("skipping: cannot run mount: {err}");
                None
            }
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Lines of 101 bytes with `error: MIDDLE-SIGNAL` halfway: `lines` of them in all.
fn middle_signal_script(lines: usize) -> String {
    let half = lines / 2;
    format!(
        "seq -f '%0100g' 1 {half}; echo 'error: MIDDLE-SIGNAL'; seq -f '%0100g' {} {lines}",
        half + 1
    )
}

/// What `sh -c script` writes.
fn output_of(script: &str) -> String {
    let out = std::process::Command::new("sh").args(["-c", script]).output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// No original, no temporary file: nothing was left in the store.
fn assert_nothing_stored(env: &TestEnv) {
    let spill = env.data().join("spill");
    let left: Vec<_> = std::fs::read_dir(&spill)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left in the store: {left:?}");
}

/// 7.6 MB with an error in the middle, on a store that holds 1 MB: held in memory, the
/// store fails, and the agent gets the whole output, middle included.
#[test]
fn full_disk_gives_the_agent_the_whole_output_held_in_memory() {
    let env = TestEnv::new();
    let Some(_disk) = SmallDisk::mount(&env.data()) else { return };
    let script = middle_signal_script(75_000);
    let out = env.run(&["run", "--agent", "--no-pty", "--", "sh", "-c", &script], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.len() > 7_000_000, "{} bytes", text.len());
    assert_eq!(text, output_of(&script), "the rendition is the whole original, middle included");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("nothing was stored: the rendition is the whole original"), "{err}");
    assert_nothing_stored(&env);
}

/// 12 MB on a store that holds 1 MB: past the memory cap the spill fails, and the output
/// goes to the agent as it comes instead of losing its middle.
#[test]
fn full_disk_streams_an_output_too_big_to_hold_to_the_agent() {
    let env = TestEnv::new();
    let Some(_disk) = SmallDisk::mount(&env.data()) else { return };
    let script = format!("{}; exit 3", middle_signal_script(120_000));
    let out = env.run(&["run", "--agent", "--no-pty", "--", "sh", "-c", &script], b"");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = stdout(&out);
    let (body, last) = text.trim_end().rsplit_once('\n').unwrap();
    assert_eq!(format!("{body}\n"), output_of(&script), "every byte, in order");
    assert_eq!(
        last,
        "[tj] exit 3 · nothing could be stored: the text above is the whole output, as it came, unreduced"
    );
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("nothing could be stored, so the whole output went to stdout"), "{err}");
    assert_nothing_stored(&env);
}
