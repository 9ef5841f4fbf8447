//! `tj compact SESSION --resume` end to end with the real harness CLIs: the fake model has the
//! harness read the same file twice (`cat big.txt`) and ends the turn; the harness writes its
//! session log in the temporary HOME; tj compacts it into a new session (the first copy of
//! the file replaced by a placeholder naming `tj expand ID`); the harness resumes that new
//! session non-interactively with a second prompt; and the request it then sends the fake
//! model is what a resumed model would read: the placeholder, the second copy verbatim, every
//! call still paired with its result, the first prompt.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Instant;

use serde_json::{Value, json};

use super::server::{FakeModel, Reply, Request};
use super::{Fixture, HARNESS_LIMIT, Ran, claude, codex, harness, run_bounded};

/// The first prompt: it must survive compaction.
const PROMPT: &str = "Show me big.txt, twice.";
/// The prompt of the resumed session.
const NEXT: &str = "Now tell me what big.txt says.";
/// What the model has the harness run, once per call id.
const COMMAND: &str = "cat big.txt";
/// The ids of the fake model's calls, in order: the first result goes stale once the second
/// one holds the file again, changed in between.
const CALLS: [&str; 2] = ["toolu_01TjResumeFirstRead", "toolu_01TjResumeSecondRead"];
/// Messages `tj compact` leaves alone at the end: the second result and the final answer.
const KEEP_LAST: &str = "2";

/// The line the file gains at its head between the two reads: only the latest read has it
/// (in Claude Code's preview of a saved output too).
const REVISED: &str = "the first line of big.txt, added after the first read\n";
/// A line only the full file has (in either version).
const FIRST_LINE: &str = "line 000 of big.txt";

/// Lines of `big.txt`: about 12 KB, well over `tj compact`'s threshold once dropped, and
/// under the size past which Claude Code saves an output to a file instead of its log.
const LINES: usize = 200;

/// `big.txt` as the first read finds it: `lines` distinct lines.
fn big_txt(lines: usize) -> String {
    (0..lines)
        .map(|i| {
            format!("line {i:03} of big.txt: the inventory count for shelf {i} is {}\n", i * 7)
        })
        .collect()
}

/// One resume, start to end: what each step left.
struct Story {
    /// The first harness run, and the requests the fake model got during it.
    first: Ran,
    first_requests: Vec<Request>,
    /// `tj compact LOG --resume`, once run.
    compact: Option<Output>,
    /// The harness resuming the new session, once run, and the requests of that run.
    resumed: Option<Ran>,
    resumed_requests: Vec<Request>,
    /// The first run's session id and the new session's.
    ids: (String, String),
}

impl Story {
    /// The story once the first run is over.
    fn new(first: Ran, first_requests: Vec<Request>) -> Story {
        let ids = (String::new(), String::new());
        Story {
            first,
            first_requests,
            compact: None,
            resumed: None,
            resumed_requests: Vec::new(),
            ids,
        }
    }

    fn describe(&self) -> String {
        let log =
            |rs: &[Request]| rs.iter().map(|r| format!("  {}\n", r.summary())).collect::<String>();
        let compact = self.compact.as_ref().map_or_else(
            || "(not run)".to_owned(),
            |c| format!("{}\n{}{}", c.status, crate::util::stdout(c), crate::util::stderr(c)),
        );
        let resumed = self.resumed.as_ref().map_or_else(|| "(not run)".to_owned(), Ran::describe);
        format!(
            "first run: {}\nits requests:\n{}\ntj compact: {compact}\nresumed run: {resumed}\nits requests:\n{}",
            self.first.describe(),
            log(&self.first_requests),
            log(&self.resumed_requests),
        )
    }
}

/// Every `.jsonl` file under `dir`, sorted.
fn logs(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The new session's id, from the line `tj compact --resume` prints: `resume it with: CMD ID`.
fn resume_id(compact: &Output, command: &str) -> Option<String> {
    let stdout = crate::util::stdout(compact);
    let line = stdout.lines().find_map(|l| l.strip_prefix("resume it with: "))?;
    Some(line.strip_prefix(command)?.trim().to_owned())
}

/// The `tj expand ID` ids `tj compact` printed for what it dropped.
fn dropped_ids(compact: &Output) -> Vec<String> {
    crate::util::stdout(compact)
        .lines()
        .filter(|l| l.starts_with("drop line"))
        .filter_map(|l| l.rsplit_once("tj expand ").map(|(_, id)| id.trim().to_owned()))
        .collect()
}

/// The first run's session log under `dir` (the only one there).
fn only_log(dir: &Path, story: &str) -> PathBuf {
    let found = logs(dir);
    let [log] = found.as_slice() else {
        panic!("expected one session log under {}, found {found:?}\n{story}", dir.display());
    };
    log.clone()
}

/// Before the fake model asks for call `id`: the second read finds `big.txt` changed, as a
/// file being worked on is.
fn before_call(big: &Path, id: &str) {
    let text = std::fs::read_to_string(big).unwrap();
    if id == CALLS[1] && !text.starts_with(REVISED) {
        let mut file = std::fs::File::create(big).unwrap();
        std::io::Write::write_all(&mut file, format!("{REVISED}{text}").as_bytes()).unwrap();
    }
}

/// `tj compact LOG --resume` in the fixture's environment, reclaiming at least `threshold`
/// tokens, recorded in `story` with the old and new ids; the new id.
fn compact(
    fixture: &Fixture,
    story: &mut Story,
    log: &Path,
    threshold: &str,
    harness: &str,
) -> String {
    let path = log.to_str().unwrap();
    let args = ["compact", path, "--resume", "--keep-last", KEEP_LAST, "--threshold", threshold];
    let compacted = fixture.env.run(&args, b"");
    let id = resume_id(&compacted, harness);
    story.compact = Some(compacted);
    let id =
        id.unwrap_or_else(|| panic!("tj compact printed no resume command:\n{}", story.describe()));
    // Both harnesses end a log's name with the session id, a UUID.
    let stem = log.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    story.ids = (stem[stem.len().saturating_sub(36)..].to_owned(), id.clone());
    id
}

/// What `tj expand ID --raw` prints: the stored bytes.
fn expand(fixture: &Fixture, id: &str) -> String {
    let out = fixture.env.run(&["expand", id, "--raw"], b"");
    assert!(out.status.success(), "tj expand {id} failed: {}", crate::util::stderr(&out));
    crate::util::stdout(&out)
}

/// The checks common to both harnesses, given how to read a call's result from a request
/// body and how to check its calls and results are paired.
fn assert_resumed(
    fixture: &Fixture,
    story: &Story,
    result_in: fn(&Value, &str) -> Option<String>,
    pairing: fn(&Value) -> Result<(), String>,
    prompts: fn(&Value) -> Vec<String>,
) -> Value {
    let said = story.describe();
    let (Some(compacted), Some(resumed_run)) = (&story.compact, &story.resumed) else {
        panic!("the story stopped short:\n{said}");
    };
    assert!(story.first.status.is_some_and(|s| s.success()), "the first run failed:\n{said}");
    assert!(compacted.status.success(), "tj compact --resume failed:\n{said}");
    let original = |id: &str| {
        story.first_requests.iter().find_map(|r| result_in(&r.json(), id)).unwrap_or_else(|| {
            panic!("the first run sent no result for {id} to the fake model:\n{said}")
        })
    };
    let (stale, latest) = (original(CALLS[0]), original(CALLS[1]));
    assert!(
        stale.contains(FIRST_LINE) && !stale.contains(REVISED.trim_end()),
        "the first read is not the first big.txt:\n{stale}"
    );
    assert!(
        latest.contains(REVISED.trim_end()),
        "the second read is not the new big.txt:\n{latest}"
    );
    assert!(
        resumed_run.status.is_some_and(|s| s.success()),
        "the harness did not resume the compacted session:\n{said}"
    );
    let resumed = story
        .resumed_requests
        .iter()
        .map(Request::json)
        .find(|body| prompts(body).iter().any(|p| p.contains(NEXT)))
        .unwrap_or_else(|| panic!("no request of the resumed run carries its prompt:\n{said}"));
    let history = prompts(&resumed);
    assert!(
        history.first().is_some_and(|p| p.contains(PROMPT)),
        "the resumed history does not start with the first prompt ({history:?}):\n{said}"
    );
    let placeholder = result_in(&resumed, CALLS[0]).unwrap_or_else(|| {
        panic!("the resumed history lost the first call's result (or ignored the session):\n{said}")
    });
    let [id] = dropped_ids(compacted).try_into().unwrap_or_else(|ids: Vec<String>| {
        panic!("expected tj compact to drop one result, it dropped {ids:?}:\n{said}")
    });
    assert!(
        placeholder.contains(&format!("tj expand {id}")) && !placeholder.contains(FIRST_LINE),
        "the first read reached the resumed model, not its placeholder:\n{placeholder}\n{said}"
    );
    // Verbatim but for the session id, which tj rewrites wherever it occurs (in the path of
    // an output Claude Code saved under the session's directory).
    let (old, new) = &story.ids;
    assert_eq!(
        result_in(&resumed, CALLS[1]),
        Some(latest.replace(old.as_str(), new)),
        "the latest read did not reach the resumed model verbatim:\n{said}"
    );
    // Nowhere else in the request either (a copy kept in some other record of the log).
    let copies = resumed.to_string().matches(FIRST_LINE).count();
    assert_eq!(copies, 1, "the resumed request holds {copies} copies of big.txt, not 1:\n{said}");
    if let Err(why) = pairing(&resumed) {
        panic!("the resumed history does not pair calls and results: {why}\n{said}");
    }
    assert_eq!(expand(fixture, &id), stale, "tj expand {id} does not give the dropped result back");
    // The harness went on in the session tj wrote, not in a fresh one of its own.
    let stdout = crate::util::stdout(compacted);
    let new_log = stdout.lines().find_map(|l| l.split_once("; new session ").map(|(_, p)| p));
    let new_log = new_log.unwrap_or_else(|| panic!("tj compact named no new session:\n{said}"));
    let text = std::fs::read_to_string(new_log).unwrap_or_default();
    assert!(text.contains(NEXT), "the resumed run did not write to {new_log}:\n{said}");
    resumed
}

/// A fake Messages API that has Claude Code run `cat big.txt` once per id in `CALLS`, in
/// order (`big` changed before the second), and then ends the turn.
fn claude_script(big: PathBuf) -> impl Fn(&Request) -> Reply + Send + Sync + 'static {
    move |request| match (request.method.as_str(), request.path()) {
        ("POST", "/v1/messages") => {
            let body = request.json();
            let next = CALLS.iter().find(|id| claude::tool_result_in(&body, id).is_none());
            let input = json!({"command": COMMAND, "description": "Show big.txt"});
            let call =
                next.filter(|_| claude::offers(&body, "Bash")).map(|id| (*id, "Bash", input));
            if let Some((id, ..)) = &call {
                before_call(&big, id);
            }
            claude::reply(&body, call)
        }
        ("POST", "/v1/messages/count_tokens") => Reply::json(&json!({"input_tokens": 1})),
        ("POST", _) => Reply::empty(404),
        _ => Reply::empty(200),
    }
}

/// The text of every user message that is not only tool results, in order.
fn claude_prompts(body: &Value) -> Vec<String> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| match &m["content"] {
            Value::String(text) => Some(text.clone()),
            Value::Array(blocks) => {
                let texts: Vec<&str> = blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .collect();
                (!texts.is_empty()).then(|| texts.join("\n"))
            }
            _ => None,
        })
        .collect()
}

/// Every `tool_use` is answered by a `tool_result` in the next message, and every
/// `tool_result` answers a `tool_use` of the message before it (what the Messages API demands).
fn claude_pairing(body: &Value) -> Result<(), String> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let ids = |m: &Value, kind: &str, key: &str| -> Vec<String> {
        m["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == kind)
            .filter_map(|b| b[key].as_str().map(str::to_owned))
            .collect()
    };
    for (i, m) in messages.iter().enumerate() {
        let uses = ids(m, "tool_use", "id");
        let answered = messages.get(i + 1).map(|n| ids(n, "tool_result", "tool_use_id"));
        if let Some(id) = uses.iter().find(|id| !answered.as_ref().is_some_and(|a| a.contains(id)))
        {
            return Err(format!(
                "message {i}: tool_use {id} has no tool_result in the next message"
            ));
        }
        let results = ids(m, "tool_result", "tool_use_id");
        let asked =
            i.checked_sub(1).map(|p| ids(&messages[p], "tool_use", "id")).unwrap_or_default();
        if let Some(id) = results.iter().find(|id| !asked.contains(id)) {
            return Err(format!(
                "message {i}: tool_result {id} answers no tool_use of the message before"
            ));
        }
    }
    Ok(())
}

/// Claude Code through the whole story, `big.txt` of `lines` lines, `tj compact` reclaiming
/// at least `threshold` tokens; the fixture (whose HOME holds the logs) and the story.
fn claude_story(bin: &Path, lines: usize, threshold: &str) -> (Fixture, Story) {
    let fixture = Fixture::bare();
    let big = fixture.env.write("crate/big.txt", &big_txt(lines));
    let settings = claude::user_settings(claude::Permission::AllowRule, COMMAND);
    fixture.env.write("home/.claude/settings.json", &settings.to_string());
    let config_dir = fixture.home().join(".claude");
    let model = FakeModel::start(claude_script(big));
    let run = |args: &[&str]| {
        let mut cmd = fixture.command(bin);
        cmd.args(args).args(["--output-format", "json"]);
        claude::isolate(&mut cmd, &model.url(), &config_dir, &fixture.crate_dir());
        let before = model.requests().len();
        let ran = run_bounded(cmd, HARNESS_LIMIT);
        (ran, model.requests().split_off(before))
    };
    let (first, first_requests) = run(&["-p", PROMPT]);
    let mut story = Story::new(first, first_requests);
    let log = only_log(&config_dir.join("projects"), &story.describe());
    let id = compact(&fixture, &mut story, &log, threshold, "claude --resume");
    let (resumed, resumed_requests) = run(&["-p", NEXT, "--resume", &id]);
    (story.resumed, story.resumed_requests) = (Some(resumed), resumed_requests);
    drop(model);
    (fixture, story)
}

#[test]
fn claude_code_resumes_the_session_tj_compact_wrote() {
    let Some(bin) = harness("claude") else { return };
    let start = Instant::now();
    let (fixture, story) = claude_story(&bin, LINES, "800");
    assert_resumed(&fixture, &story, claude::tool_result_in, claude_pairing, claude_prompts);
    println!("{}\nin {:?}", story.describe(), start.elapsed());
}

/// An output too large for its log Claude Code saves in the session's directory, and the
/// result names that file: the new session has its own copy, where its log says.
#[test]
fn claude_code_s_saved_outputs_come_along_to_the_resumed_session() {
    let Some(bin) = harness("claude") else { return };
    let start = Instant::now();
    // About 100 KB: saved to a file, the result a 2 KB preview naming it.
    let (fixture, story) = claude_story(&bin, 1500, "100");
    let resumed =
        assert_resumed(&fixture, &story, claude::tool_result_in, claude_pairing, claude_prompts);
    let said = story.describe();
    let latest = claude::tool_result_in(&resumed, CALLS[1]).unwrap_or_default();
    let saved = latest.lines().find_map(|l| l.split_once("saved to: ").map(|(_, p)| p.trim()));
    let saved = saved.unwrap_or_else(|| panic!("the output was not saved to a file:\n{latest}"));
    assert!(saved.contains(&story.ids.1), "{saved} is not the new session's:\n{said}");
    let text = std::fs::read_to_string(saved).unwrap_or_else(|err| {
        panic!("the new session's log names {saved}, which cannot be read ({err}):\n{said}")
    });
    assert!(
        text.starts_with(REVISED) && text.contains(FIRST_LINE),
        "{saved} does not hold the saved output:\n{said}"
    );
    println!("{said}\nin {:?}", start.elapsed());
}

/// A fake Responses API that has Codex run `cat big.txt` once per id in `CALLS`, in order
/// (`big` changed before the second), and then ends the turn.
fn codex_script(big: PathBuf) -> impl Fn(&Request) -> Reply + Send + Sync + 'static {
    move |request| match (request.method.as_str(), request.path()) {
        ("POST", "/v1/responses") => {
            let body = request.json();
            let next = CALLS.iter().find(|id| codex::output_in(&body, id).is_none());
            let call = next.and_then(|id| {
                codex::shell_call(&body, COMMAND).map(|(name, arguments)| (*id, name, arguments))
            });
            if let Some((id, ..)) = &call {
                before_call(&big, id);
            }
            codex::reply(call)
        }
        ("POST", _) => Reply::empty(404),
        ("GET", "/v1/models") => Reply::json(&json!({"object": "list", "data": [], "models": []})),
        _ => Reply::empty(200),
    }
}

/// The text of every user message in the input that is not context Codex adds itself.
fn codex_prompts(body: &Value) -> Vec<String> {
    let input = body["input"].as_array().cloned().unwrap_or_default();
    input
        .iter()
        .filter(|i| i["type"] == "message" && i["role"] == "user")
        .filter_map(|m| {
            let texts: Vec<&str> = m["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["type"] == "input_text")
                .filter_map(|p| p["text"].as_str())
                .collect();
            Some(texts.join("\n"))
                .filter(|t| !t.trim_start().starts_with('<') && !t.starts_with("# AGENTS.md"))
        })
        .collect()
}

/// Every `function_call` has one `function_call_output` after it, and every output a call
/// before it (what the Responses API demands).
fn codex_pairing(body: &Value) -> Result<(), String> {
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let mut open: Vec<String> = Vec::new();
    for (i, item) in input.iter().enumerate() {
        let id = item["call_id"].as_str().unwrap_or_default().to_owned();
        match item["type"].as_str().unwrap_or_default() {
            "function_call" | "custom_tool_call" | "local_shell_call" => open.push(id),
            "function_call_output" | "custom_tool_call_output" => {
                let Some(at) = open.iter().position(|o| *o == id) else {
                    return Err(format!("input {i}: output for {id}, which no earlier call has"));
                };
                open.remove(at);
            }
            _ => {}
        }
    }
    match open.first() {
        Some(id) => Err(format!("call {id} has no output")),
        None => Ok(()),
    }
}

#[test]
fn codex_resumes_the_session_tj_compact_wrote() {
    let Some(bin) = harness("codex") else { return };
    let start = Instant::now();
    let fixture = Fixture::bare();
    let big = fixture.env.write("crate/big.txt", &big_txt(LINES));
    let codex_home = fixture.home().join(".codex");
    let model = FakeModel::start(codex_script(big));
    fixture.env.write("home/.codex/config.toml", &codex::config(&model.url()));
    let run = |args: &[&str]| {
        let mut cmd = fixture.command(&bin);
        cmd.args([
            "exec",
            "--skip-git-repo-check",
            "--color",
            "never",
            "--dangerously-bypass-approvals-and-sandbox",
            "-C",
        ])
        .arg(fixture.crate_dir())
        .args(args)
        .current_dir(fixture.crate_dir());
        codex::isolate(&mut cmd, &codex_home);
        let before = model.requests().len();
        let ran = run_bounded(cmd, HARNESS_LIMIT);
        (ran, model.requests().split_off(before))
    };
    let (first, first_requests) = run(&[PROMPT]);
    let mut story = Story::new(first, first_requests);
    let log = only_log(&codex_home.join("sessions"), &story.describe());
    let id = compact(&fixture, &mut story, &log, "800", "codex resume");
    let (resumed, resumed_requests) = run(&["resume", &id, NEXT]);
    (story.resumed, story.resumed_requests) = (Some(resumed), resumed_requests);
    assert_resumed(&fixture, &story, codex::output_in, codex_pairing, codex_prompts);
    println!("{}\nin {:?}", story.describe(), start.elapsed());
}
