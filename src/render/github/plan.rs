//! The plan of a dry run in the check run's `text` and the job summary: one collapsed
//! section per changed resource with a diff block, one line per created, unchanged or
//! pruned resource, within the budget GitHub allows.

use super::markdown::{code, escape, fenced_as};
use crate::render::plan;
use crate::vocab::outcome::{Change, Outcome, RunOutcome};

/// The `### Plan` section, or `None` when the run has no plan. At most `budget` bytes:
/// what does not fit is counted and left to the job log.
pub(super) fn section(run: &RunOutcome, with_ns: bool, budget: usize) -> Option<String> {
    let counts = plan::counts(run)?;
    let mut out = format!("### Plan: {}\n\n", escape(&counts));
    // Changed resources first, each collapsed with its diff; then a list of the rest.
    let planned: Vec<(&Outcome, &Change)> = run
        .outcomes
        .iter()
        .filter_map(|o| Some((o, o.change.as_ref()?)))
        .filter(|(_, c)| matches!(c, Change::Changed { .. }))
        .chain(
            run.outcomes
                .iter()
                .filter_map(|o| Some((o, o.change.as_ref()?)))
                .filter(|(_, c)| !matches!(c, Change::Changed { .. })),
        )
        .collect();
    let mut listing = false;
    for (shown, (outcome, change)) in planned.iter().enumerate() {
        let name = outcome.resource.display(with_ns);
        let label = plan::label(change);
        let part = match change {
            Change::Changed { .. } => {
                let block = fenced_as("diff", &plan::diff_lines(change).join("\n"));
                format!(
                    "<details><summary>{}: {label}</summary>\n\n{block}\n\n</details>\n\n",
                    escape(&name)
                )
            }
            _ => format!("- {}: {label}\n", code(&name)),
        };
        if out.len() + part.len() > budget {
            let more = planned.len() - shown;
            let gap = if listing { "\n" } else { "" };
            out.push_str(&format!(
                "{gap}… and {more} more resources' plans, listed in the job log.\n"
            ));
            break;
        }
        listing = !matches!(change, Change::Changed { .. });
        out.push_str(&part);
    }
    Some(out.trim_end().to_owned())
}
