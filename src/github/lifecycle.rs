//! One check run from start to finish: created `in_progress` when the deploy starts,
//! updated at most every 10 s while verdicts come in, and always completed, on
//! cancellation too, because a run left in progress blocks a required check forever.

use super::client::GithubClient;
use super::error::GithubError;
use crate::render::github::check_run::{Stage, check_output, conclusion};
use crate::render::github::context::ActionsContext;
use crate::render::github::limits;
use crate::render::github::wire::{
    Annotation, CheckRunInfo, Conclusion, CreateCheckRun, Output, Status, UpdateCheckRun, iso8601,
};
use crate::vocab::outcome::RunOutcome;
use jiff::Timestamp;
use std::time::Duration;
use tokio::time::Instant;

/// Least time between two writes to a check run while it is in progress: about 1,000
/// requests an hour is all a GITHUB_TOKEN gets per repository.
pub const UPDATE_INTERVAL: Duration = Duration::from_secs(10);

/// A check run deploy-action created and must complete.
#[derive(Debug)]
pub struct CheckRun {
    client: GithubClient,
    ctx: ActionsContext,
    id: u64,
    html_url: Option<String>,
    last_write: Instant,
}

/// Whether [`CheckRun::update`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Update {
    Sent,
    /// Less than [`UPDATE_INTERVAL`] since the last write: nothing sent.
    Throttled,
}

/// A completed check run.
#[derive(Debug)]
pub struct Finished {
    pub html_url: Option<String>,
    pub conclusion: Conclusion,
    pub annotations_sent: usize,
    pub annotations_total: usize,
    /// The run is completed, but a later annotation batch failed.
    pub annotation_error: Option<GithubError>,
}

impl CheckRun {
    /// Creates the run `in_progress` on the context's head commit. A
    /// [`GithubError::Fallback`] means the token may not write checks: report with
    /// workflow commands instead.
    pub async fn start(
        client: GithubClient,
        ctx: &ActionsContext,
        name: &str,
        started_at: Timestamp,
    ) -> Result<CheckRun, GithubError> {
        let mut summary =
            "Applying the manifests and watching every resource to a verdict.\n".to_owned();
        if let Some(url) = ctx.run_url() {
            summary.push_str(&format!("\n[Workflow run]({url})\n"));
        }
        let body = CreateCheckRun {
            name: limits::title(name),
            head_sha: ctx.head_sha.clone(),
            status: Status::InProgress,
            started_at: iso8601(started_at),
            external_id: ctx.external_id(name),
            details_url: ctx.run_url(),
            output: Output {
                title: limits::title("in progress: applying manifests"),
                summary,
                text: None,
                annotations: Vec::new(),
            },
        };
        let info: CheckRunInfo = client.create_check_run(&body).await?;
        Ok(CheckRun {
            client,
            ctx: ctx.clone(),
            id: info.id,
            html_url: info.html_url,
            last_write: Instant::now(),
        })
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// The run's page, for the `check-run-url` output and the job summary.
    pub fn html_url(&self) -> Option<&str> {
        self.html_url.as_deref()
    }

    /// Shows the verdicts so far, unless the run was written less than
    /// [`UPDATE_INTERVAL`] ago. Annotations wait for [`CheckRun::finish`]: GitHub appends
    /// them, so sending them early would repeat them.
    pub async fn update(&mut self, run: &RunOutcome) -> Result<Update, GithubError> {
        if self.last_write.elapsed() < UPDATE_INTERVAL {
            return Ok(Update::Throttled);
        }
        // Counted from the attempt: a failing GitHub is not asked more often.
        self.last_write = Instant::now();
        let mut output = check_output(run, Stage::InProgress, &self.ctx);
        output.annotations.clear();
        let body = UpdateCheckRun {
            status: None,
            conclusion: None,
            completed_at: None,
            output,
        };
        self.client.update_check_run(self.id, &body, 0).await?;
        Ok(Update::Sent)
    }

    /// Completes the run: `cancelled` when interrupted, else `failure`, `timed_out`,
    /// `success`, or `neutral` for a dry run without problems. The first request
    /// completes it with the first 50 annotations; the rest follow 50 to a request,
    /// each resending title, summary and text, which every PATCH replaces.
    pub async fn finish(
        self,
        run: &RunOutcome,
        cancelled: bool,
        completed_at: Timestamp,
    ) -> Result<Finished, GithubError> {
        let stage = if cancelled {
            Stage::Cancelled
        } else {
            Stage::Completed
        };
        let mut output = check_output(run, stage, &self.ctx);
        let annotations = std::mem::take(&mut output.annotations);
        let mut batches = limits::annotation_batches(&annotations);
        let conclusion = conclusion(run, cancelled);
        let first = UpdateCheckRun {
            status: Some(Status::Completed),
            conclusion: Some(conclusion),
            completed_at: Some(iso8601(completed_at)),
            output: with_annotations(&output, batches.next().unwrap_or_default()),
        };
        let info = self.client.update_check_run(self.id, &first, 0).await?;
        let mut sent = first.output.annotations.len();
        let mut annotation_error = None;
        for batch in batches {
            let body = UpdateCheckRun {
                status: None,
                conclusion: None,
                completed_at: None,
                output: with_annotations(&output, batch),
            };
            match self.client.update_check_run(self.id, &body, sent).await {
                Ok(_) => sent += batch.len(),
                Err(e) => {
                    annotation_error = Some(e);
                    break;
                }
            }
        }
        Ok(Finished {
            html_url: info.html_url.or(self.html_url),
            conclusion,
            annotations_sent: sent,
            annotations_total: annotations.len(),
            annotation_error,
        })
    }
}

fn with_annotations(output: &Output, batch: &[Annotation]) -> Output {
    Output {
        annotations: batch.to_vec(),
        ..output.clone()
    }
}
