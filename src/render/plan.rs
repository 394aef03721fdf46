//! The plan of a dry run as text: what each resource's apply would change, as the terminal
//! summary, the check run and the job summary show it. One layout of field lines, two
//! looks: `~ path: before → after` on a terminal, `-`/`+` pairs in a Markdown diff block.

use super::sanitize::sanitize;
use super::style::{Style, Tone};
use crate::plan::HIDDEN;
use crate::vocab::outcome::{Change, FieldChange, RunOutcome};

/// Fields listed per resource; a longer diff says how many more there are.
pub const MAX_FIELDS: usize = 50;

/// `2 created, 1 changed, 3 unchanged, 1 pruned, 1 not known`, or `None` when the run has
/// no plan (not a dry run, or no resource's change is known).
pub fn counts(run: &RunOutcome) -> Option<String> {
    if !run.dry_run || run.outcomes.iter().all(|o| o.change.is_none()) {
        return None;
    }
    let words = ["created", "changed", "unchanged", "pruned"];
    let mut parts: Vec<String> = words
        .iter()
        .map(|w| {
            let n = run
                .outcomes
                .iter()
                .filter(|o| o.change.as_ref().is_some_and(|c| c.word() == *w))
                .count();
            (n, *w)
        })
        .filter(|&(n, _)| n > 0)
        .map(|(n, w)| format!("{n} {w}"))
        .collect();
    let unknown = run.outcomes.iter().filter(|o| o.change.is_none()).count();
    if unknown > 0 {
        parts.push(format!("{unknown} not known"));
    }
    Some(parts.join(", "))
}

/// `changed (2 fields)`, `created`.
pub fn label(change: &Change) -> String {
    match change {
        Change::Changed { fields } if fields.len() == 1 => "changed (1 field)".to_owned(),
        Change::Changed { fields } => format!("changed ({} fields)", fields.len()),
        other => other.word().to_owned(),
    }
}

/// What happens to one field, its text sanitized.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Line {
    Added {
        path: String,
        after: String,
    },
    Removed {
        path: String,
        before: String,
    },
    Changed {
        path: String,
        before: String,
        after: String,
    },
    /// A hidden value changed: the path alone.
    SecretChanged {
        path: String,
    },
}

fn line(field: &FieldChange) -> Line {
    let path = sanitize(&field.path);
    match (&field.before, &field.after) {
        (Some(b), Some(a)) if b == HIDDEN && a == HIDDEN => Line::SecretChanged { path },
        (Some(b), Some(a)) => Line::Changed {
            path,
            before: sanitize(b),
            after: sanitize(a),
        },
        (None, Some(a)) => Line::Added {
            path,
            after: sanitize(a),
        },
        (Some(b), None) => Line::Removed {
            path,
            before: sanitize(b),
        },
        (None, None) => Line::SecretChanged { path },
    }
}

fn fields(change: &Change) -> &[FieldChange] {
    match change {
        Change::Changed { fields } => fields,
        _ => &[],
    }
}

fn more(fields: &[FieldChange]) -> Option<String> {
    (fields.len() > MAX_FIELDS).then(|| format!("… and {} more fields", fields.len() - MAX_FIELDS))
}

/// The terminal's lines for a change, indented under the resource's line.
pub fn terminal_lines(change: &Change, indent: &str, style: &Style) -> Vec<String> {
    let fields = fields(change);
    let mut out: Vec<String> = fields
        .iter()
        .take(MAX_FIELDS)
        .map(|f| match line(f) {
            Line::Added { path, after } => {
                format!(
                    "{indent}{} {path}: {after}",
                    style.paint(Tone::Succeeded, "+")
                )
            }
            Line::Removed { path, before } => {
                format!(
                    "{indent}{} {path}: {before}",
                    style.paint(Tone::Failed, "-")
                )
            }
            Line::Changed {
                path,
                before,
                after,
            } => format!(
                "{indent}{} {path}: {before} → {after}",
                style.paint(Tone::TimedOut, "~")
            ),
            Line::SecretChanged { path } => format!(
                "{indent}{} {path}: {}",
                style.paint(Tone::TimedOut, "~"),
                style.paint(Tone::Dim, "(secret, changed)")
            ),
        })
        .collect();
    out.extend(more(fields).map(|m| format!("{indent}{}", style.paint(Tone::Dim, &m))));
    out
}

/// The body of a Markdown ```diff block for a change: `-` the value before, `+` after.
pub fn diff_lines(change: &Change) -> Vec<String> {
    let fields = fields(change);
    let mut out = Vec::new();
    for f in fields.iter().take(MAX_FIELDS) {
        match line(f) {
            Line::Added { path, after } => out.push(format!("+ {path}: {after}")),
            Line::Removed { path, before } => out.push(format!("- {path}: {before}")),
            Line::Changed {
                path,
                before,
                after,
            } => {
                out.push(format!("- {path}: {before}"));
                out.push(format!("+ {path}: {after}"));
            }
            Line::SecretChanged { path } => out.push(format!("! {path}: (secret, changed)")),
        }
    }
    out.extend(more(fields).map(|m| format!("# {m}")));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(path: &str, before: Option<&str>, after: Option<&str>) -> FieldChange {
        FieldChange {
            path: path.to_owned(),
            before: before.map(str::to_owned),
            after: after.map(str::to_owned),
        }
    }

    fn change() -> Change {
        Change::Changed {
            fields: vec![
                field("spec.replicas", Some("2"), Some("3")),
                field("data.password", Some(HIDDEN), Some(HIDDEN)),
                field("metadata.labels.tier", None, Some("\"web\"")),
                field(
                    "spec.template.spec.containers[name=web].args[2]",
                    Some("\"-v\""),
                    None,
                ),
                // A value from the cluster with a terminal escape in it.
                field("data.motd", Some("\"hi\""), Some("\"\u{1b}[2Jgone\"")),
            ],
        }
    }

    #[test]
    fn terminal_lines_mark_each_kind_of_change_and_never_pass_escapes() {
        insta::assert_snapshot!(
            "plan_terminal_lines",
            terminal_lines(&change(), "    ", &Style::PLAIN).join("\n")
        );
        let colored = terminal_lines(&change(), "", &Style::COLOR).join("\n");
        assert!(colored.contains("\u{1b}[32m+"), "{colored:?}");
        assert!(!colored.contains("\u{1b}[2J"), "{colored:?}");
    }

    #[test]
    fn diff_lines_pair_before_and_after() {
        insta::assert_snapshot!("plan_diff_lines", diff_lines(&change()).join("\n"));
    }

    #[test]
    fn long_diffs_are_cut_and_counted() {
        let fields = (0..MAX_FIELDS + 7)
            .map(|i| field(&format!("data.k{i}"), None, Some("\"v\"")))
            .collect();
        let change = Change::Changed { fields };
        let lines = terminal_lines(&change, "", &Style::PLAIN);
        assert_eq!(lines.len(), MAX_FIELDS + 1);
        assert_eq!(lines.last().unwrap(), "… and 7 more fields");
        assert_eq!(
            label(&change),
            format!("changed ({} fields)", MAX_FIELDS + 7)
        );
    }
}
