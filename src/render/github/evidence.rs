//! The evidence for one problem as GitHub shows it: where it is, what the cluster said,
//! the events and the log tail, in code blocks that cluster text cannot break out of.
//! The same lines, plain, are an annotation's `raw_details`.

use super::check_run::{message, place, problem_title};
use super::context::ActionsContext;
use super::limits;
use super::markdown::{code, escape, fenced};
use crate::render::duration;
use crate::render::sanitize::sanitized_lines;
use crate::render::summary::{MAX_EVENTS, MAX_LOG_LINES};
use crate::vocab::outcome::{EventLine, LogTail, Outcome};
use crate::vocab::verdict::Verdict;

/// One fenced block (message, events, logs): a long log must not crowd out the other
/// problems.
const BLOCK_MAX: usize = 16 * 1024;

/// The Markdown section of one failed or timed-out resource in the check run's `text`.
pub(super) fn section(outcome: &Outcome, with_ns: bool, ctx: &ActionsContext) -> String {
    let icon = match outcome.verdict {
        Verdict::TimedOut => "⏱",
        Verdict::Unfinished => "⚠️",
        _ => "❌",
    };
    let what = problem_title(outcome);
    let what = match (&outcome.resource.namespace, with_ns) {
        (Some(ns), true) => format!("{what} (namespace {ns})"),
        _ => what,
    };
    let mut out = format!("### {icon} {}\n\n", escape(&what));
    let mut facts = Vec::new();
    if let Some(span) = outcome
        .annotation_source
        .as_ref()
        .or(outcome.source.as_ref())
    {
        let at = format!("{}:{}", span.file, span.line);
        facts.push(match place(outcome, ctx) {
            Some((path, line)) => format!("at [{}]({})", code(&at), ctx.blob_url(&path, line)),
            None => format!("at {}", code(&at)),
        });
    }
    if let Some(c) = &outcome.container {
        let mut fact = format!("pod {}, container {}", code(&c.pod), code(&c.container));
        if let Some(image) = &c.image {
            fact.push_str(&format!(", image {}", code(image)));
        }
        facts.push(fact);
    }
    facts.push(format!("after {}", duration::seconds(outcome.seconds)));
    out.push_str(&format!("{}\n\n", upper_first(&facts.join("; "))));
    out.push_str(&block(&[message(outcome)]));
    if !outcome.events.is_empty() {
        out.push_str(&format!("**{}**\n\n", event_header(&outcome.events)));
        out.push_str(&block(&event_lines(&outcome.events)));
    }
    if let Some(logs) = &outcome.logs {
        out.push_str(&format!("**{}**\n\n", escape(&log_header(logs))));
        if !logs.lines.is_empty() {
            out.push_str(&block(&log_lines(logs)));
        }
    }
    out
}

fn block(lines: &[String]) -> String {
    format!(
        "{}\n\n",
        fenced(&limits::fit_bytes(&lines.join("\n"), BLOCK_MAX))
    )
}

/// Events and log tail as plain lines, for an annotation's `raw_details`.
pub(super) fn evidence_lines(outcome: &Outcome) -> Vec<String> {
    let mut lines = Vec::new();
    if !outcome.events.is_empty() {
        lines.push(event_header(&outcome.events));
        lines.extend(
            event_lines(&outcome.events)
                .into_iter()
                .map(|l| format!("  {l}")),
        );
    }
    if let Some(logs) = &outcome.logs {
        lines.push(log_header(logs));
        lines.extend(log_lines(logs).into_iter().map(|l| format!("  {l}")));
    }
    lines
}

fn event_header(events: &[EventLine]) -> String {
    let shown = events.len().min(MAX_EVENTS);
    if shown < events.len() {
        format!("Events (last {shown} of {}):", events.len())
    } else {
        "Events:".to_owned()
    }
}

/// `Warning Failed (x2) Pod/web-7d4b9c8f6-x2x9q: <message>`, newest last, as the terminal
/// summary prints them.
fn event_lines(events: &[EventLine]) -> Vec<String> {
    events[events.len().saturating_sub(MAX_EVENTS)..]
        .iter()
        .map(|e| {
            let count = if e.count > 1 {
                format!(" (x{})", e.count)
            } else {
                String::new()
            };
            let line = format!("{} {}{count} {}: {}", e.kind, e.reason, e.object, e.message);
            sanitized_lines(&line).collect::<Vec<_>>().join(" ")
        })
        .collect()
}

fn log_header(logs: &LogTail) -> String {
    let instance = if logs.previous {
        "previous instance"
    } else {
        "current instance"
    };
    let which = format!(
        "Logs of pod {}, container {} ({instance})",
        logs.pod, logs.container
    );
    let shown = logs.lines.len().min(MAX_LOG_LINES);
    let which = sanitized_lines(&which).collect::<Vec<_>>().join(" ");
    if let Some(why) = &logs.unreadable {
        let why = sanitized_lines(why).collect::<Vec<_>>().join(" ");
        format!("{which}: not read: {why}")
    } else if logs.lines.is_empty() {
        format!("{which}: empty")
    } else if shown < logs.lines.len() {
        format!("{which}, last {shown} of {} lines:", logs.lines.len())
    } else {
        format!("{which}:")
    }
}

fn log_lines(logs: &LogTail) -> Vec<String> {
    logs.lines[logs.lines.len().saturating_sub(MAX_LOG_LINES)..]
        .iter()
        .map(|l| crate::render::sanitize(l.strip_suffix('\r').unwrap_or(l)))
        .collect()
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
