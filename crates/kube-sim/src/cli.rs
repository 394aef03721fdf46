//! The `kube-sim` command line: serve a scenario over HTTP or HTTPS, with bearer tokens and
//! RBAC when asked, for black-box tests and demos.

use crate::clock::Clock;
use crate::scenario::{Scenario, TokenSpec};
use crate::serve::{ServeError, ServeOptions};
use crate::sim::Sim;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "kube-sim",
    version,
    about = "A simulated Kubernetes cluster for testing deploy tools"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the Kubernetes API for a scenario until interrupted.
    Serve {
        /// Scenario file (YAML); the defaults when omitted.
        #[arg(long)]
        scenario: Option<PathBuf>,
        /// Address to listen on (loopback; port 0 picks a free one).
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: String,
        /// Write a kubeconfig for the cluster here once it is ready.
        #[arg(long)]
        kubeconfig: Option<PathBuf>,
        /// Namespace the kubeconfig's context uses.
        #[arg(long, default_value = "default")]
        namespace: String,
        /// Serve HTTPS with a CA generated at start (the kubeconfig carries it).
        #[arg(long)]
        tls: bool,
        /// Accept a bearer token: `TOKEN,USER[,GROUP...]` (repeatable). The kubeconfig
        /// uses the first token file, else the first token.
        #[arg(long = "token", value_name = "TOKEN,USER[,GROUP...]", value_parser = token_arg)]
        tokens: Vec<TokenSpec>,
        /// Accept the token a file holds, read again on every request so that rewriting
        /// the file rotates it: `PATH,USER[,GROUP...]` (repeatable).
        #[arg(long = "token-file", value_name = "PATH,USER[,GROUP...]", value_parser = token_file_arg)]
        token_files: Vec<TokenSpec>,
        /// Authorize every request by RBAC (Roles, ClusterRoles and their bindings).
        #[arg(long)]
        rbac: bool,
    },
    /// Check a scenario file and exit.
    Check { scenario: PathBuf },
}

/// Errors the binary reports before exiting with code 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Scenario(#[from] crate::scenario::ScenarioError),
    #[error(transparent)]
    Serve(#[from] ServeError),
    #[error("failed to write kubeconfig {path}")]
    Kubeconfig {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Run the command; returns once serving ends (Ctrl-C or SIGTERM).
///
/// # Errors
/// A bad scenario, an address that cannot be bound, or an unwritable kubeconfig.
pub async fn run(cli: Cli, out: &mut dyn std::io::Write) -> Result<(), CliError> {
    match cli.command {
        Command::Check { scenario } => {
            Scenario::from_file(&scenario)?;
            let _ = writeln!(out, "{}: ok", scenario.display());
            Ok(())
        }
        Command::Serve {
            scenario,
            listen,
            kubeconfig,
            namespace,
            tls,
            tokens,
            token_files,
            rbac,
        } => {
            let mut scenario = match scenario {
                Some(path) => Scenario::from_file(&path)?,
                None => Scenario::default(),
            };
            // The kubeconfig's credential: the first token file, else the first token.
            let credential = token_files
                .iter()
                .chain(&tokens)
                .chain(&scenario.auth.tokens)
                .next()
                .cloned();
            scenario.auth.tokens.extend(token_files);
            scenario.auth.tokens.extend(tokens);
            scenario.auth.rbac |= rbac;
            let epoch = jiff::Timestamp::now();
            let mut sim = Sim::start_with_clock(scenario, Clock::starting_at(epoch));
            let mut options = ServeOptions::new(&listen);
            if tls {
                options = options.tls();
            }
            let served = sim.serve_with(options).await?;
            if let Some(path) = &kubeconfig {
                let mut config = served.kubeconfig().namespace(&namespace);
                match credential {
                    Some(TokenSpec {
                        token_file: Some(file),
                        ..
                    }) => config = config.token_file(&file),
                    Some(TokenSpec { token: Some(t), .. }) => config = config.token(&t),
                    _ => {}
                }
                config.write(path).map_err(|source| CliError::Kubeconfig {
                    path: path.display().to_string(),
                    source,
                })?;
            }
            let _ = writeln!(
                out,
                "kube-sim serving Kubernetes {} at {}",
                sim.scenario.kubernetes_version,
                served.url()
            );
            let _ = out.flush();
            shutdown_signal().await;
            let _ = writeln!(
                out,
                "kube-sim: {} API calls served",
                sim.server.recorder.calls().len()
            );
            Ok(())
        }
    }
}

/// `TOKEN,USER[,GROUP...]`.
fn token_arg(arg: &str) -> Result<TokenSpec, String> {
    let (token, user, groups) = split_token_arg(arg, "TOKEN")?;
    Ok(TokenSpec::token(token, user, &groups))
}

/// `PATH,USER[,GROUP...]`.
fn token_file_arg(arg: &str) -> Result<TokenSpec, String> {
    let (path, user, groups) = split_token_arg(arg, "PATH")?;
    Ok(TokenSpec::token_file(path, user, &groups))
}

fn split_token_arg<'a>(
    arg: &'a str,
    first: &str,
) -> Result<(&'a str, &'a str, Vec<&'a str>), String> {
    let mut parts = arg.split(',');
    let head = parts.next().unwrap_or_default();
    let user = parts.next().unwrap_or_default();
    if head.is_empty() || user.is_empty() {
        return Err(format!("expected {first},USER[,GROUP...], got {arg:?}"));
    }
    Ok((head, user, parts.filter(|g| !g.is_empty()).collect()))
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
