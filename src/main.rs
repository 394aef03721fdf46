//! The `deploy-action` binary: parse arguments, run, exit with the documented code.

use clap::Parser;
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = deploy_action::cli::Cli::parse();
    ExitCode::from(deploy_action::app::main(cli).await)
}
