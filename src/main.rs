//! The `deploy-action` binary: parse arguments, run, exit with the documented code.

use clap::Parser;
use std::process::ExitCode;

/// The static musl builds' allocator: musl's own takes one lock for every allocation, which
/// tokio's worker threads contend on (docs/benchmark.md has the measurement).
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = deploy_action::cli::Cli::parse();
    ExitCode::from(deploy_action::app::main(cli).await)
}
