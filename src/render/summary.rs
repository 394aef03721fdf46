//! The final summary a person reads after a run: the result and counts first, then every
//! problem with its evidence (message, manifest place, events, log tail), hard failures
//! before timeouts, then what was left unjudged and why, then a compact list of what went
//! well.

use super::duration;
use super::sanitize::{sanitize, sanitized_lines};
use super::style::{Style, Tone};
use crate::vocab::outcome::{EventLine, LogTail, Outcome, RunOutcome};
use crate::vocab::verdict::{Reason, RunResult, Verdict};
use std::collections::BTreeSet;

/// Events shown per resource; the newest matter, older ones are usually the same story.
pub const MAX_EVENTS: usize = 10;
/// Log lines shown per resource: enough for a stack trace's end, short enough to scroll past.
pub const MAX_LOG_LINES: usize = 25;

/// The run summary, lines joined by `\n` without a trailing newline. No wrapping: long
/// messages stay on one line so they can be copied and grepped. Text from the cluster is
/// sanitized (see [`sanitize`]). `events` are taken to be oldest first, as collected.
pub fn summary(run: &RunOutcome, style: &Style) -> String {
    let with_ns = spans_namespaces(run);
    let mut out = vec![run_headline(run, *style)];
    wave_list(&mut out, run, with_ns, *style);
    if !run.notices.is_empty() {
        out.push(String::new());
        out.push(style.paint(Tone::Bold, "Warnings:"));
        for n in &run.notices {
            out.push(format!(
                "  {}:{}: {}",
                n.source.file,
                n.source.line,
                sanitize(&n.message)
            ));
        }
    }

    let mut problems: Vec<&Outcome> = run
        .outcomes
        .iter()
        .filter(|o| matches!(o.verdict, Verdict::Failed | Verdict::TimedOut))
        .collect();
    // Stable: manifest order is kept within hard failures and within timeouts.
    problems.sort_by_key(|o| o.verdict != Verdict::Failed);
    for outcome in problems {
        out.push(String::new());
        problem_block(&mut out, outcome, with_ns, *style);
    }
    unfinished_lists(&mut out, run, with_ns, *style);

    let successes: Vec<&Outcome> = run
        .outcomes
        .iter()
        .filter(|o| o.verdict == Verdict::Succeeded)
        .collect();
    if !successes.is_empty() {
        out.push(String::new());
        success_list(&mut out, run, &successes, with_ns, *style);
    }
    out.join("\n")
}

/// The number of a wave label (`wave 2 of 3: ...` is 2), to order by.
pub(crate) fn wave_number(label: &str) -> usize {
    label
        .strip_prefix("wave ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(usize::MAX)
}

/// For a deploy in waves: each wave, in order, with its resources and their verdicts, so
/// the order things happened in (and where it stopped) reads at a glance.
fn wave_list(out: &mut Vec<String>, run: &RunOutcome, with_ns: bool, style: Style) {
    let mut waves: Vec<&str> = run
        .outcomes
        .iter()
        .filter_map(|o| o.wave.as_deref())
        .collect();
    if waves.is_empty() {
        return;
    }
    waves.sort_by_key(|w| wave_number(w));
    waves.dedup();
    out.push(String::new());
    out.push(style.paint(Tone::Bold, "Waves:"));
    for wave in waves {
        let members: Vec<String> = run
            .outcomes
            .iter()
            .filter(|o| o.wave.as_deref() == Some(wave))
            .map(|o| {
                let word = o
                    .reason
                    .filter(|r| *r == Reason::NotApplied)
                    .map_or_else(|| o.verdict.to_string(), |_| "not applied".to_owned());
                format!("{} {word}", sanitize(&o.resource.display(with_ns)))
            })
            .collect();
        out.push(format!("  {}: {}", sanitize(wave), members.join(", ")));
    }
}

/// `Deployment/web  failed  image_not_found  (3.1s)`: the first line of a problem block
/// and the line printed when a resource gets its verdict.
pub(crate) fn headline(outcome: &Outcome, with_ns: bool, style: Style) -> String {
    let tone = Tone::of_verdict(outcome.verdict);
    let mut parts = vec![
        style.paint(Tone::Bold, &sanitize(&outcome.resource.display(with_ns))),
        style.paint(tone, &outcome.verdict.to_string()),
    ];
    if let Some(reason) = outcome.reason {
        parts.push(style.paint(tone, reason.as_str()));
    }
    parts.push(style.paint(
        Tone::Dim,
        &format!("({})", duration::seconds(outcome.seconds)),
    ));
    parts.join("  ")
}

/// Namespaces are shown only when the run touches more than one: otherwise they are noise.
pub(crate) fn spans_namespaces(run: &RunOutcome) -> bool {
    let namespaces: BTreeSet<&str> = run
        .outcomes
        .iter()
        .filter_map(|o| o.resource.namespace.as_deref())
        .collect();
    namespaces.len() > 1
}

/// The run's first line as data: a label (`SUCCESS`, `DRY RUN`, `CHECK FAILED`) and what
/// follows it. The terminal paints the label, the check run sets it in bold: both say the
/// same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Headline {
    pub label: &'static str,
    pub text: String,
}

impl Headline {
    pub(crate) fn of(run: &RunOutcome) -> Headline {
        let failed = run.count(Verdict::Failed);
        let timed_out = run.count(Verdict::TimedOut);
        let succeeded = run.count(Verdict::Succeeded);
        let unfinished = run.count(Verdict::Unfinished);
        let headline = |label, text| Headline { label, text };

        if let Some(t) = run.images {
            let label = match run.result {
                RunResult::Failure => "CHECK FAILED",
                _ if t.unconfirmed > 0 => "CHECK UNCONFIRMED",
                _ => "CHECK PASSED",
            };
            let valid = plural(succeeded + unfinished, "manifest valid", "manifests valid");
            return headline(label, format!("{}; {valid}", image_counts(&t)));
        }

        if run.dry_run && run.result == RunResult::Success {
            // What would be pruned is not applied: the plan's counts name it.
            let pruned = run.pruned();
            let mut what = plural(succeeded + unfinished - pruned, "resource", "resources");
            if let Some(plan) = super::plan::counts(run) {
                what.push_str(&format!(" ({plan})"));
            }
            return headline(
                "DRY RUN",
                if unfinished == 0 {
                    format!("{what} would be applied, server validation passed")
                } else {
                    format!(
                        "{what} would be applied; server validation passed for {}, \
                         {unfinished} not validated by the server",
                        succeeded - pruned
                    )
                },
            );
        }

        let (ok_word, unfinished_word) = if run.dry_run {
            ("passed server validation", "not validated")
        } else {
            ("succeeded", "unfinished")
        };
        let counts: Vec<String> = [
            (failed, "failed"),
            (timed_out, "timed out"),
            (unfinished, unfinished_word),
            (succeeded, ok_word),
        ]
        .into_iter()
        .filter(|&(n, _)| n > 0)
        .map(|(n, word)| format!("{n} {word}"))
        .collect();
        let counts = if counts.is_empty() {
            "no resources".to_owned()
        } else {
            counts.join(", ")
        };

        let label = match (run.dry_run, run.result) {
            (false, RunResult::Success) => "SUCCESS",
            (false, RunResult::Failure) => "FAILURE",
            (false, RunResult::TimedOut) => "TIMED OUT",
            (true, RunResult::Success) => "DRY RUN",
            (true, RunResult::Failure) => "DRY RUN FAILED",
            (true, RunResult::TimedOut) => "DRY RUN TIMED OUT",
            (false, RunResult::Cancelled) => "CANCELLED",
            (true, RunResult::Cancelled) => "DRY RUN CANCELLED",
        };
        if run.dry_run {
            headline(label, counts)
        } else {
            headline(
                label,
                format!("{counts} in {}", duration::seconds(run.seconds)),
            )
        }
    }
}

fn run_headline(run: &RunOutcome, style: Style) -> String {
    let Headline { label, text } = Headline::of(run);
    let label = style.paint_bold(Tone::of_result(run.result), label);
    format!("{label}: {text}")
}

fn problem_block(out: &mut Vec<String>, outcome: &Outcome, with_ns: bool, style: Style) {
    out.push(headline(outcome, with_ns, style));
    out.extend(sanitized_lines(&outcome.message).map(|line| format!("  {line}")));
    // The annotation points at the line to fix (the `image:` line for image reasons).
    if let Some(span) = outcome
        .annotation_source
        .as_ref()
        .or(outcome.source.as_ref())
    {
        let place = format!("at {}:{}", sanitize(&span.file), span.line);
        out.push(format!("  {}", style.paint(Tone::Dim, &place)));
    }
    if let Some(c) = &outcome.container {
        let mut line = format!(
            "pod {}, container {}",
            sanitize(&c.pod),
            sanitize(&c.container)
        );
        if let Some(image) = &c.image {
            line.push_str(", image ");
            line.push_str(&sanitize(image));
        }
        out.push(format!("  {}", style.paint(Tone::Dim, &line)));
    }
    events(out, &outcome.events, style);
    if let Some(logs) = &outcome.logs {
        log_tail(out, logs, style);
    }
}

fn events(out: &mut Vec<String>, events: &[EventLine], style: Style) {
    if events.is_empty() {
        return;
    }
    let shown = &events[events.len().saturating_sub(MAX_EVENTS)..];
    let header = if shown.len() < events.len() {
        format!("Events (last {} of {}):", shown.len(), events.len())
    } else {
        "Events:".to_owned()
    };
    out.push(format!("  {}", style.paint(Tone::Bold, &header)));
    for event in shown {
        let kind = sanitize(&event.kind);
        let kind = if event.kind == "Warning" {
            style.paint(Tone::TimedOut, &kind)
        } else {
            kind
        };
        let count = if event.count > 1 {
            format!(" (x{})", event.count)
        } else {
            String::new()
        };
        out.push(format!(
            "    {kind} {}{count} {}: {}",
            sanitize(&event.reason),
            sanitize(&event.object),
            sanitize(&event.message),
        ));
    }
}

fn log_tail(out: &mut Vec<String>, logs: &LogTail, style: Style) {
    let instance = if logs.previous {
        "previous instance"
    } else {
        "current instance"
    };
    let shown = &logs.lines[logs.lines.len().saturating_sub(MAX_LOG_LINES)..];
    let which = format!(
        "Logs of pod {}, container {} ({instance})",
        sanitize(&logs.pod),
        sanitize(&logs.container)
    );
    let header = if let Some(why) = &logs.unreadable {
        format!("{which}: not read: {}", sanitize(why))
    } else if logs.lines.is_empty() {
        format!("{which}: empty")
    } else if shown.len() < logs.lines.len() {
        format!(
            "{which}, last {} of {} lines:",
            shown.len(),
            logs.lines.len()
        )
    } else {
        format!("{which}:")
    };
    out.push(format!("  {}", style.paint(Tone::Bold, &header)));
    for line in shown {
        // A CRLF log leaves a `\r` on every line; that is line ending, not content.
        let line = line.strip_suffix('\r').unwrap_or(line);
        out.push(format!("    {}", sanitize(line)));
    }
}

/// Resources left without a verdict on purpose, one line each with the state they were
/// in, under a header that says why (`Unfinished: stopped after a failure (2):`).
fn unfinished_lists(out: &mut Vec<String>, run: &RunOutcome, with_ns: bool, style: Style) {
    let unfinished: Vec<&Outcome> = run
        .outcomes
        .iter()
        .filter(|o| o.verdict == Verdict::Unfinished)
        .collect();
    let mut reasons = Vec::new();
    for o in &unfinished {
        if !reasons.contains(&o.reason) {
            reasons.push(o.reason);
        }
    }
    for reason in reasons {
        let group: Vec<&&Outcome> = unfinished.iter().filter(|o| o.reason == reason).collect();
        let title = match reason {
            Some(Reason::NotValidated) if run.images.is_some() => {
                "Images not confirmed by their registry"
            }
            Some(r) => r.title(),
            None => "Unfinished",
        };
        out.push(String::new());
        out.push(style.paint_bold(Tone::TimedOut, &format!("{title} ({}):", group.len())));
        let names: Vec<String> = group
            .iter()
            .map(|o| sanitize(&o.resource.display(with_ns)))
            .collect();
        let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
        for (name, outcome) in names.iter().zip(&group) {
            let pad = " ".repeat(width - name.chars().count());
            let state = sanitized_lines(&outcome.message).next().unwrap_or_default();
            out.push(format!("  {name}{pad}  {state}"));
        }
    }
}

fn success_list(
    out: &mut Vec<String>,
    run: &RunOutcome,
    successes: &[&Outcome],
    with_ns: bool,
    style: Style,
) {
    let title = if run.images.is_some() {
        "Valid"
    } else if run.dry_run {
        "Passed server validation"
    } else {
        "Succeeded"
    };
    let header = format!("{title} ({}):", successes.len());
    out.push(style.paint_bold(Tone::Succeeded, &header));
    let names: Vec<String> = successes
        .iter()
        .map(|o| sanitize(&o.resource.display(with_ns)))
        .collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    for (name, outcome) in names.iter().zip(successes) {
        let pad = " ".repeat(width - name.chars().count());
        let time = style.paint(
            Tone::Dim,
            &format!("({})", duration::seconds(outcome.seconds)),
        );
        match &outcome.change {
            // The plan: what the apply changes, under the resource it changes.
            Some(change) => {
                out.push(format!("  {name}{pad}  {}", super::plan::label(change)));
                out.extend(super::plan::terminal_lines(change, "    ", &style));
            }
            None => out.push(format!("  {name}{pad}  {time}")),
        }
    }
}

/// `3 images found, 1 missing`, `2 images found, none missing, 1 could not be confirmed`,
/// `2 images not looked up`: what `check` learnt, shared with the check run's title.
pub fn image_counts(t: &crate::vocab::outcome::ImageTally) -> String {
    if !t.looked_up {
        return format!("{} not looked up", plural(t.images, "image", "images"));
    }
    let missing = if t.missing == 0 {
        "none missing".to_owned()
    } else {
        format!("{} missing", t.missing)
    };
    let mut out = format!("{} found, {missing}", plural(t.images, "image", "images"));
    if t.unconfirmed > 0 {
        out.push_str(&format!(", {} could not be confirmed", t.unconfirmed));
    }
    out
}

/// `1 resource`, `2 resources`.
pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixtures;
    use crate::vocab::outcome::LogTail;
    use crate::vocab::verdict::Reason;

    /// Snapshot files named without the crate and module prefix, so they keep matching
    /// when these files move into the deploy-action crate.
    fn snapshot(name: &str, text: &str) {
        let mut settings = insta::Settings::clone_current();
        settings.set_prepend_module_to_snapshot(false);
        settings.bind(|| insta::assert_snapshot!(name, text));
    }

    fn plain(run: &RunOutcome) -> String {
        summary(run, &Style::PLAIN)
    }

    /// Removes the SGR sequences our style emits, and only those.
    fn strip_sgr(text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("\x1b[") {
            out.push_str(&rest[..at]);
            let after = &rest[at + 2..];
            let end = after
                .find(|c: char| !(c.is_ascii_digit() || c == ';'))
                .expect("unterminated escape");
            assert_eq!(&after[end..=end], "m", "not an SGR sequence in {text:?}");
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        out
    }

    fn all_runs() -> Vec<RunOutcome> {
        fixtures::all_runs()
    }

    #[test]
    fn a_deploy_in_waves_lists_each_wave_in_order_with_where_it_stopped() {
        snapshot(
            "summary_waves_stopped",
            &plain(&fixtures::waves_stopped_run()),
        );
    }

    #[test]
    fn missing_image() {
        let mut outcomes = vec![fixtures::missing_image()];
        outcomes.extend(fixtures::successes().into_iter().take(2));
        snapshot(
            "summary_missing_image",
            &plain(&RunOutcome::new(false, 4.2, outcomes)),
        );
    }

    #[test]
    fn fail_fast_lists_what_was_left_unfinished_with_its_last_state() {
        snapshot(
            "summary_stopped_after_failure",
            &plain(&fixtures::stopped_after_failure_run()),
        );
    }

    #[test]
    fn a_dry_run_never_lists_unvalidated_resources_as_passed() {
        let text = plain(&fixtures::dry_run_not_validated());
        snapshot("summary_dry_run_not_validated", &text);
        assert!(!text.contains("Passed server validation (2)"), "{text}");
    }

    #[test]
    fn crash_loop() {
        let run = RunOutcome::new(false, 49.0, vec![fixtures::crash_loop()]);
        snapshot("summary_crash_loop", &plain(&run));
    }

    #[test]
    fn slow_registry_times_out() {
        snapshot("summary_slow_registry", &plain(&fixtures::timed_out_run()));
    }

    #[test]
    fn mixed_run_puts_hard_failures_before_timeouts() {
        let text = plain(&fixtures::mixed_run());
        // The blocks' evidence is covered by the single-resource snapshots; this one is
        // about order, so it keeps only the unindented lines.
        let outline: Vec<&str> = text.lines().filter(|l| !l.starts_with(' ')).collect();
        snapshot("summary_mixed_outline", &outline.join("\n"));
        let at = |needle: &str| {
            text.find(needle)
                .unwrap_or_else(|| panic!("{needle} missing"))
        };
        // Manifest order is worker, web, api; severity order wins, manifest order breaks ties.
        assert!(at("Deployment/web  failed") < at("Deployment/api  failed"));
        assert!(at("Deployment/api  failed") < at("Deployment/worker  timed_out"));
        assert!(at("Deployment/worker  timed_out") < at("Succeeded (3):"));
    }

    #[test]
    fn all_success() {
        snapshot("summary_all_success", &plain(&fixtures::all_success_run()));
    }

    #[test]
    fn dry_run_passed() {
        snapshot(
            "summary_dry_run_passed",
            &plain(&fixtures::dry_run_passed()),
        );
    }

    #[test]
    fn a_dry_run_shows_its_plan_under_each_resource() {
        let text = plain(&fixtures::dry_run_plan());
        snapshot("summary_dry_run_plan", &text);
        assert!(!text.contains("hunter"), "{text}");
        // Colour marks additions green and changes yellow; the plain text has no escapes.
        let colored = summary(&fixtures::dry_run_plan(), &Style::COLOR);
        assert!(colored.contains("\u{1b}[32m+"), "{colored:?}");
        assert!(colored.contains("\u{1b}[33m~"), "{colored:?}");
        assert!(!text.contains('\u{1b}'));
    }

    #[test]
    fn dry_run_rejected() {
        snapshot(
            "summary_dry_run_rejected",
            &plain(&fixtures::dry_run_rejected()),
        );
    }

    #[track_caller]
    fn case_headline(run: &RunOutcome, expected: &str) {
        assert_eq!(plain(run).lines().next().unwrap(), expected);
    }

    #[test]
    fn first_line_counts_only_what_happened() {
        case_headline(
            &fixtures::mixed_run(),
            "FAILURE: 2 failed, 1 timed out, 3 succeeded in 5m01s",
        );
        case_headline(
            &fixtures::timed_out_run(),
            "TIMED OUT: 1 timed out, 3 succeeded in 5m01s",
        );
        case_headline(
            &fixtures::all_success_run(),
            "SUCCESS: 4 succeeded in 25.0s",
        );
        case_headline(
            &RunOutcome::new(false, 0.2, vec![]),
            "SUCCESS: no resources in 0.2s",
        );
        let one = vec![fixtures::successes().remove(0)];
        case_headline(
            &RunOutcome::new(true, 0.1, one),
            "DRY RUN: 1 resource would be applied, server validation passed",
        );
        case_headline(
            &fixtures::dry_run_rejected(),
            "DRY RUN FAILED: 1 failed, 3 passed server validation",
        );
        let mut stuck = fixtures::dry_run_passed();
        stuck.outcomes[0] = fixtures::slow_registry();
        case_headline(
            &RunOutcome::new(true, 30.0, stuck.outcomes),
            "DRY RUN TIMED OUT: 1 timed out, 4 passed server validation",
        );
    }

    #[test]
    fn crash_loop_log_tail_keeps_the_last_25_lines() {
        let text = plain(&RunOutcome::new(false, 49.0, vec![fixtures::crash_loop()]));
        let header = "  Logs of pod api-5f8d7c6b9-k4m2p, container api (previous instance), \
                      last 25 of 30 lines:";
        let (_, tail) = text.split_once(&format!("{header}\n")).expect("log header");
        let tail: Vec<&str> = tail.lines().collect();
        assert_eq!(tail.len(), MAX_LOG_LINES);
        assert!(tail.iter().all(|l| l.starts_with("    ")));
        assert!(tail[0].contains("chunk 6/27"), "{}", tail[0]);
        assert!(!text.contains("chunk 5/27"));
        assert!(tail[24].ends_with("JavaScript heap out of memory"));
        assert!(text.contains("OOMKilled (exit code 137)"));
    }

    #[test]
    fn events_keep_the_newest_ten_newest_last() {
        let outcome = fixtures::crash_loop();
        assert_eq!(outcome.events.len(), 12);
        let text = plain(&RunOutcome::new(false, 49.0, vec![outcome]));
        let events: Vec<&str> = text
            .lines()
            .skip_while(|l| *l != "  Events (last 10 of 12):")
            .skip(1)
            .take_while(|l| l.starts_with("    "))
            .collect();
        assert_eq!(events.len(), MAX_EVENTS);
        assert!(!text.contains("ScalingReplicaSet"));
        assert!(!text.contains("SuccessfulCreate"));
        assert!(events[9].starts_with("    Warning BackOff (x9) Pod/api-5f8d7c6b9-q7w8e: "));
    }

    #[test]
    fn namespaces_shown_only_when_the_run_spans_several() {
        let mut other = fixtures::missing_image();
        other.resource.namespace = Some("billing".to_owned());
        let run = RunOutcome::new(false, 5.0, vec![fixtures::missing_image(), other]);
        let text = plain(&run);
        assert!(text.contains("Deployment/shop/web  failed"), "{text}");
        assert!(text.contains("Deployment/billing/web  failed"), "{text}");
        assert!(plain(&fixtures::mixed_run()).contains("\nDeployment/web  failed"));
    }

    #[test]
    fn no_escape_bytes_without_colour() {
        for run in all_runs() {
            let text = plain(&run);
            assert!(!text.contains('\x1b'), "{text}");
        }
    }

    #[test]
    fn colour_changes_nothing_but_the_escapes() {
        for run in all_runs() {
            let coloured = summary(&run, &Style::COLOR);
            assert_eq!(strip_sgr(&coloured), plain(&run));
        }
        let coloured = summary(&fixtures::mixed_run(), &Style::COLOR);
        assert!(coloured.starts_with("\x1b[1m\x1b[31mFAILURE\x1b[0m: "));
        assert!(coloured.contains("\x1b[31mimage_not_found\x1b[0m"));
        assert!(coloured.contains("\x1b[33mregistry_slow\x1b[0m"));
        assert!(coloured.contains("\x1b[1m\x1b[32mSucceeded (3):\x1b[0m"));
        let coloured = summary(&fixtures::all_success_run(), &Style::COLOR);
        assert!(coloured.starts_with("\x1b[1m\x1b[32mSUCCESS\x1b[0m: "));
    }

    fn hostile() -> RunOutcome {
        let mut outcome = fixtures::crash_loop();
        outcome.reason = Some(Reason::CrashLoop);
        outcome.message = "exit code 1: \x1b]0;pwned\x07title\rhidden".to_owned();
        outcome.events = vec![fixtures::event(
            "Warning",
            "BackOff",
            3,
            "Pod/api-5f8d7c6b9-k4m2p",
            "\x1b[2J\x1b[Hscreen cleared",
        )];
        outcome.logs = Some(LogTail {
            pod: "api-5f8d7c6b9-k4m2p".to_owned(),
            container: "api".to_owned(),
            previous: false,
            lines: vec![
                "\x1b[31mERROR\x1b[0m\tdatabase unreachable".to_owned(),
                "progress 10%\rprogress 100%".to_owned(),
                "windows line\r".to_owned(),
                "\u{9b}1;1H".to_owned(),
            ],
            unreadable: None,
        });
        RunOutcome::new(false, 2.0, vec![outcome])
    }

    #[test]
    fn control_characters_from_the_cluster_are_neutralised() {
        let text = plain(&hostile());
        snapshot("summary_control_characters", &text);
        assert!(!text.contains(['\x1b', '\r', '\x07', '\u{9b}']), "{text:?}");
        assert!(text.contains("    ␛[31mERROR␛[0m\tdatabase unreachable"));
        assert!(text.contains("    windows line\n"));
        // In colour, the only escapes left are our own.
        let coloured = strip_sgr(&summary(&hostile(), &Style::COLOR));
        assert!(!coloured.contains(['\x1b', '\r']), "{coloured:?}");
    }
}
