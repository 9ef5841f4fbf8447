//! The alarm table (issue 12): every line of `tests/evidence/alarms.txt` marked `alarm`,
//! buried at a seeded position among ~200 noise lines of its own log or table format, is
//! evidence of a data output (`evidence::classify`, then `evidence::mark_alarms`), and
//! every line marked `quiet` is not. The noise itself must stay unmarked: a prefilter that
//! marks every line of a log would pass the first half and keep nothing out.

#![allow(missing_docs, clippy::unwrap_used)] // test code: a panic is the failure report

use tj::reduce::evidence::{classify, mark_alarms};
use tj::testing::Rng;

const TABLE: &str = include_str!("evidence/alarms.txt");

/// How many noise lines surround each case.
const NOISE_LINES: usize = 200;

/// One case of the table.
struct Case {
    format: &'static str,
    alarm: bool,
    line: &'static str,
}

/// The table's cases, each with the format of its `## FORMAT` section.
fn table() -> Vec<Case> {
    let mut format = "";
    let mut cases = Vec::new();
    for line in TABLE.lines() {
        if let Some(name) = line.strip_prefix("## ") {
            format = name.trim();
        } else if let Some((kind, text)) = line.split_once('\t') {
            assert!(!format.is_empty(), "case before any section: {line:?}");
            let alarm = match kind {
                "alarm" => true,
                "quiet" => false,
                other => panic!("unknown case kind {other:?} in {line:?}"),
            };
            cases.push(Case { format, alarm, line: text });
        } else {
            assert!(
                line.trim().is_empty() || line.starts_with("# "),
                "not a case, a section or a comment: {line:?}"
            );
        }
    }
    cases
}

const PATHS: &[&str] =
    &["/", "/api/items", "/api/items/42", "/static/app.css", "/healthz", "/login", "/api/users"];
const WORDS: &[&str] = &[
    "request handled",
    "cache refreshed",
    "worker started",
    "connection accepted",
    "job queued",
    "config reloaded",
    "session opened",
    "flushed 12 entries",
];

/// A table's header and a row formatter, for the table sections.
fn table_noise(format: &str, rng: &mut Rng, i: usize) -> (String, String) {
    match format {
        "docker_ps" => {
            let row = |id: &str,
                       image: &str,
                       cmd: &str,
                       created: &str,
                       status: &str,
                       ports: &str,
                       name: &str| {
                format!("{id:<14}{image:<24}{cmd:<24}{created:<16}{status:<28}{ports:<22}{name}")
                    .trim_end()
                    .to_owned()
            };
            let header =
                row("CONTAINER ID", "IMAGE", "COMMAND", "CREATED", "STATUS", "PORTS", "NAMES");
            let status = if rng.below(3) == 0 {
                "Exited (0) 2 hours ago".to_owned()
            } else {
                format!("Up {} hours", i % 9 + 1)
            };
            let id = format!("{:012x}", rng.next_u64() >> 16);
            let body = row(
                &id,
                rng.pick(&["nginx:1.27", "redis:7", "app:latest", "busybox"]),
                "\"sleep infinity\"",
                "3 hours ago",
                &status,
                "",
                &format!("svc-{i}"),
            );
            (header, body)
        }
        "kubectl" => {
            let row = |a: &str, b: &str, c: &str, d: &str, e: &str| {
                format!("{a:<40}{b:<8}{c:<20}{d:<10}{e}")
            };
            let header = row("NAME", "READY", "STATUS", "RESTARTS", "AGE");
            let name =
                format!("web-{:x}-{:05x}", rng.next_u64() % 0xffff_ffff, rng.next_u64() % 0xfffff);
            (header, row(&name, "1/1", "Running", "0", &format!("{}d", i % 9 + 1)))
        }
        "systemctl" => {
            let row = |a: &str, b: &str, c: &str, d: &str, e: &str, f: &str| {
                format!("{a:<2}{b:<30}{c:<7}{d:<7}{e:<8}{f}")
            };
            let header = row("", "UNIT", "LOAD", "ACTIVE", "SUB", "DESCRIPTION");
            let unit = format!("unit-{i}.service");
            (
                header,
                row("", &unit, "loaded", "active", rng.pick(&["running", "exited"]), "Some daemon"),
            )
        }
        "helm" => {
            let row = |a: &str, b: &str, c: &str, d: &str, e: &str, f: &str, g: &str| {
                format!("{a:<14}{b:<12}{c:<10}{d:<40}{e:<10}{f:<22}{g}").trim_end().to_owned()
            };
            let header =
                row("NAME", "NAMESPACE", "REVISION", "UPDATED", "STATUS", "CHART", "APP VERSION");
            let name = format!("rel-{i}");
            (
                header,
                row(
                    &name,
                    "prod",
                    &(i % 9 + 1).to_string(),
                    "2026-12-01 09:00:00.123 +0000 UTC",
                    "deployed",
                    &format!("{name}-1.0.0"),
                    "1.0.0",
                ),
            )
        }
        other => panic!("no table noise for {other}"),
    }
}

/// One noise line of `format`: what that log prints when all is well.
fn noise_line(format: &str, rng: &mut Rng, i: usize) -> String {
    let (m, s) = (i / 60 % 60, i % 60);
    let ms = rng.below(1000);
    let path = rng.pick(PATHS);
    let word = rng.pick(WORDS);
    let ok = rng.pick(&["200", "200", "200", "304", "301", "201", "204"]);
    match format {
        "clf" => format!(
            "10.0.{}.{} - - [01/Dec/2026:09:{m:02}:{s:02} +0000] \"GET {path} HTTP/1.1\" {ok} {} \"-\" \"Mozilla/5.0 (X11; Linux x86_64)\"",
            i % 7,
            ms % 250,
            ms * 7
        ),
        "pyhttp" => {
            format!("127.0.0.1 - - [01/Dec/2026 09:{m:02}:{s:02}] \"GET {path} HTTP/1.1\" {ok} -")
        }
        "uvicorn" => format!("INFO:     127.0.0.1:{} - \"GET {path} HTTP/1.1\" 200 OK", 40000 + ms),
        "morgan" => format!("GET {path} {ok} {}.{:03} ms - {}", ms % 9, ms, ms * 3),
        "rails" => match i % 3 {
            0 => {
                format!("Started GET \"{path}\" for 127.0.0.1 at 2026-12-01 09:{m:02}:{s:02} +0000")
            }
            1 => "Processing by ItemsController#index as HTML".to_owned(),
            _ => format!(
                "Completed 200 OK in {ms}ms (Views: 3.1ms | ActiveRecord: 0.4ms | Allocations: {})",
                ms * 11
            ),
        },
        "gin" => format!(
            "[GIN] 2026/12/01 - 09:{m:02}:{s:02} | {ok} |    {ms}.1µs |       127.0.0.1 | GET      \"{path}\""
        ),
        "golog" => format!("2026/12/01 09:{m:02}:{s:02} {word} in {ms}ms"),
        "logfmt" => format!(
            "time=\"2026-12-01T09:{m:02}:{s:02}Z\" level=info msg=\"{word}\" path={path} duration={ms}ms"
        ),
        "zap" => format!(
            "{{\"level\":\"info\",\"ts\":1764579600.{ms:03},\"caller\":\"server/handler.go:{}\",\"msg\":\"{word}\",\"path\":\"{path}\",\"status\":{ok}}}",
            i % 90 + 10
        ),
        "pino" => format!(
            "{{\"level\":30,\"time\":1764579600{ms:03},\"pid\":7,\"hostname\":\"api-1\",\"req\":{{\"id\":{i},\"method\":\"GET\",\"url\":\"{path}\"}},\"res\":{{\"statusCode\":{ok}}},\"responseTime\":{},\"msg\":\"request completed\"}}",
            ms % 40
        ),
        "klog" => format!(
            "I1201 09:{m:02}:{s:02}.{ms:06}       1 controller.go:{}] {word} for pod default/web-{i}",
            100 + i % 800
        ),
        "journal" => format!(
            "Dec 01 09:{m:02}:{s:02} web-1 {}: {word}",
            rng.pick(&["systemd[1]", "sshd[2211]", "CRON[33]", "app[700]"])
        ),
        "syslog" => format!("<30>Dec  1 09:{m:02}:{s:02} web-1 app[700]: {word}"),
        "jul" => {
            if i.is_multiple_of(2) {
                format!("Dec 01, 2026 9:{m:02}:{s:02} AM com.example.App handle")
            } else {
                format!("INFO: {word}")
            }
        }
        "log4j" => format!(
            "2026-12-01 09:{m:02}:{s:02},{ms:03} INFO  [http-nio-8080-exec-{}] c.e.shop.Controller - {word}",
            i % 10
        ),
        "pylog" => format!("2026-12-01 09:{m:02}:{s:02},{ms:03} - app.worker - INFO - {word}"),
        "rustlog" => {
            format!("2026-12-01T09:{m:02}:{s:02}.{ms:06}Z  INFO app::server: {word} path={path}")
        }
        "nginxerr" => format!("2026/12/01 09:{m:02}:{s:02} [notice] 1#1: {word}"),
        "compose" => {
            format!("web-1  | 2026-12-01 09:{m:02}:{s:02},{ms:03} INFO [main] app - {word}")
        }
        "aspnet" => {
            if i.is_multiple_of(2) {
                "info: Microsoft.AspNetCore.Hosting.Diagnostics[1]".to_owned()
            } else {
                format!("      Request starting HTTP/1.1 GET http://localhost:5000{path} - - -")
            }
        }
        "dbs" => format!("2026-12-01 09:{m:02}:{s:02}.{ms:03} UTC [{}] LOG:  {word}", 800 + i % 50),
        "jsonlogs" => format!(
            "{{\"timestamp\":\"2026-12-01T09:{m:02}:{s:02}Z\",\"severity\":\"INFO\",\"message\":\"{word}\"}}"
        ),
        // sqlite3 list mode / psql -A: id|job|queue|state|attempts|time|ms|message
        "delimited" => format!(
            "{i}|send-{word}|default|succeeded|1|2026-12-01 09:{m:02}:{s:02}|{ms}|",
            word = word.split_whitespace().next().unwrap_or("mail")
        ),
        other => panic!("no noise for format {other}"),
    }
}

/// `case.line` buried at a seeded position in the middle of ~[`NOISE_LINES`] noise lines of
/// its format (a table keeps its header on top): the lines and the case's index.
fn bury(case: &Case, seed: u64) -> (Vec<String>, usize) {
    let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let tabular = matches!(case.format, "docker_ps" | "kubectl" | "systemctl" | "helm");
    let mut lines = Vec::with_capacity(NOISE_LINES + 2);
    for i in 0..NOISE_LINES {
        if tabular {
            let (header, row) = table_noise(case.format, &mut rng, i);
            if i == 0 {
                lines.push(header);
            }
            lines.push(row);
        } else {
            lines.push(noise_line(case.format, &mut rng, i));
        }
    }
    let at = NOISE_LINES * 2 / 5 + rng.below(NOISE_LINES / 5);
    lines.insert(at, case.line.to_owned());
    (lines, at)
}

/// What a data output's evidence is: the classifier's marks, then the alarms.
fn data_evidence(lines: &[&str]) -> Vec<bool> {
    let mut evidence = classify(lines);
    mark_alarms(lines, &mut evidence);
    evidence
}

#[test]
fn table_holds_enough_cases_of_both_kinds() {
    let cases = table();
    let alarms = cases.iter().filter(|c| c.alarm).count();
    assert!(alarms >= 80, "only {alarms} alarm lines");
    assert!(cases.len() - alarms >= 40, "only {} quiet lines", cases.len() - alarms);
    let mut seen = std::collections::HashSet::new();
    for case in &cases {
        assert!(seen.insert(case.line), "duplicate case {:?}", case.line);
    }
}

#[test]
fn every_alarm_is_evidence_and_no_quiet_line_is() {
    let mut wrong = Vec::new();
    for (n, case) in table().iter().enumerate() {
        let (owned, at) = bury(case, n as u64);
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        if data_evidence(&lines)[at] != case.alarm {
            let kind = if case.alarm { "missed" } else { "false alarm" };
            wrong.push(format!("{kind:>11} [{}]: {}", case.format, case.line));
        }
    }
    assert!(wrong.is_empty(), "{} cases wrong:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn noise_around_each_case_stays_unmarked() {
    let mut marked = Vec::new();
    for (n, case) in table().iter().enumerate() {
        let (owned, at) = bury(case, n as u64);
        let lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        let alarms = data_evidence(&lines);
        for (i, line) in lines.iter().enumerate() {
            if alarms[i] && i != at {
                marked.push(format!("[{}] {line}", case.format));
            }
        }
    }
    marked.sort();
    marked.dedup();
    assert!(marked.is_empty(), "{} noise lines marked:\n{}", marked.len(), marked.join("\n"));
}

#[test]
fn alarms_are_marked_wherever_the_case_lies() {
    // The literal scan joins lines into chunks; a case at the very start or end of the
    // output, or of a chunk, must be found like one in the middle.
    let case = Case { format: "clf", alarm: true, line: table()[0].line };
    let (mut owned, at) = bury(&case, 3);
    let line = owned.remove(at);
    for at in [0, 1, owned.len() / 2, owned.len()] {
        let mut lines: Vec<&str> = owned.iter().map(String::as_str).collect();
        lines.insert(at, &line);
        let evidence = data_evidence(&lines);
        assert!(evidence[at], "case at {at} missed");
    }
}
