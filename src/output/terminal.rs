//! The terminal: live progress (indicatif) when stderr is a TTY, plain timestamped lines
//! in CI, `::group::` folding under GitHub Actions.

use super::ci_states::CiStates;
use crate::render::{self, Style};
use crate::vocab::events::{Observer, RunEvent};
use crate::vocab::outcome::ResourceId;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashMap;
use std::io::Write;
use std::time::Duration;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TerminalMode {
    /// A line per pending resource, redrawn in place.
    Live,
    /// Plain timestamped lines, no ANSI.
    Plain,
    /// Plain lines folded into `::group::` sections.
    GitHubActions,
}

impl TerminalMode {
    /// Decide from the environment: GitHub Actions, a TTY, or plain.
    pub fn detect(stderr_is_tty: bool, github_actions: bool) -> Self {
        if github_actions {
            TerminalMode::GitHubActions
        } else if stderr_is_tty {
            TerminalMode::Live
        } else {
            TerminalMode::Plain
        }
    }
}

/// Prints a run's progress to stderr.
pub struct Terminal {
    mode: TerminalMode,
    style: Style,
    multi: MultiProgress,
    bars: HashMap<ResourceId, ProgressBar>,
    group_open: bool,
    /// When the last line was printed, to print a status table only into a quiet log.
    last_line_at: Duration,
    /// Whose log lines are being printed (`run`), to name them once.
    log_title: Option<String>,
    /// Under Actions, the token workflow commands are stopped with while logs print.
    stopped: Option<String>,
    /// What a CI log has printed of each resource's state, and what it holds back.
    ci: CiStates,
}

/// How long a CI log stays quiet before it prints a table of everything still waiting.
const QUIET_TABLE: Duration = Duration::from_secs(30);

impl Terminal {
    pub fn new(mode: TerminalMode, style: Style) -> Self {
        Self::drawing_to(
            mode,
            style,
            if mode == TerminalMode::Live {
                ProgressDrawTarget::stderr()
            } else {
                ProgressDrawTarget::hidden()
            },
        )
    }

    /// A terminal whose live lines are drawn to `target` (a test's in-memory terminal).
    fn drawing_to(mode: TerminalMode, style: Style, target: ProgressDrawTarget) -> Self {
        let multi = MultiProgress::with_draw_target(target);
        Terminal {
            mode,
            style,
            multi,
            bars: HashMap::new(),
            group_open: false,
            last_line_at: Duration::ZERO,
            log_title: None,
            stopped: None,
            ci: CiStates::default(),
        }
    }

    fn line(&self, text: &str) {
        if self.mode == TerminalMode::Live {
            let _ = self.multi.println(text);
        } else {
            // One write per line: `eprintln!` on unbuffered stderr writes the text and its
            // newline apart, two calls per line, and a deploy of 2,500 Deployments prints
            // about 27,000 lines. A whole line in one write also keeps another process
            // sharing the stream from writing between a line and its newline.
            let mut whole = String::with_capacity(text.len() + 1);
            whole.push_str(text);
            whole.push('\n');
            let _ = std::io::stderr().write_all(whole.as_bytes());
        }
    }

    fn group(&mut self, title: &str) {
        if self.mode != TerminalMode::GitHubActions {
            return;
        }
        if self.group_open {
            self.line(render::group_end());
        }
        self.line(&render::group_start(title));
        self.group_open = true;
    }

    /// Let the runner read workflow commands again after a stretch of container logs.
    fn resume_commands(&mut self) {
        if let Some(token) = self.stopped.take() {
            self.line(&format!("::{token}::"));
        }
    }

    /// Close any open group and clear live lines, before the summary is printed.
    pub fn finish(&mut self) {
        self.resume_commands();
        for (_, bar) in self.bars.drain() {
            bar.finish_and_clear();
        }
        if self.group_open {
            self.line(render::group_end());
            self.group_open = false;
        }
        let _ = std::io::stderr().flush();
    }

    /// A resource's state in a CI log, in the watch group under Actions.
    fn watch_line(&mut self, secs: f64, id: &ResourceId, state: &str) {
        if !self.group_open && self.mode == TerminalMode::GitHubActions {
            self.group("deploy-action: watch");
        }
        self.line(&render::ci_line(secs, id, state));
    }

    /// The live line of `id`, made on its first state `at` that time into the run: its
    /// clock then ticks on from there.
    fn bar(&mut self, id: &ResourceId, at: Duration) -> &ProgressBar {
        let multi = &self.multi;
        self.bars.entry(id.clone()).or_insert_with(|| {
            let bar = multi.add(ProgressBar::new_spinner().with_elapsed(at));
            bar.set_style(live_style());
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        })
    }
}

/// A live line: spinner, the resource and its state cut to the terminal's width (a wrapped
/// line would break the redraw), and the time since the run started, ticking.
fn live_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {wide_msg}  {ticking}")
        .expect("valid template")
        .with_key(
            "ticking",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = w.write_str(&crate::render::duration::elapsed(state.elapsed()));
            },
        )
}

impl Observer for Terminal {
    fn event(&mut self, at: Duration, event: RunEvent) {
        let secs = at.as_secs_f64();
        if !matches!(event, RunEvent::Log { .. } | RunEvent::Status(_)) {
            self.resume_commands();
        }
        if self.mode != TerminalMode::Live {
            for (id, state) in self.ci.due(at) {
                self.watch_line(secs, &id, &state);
                self.last_line_at = at;
            }
        }
        if !matches!(event, RunEvent::Status(_) | RunEvent::Waiting { .. }) {
            self.last_line_at = at;
        }
        match event {
            RunEvent::Status(pending) => {
                // Live mode shows every state all the time; CI logs get a table only
                // when they have been quiet for a while.
                if self.mode != TerminalMode::Live
                    && !pending.is_empty()
                    && at.saturating_sub(self.last_line_at) >= QUIET_TABLE
                {
                    self.line(&render::status_table(secs, &pending));
                    self.last_line_at = at;
                }
            }
            RunEvent::Target {
                context,
                server,
                namespace,
            } => {
                let context = context.map_or_else(String::new, |c| format!("context {c}, "));
                self.line(&format!(
                    "deploy-action: {context}server {server}, namespace {namespace}"
                ));
            }
            RunEvent::Loaded { resources } => {
                let loaded = render::summary::plural(resources, "resource", "resources");
                self.line(&format!("deploy-action: {loaded} loaded"));
            }
            RunEvent::Validating => {
                self.group("deploy-action: server-side validation");
                self.line("validating every manifest with a server-side dry run");
            }
            RunEvent::Phase(label) => {
                self.group(&format!("deploy-action: apply {label}"));
                self.line(&format!("applying {label}"));
            }
            RunEvent::Wave { number, of, label } => {
                self.line(&format!("wave {number} of {of}: {label}"));
            }
            RunEvent::Note(text) => self.line(&text),
            RunEvent::Applied { id, dry_run } => {
                let what = if dry_run {
                    "would be applied (server dry run)"
                } else {
                    "applied"
                };
                self.line(&render::ci_line(secs, &id, what));
            }
            RunEvent::Waiting { id, state } => {
                if self.mode == TerminalMode::Live {
                    let line = render::progress_line(&id, &state);
                    self.bar(&id, at).set_message(line);
                } else if !state.starts_with(crate::pipeline::FIRST_LIST) {
                    self.ci.seen(&id, &state, at);
                }
            }
            RunEvent::Verdict(outcome) => {
                self.ci.decided(&outcome.resource);
                if let Some(bar) = self.bars.remove(&outcome.resource) {
                    bar.finish_and_clear();
                }
                self.line(&render::verdict_line(outcome.as_ref(), &self.style));
            }
            RunEvent::WatchTrouble(message) => {
                self.line(&format!("warning: watch interrupted, retrying: {message}"));
            }
            RunEvent::ImagesChecked(n) => self.line(&format!(
                "image preflight: {} looked up in {}",
                render::summary::plural(n, "image", "images"),
                if n == 1 {
                    "its registry"
                } else {
                    "their registries"
                }
            )),
            RunEvent::FailFast { failed, unfinished } => self.line(&format!(
                "stopping: {} failed, so the deploy has failed; {unfinished} unfinished \
                 resource{} left without a verdict (--no-fail-fast waits for them)",
                failed.display(true),
                if unfinished == 1 { "" } else { "s" }
            )),
            RunEvent::Warning(message) => self.line(&format!("warning: {message}")),
            RunEvent::Started { id, how } => self.line(&render::ci_line(secs, &id, how)),
            RunEvent::Log {
                pod,
                container,
                line,
            } => {
                let title = format!("logs of pod {pod}, container {container}");
                if self.log_title.as_deref() != Some(title.as_str()) {
                    self.resume_commands();
                    self.group(&format!("deploy-action: {title}"));
                    self.line(&format!("{title}:"));
                    self.log_title = Some(title);
                }
                // Under Actions a log line must not be read as a workflow command.
                if self.mode == TerminalMode::GitHubActions && self.stopped.is_none() {
                    let token = render::stop_token();
                    self.line(&format!("::stop-commands::{token}"));
                    self.stopped = Some(token);
                }
                self.line(&render::sanitize(&line));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixtures;
    use indicatif::InMemoryTerm;

    #[test]
    fn a_live_line_fits_the_terminal_and_shows_the_time_since_the_run_started() {
        let term = InMemoryTerm::new(4, 60);
        let target = ProgressDrawTarget::term_like(Box::new(term.clone()));
        let mut terminal = Terminal::drawing_to(TerminalMode::Live, Style::default(), target);
        let web = fixtures::id("apps/v1", "Deployment", Some("shop"), "web");
        let state = "1/3 updated, 0 available; pod web-7c9f-x2x4z: Back-off pulling image \
                     \"registry.example.com/shop/web:v2\" (ImagePullBackOff)";
        // The state last changed 70 s into the run: the clock starts there, not at 0.
        terminal.event(
            Duration::from_secs(70),
            RunEvent::Waiting {
                id: web,
                state: state.to_owned(),
            },
        );
        let screen = term.contents();
        let line = screen.lines().next().unwrap_or_default();
        assert!(line.chars().count() <= 60, "{line:?}");
        assert!(line.contains("Deployment/web  1/3 updated"), "{screen:?}");
        assert!(line.trim_end().ends_with("1m10s"), "{screen:?}");
        assert_eq!(
            screen.lines().filter(|l| !l.trim().is_empty()).count(),
            1,
            "{screen:?}"
        );
        terminal.finish();
    }
}
