//! The check run's words: a one-line title, a Markdown table of every resource, the evidence
//! for each problem, and one annotation per problem on the manifest line to fix. Pure, so
//! every layout is snapshot-tested; every field is fitted to GitHub's limits here.

use super::context::ActionsContext;
use super::evidence::{evidence_lines, section};
use super::limits;
use super::markdown::escape;
use super::wire::{Annotation, AnnotationLevel, Conclusion, Output};
use crate::render::duration;
use crate::render::sanitize::sanitized_lines;
use crate::render::summary::{Headline, image_counts, spans_namespaces};
use crate::vocab::outcome::{Outcome, RunOutcome};
use crate::vocab::verdict::{Reason, RunResult, Verdict};

/// Room kept in `text` for the line saying problems were left out.
const TEXT_RESERVE: usize = 200;

/// Where the run is when the check run is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Verdicts so far; more are coming.
    InProgress,
    Completed,
    /// Interrupted (SIGTERM, SIGINT): verdicts so far, and no more are coming.
    Cancelled,
}

/// `cancelled` when interrupted; a dry run without problems is `neutral` (nothing was
/// deployed, so it must not read as a green deploy), and so is a successful run that left
/// resources unjudged; else the run's result.
pub fn conclusion(run: &RunOutcome, cancelled: bool) -> Conclusion {
    match (cancelled, run.result, run.dry_run) {
        (true, _, _) | (_, RunResult::Cancelled, _) => Conclusion::Cancelled,
        (false, RunResult::Failure, _) => Conclusion::Failure,
        (false, RunResult::TimedOut, _) => Conclusion::TimedOut,
        (false, RunResult::Success, true) => Conclusion::Neutral,
        (false, RunResult::Success, false) if run.count(Verdict::Unfinished) > 0 => {
            Conclusion::Neutral
        }
        (false, RunResult::Success, false) => Conclusion::Success,
    }
}

/// The whole `output` of the final (or an in-progress) update, every annotation included;
/// the caller sends the annotations 50 to a request.
pub fn check_output(run: &RunOutcome, stage: Stage, ctx: &ActionsContext) -> Output {
    Output {
        title: title(run, stage),
        summary: summary(run, stage, ctx),
        text: text(run, ctx),
        annotations: annotations(run, ctx),
    }
}

/// One line: `2 failed fast: image not found, crash loop; 1 timed out: registry slow`,
/// `3 resources deployed`, `dry run: 5 resources validated`.
pub fn title(run: &RunOutcome, stage: Stage) -> String {
    let prefix = match stage {
        Stage::InProgress => "in progress: ",
        Stage::Completed => "",
        Stage::Cancelled => "cancelled: ",
    };
    let succeeded = run.count(Verdict::Succeeded);
    let unfinished = run.count(Verdict::Unfinished);
    let failed_word = if run.dry_run { "failed" } else { "failed fast" };
    let problems: Vec<String> = [
        (Verdict::Failed, failed_word),
        (Verdict::TimedOut, "timed out"),
    ]
    .into_iter()
    .filter_map(|(verdict, word)| problem_phrase(run, verdict, word))
    .collect();
    let body = if let Some(t) = &run.images {
        image_counts(t)
    } else if stage == Stage::InProgress && run.outcomes.is_empty() {
        "waiting for the first verdict".to_owned()
    } else if !problems.is_empty() && unfinished > 0 && !run.dry_run {
        format!("{}; {unfinished} unfinished", problems.join("; "))
    } else if !problems.is_empty() {
        problems.join("; ")
    } else if run.dry_run {
        let pruned = run.pruned();
        let mut body = format!("{} validated", plural(succeeded - pruned, "resource"));
        if unfinished > 0 {
            body.push_str(&format!(", {unfinished} not validated by the server"));
        }
        if let Some(plan) = crate::render::plan::counts(run) {
            body.push_str(&format!("; {plan}"));
        }
        body
    } else if succeeded == 0 {
        "no resources to deploy".to_owned()
    } else {
        format!("{} {}", plural(succeeded, "resource"), run.done)
    };
    let dry = if run.dry_run && !(stage == Stage::InProgress && run.outcomes.is_empty()) {
        "dry run: "
    } else {
        ""
    };
    limits::title(&format!("{prefix}{dry}{body}"))
}

/// The terminal summary's headline, then a table of every resource: hard failures first,
/// then timeouts, then successes, manifest order within each.
pub fn summary(run: &RunOutcome, stage: Stage, ctx: &ActionsContext) -> String {
    let mut out = match stage {
        Stage::Completed => {
            // The terminal's headline, so the log and the check run say the same.
            let Headline { label, text } = Headline::of(run);
            format!("**{label}**: {text}\n\n")
        }
        Stage::InProgress => format!("**IN PROGRESS**: {} so far\n\n", counts(run)),
        Stage::Cancelled => format!(
            "**CANCELLED** after {}: {} before the interruption\n\n",
            duration::seconds(run.seconds),
            counts(run)
        ),
    };
    let footer = ctx
        .run_url()
        .map(|url| format!("\n[Workflow run]({url})\n"))
        .unwrap_or_default();
    if run.outcomes.is_empty() {
        out.push_str("No resources.\n");
    } else {
        let waves = run.outcomes.iter().any(|o| o.wave.is_some());
        if waves {
            out.push_str("| Wave | Resource | Verdict | Reason | Time |\n|---|---|---|---|---|\n");
        } else {
            out.push_str("| Resource | Verdict | Reason | Time |\n|---|---|---|---|\n");
        }
        let with_ns = spans_namespaces(run);
        let mut ordered = by_severity(run.outcomes.iter());
        // In waves: grouped by wave, in order, problems first within each.
        ordered.sort_by_key(|o| o.wave.as_deref().map(crate::render::summary::wave_number));
        let budget = limits::TEXT_MAX - footer.len() - TEXT_RESERVE;
        for (shown, outcome) in ordered.iter().enumerate() {
            let row = row(outcome, with_ns);
            if out.len() + row.len() > budget {
                let more = ordered.len() - shown;
                out.push_str(&format!(
                    "\n… and {more} more resources, listed in the job log.\n"
                ));
                break;
            }
            out.push_str(&row);
        }
    }
    out.push_str(&footer);
    limits::text(&out)
}

/// The evidence for each failed or timed-out resource, then a dry run's plan; `None` when
/// there is neither.
pub fn text(run: &RunOutcome, ctx: &ActionsContext) -> Option<String> {
    let problems = problems(run);
    let with_ns = spans_namespaces(run);
    let budget = limits::TEXT_MAX - TEXT_RESERVE;
    let mut out = String::new();
    for (shown, outcome) in problems.iter().enumerate() {
        let section = section(outcome, with_ns, ctx);
        if !out.is_empty() && out.len() + section.len() > budget {
            let more = problems.len() - shown;
            out.push_str(&format!(
                "… and {more} more problems, with their evidence in the job log.\n"
            ));
            break;
        }
        out.push_str(&section);
    }
    if let Some(plan) = super::plan::section(run, with_ns, budget.saturating_sub(out.len() + 2)) {
        if !out.is_empty() {
            out.truncate(out.trim_end().len());
            out.push_str("\n\n");
        }
        out.push_str(&plan);
    }
    if out.is_empty() {
        return None;
    }
    Some(limits::text(out.trim_end()))
}

/// One annotation per failed (`failure`), timed-out or unvalidated (`warning`) resource, on the line the
/// failure points at (the `image:` line for image reasons), when that file is in the
/// repository: annotations need a path.
pub fn annotations(run: &RunOutcome, ctx: &ActionsContext) -> Vec<Annotation> {
    let notices = run.notices.iter().filter_map(|n| {
        Some(Annotation {
            path: ctx.repo_path(&n.source.file)?,
            start_line: n.source.line.max(1),
            end_line: n.source.line.max(1),
            annotation_level: AnnotationLevel::Warning,
            message: limits::annotation_field(&n.message),
            title: Some("deploy-action: warning".to_owned()),
            raw_details: None,
        })
    });
    problems(run)
        .into_iter()
        .filter_map(|outcome| {
            let (path, line) = place(outcome, ctx)?;
            let details = evidence_lines(outcome).join("\n");
            Some(Annotation {
                path,
                start_line: line,
                end_line: line,
                annotation_level: match outcome.verdict {
                    Verdict::Failed => AnnotationLevel::Failure,
                    _ => AnnotationLevel::Warning,
                },
                message: limits::annotation_field(&message(outcome)),
                title: Some(limits::title(&problem_title(outcome))),
                raw_details: (!details.is_empty()).then(|| limits::annotation_field(&details)),
            })
        })
        .chain(notices)
        .collect()
}

/// Failed, then timed-out, then unvalidated outcomes, manifest order within each. Those
/// left unfinished by fail fast are not problems to fix: the table lists them.
pub(super) fn problems(run: &RunOutcome) -> Vec<&Outcome> {
    by_severity(run.outcomes.iter().filter(|o| {
        matches!(o.verdict, Verdict::Failed | Verdict::TimedOut)
            || o.reason == Some(Reason::NotValidated)
    }))
}

/// `Image not found: Deployment/web`, `Timed out: registry slow: Deployment/worker`.
pub(super) fn problem_title(outcome: &Outcome) -> String {
    let what = match (outcome.reason, outcome.verdict) {
        (Some(reason), _) => reason.title(),
        (None, Verdict::TimedOut) => "Timed out",
        (None, Verdict::Unfinished) => "Unfinished",
        (None, _) => "Failed",
    };
    format!("{what}: {}", outcome.resource.display(false))
}

/// The message as plain text, control characters made visible, never empty.
pub(super) fn message(outcome: &Outcome) -> String {
    let lines: Vec<String> = sanitized_lines(&outcome.message).collect();
    if lines.iter().all(|l| l.trim().is_empty()) {
        problem_title(outcome)
    } else {
        lines.join("\n")
    }
}

/// The repository path and line a problem points at.
pub(super) fn place(outcome: &Outcome, ctx: &ActionsContext) -> Option<(String, usize)> {
    let span = outcome
        .annotation_source
        .as_ref()
        .or(outcome.source.as_ref())?;
    Some((ctx.repo_path(&span.file)?, span.line.max(1)))
}

fn by_severity<'a>(outcomes: impl Iterator<Item = &'a Outcome>) -> Vec<&'a Outcome> {
    let mut sorted: Vec<&Outcome> = outcomes.collect();
    sorted.sort_by_key(|o| match o.verdict {
        Verdict::Failed => 0,
        Verdict::TimedOut => 1,
        Verdict::Unfinished => 2,
        Verdict::Succeeded => 3,
    });
    sorted
}

/// `2 failed fast: image not found, crash loop`: reasons by frequency, then first seen.
fn problem_phrase(run: &RunOutcome, verdict: Verdict, word: &str) -> Option<String> {
    let count = run.count(verdict);
    if count == 0 {
        return None;
    }
    let mut reasons: Vec<(Reason, usize, usize)> = Vec::new();
    for (at, reason) in run
        .outcomes
        .iter()
        .filter(|o| o.verdict == verdict)
        .filter_map(|o| o.reason)
        .enumerate()
    {
        match reasons.iter_mut().find(|(r, _, _)| *r == reason) {
            Some((_, n, _)) => *n += 1,
            None => reasons.push((reason, 1, at)),
        }
    }
    reasons.sort_by_key(|&(_, n, first)| (std::cmp::Reverse(n), first));
    let names: Vec<String> = reasons.iter().map(|&(r, _, _)| reason_phrase(r)).collect();
    Some(if names.is_empty() {
        format!("{count} {word}")
    } else {
        format!("{count} {word}: {}", names.join(", "))
    })
}

/// `registry slow` from "Timed out: registry slow", `image not found`, `PVC lost`.
fn reason_phrase(reason: Reason) -> String {
    let title = reason.title();
    let title = title.strip_prefix("Timed out: ").unwrap_or(title);
    let mut chars = title.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if !second.is_uppercase() => {
            format!("{}{}", first.to_lowercase(), &title[first.len_utf8()..])
        }
        _ => title.to_owned(),
    }
}

fn row(outcome: &Outcome, with_ns: bool) -> String {
    let icon = match outcome.verdict {
        Verdict::Failed => "❌",
        Verdict::TimedOut => "⏱",
        Verdict::Unfinished => "⏹",
        Verdict::Succeeded => "✅",
    };
    let reason = outcome
        .reason
        .map(|r| format!("`{}`", r.as_str()))
        .unwrap_or_default();
    let wave = outcome
        .wave
        .as_deref()
        .map(|w| format!("| {} ", escape(w.trim_start_matches("wave "))))
        .unwrap_or_default();
    format!(
        "{wave}| {} | {icon} {} | {reason} | {} |\n",
        escape(&outcome.resource.display(with_ns)),
        outcome.verdict,
        duration::seconds(outcome.seconds)
    )
}

/// `1 failed, 2 succeeded`, or `no verdicts`.
fn counts(run: &RunOutcome) -> String {
    let parts: Vec<String> = [
        (Verdict::Failed, "failed"),
        (Verdict::TimedOut, "timed out"),
        (Verdict::Unfinished, "unfinished"),
        (Verdict::Succeeded, "succeeded"),
    ]
    .into_iter()
    .map(|(verdict, word)| (run.count(verdict), word))
    .filter(|&(n, _)| n > 0)
    .map(|(n, word)| format!("{n} {word}"))
    .collect();
    if parts.is_empty() {
        "no verdicts".to_owned()
    } else {
        parts.join(", ")
    }
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}
