//! The `kube-sim` command line: serve a scenario over HTTP for black-box tests and demos.

use crate::clock::Clock;
use crate::kubeconfig::write_kubeconfig;
use crate::scenario::Scenario;
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
    },
    /// Check a scenario file and exit.
    Check { scenario: PathBuf },
}

/// Errors the binary reports before exiting with code 2.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Scenario(#[from] crate::scenario::ScenarioError),
    #[error("failed to listen on {addr}")]
    Listen {
        addr: String,
        #[source]
        source: std::io::Error,
    },
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
        } => {
            let scenario = match scenario {
                Some(path) => Scenario::from_file(&path)?,
                None => Scenario::default(),
            };
            let epoch = jiff::Timestamp::now();
            let mut sim = Sim::start_with_clock(scenario, Clock::starting_at(epoch));
            let addr = sim
                .serve(&listen)
                .await
                .map_err(|source| CliError::Listen {
                    addr: listen.clone(),
                    source,
                })?;
            if let Some(path) = &kubeconfig {
                write_kubeconfig(path, addr, &namespace).map_err(|source| {
                    CliError::Kubeconfig {
                        path: path.display().to_string(),
                        source,
                    }
                })?;
            }
            let _ = writeln!(
                out,
                "kube-sim serving Kubernetes {} at http://{addr}",
                sim.scenario.kubernetes_version
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
