//! Data outputs (issue 12): listings, searches, queries, tables, documents and logs the
//! agent asked to read. Every record of them is an answer, so they follow other rules than
//! a test or build run, whose verdict and evidence are what matter:
//!
//! 1. **Lossless routes first.** The output's lines are re-encoded by every route that
//!    applies (path folding, column factoring, exact repeats; JSON has its own routes in
//!    the pipeline), each exact by construction: an encoder decodes its own result before
//!    offering it. The smallest one wins.
//! 2. **The data budget.** When what is left (the route's encoding, or the lines
//!    themselves) fits in [`Limits::data_budget`](super::Limits::data_budget) estimated
//!    tokens, it goes out whole: nothing but the lines the rule names as noise and runs of
//!    blank lines is dropped.
//! 3. **Past the budget**, the pipeline's lossy candidate runs with the sampled window
//!    ([`Plan::sample`](super::window::Plan::sample)): head and tail, a sample of the
//!    middle with its line numbers in the markers, and every alarm (an HTTP status of 400 or
//!    more, an ERROR line), and its notice says how to search the rest.
//!
//! Which outputs are data: a rule's [`Kind`], and for the fallback the run's outcome (see
//! [`kind_of`]).

use std::borrow::Cow;
use std::collections::HashSet;

use super::shape;
use super::window::{Drop, Omitted, Plan};
use super::{Classified, Passthrough, Run, count, format_text, gate};
use crate::rules::schema::Kind;

/// A lossless route over lines: its name (reported as the rendition's `shape`), its
/// encoder (`None` when the route does not apply or does not pay), the start of the legend
/// line its encoding opens with, and its decoder.
struct Route {
    name: &'static str,
    encode: fn(&[&str]) -> Option<String>,
    legend: &'static str,
    decode: fn(&str) -> Result<Vec<String>, String>,
}

/// The routes, in the order ties are broken.
const ROUTES: &[Route] = &[
    Route {
        name: "paths",
        encode: shape::paths::encode,
        legend: shape::paths::LEGEND_PREFIX,
        decode: |text| shape::paths::decode(text).map_err(|e| e.to_string()),
    },
    Route {
        name: "repeats",
        encode: shape::repeats::encode,
        legend: shape::repeats::LEGEND,
        decode: |text| shape::repeats::decode(text).map_err(|e| e.to_string()),
    },
    Route {
        name: "columns",
        // Only for tables: a listing's one "column" loses its readable prefix (a path cut
        // to `0/file_1`), and a log's columns are pieces of timestamps; path folding and
        // the log fold read better there.
        encode: |lines| {
            if looks_tabular(lines) && !shape::log::looks_like_log(lines) {
                shape::columns::encode(lines)
            } else {
                None
            }
        },
        legend: shape::columns::LEGEND,
        decode: |text| shape::columns::decode(text).map_err(|e| e.to_string()),
    },
];

/// The routes are tried on outputs up to this many times the data budget: none shrinks a
/// real output further (path folding, the best, saves about four fifths of a deep `find`),
/// and past it their cost would be paid for nothing.
const ROUTE_REACH: usize = 8;

/// Whether `lines` read as a table: an aligned one (`ps`, `docker ps`, `kubectl get`,
/// `ls -l`: [`shape::table::detect`]), or rows delimited by `|` (`sqlite3`, `psql -A`), four
/// in five of (at most 256) non-blank lines holding two or more. Prose with many words per
/// line is neither: factoring its "columns" would leave fragments only the legend explains.
fn looks_tabular(lines: &[&str]) -> bool {
    let sample: Vec<&str> =
        lines.iter().copied().filter(|l| !l.trim().is_empty()).take(256).collect();
    let delimited = sample.iter().filter(|l| l.matches('|').count() >= 2).count();
    (!sample.is_empty() && delimited * 5 >= sample.len() * 4)
        || shape::table::detect(lines).is_some()
}

/// Whether `shape` (a rendition's) is one of the lossless line routes.
pub fn is_route(shape: &str) -> bool {
    ROUTES.iter().any(|route| route.name == shape)
}

/// The lines a rendition of the lossless line route `shape` stands for, decoded from its
/// text: from the route's legend line to the end, less the closing notice when
/// `has_notice` (the rendition says lines were omitted). For tests and `tj rules verify`,
/// which check that the lines are the original's.
pub fn decode(shape: &str, text: &str, has_notice: bool) -> Result<Vec<String>, String> {
    let route = ROUTES
        .iter()
        .find(|route| route.name == shape)
        .ok_or_else(|| format!("`{shape}` is not a lossless line route"))?;
    let start = text
        .match_indices('\n')
        .map(|(at, _)| at + 1)
        .chain(std::iter::once(0))
        .filter(|&at| text[at..].starts_with(route.legend))
        .min()
        .ok_or_else(|| format!("the rendition has no `{}` legend", route.legend.trim()))?;
    let mut body = &text[start..];
    if has_notice {
        body = body.rsplit_once('\n').map_or("", |(rest, _)| rest);
    }
    (route.decode)(body)
}

/// What an output is to the agent: the rule's [`Kind`]; for the fallback, which no rule
/// claimed, data unless the run failed (a successful unknown command printed what was asked
/// of it; a failing one is judged by its failure, as a build is).
pub fn kind_of(rule: &crate::rules::Rule, fallback: bool, exit_code: Option<i64>) -> Kind {
    if fallback {
        if exit_code.is_some_and(|code| code != 0) { Kind::Diagnostic } else { Kind::Data }
    } else {
        rule.kind()
    }
}

/// The smallest exact re-encoding of `lines` among the routes, with the route's name.
pub(super) fn encode(lines: &[&str]) -> Option<(String, &'static str)> {
    ROUTES
        .iter()
        .filter_map(|route| Some(((route.encode)(lines)?, route.name)))
        // `min_by_key` keeps the first of equals: ties go to the earlier route.
        .min_by_key(|(text, _)| super::tokens::estimate(text))
}

/// How a data output within its budget ends.
pub(super) enum Within {
    /// The lossless encoding (or the lines less the rule's noise) was adopted.
    Adopted {
        adopted: gate::Adopted,
        omitted: Omitted,
        shape: Option<&'static str>,
        facts: super::Facts,
    },
    /// The original goes out whole, for this reason.
    Whole(Passthrough),
}

/// The data step: when the output, after the rule's noise and its best lossless route, fits
/// in the data budget, it ends here: the encoding (or the kept lines) if the gate adopts it,
/// else the original. `None` when it is past the budget, for the lossy candidate.
///
/// Every evidence line is in the kept lines (noise never takes one) and the routes are
/// exact, so the evidence is all there; the gate still asks for each evidence line verbatim
/// on a line of its own: an error is read as it was written, never re-encoded. An encoding
/// that folded one is not adopted, and the kept lines are tried as they are.
pub(super) fn within_budget(
    run: &Run<'_>,
    lines: &[&str],
    classified: &Classified,
    evidence_set: &HashSet<&str>,
) -> Option<Within> {
    let mut plan = Plan::keep_all(lines.len());
    plan.cut_long_lines = false;
    super::drop_noise(&mut plan, classified);
    plan.trim_blank_edges(lines);
    plan.collapse_blank_runs(lines);
    let kept: Vec<&str> = plan.kept().into_iter().map(|i| lines[i]).collect();
    let omitted = Omitted {
        noise: plan.state.iter().filter(|s| **s == Some(Drop::Noise)).count(),
        blank: plan.state.iter().filter(|s| **s == Some(Drop::Blank)).count(),
        ..Omitted::default()
    };
    let facts = count(lines, &plan, &classified.compiled, run.budget);
    let artifact = run.opts.artifact.map(|a| (a.id.as_str(), a.path.as_str()));
    let budget = run.opts.limits.data_budget;
    let text_of = |body: &[Cow<'_, str>]| {
        format_text(run.shown_exit, &facts, body, &omitted, lines.len(), artifact)
    };
    let plain = || kept.iter().map(|l| Cow::Borrowed(*l)).collect::<Vec<_>>();
    let mut within = false;
    let plain_tokens: usize = kept.iter().map(|l| super::tokens::estimate(l) + 1).sum();
    let reachable = plain_tokens <= budget.saturating_mul(ROUTE_REACH);
    // The lines as they are, only when they could fit (building a 6 MiB text to measure
    // it would cost more than the rest of the step).
    let candidates = reachable
        .then(|| encode(&kept))
        .flatten()
        .map(|(text, name)| (vec![Cow::Owned(text)], Some(name)))
        .into_iter()
        .chain((plain_tokens <= budget).then(|| (plain(), None)));
    for (body, shape) in candidates {
        let text = text_of(&body);
        if super::tokens::estimate(&text) > budget {
            continue;
        }
        within = true;
        if gate::check(evidence_set, &text).is_err() {
            continue;
        }
        let candidate = gate::Candidate { text, lossless: omitted.lines() == 0 };
        if let Ok(adopted) =
            gate::judge(run.original_size, evidence_set, candidate, &run.opts.limits)
        {
            return Some(Within::Adopted { adopted, omitted, shape, facts });
        }
    }
    within.then_some(Within::Whole(Passthrough::Data { tokens: run.original_size.tokens, budget }))
}
