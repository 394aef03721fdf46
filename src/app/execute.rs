//! A run from the command line to its end: read the input and the environment, run the
//! command, print the summary, write the report, publish to GitHub, and say how it ended.

use super::interrupts::Interrupts;
use super::work::Work;
use crate::cli::Cli;
use crate::cluster::connect;
use crate::config::{Config, Mode};
use crate::exit::{self, Ended};
use crate::output::{Environment, Published, Publisher, Redacting, Terminal, TerminalMode};
use crate::pipeline::{self, RunError};
use crate::render::{self, Redactor, Style};
use crate::vocab::outcome::RunOutcome;
use anyhow::Context;
use std::io::{Read, Write};

/// Run the command line; returns the process exit code.
pub async fn main(cli: Cli) -> u8 {
    let ended = match Box::pin(execute(cli)).await {
        Ok(ended) => ended,
        Err(e) => {
            #[expect(clippy::print_stderr, reason = "the edge reports errors")]
            {
                eprintln!("error: {e:#}");
                eprintln!("nothing was applied");
            }
            Ended::Refused
        }
    };
    exit::code(ended)
}

/// How the outputs of this run look and what they hide, settled once at its start.
struct Presentation {
    style: Style,
    redactor: Redactor,
    /// On an Actions runner: workflow commands are read from stdout.
    actions: bool,
    /// When the run started, and where it acts once connected, for the report.
    started_at: jiff::Timestamp,
    cluster: Option<crate::vocab::outcome::ClusterPlace>,
}

/// Standard input for `-f -`, read to one byte past the loader's size limit so that an
/// endless or huge stream is refused by the loader instead of filling memory.
fn read_stdin() -> anyhow::Result<String> {
    let limit = crate::manifest::limits::MAX_INPUT_BYTES;
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .context("failed to read manifests from stdin")?;
    if bytes.len() > limit {
        // Cut at any byte: only its length matters now.
        return Ok(String::from_utf8_lossy(&bytes).into_owned());
    }
    String::from_utf8(bytes).map_err(|_| {
        anyhow::anyhow!("manifests on stdin are not valid UTF-8 (they must be UTF-8 YAML or JSON)")
    })
}

async fn execute(cli: Cli) -> anyhow::Result<Ended> {
    if let crate::cli::Command::Rbac(args) = &cli.command {
        let stdin = if args.manifests.stdin_count() > 0 {
            Some(read_stdin()?)
        } else {
            None
        };
        return super::rbac::run(args, stdin.as_deref()).await;
    }
    let started_at = jiff::Timestamp::now();
    let config = Config::from_command(&cli.command)?;
    let mode = config.mode;
    let config = match pipeline::load_rules(config) {
        Ok(c) => c,
        Err(e) => return Ok(refused(&e, mode)),
    };
    // Listening from the start: a signal while the check run is being created must not
    // kill the process with the run left in progress.
    let mut interrupts = Interrupts::install();
    let stdin = if config.files.iter().any(|f| f == "-") {
        Some(read_stdin()?)
    } else {
        None
    };
    if let Err(e) = writable(&config) {
        return Ok(refused(&e, config.mode));
    }
    let mut work = match Work::of(&cli.command) {
        Ok(w) => w,
        Err(e) => return Ok(refused(&e, config.mode)),
    };
    // `restart` reads what it restarts from the cluster.
    let loaded = match config.mode {
        Mode::Restart => Ok((Vec::new(), Vec::new())),
        _ => pipeline::load(&config, stdin.as_deref()),
    };
    let (manifests, unchecked) = match loaded {
        Ok(m) => m,
        Err(e) => return Ok(refused(&e, config.mode)),
    };
    let manifests = match work.prepare(manifests) {
        Ok(m) => m,
        Err(e) => return Ok(refused(&e, config.mode)),
    };
    let config_credentials = match &config.registry_config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("failed to read registry config {}", path.display()))?;
            Some(
                crate::registry::Credentials::from_runner_docker_config(
                    &text,
                    crate::registry::CredentialHelpers::on_path(),
                )
                .with_context(|| {
                    format!(
                        "failed to read registry credentials from {}",
                        path.display()
                    )
                })?,
            )
        }
        None => None,
    };
    let access = pipeline::RegistryAccess::new(config_credentials, &manifests)?;
    let env = Environment::read();
    let github = env.github_actions();
    let style = Style::detect(env.stdout_tty, env.var("NO_COLOR"), env.var("CI"));
    // Values the manifests hold in Secrets (or secret-looking env vars): masked by the
    // runner from here on, and redacted from everything deploy-action renders.
    let secrets = crate::manifest::secrets::values(&manifests);
    if github {
        let mut out = std::io::stdout().lock();
        for secret in &secrets {
            let _ = writeln!(out, "{}", crate::render::github::mask_command(secret));
        }
    }
    let token = config.github.github_token.clone();
    let redactor = Redactor::new(
        secrets
            .iter()
            .cloned()
            .chain(token.filter(|t| !t.trim().is_empty())),
    );
    let mut terminal = Terminal::new(TerminalMode::detect(env.stderr_tty, github), style);
    let mut shown = Presentation {
        style,
        redactor,
        actions: github,
        started_at,
        cluster: None,
    };
    if config.mode == Mode::Check {
        let name = config
            .github
            .check_name
            .clone()
            .unwrap_or_else(|| "check".to_owned());
        let publisher = start_publisher(&config, name, &shown.redactor, &env).await;
        let mut tee = publisher.observer(&mut terminal);
        let mut observer = Redacting::new(&shown.redactor, &mut tee);
        let result = pipeline::check(&config, &manifests, unchecked, &access, &mut observer).await;
        drop(tee);
        terminal.finish();
        return match result {
            Ok(outcome) => finish(&config, outcome, publisher, false, &shown).await,
            Err(e) => {
                abandon(publisher).await;
                Ok(refused(&e, config.mode))
            }
        };
    }
    let conn = connect::connect(
        config.kubeconfig.as_deref(),
        config.context.as_deref(),
        config.namespace.as_deref(),
    )
    .await?;
    shown.cluster = Some(crate::vocab::outcome::ClusterPlace {
        context: conn.context.clone(),
        server: conn.server.clone(),
        namespace: conn.default_namespace.clone(),
    });
    let name = config.github.check_name.clone().unwrap_or_else(|| {
        let word = match config.mode {
            Mode::Restart => "restart",
            Mode::Run => "run",
            _ => "deploy",
        };
        crate::render::github::default_check_name(
            word,
            conn.context.as_deref(),
            &conn.default_namespace,
        )
    });
    let (publisher, early) =
        start_publisher_listening(&config, name, &shown.redactor, &env, &mut interrupts).await;
    if let Some(signal) = early {
        finish(&config, publisher.so_far(), publisher, true, &shown).await?;
        return Ok(Ended::Interrupted(signal));
    }
    let mut tee = publisher.observer(&mut terminal);
    let mut observer = Redacting::new(&shown.redactor, &mut tee);
    let result = tokio::select! {
        r = work.run(&conn, &config, manifests, &access, &mut observer) => Ok(r),
        signal = interrupts.next() => Err(signal),
    };
    drop(tee);
    terminal.finish();
    match result {
        Ok(Ok(outcome)) => finish(&config, outcome, publisher, false, &shown).await,
        Ok(Err(e)) => {
            abandon(publisher).await;
            if e.is_input() {
                Ok(refused(&e, config.mode))
            } else {
                Err(e.into())
            }
        }
        Err(signal) => {
            let outcome = publisher.so_far();
            // A second signal means "now": exit without waiting for GitHub.
            tokio::select! {
                done = finish(&config, outcome, publisher, true, &shown) => {
                    done?;
                }
                again = interrupts.next() => {
                    #[expect(clippy::print_stderr, reason = "the edge reports problems")]
                    {
                        eprintln!("interrupted again: exiting without completing the check run");
                    }
                    return Ok(Ended::Interrupted(again));
                }
            }
            Ok(Ended::Interrupted(signal))
        }
    }
}

/// Create the check run (when enabled) and mask the token first thing under Actions.
async fn start_publisher(
    config: &Config,
    name: String,
    redactor: &Redactor,
    env: &Environment,
) -> Publisher {
    let dry_run = config.mode == Mode::DryRun;
    let publisher = Publisher::start(&config.github, name, dry_run, redactor, env).await;
    if let Some(mask) = publisher.mask() {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{mask}");
    }
    for w in &publisher.warnings {
        #[expect(clippy::print_stderr, reason = "the edge reports problems")]
        {
            eprintln!("warning: {w}");
        }
    }
    publisher
}

/// A run that could not start still completes its check run (never left in progress).
async fn abandon(publisher: Publisher) {
    let mut outcome = crate::vocab::outcome::RunOutcome::new(false, 0.0, Vec::new());
    outcome.result = crate::vocab::verdict::RunResult::Failure;
    let published = publisher
        .finish(&outcome, false, &serde_json::Value::Null)
        .await;
    report_published(&published, false);
}

/// Start the publisher while listening for signals. A signal during the check run's
/// creation lets the creation end (bounded: the runner kills 7.5 s after SIGINT) so the
/// run exists to be completed as cancelled; the signal is returned.
async fn start_publisher_listening(
    config: &Config,
    name: String,
    redactor: &Redactor,
    env: &Environment,
    interrupts: &mut Interrupts,
) -> (Publisher, Option<u8>) {
    let start = start_publisher(config, name.clone(), redactor, env);
    tokio::pin!(start);
    tokio::select! {
        publisher = &mut start => (publisher, None),
        signal = interrupts.next() => {
            let limit = crate::output::CANCELLED_FINISH_LIMIT;
            if let Ok(publisher) = tokio::time::timeout(limit, start).await {
                (publisher, Some(signal))
            } else {
                // The create never answered; report without a check run.
                let mut quiet = config.clone();
                quiet.github.check_run = crate::cli::CheckRunMode::Off;
                (start_publisher(&quiet, name, redactor, env).await, Some(signal))
            }
        }
    }
}

fn report_published(published: &Published, cancelled: bool) {
    let mut out = std::io::stdout().lock();
    for c in &published.commands {
        let _ = writeln!(out, "{c}");
    }
    #[expect(clippy::print_stderr, reason = "the edge reports problems")]
    {
        for w in &published.warnings {
            eprintln!("warning: {w}");
        }
        match (cancelled, &published.check_run_url) {
            (true, Some(_)) => eprintln!("interrupted: the check run was completed as cancelled"),
            (true, None) => eprintln!("interrupted: the run was cancelled"),
            (false, _) => {}
        }
        if let Some(url) = &published.check_run_url {
            eprintln!("check run: {url}");
        }
    }
}

/// Every file the run will write at its end (`--report`), opened now: a path that cannot
/// be written is refused before anything is applied, not found out after.
fn writable(config: &Config) -> Result<(), RunError> {
    let Some(path) = &config.report else {
        return Ok(());
    };
    let existed = path.exists();
    match std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
    {
        Ok(_) => {
            if !existed {
                let _ = std::fs::remove_file(path);
            }
            Ok(())
        }
        Err(e) => Err(RunError::Unwritable(format!(
            "cannot write the report to {}: {e}",
            path.display()
        ))),
    }
}

/// Write the report, print the summary, publish to GitHub; the run ended as its result says.
async fn finish(
    config: &Config,
    outcome: RunOutcome,
    publisher: Publisher,
    cancelled: bool,
    shown: &Presentation,
) -> anyhow::Result<Ended> {
    // Cluster text (logs, events, messages) may quote a secret: masked before any rendering.
    let mut outcome = shown.redactor.run(&outcome);
    outcome.done = config.mode.done();
    outcome.started_at = Some(shown.started_at);
    outcome.cluster.clone_from(&shown.cluster);

    let report = crate::render::report::to_json(&outcome);
    if let Some(path) = &config.report {
        // Checked before anything was applied; should it fail now, the verdict still
        // reaches the summary and GitHub.
        let json = serde_json::to_string_pretty(&report).unwrap_or_default();
        if let Err(e) = std::fs::write(path, json + "\n") {
            #[expect(clippy::print_stderr, reason = "the edge reports problems")]
            {
                eprintln!(
                    "warning: could not write the report {}: {e}",
                    path.display()
                );
            }
        }
    }
    let mut summary = render::summary(&outcome, &shown.style);
    if !summary.ends_with('\n') {
        summary.push('\n');
    }
    // Log tails and cluster messages are untrusted: under Actions none of their lines may
    // act as a workflow command.
    if shown.actions {
        summary = render::commands_stopped(&summary, &render::stop_token());
    }
    {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(summary.as_bytes());
        let _ = out.flush();
    }
    let published = publisher.finish(&outcome, cancelled, &report).await;
    report_published(&published, cancelled);
    Ok(Ended::Judged(outcome.result))
}

/// Say why the input was refused, and that nothing was done.
fn refused(e: &RunError, mode: Mode) -> Ended {
    let nothing = match mode {
        Mode::Restart => "nothing was restarted",
        Mode::Run => "no pod was started",
        _ => "nothing was applied",
    };
    #[expect(clippy::print_stderr, reason = "the edge reports errors")]
    {
        eprintln!("{e}");
        eprintln!("{nothing}");
    }
    if std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true") {
        refused_under_actions(e);
    }
    Ended::Refused
}

/// Under Actions, a refusal leaves what a finished run does: errors at the lines to fix,
/// a job summary, and `result=invalid` for later steps.
fn refused_under_actions(e: &RunError) {
    use crate::render::github::refusal;
    let message = e.to_string();
    {
        let mut out = std::io::stdout().lock();
        for command in refusal::commands(&message, e.problems()) {
            let _ = writeln!(out, "{command}");
        }
    }
    for (var, text) in [
        ("GITHUB_STEP_SUMMARY", refusal::step_summary(&message)),
        ("GITHUB_OUTPUT", refusal::output_lines()),
    ] {
        if let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty())
            && let Err(err) = crate::output::github::append(std::path::Path::new(&path), &text)
        {
            #[expect(clippy::print_stderr, reason = "the edge reports problems")]
            {
                eprintln!("warning: could not write {var}: {err}");
            }
        }
    }
}
