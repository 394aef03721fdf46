//! The binary's edge: read the environment, run, print the summary, write the report, and
//! map the outcome to an exit code. Errors become one message with context; nothing here
//! decides verdicts.

use crate::cli::Cli;
use crate::cluster::connect;
use crate::config::Config;
use crate::output::{Terminal, TerminalMode};
use crate::render::{self, Style};
use crate::run::{self, RunError};
use crate::verdict::EXIT_INVALID_INPUT;
use anyhow::Context;
use std::io::{IsTerminal, Read, Write};

/// Run the command line; returns the process exit code.
pub async fn main(cli: Cli) -> u8 {
    match execute(cli).await {
        Ok(code) => code,
        Err(e) => {
            #[expect(clippy::print_stderr, reason = "the edge reports errors")]
            {
                eprintln!("error: {e:#}");
                eprintln!("nothing was applied");
            }
            EXIT_INVALID_INPUT
        }
    }
}

async fn execute(cli: Cli) -> anyhow::Result<u8> {
    let config = Config::from_command(&cli.command)?;
    let stdin = if config.files.iter().any(|f| f == "-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("failed to read manifests from stdin")?;
        Some(text)
    } else {
        None
    };
    let manifests = match run::load(&config, stdin.as_deref()) {
        Ok(m) => m,
        Err(e) => return Ok(invalid(&e)),
    };
    let config_credentials = match &config.registry_config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("failed to read registry config {}", path.display()))?;
            Some(
                crate::registry::Credentials::from_docker_config_json(&text).with_context(
                    || {
                        format!(
                            "failed to read registry credentials from {}",
                            path.display()
                        )
                    },
                )?,
            )
        }
        None => None,
    };
    let access = run::RegistryAccess::new(config_credentials, &manifests)?;
    let github = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
    let stderr_tty = std::io::stderr().is_terminal();
    let style = Style::detect(
        std::io::stdout().is_terminal(),
        std::env::var("NO_COLOR").ok().as_deref(),
        std::env::var("CI").ok().as_deref(),
    );
    let mut terminal = Terminal::new(TerminalMode::detect(stderr_tty, github), style);
    if config.mode == crate::config::Mode::Check {
        let outcome = match run::check(&config, &manifests, &access, &mut terminal).await {
            Ok(o) => o,
            Err(e) => {
                terminal.finish();
                return Ok(invalid(&e));
            }
        };
        terminal.finish();
        return finish(&config, &outcome, &style);
    }
    let conn = connect::connect(
        config.kubeconfig.as_deref(),
        config.context.as_deref(),
        config.namespace.as_deref(),
    )
    .await
    .context("failed to connect to the cluster")?;
    let outcome = match run::run(&conn, &config, manifests, &access, &mut terminal).await {
        Ok(o) => o,
        Err(
            e @ (RunError::Invalid(_)
            | RunError::Load(_)
            | RunError::Config(_)
            | RunError::Unconfirmed(_)),
        ) => {
            terminal.finish();
            return Ok(invalid(&e));
        }
        Err(e) => return Err(e).context("failed to start the deploy"),
    };
    terminal.finish();
    finish(&config, &outcome, &style)
}

/// Write the report and print the summary; the exit code follows the result.
fn finish(
    config: &Config,
    outcome: &crate::outcome::RunOutcome,
    style: &Style,
) -> anyhow::Result<u8> {
    if let Some(path) = &config.report {
        let json = serde_json::to_string_pretty(&crate::report::to_json(outcome))?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("failed to write report {}", path.display()))?;
    }
    let mut summary = render::summary(outcome, style);
    if !summary.ends_with('\n') {
        summary.push('\n');
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(summary.as_bytes());
    let _ = out.flush();
    Ok(outcome.result.exit_code())
}

fn invalid(e: &RunError) -> u8 {
    #[expect(clippy::print_stderr, reason = "the edge reports errors")]
    {
        eprintln!("{e}");
        eprintln!("nothing was applied");
    }
    EXIT_INVALID_INPUT
}
