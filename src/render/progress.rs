//! Lines for watching a run as it happens: one live line per pending resource (for an
//! indicatif spinner), plain timestamped lines for CI logs where redrawing is impossible,
//! the line announcing each verdict, and GitHub Actions log groups to fold the detail.

use super::duration;
use super::sanitize::{sanitize, sanitized_lines};
use super::style::Style;
use super::summary::headline;
use crate::vocab::outcome::{Outcome, ResourceId};

/// `Deployment/web  2/3 updated, 1 available`: the message of a pending resource's live
/// line. `state` is what the watcher last saw; empty means nothing to say yet. The line's
/// time is not part of it: the bar ticks it (`output::terminal`).
pub fn progress_line(id: &ResourceId, state: &str) -> String {
    let name = sanitize(&id.display(false));
    if state.is_empty() {
        name
    } else {
        format!("{name}  {}", sanitize(state))
    }
}

/// `[  12.3s] Deployment/web: 2/3 updated`: one append-only line for CI logs, stamped with
/// seconds since the run started so a slow step stands out without a clock column.
pub fn ci_line(at_seconds: f64, id: &ResourceId, event: &str) -> String {
    format!(
        "[{:>6.1}s] {}: {}",
        duration::round_tenths(at_seconds),
        sanitize(&id.display(false)),
        sanitize(event)
    )
}

/// The compact table printed in CI logs when nothing has changed for a while:
/// `[  60.0s] still waiting for 2 resources:` and one aligned line per resource.
pub fn status_table(at_seconds: f64, pending: &[(ResourceId, String)]) -> String {
    let noun = if pending.len() == 1 {
        "resource"
    } else {
        "resources"
    };
    let mut out = format!(
        "[{:>6.1}s] still waiting for {} {noun}:",
        duration::round_tenths(at_seconds),
        pending.len()
    );
    let names: Vec<String> = pending
        .iter()
        .map(|(id, _)| sanitize(&id.display(false)))
        .collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    for (name, (_, state)) in names.iter().zip(pending) {
        let pad = " ".repeat(width - name.chars().count());
        let state = sanitize(state);
        out.push_str(format!("\n  {name}{pad}  {state}").trim_end());
    }
    out
}

/// The line printed the moment a resource gets its verdict:
/// `Deployment/web  failed  image_not_found  (3.1s)  <first line of the message>`.
/// The summary repeats the full message with its evidence.
pub fn verdict_line(outcome: &Outcome, style: &Style) -> String {
    let head = headline(outcome, false, *style);
    match sanitized_lines(&outcome.message).find(|l| !l.trim().is_empty()) {
        Some(first) => format!("{head}  {first}"),
        None => head,
    }
}

/// `::group::title`: starts a foldable section in a GitHub Actions log. The title is
/// escaped as workflow-command data so a newline in it cannot inject a second command.
pub fn group_start(title: &str) -> String {
    format!(
        "::group::{}",
        sanitize(&crate::render::github::escape_data(title))
    )
}

/// `::endgroup::`: closes the section [`group_start`] opened.
pub fn group_end() -> &'static str {
    "::endgroup::"
}

/// A token for `::stop-commands::`, unguessable by the text it fences (container logs).
pub fn stop_token() -> String {
    format!("deploy-action-{:016x}", crate::random::bits())
}

/// `text` between `::stop-commands::TOKEN` and `::TOKEN::`: under GitHub Actions no line
/// of it (a log tail, an event quoting `::error::`) is read as a workflow command.
pub fn commands_stopped(text: &str, token: &str) -> String {
    let text = text.strip_suffix('\n').unwrap_or(text);
    format!("::stop-commands::{token}\n{text}\n::{token}::\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixtures;

    #[test]
    fn fenced_text_ends_with_the_token_that_resumes_commands() {
        let token = stop_token();
        let fenced = commands_stopped("SUCCESS\n    ::error::pwned\n", &token);
        let lines: Vec<&str> = fenced.lines().collect();
        assert_eq!(
            lines.first().copied(),
            Some(format!("::stop-commands::{token}").as_str())
        );
        assert_eq!(lines.last().copied(), Some(format!("::{token}::").as_str()));
        assert_eq!(&lines[1..3], ["SUCCESS", "    ::error::pwned"]);
        assert_ne!(token, stop_token(), "tokens must not repeat");
    }

    fn web() -> ResourceId {
        fixtures::id("apps/v1", "Deployment", Some("shop"), "web")
    }

    #[test]
    fn progress_line_shows_the_state_on_one_line() {
        assert_eq!(
            progress_line(&web(), "2/3 updated, 1 available"),
            "Deployment/web  2/3 updated, 1 available"
        );
        assert_eq!(progress_line(&web(), ""), "Deployment/web");
        assert_eq!(
            progress_line(&web(), "waiting for rollout\nto finish"),
            "Deployment/web  waiting for rollout␊to finish"
        );
    }

    #[track_caller]
    fn case_ci(at: f64, event: &str, expected: &str) {
        assert_eq!(ci_line(at, &web(), event), expected);
    }

    #[test]
    fn ci_line_is_stamped_with_aligned_seconds() {
        case_ci(
            12.34,
            "2/3 updated",
            "[  12.3s] Deployment/web: 2/3 updated",
        );
        case_ci(0.0, "applied", "[   0.0s] Deployment/web: applied");
        case_ci(
            1234.56,
            "3/3 available",
            "[1234.6s] Deployment/web: 3/3 available",
        );
        case_ci(f64::NAN, "applied", "[   0.0s] Deployment/web: applied");
        case_ci(
            5.0,
            "pod said \x1b[2Jhi",
            "[   5.0s] Deployment/web: pod said ␛[2Jhi",
        );
    }

    #[test]
    fn the_status_table_aligns_one_line_per_waiting_resource() {
        let pending = vec![
            (web(), "1/2 replicas updated, 0 available".to_owned()),
            (
                fixtures::id("v1", "Service", Some("shop"), "web"),
                "no ready endpoints".to_owned(),
            ),
        ];
        assert_eq!(
            status_table(60.04, &pending),
            "[  60.0s] still waiting for 2 resources:\n  Deployment/web  1/2 replicas updated, 0 available\n  Service/web     no ready endpoints"
        );
    }

    #[track_caller]
    fn case_group(title: &str, expected: &str) {
        assert_eq!(group_start(title), expected);
    }

    #[test]
    fn group_titles_are_escaped_as_workflow_command_data() {
        case_group("Deployment/web logs", "::group::Deployment/web logs");
        case_group("100% done", "::group::100%25 done");
        // Without escaping, the second line would run as a workflow command.
        case_group("web\n::add-mask::x", "::group::web%0A::add-mask::x");
        case_group("a\r\nb", "::group::a%0D%0Ab");
        // Escaping `%` first keeps an already-escaped-looking title literal.
        case_group("%0A", "::group::%250A");
        case_group("\x1b[31mred", "::group::␛[31mred");
        assert_eq!(group_end(), "::endgroup::");
    }

    #[test]
    fn verdict_line_gives_verdict_reason_time_and_first_message_line() {
        assert_eq!(
            verdict_line(&fixtures::crash_loop(), &Style::PLAIN),
            "Deployment/api  failed  crash_loop  (48.7s)  container api in pod api-5f8d7c6b9-k4m2p \
             keeps crashing: OOMKilled (exit code 137), restarted 4 times"
        );
        assert_eq!(
            verdict_line(&fixtures::slow_registry(), &Style::PLAIN),
            "Deployment/worker  timed_out  registry_slow  (5m00s)  image docker.io/acme/worker:3.0.1 \
             was still not pulled after 300s; the registry is rate limiting (429 Too Many Requests)"
        );
        let config = &fixtures::successes()[0];
        assert_eq!(
            verdict_line(config, &Style::PLAIN),
            "ConfigMap/web-config  succeeded  (0.1s)"
        );
    }

    #[test]
    fn verdict_line_in_colour_paints_the_verdict_by_tone() {
        let line = verdict_line(&fixtures::missing_image(), &Style::COLOR);
        assert!(line.contains("\x1b[31mfailed\x1b[0m"), "{line:?}");
        assert!(line.contains("\x1b[31mimage_not_found\x1b[0m"), "{line:?}");
        let line = verdict_line(&fixtures::slow_registry(), &Style::COLOR);
        assert!(line.contains("\x1b[33mtimed_out\x1b[0m"), "{line:?}");
        let line = verdict_line(&fixtures::successes()[1], &Style::COLOR);
        assert!(line.contains("\x1b[32msucceeded\x1b[0m"), "{line:?}");
    }
}
