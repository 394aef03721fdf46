//! What later workflow steps and the run page read: step outputs (`GITHUB_OUTPUT`) and the
//! job summary (`GITHUB_STEP_SUMMARY`). Both are written whether or not the check run
//! worked, so they are the reliable record.

use super::check_run::{Stage, summary, text, title};
use super::context::ActionsContext;
use super::limits;
use crate::vocab::outcome::RunOutcome;
use crate::vocab::verdict::Verdict;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// The lines to append to `GITHUB_OUTPUT`: `result`, `failed`, `timed-out`, `unfinished`,
/// `succeeded`,
/// `check-run-url` (empty without a check run) and `report` (the JSON report, compact).
/// Values with a line break use the heredoc form.
pub fn output_lines(
    run: &RunOutcome,
    check_run_url: Option<&str>,
    report: &serde_json::Value,
) -> String {
    [
        ("result", run.result.as_str().to_owned()),
        ("failed", run.count(Verdict::Failed).to_string()),
        ("timed-out", run.count(Verdict::TimedOut).to_string()),
        ("unfinished", run.count(Verdict::Unfinished).to_string()),
        ("succeeded", run.count(Verdict::Succeeded).to_string()),
        (
            "check-run-url",
            check_run_url.unwrap_or_default().to_owned(),
        ),
        ("report", report.to_string()),
    ]
    .iter()
    .map(|(name, value)| output(name, value))
    .collect()
}

/// The job summary: the check run's title, summary and evidence under one heading, and a
/// link to the check run when there is one. Under 1 MiB, or the runner drops all of it.
pub fn step_summary(
    run: &RunOutcome,
    check_name: &str,
    check_run_url: Option<&str>,
    ctx: &ActionsContext,
) -> String {
    let heading = format!(
        "## {}: {}\n\n",
        super::markdown::escape(check_name),
        super::markdown::escape(&title(run, Stage::Completed))
    );
    let mut out = heading;
    out.push_str(&summary(run, Stage::Completed, ctx));
    if let Some(text) = text(run, ctx) {
        out.push('\n');
        out.push_str(&text);
        out.push('\n');
    }
    if let Some(url) = check_run_url {
        out.push_str(&format!("\n[Check run]({url})\n"));
    }
    limits::step_summary(&out)
}

/// `name=value`, or `name<<DELIM` / value / `DELIM` when the value spans lines.
fn output(name: &str, value: &str) -> String {
    if !value.contains(['\n', '\r']) {
        return format!("{name}={value}\n");
    }
    let delimiter = delimiter(value);
    format!("{name}<<{delimiter}\n{value}\n{delimiter}\n")
}

/// A delimiter that does not occur in `value`. Derived from the value rather than random,
/// so output is reproducible; checked against the value, so no content can end it early.
fn delimiter(value: &str) -> String {
    let mut salt = 0_u64;
    loop {
        let mut hasher = DefaultHasher::new();
        (value, salt).hash(&mut hasher);
        let candidate = format!("ghadelimiter_{:016x}", hasher.finish());
        if !value.contains(&candidate) {
            return candidate;
        }
        salt += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixtures;
    use crate::render::report;

    #[test]
    fn outputs_count_verdicts_and_carry_the_report() {
        let run = fixtures::mixed_run();
        let text = output_lines(
            &run,
            Some("https://github.com/acme/shop/runs/31415926535"),
            &report::to_json(&run),
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..6],
            [
                "result=failure",
                "failed=2",
                "timed-out=1",
                "unfinished=0",
                "succeeded=3",
                "check-run-url=https://github.com/acme/shop/runs/31415926535"
            ]
        );
        let report = lines[6].strip_prefix("report=").expect("report line");
        let parsed: serde_json::Value = serde_json::from_str(report).unwrap();
        assert_eq!(parsed, report::to_json(&run));
        assert_eq!(lines.len(), 7);
    }

    #[test]
    fn without_a_check_run_the_url_is_empty() {
        let run = fixtures::timed_out_run();
        let text = output_lines(&run, None, &serde_json::json!({}));
        assert!(text.starts_with("result=timed_out\n"), "{text}");
        assert!(text.contains("\ncheck-run-url=\n"));
    }

    #[test]
    fn multi_line_values_use_a_heredoc_whose_delimiter_is_not_in_the_value() {
        let value = "line one\nline two";
        let text = output("notes", value);
        let (head, rest) = text.split_once('\n').unwrap();
        let delimiter = head.strip_prefix("notes<<").unwrap();
        assert!(delimiter.starts_with("ghadelimiter_"));
        assert_eq!(rest, format!("{value}\n{delimiter}\n"));
        // A value quoting the delimiter it would get cannot end the heredoc early.
        let hostile = format!("x\n{delimiter}\nevil=1");
        let text = output("notes", &hostile);
        let other = text
            .lines()
            .next()
            .unwrap()
            .strip_prefix("notes<<")
            .unwrap();
        assert_ne!(other, delimiter);
        assert_eq!(text.lines().filter(|l| *l == other).count(), 1);
    }

    #[test]
    fn step_summary_stays_under_one_mebibyte() {
        let mut outcomes = Vec::new();
        for n in 0..3_000 {
            let mut o = fixtures::crash_loop();
            o.resource.name = format!("api-{n}");
            outcomes.push(o);
        }
        let run = RunOutcome::new(false, 60.0, outcomes);
        let text = step_summary(&run, "deploy", None, &crate::render::github::testing::ctx());
        assert!(text.len() < 1024 * 1024, "{}", text.len());
        assert!(text.contains("more resources, listed in the job log."));
        assert!(text.contains("more problems, with their evidence in the job log."));
    }
}
