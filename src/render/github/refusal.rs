//! What a refused run (exit 2: invalid input, nothing applied) leaves under Actions, so the
//! job page says why as a finished run would: an error annotation per problem (at its
//! file and line when known), a job summary, and the step output `result=invalid`.

use super::commands::{escape_data, escape_property};
use super::limits;
use super::markdown::fenced;
use crate::manifest::Problem;

/// Error commands: one per problem, at its place (GitHub shows 10 per step), or one for
/// the whole refusal when it names no problems.
pub fn commands(message: &str, problems: &[Problem]) -> Vec<String> {
    let title = format!(
        "title={}",
        escape_property("deploy-action: nothing was applied")
    );
    if problems.is_empty() {
        let first = message.lines().next().unwrap_or("invalid input");
        return vec![format!(
            "::error {title}::{}",
            escape_data(&limits::command_message(first))
        )];
    }
    let (shown, _) = limits::commands_per_level(problems.len());
    problems[..shown]
        .iter()
        .map(|p| {
            let mut properties = Vec::new();
            if !p.file.is_empty() && !p.file.starts_with('<') {
                properties.push(format!("file={}", escape_property(&p.file)));
                if let Some(line) = p.line {
                    properties.push(format!("line={line}"));
                }
            }
            properties.push(title.clone());
            let text = match &p.hint {
                Some(hint) => format!("{}\nhint: {hint}", p.message),
                None => p.message.clone(),
            };
            format!(
                "::error {}::{}",
                properties.join(","),
                escape_data(&limits::command_message(&text))
            )
        })
        .collect()
}

/// The job summary of a refused run.
pub fn step_summary(message: &str) -> String {
    limits::step_summary(&format!(
        "## deploy-action: invalid input, nothing was applied\n\n{}\n",
        fenced(message)
    ))
}

/// The step outputs of a refused run: `result=invalid`, and no counts.
pub fn output_lines() -> String {
    "result=invalid\n".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_problem_is_an_error_at_its_line_and_the_summary_says_nothing_was_applied() {
        let problems = vec![
            Problem::new(
                "k8s/web.yaml",
                Some(7),
                "found a tab character where indentation is expected",
            )
            .with_hint("indent with spaces"),
            Problem::new("<stdin>", Some(2), "missing kind"),
        ];
        assert_eq!(
            commands("found 2 problems", &problems),
            [
                "::error file=k8s/web.yaml,line=7,title=deploy-action%3A nothing was applied::found a tab character where indentation is expected%0Ahint: indent with spaces",
                "::error title=deploy-action%3A nothing was applied::missing kind",
            ]
        );
        assert_eq!(
            commands("the directory k8s/ does not exist\nmore", &[]),
            [
                "::error title=deploy-action%3A nothing was applied::the directory k8s/ does not exist"
            ]
        );
        assert_eq!(
            step_summary("found 1 problem:\nweb.yaml:3: missing kind"),
            "## deploy-action: invalid input, nothing was applied\n\n```text\nfound 1 problem:\nweb.yaml:3: missing kind\n```\n"
        );
        assert_eq!(output_lines(), "result=invalid\n");
    }
}
