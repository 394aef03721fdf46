//! Workflow commands: the fallback when the token may not write check runs (fork pull
//! requests), so problems still show as annotations on the run and the pull request.
//! Cluster text is escaped so it cannot end a command early or inject a second one.

use super::check_run::{message, place, problem_title, problems};
use super::context::ActionsContext;
use super::limits;
use crate::vocab::outcome::RunOutcome;
use crate::vocab::verdict::Verdict;

/// Workflow-command data: `%`, CR and LF escaped (`%` first, so the result is unambiguous).
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow-command property value: data escaping plus `:` and `,`, which would end it.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// `::add-mask::` lines that hide `secret` in the rest of the job's log; a multi-line
/// secret is also masked line by line, as the runner matches single lines. Empty for an
/// empty secret, which the runner would reject.
pub fn mask_command(secret: &str) -> String {
    let mut values = vec![secret];
    if secret.contains('\n') {
        values.extend(secret.lines());
    }
    values
        .into_iter()
        .map(|v| v.strip_suffix('\r').unwrap_or(v))
        .filter(|v| !v.trim().is_empty())
        .map(|v| format!("::add-mask::{}", escape_data(v)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `::error file=F,line=L,title=T::message` per failed resource and `::warning ...` per
/// timed-out or unvalidated one, at most 10 per level: past that the last one says how
/// many more.
/// `file`/`line` are left out when the manifest is not in the repository.
pub fn workflow_commands(run: &RunOutcome, ctx: &ActionsContext) -> Vec<String> {
    let problems = problems(run);
    let mut lines = Vec::new();
    // GitHub shows 10 commands per level and step: timeouts and unvalidated resources
    // share the warning level, so they share its 10.
    for (failed, level, noun) in [
        (true, "error", "failed"),
        (false, "warning", "timed out or could not be validated"),
    ] {
        let of_level: Vec<_> = problems
            .iter()
            .filter(|o| (o.verdict == Verdict::Failed) == failed)
            .collect();
        let (shown, folded) = limits::commands_per_level(of_level.len());
        for outcome in &of_level[..shown] {
            let mut properties = Vec::new();
            if let Some((path, line)) = place(outcome, ctx) {
                properties.push(format!("file={}", escape_property(&path)));
                properties.push(format!("line={line}"));
            }
            properties.push(format!(
                "title={}",
                escape_property(&limits::title(&problem_title(outcome)))
            ));
            lines.push(command(level, &properties, &message(outcome)));
        }
        if folded > 0 {
            let title = format!("title={}", escape_property("deploy-action"));
            let text = format!(
                "{folded} more resources {noun}; the job summary lists every one with its evidence"
            );
            lines.push(command(level, &[title], &text));
        }
    }
    // What changes no verdict, at its line (a replicas an autoscaler overrides).
    for n in &run.notices {
        let mut properties = Vec::new();
        if let Some(path) = ctx.repo_path(&n.source.file) {
            properties.push(format!("file={}", escape_property(&path)));
            properties.push(format!("line={}", n.source.line.max(1)));
        }
        properties.push(format!(
            "title={}",
            escape_property("deploy-action: warning")
        ));
        lines.push(command("warning", &properties, &n.message));
    }
    lines
}

fn command(level: &str, properties: &[String], message: &str) -> String {
    let message = escape_data(&limits::command_message(message));
    format!("::{level} {}::{message}", properties.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixtures;
    use crate::render::github::testing::ctx;

    #[track_caller]
    fn case_property(input: &str, expected: &str) {
        assert_eq!(escape_property(input), expected);
    }

    #[test]
    fn properties_escape_what_would_end_them() {
        case_property(
            "Image not found: Deployment/web",
            "Image not found%3A Deployment/web",
        );
        case_property("a,b", "a%2Cb");
        case_property("50%", "50%25");
        // `%` first: an escaped-looking input stays literal.
        case_property("%3A", "%253A");
        case_property("x\r\ny", "x%0D%0Ay");
        assert_eq!(escape_data("a: b, 100%\n"), "a: b, 100%25%0A");
    }

    #[test]
    fn a_message_cannot_inject_a_second_command() {
        let mut outcome = fixtures::missing_image();
        outcome.message = "pull failed\n::add-mask::x\r\n::error::fake".to_owned();
        let run = RunOutcome::new(false, 3.0, vec![outcome]);
        let lines = workflow_commands(&run, &ctx());
        assert_eq!(lines.len(), 1);
        assert_eq!(
            lines[0],
            "::error file=k8s/web.yaml,line=21,title=Image not found%3A Deployment/web::\
             pull failed%0A::add-mask::x%0A::error::fake"
        );
    }

    #[test]
    fn manifests_outside_the_repository_get_no_file_property() {
        let mut outcome = fixtures::slow_registry();
        outcome.annotation_source = None;
        outcome.source = Some(fixtures::span("-", 1));
        let run = RunOutcome::new(false, 300.0, vec![outcome]);
        let lines = workflow_commands(&run, &ctx());
        assert!(
            lines[0].starts_with(
                "::warning title=Timed out%3A registry slow%3A Deployment/worker::image "
            ),
            "{}",
            lines[0]
        );
    }

    #[test]
    fn at_most_ten_commands_per_level() {
        let mut outcomes = Vec::new();
        for n in 0..12 {
            let mut failed = fixtures::missing_image();
            failed.resource.name = format!("web-{n}");
            outcomes.push(failed);
        }
        outcomes.push(fixtures::slow_registry());
        let lines = workflow_commands(&RunOutcome::new(false, 9.0, outcomes), &ctx());
        let errors: Vec<&String> = lines.iter().filter(|l| l.starts_with("::error ")).collect();
        assert_eq!(errors.len(), 10);
        assert!(errors[8].contains("title=Image not found%3A Deployment/web-8::"));
        assert_eq!(
            errors[9],
            "::error title=deploy-action::3 more resources failed; the job summary lists every \
             one with its evidence"
        );
        assert_eq!(
            lines.iter().filter(|l| l.starts_with("::warning ")).count(),
            1
        );
    }

    #[test]
    fn long_messages_are_cut_before_escaping() {
        let mut outcome = fixtures::crash_loop();
        outcome.message = "%".repeat(5_000);
        let lines = workflow_commands(&RunOutcome::new(false, 1.0, vec![outcome]), &ctx());
        let (_, data) = lines[0]
            .split_once("::")
            .unwrap()
            .1
            .split_once("::")
            .unwrap();
        assert!(data.starts_with("%25%25"));
        assert!(
            data.ends_with("… (truncated: 940 more characters)"),
            "{}",
            &data[data.len() - 60..]
        );
        assert!(data.len() < 4_096 * 3);
    }

    #[track_caller]
    fn case_mask(secret: &str, expected: &str) {
        assert_eq!(mask_command(secret), expected);
    }

    #[test]
    fn masks_are_escaped_and_multi_line_secrets_masked_per_line() {
        case_mask(
            "ghs_16C7e42F292c6912E7710c838347Ae178B4a",
            "::add-mask::ghs_16C7e42F292c6912E7710c838347Ae178B4a",
        );
        case_mask("50%off", "::add-mask::50%25off");
        case_mask(
            "-----BEGIN KEY-----\nMIIEvQ\n",
            "::add-mask::-----BEGIN KEY-----%0AMIIEvQ%0A\n::add-mask::-----BEGIN KEY-----\n::add-mask::MIIEvQ",
        );
        case_mask("", "");
        case_mask("  ", "");
    }
}
