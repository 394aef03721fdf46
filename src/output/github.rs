//! Publishing a run to GitHub: the check run (created in progress at start, updated as
//! resources finish, completed at the end or on cancellation), and under Actions always
//! the job summary and step outputs, with workflow-command annotations when no check run
//! could be written (fork pull requests). A GitHub failure is reported, never fatal: it
//! does not change the verdict or the exit code.

use super::Environment;
use crate::cli::{CheckRunMode, GithubArgs};
use crate::github::{CheckRun, GithubClient};
use crate::render::Redactor;
use crate::render::github::{self, ActionsContext};
use crate::vocab::events::{Observer, RunEvent};
use crate::vocab::outcome::{Outcome, RunOutcome};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// What happened on the GitHub side, for the user.
#[derive(Debug, Default)]
pub struct Published {
    pub check_run_url: Option<String>,
    /// Problems talking to GitHub (already redacted).
    pub warnings: Vec<String>,
    /// Workflow commands to print on stdout (the fallback annotations).
    pub commands: Vec<String>,
}

/// The GitHub side of one run.
pub struct Publisher {
    ctx: Option<ActionsContext>,
    check: Arc<tokio::sync::Mutex<Option<CheckRun>>>,
    name: String,
    token: Option<String>,
    /// Verdicts so far, for progress updates and for a cancelled run's last word.
    seen: Arc<Mutex<Vec<Arc<Outcome>>>>,
    /// Resources applied or watched without a verdict yet, with their last state.
    pending: Pending,
    progress: Option<mpsc::UnboundedSender<()>>,
    dry_run: bool,
    started: tokio::time::Instant,
    pub warnings: Vec<String>,
}

/// How long a cancelled run may spend completing its check run.
pub const CANCELLED_FINISH_LIMIT: Duration = Duration::from_secs(5);

impl Publisher {
    /// Read the Actions context and, when asked to, create the check run in progress.
    pub async fn start(
        args: &GithubArgs,
        name: String,
        dry_run: bool,
        redactor: &Redactor,
        env: &Environment,
    ) -> Publisher {
        let in_actions = env.github_actions();
        let token = args.github_token.clone().filter(|t| !t.trim().is_empty());
        let mut publisher = Publisher {
            ctx: None,
            check: Arc::new(tokio::sync::Mutex::new(None)),
            name,
            token: token.clone(),
            seen: Arc::new(Mutex::new(Vec::new())),
            pending: Pending::default(),
            progress: None,
            dry_run,
            started: tokio::time::Instant::now(),
            warnings: Vec::new(),
        };
        let wanted = match args.check_run {
            CheckRunMode::Off => false,
            CheckRunMode::On => true,
            CheckRunMode::Auto => in_actions && token.is_some(),
        };
        if !in_actions && !wanted {
            return publisher;
        }
        let payload =
            ActionsContext::event_path(&env.vars).and_then(|p| std::fs::read_to_string(p).ok());
        match ActionsContext::from_env(&env.vars, payload.as_deref(), args.sha.as_deref()) {
            Ok(ctx) => {
                let cwd = std::env::current_dir().unwrap_or_default();
                publisher.ctx = Some(ctx.with_working_dir(&cwd.to_string_lossy()));
            }
            Err(e) => {
                publisher.warnings.push(format!("no check run: {e}"));
                return publisher;
            }
        }
        if !wanted {
            return publisher;
        }
        let Some(token) = token else {
            publisher
                .warnings
                .push("no check run: --check-run on needs --github-token or GITHUB_TOKEN".into());
            return publisher;
        };
        let ctx = publisher.ctx.clone().expect("set above");
        let client = match GithubClient::new(&ctx, &token) {
            Ok(c) => c.with_secrets(redactor.secrets().iter().cloned()),
            Err(e) => {
                publisher.warnings.push(format!("no check run: {e}"));
                return publisher;
            }
        };
        match CheckRun::start(client, &ctx, &publisher.name, jiff::Timestamp::now()).await {
            Ok(run) => {
                *publisher.check.lock().await = Some(run);
                publisher.spawn_updates();
            }
            Err(e) if e.is_fallback() => publisher
                .warnings
                .push("the token may not write checks (a fork pull request?): reporting with annotations and the job summary".into()),
            Err(e) => publisher.warnings.push(format!("no check run: {e}")),
        }
        publisher
    }

    /// `::add-mask::` for the token, to print before anything else under Actions.
    pub fn mask(&self) -> Option<String> {
        self.ctx
            .as_ref()
            .filter(|c| c.actions)
            .and(self.token.as_deref())
            .map(github::mask_command)
    }

    /// Updates the check run as verdicts arrive (at most one PATCH per 10 s).
    fn spawn_updates(&mut self) {
        let (tx, mut rx) = mpsc::unbounded_channel::<()>();
        self.progress = Some(tx);
        let (check, seen, dry_run, started) = (
            self.check.clone(),
            self.seen.clone(),
            self.dry_run,
            self.started,
        );
        tokio::spawn(async move {
            while rx.recv().await.is_some() {
                let outcomes = owned(&seen.lock().expect("seen lock"));
                let run = RunOutcome::new(dry_run, started.elapsed().as_secs_f64(), outcomes);
                if let Some(c) = check.lock().await.as_mut() {
                    let _ = c.update(&run).await;
                }
            }
        });
    }

    /// An observer that records verdicts for the check run and passes every event on.
    pub fn observer<'a>(&self, inner: &'a mut dyn Observer) -> Tee<'a> {
        Tee {
            inner,
            seen: self.seen.clone(),
            pending: self.pending.clone(),
            progress: self.progress.clone(),
        }
    }

    /// A cancelled run: the verdicts known so far, and every resource applied or watched
    /// without one, `unfinished` (`cancelled`) with the state it was in.
    pub fn so_far(&self) -> RunOutcome {
        let mut outcomes = owned(&self.seen.lock().expect("seen lock"));
        let seconds = self.started.elapsed().as_secs_f64();
        for (resource, state) in self.pending.lock().expect("pending lock").iter() {
            outcomes.push(Outcome {
                resource: resource.clone(),
                verdict: crate::vocab::verdict::Verdict::Unfinished,
                reason: Some(crate::vocab::verdict::Reason::Cancelled),
                message: format!("interrupted while: {state}"),
                source: None,
                origin: None,
                annotation_source: None,
                container: None,
                seconds: (seconds * 10.0).round() / 10.0,
                events: Vec::new(),
                logs: None,
                change: None,
                wave: None,
            });
        }
        let mut run = RunOutcome::new(self.dry_run, seconds, outcomes);
        run.result = crate::vocab::verdict::RunResult::Cancelled;
        run
    }

    /// Complete the check run, write the job summary and outputs, and say what to print.
    /// `run` comes through the run's [`Redactor`] already.
    pub async fn finish(
        self,
        run: &RunOutcome,
        cancelled: bool,
        report: &serde_json::Value,
    ) -> Published {
        let mut published = Published {
            warnings: self.warnings,
            ..Published::default()
        };
        let Some(ctx) = self.ctx else {
            return published;
        };
        let run = github::locate(run, &ctx);
        // After a signal the runner kills the process 7.5 s later: finish in time or give
        // up and say so, rather than be killed mid-request. The limit also covers waiting
        // for a progress update still in flight (it holds the check run).
        let limit = if cancelled {
            CANCELLED_FINISH_LIMIT
        } else {
            Duration::from_secs(120)
        };
        let deadline = tokio::time::Instant::now() + limit;
        let check = if let Ok(mut guard) =
            tokio::time::timeout_at(deadline, self.check.lock()).await
        {
            guard.take()
        } else {
            published.warnings.push(format!(
                "gave up on completing the check run after {} s (an update to GitHub was still in flight); it may show as in progress",
                limit.as_secs()
            ));
            None
        };
        let mut check_run_written = false;
        if let Some(check) = check {
            let finishing = check.finish(&run, cancelled, jiff::Timestamp::now());
            match tokio::time::timeout_at(deadline, finishing).await {
                Ok(Ok(done)) => {
                    check_run_written = true;
                    published.check_run_url = done.html_url;
                    if let Some(e) = done.annotation_error {
                        published
                            .warnings
                            .push(format!("some check run annotations were not sent: {e}"));
                    }
                }
                Ok(Err(e)) => published
                    .warnings
                    .push(format!("the check run could not be completed: {e}")),
                Err(_) if cancelled => published.warnings.push(format!(
                    "gave up on completing the check run {} s after the interruption (GitHub did not answer in time); it may show as in progress",
                    limit.as_secs()
                )),
                Err(_) => published
                    .warnings
                    .push("the check run could not be completed within 2 minutes".into()),
            }
        }
        if !ctx.actions {
            return published;
        }
        if !check_run_written {
            published.commands = github::workflow_commands(&run, &ctx);
        }
        let url = published.check_run_url.clone();
        if let Some(path) = &ctx.step_summary_file {
            let summary = github::step_summary(&run, &self.name, url.as_deref(), &ctx);
            if let Err(e) = append(path, &summary) {
                published
                    .warnings
                    .push(format!("failed to write the job summary: {e}"));
            }
        }
        if let Some(path) = &ctx.output_file {
            let lines = github::output_lines(&run, url.as_deref(), report);
            if let Err(e) = append(path, &lines) {
                published
                    .warnings
                    .push(format!("failed to write step outputs: {e}"));
            }
        }
        published
    }
}

pub(crate) fn append(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(text.as_bytes())
}

/// Copies of the verdicts kept so far, for a check run update or a cancelled run.
fn owned(seen: &[Arc<Outcome>]) -> Vec<Outcome> {
    seen.iter().map(|o| Outcome::clone(o)).collect()
}

/// Resources without a verdict yet, by identity, with their last state.
type Pending = Arc<Mutex<BTreeMap<crate::vocab::outcome::ResourceId, String>>>;

/// Passes events to the terminal and keeps the verdicts (and, for a cancelled run, what
/// is still pending) for GitHub.
pub struct Tee<'a> {
    inner: &'a mut dyn Observer,
    seen: Arc<Mutex<Vec<Arc<Outcome>>>>,
    pending: Pending,
    progress: Option<mpsc::UnboundedSender<()>>,
}

impl Observer for Tee<'_> {
    fn event(&mut self, at: Duration, event: RunEvent) {
        match &event {
            RunEvent::Applied { id, dry_run: false } => {
                let mut pending = self.pending.lock().expect("pending lock");
                pending.insert(id.clone(), "applied, not yet judged".to_owned());
            }
            RunEvent::Started { id, how } => {
                let mut pending = self.pending.lock().expect("pending lock");
                pending.insert(id.clone(), format!("{how}, not yet judged"));
            }
            RunEvent::Waiting { id, state } => {
                let mut pending = self.pending.lock().expect("pending lock");
                // Updated in place: each resource reports many states while it waits
                // (a 2,500-Deployment deploy printed about 16,000 of them), and its
                // identity is already there.
                match pending.get_mut(id) {
                    Some(last) => last.clone_from(state),
                    None => {
                        pending.insert(id.clone(), state.clone());
                    }
                }
            }
            RunEvent::Verdict(outcome) => {
                let mut pending = self.pending.lock().expect("pending lock");
                pending.remove(&outcome.resource);
            }
            _ => {}
        }
        if let RunEvent::Verdict(outcome) = &event {
            self.seen
                .lock()
                .expect("seen lock")
                .push(Arc::clone(outcome));
            if let Some(tx) = &self.progress {
                let _ = tx.send(());
            }
        }
        self.inner.event(at, event);
    }
}
