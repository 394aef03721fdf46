//! The `deploy-action` binary: parse arguments, run, exit with the documented code.

use clap::Parser;
use std::process::ExitCode;

/// mimalloc, on every target: a deploy allocates and frees small objects by the million
/// (watch events parsed, kept, read again by the rules). glibc's malloc spent a quarter of
/// the CPU at 10,000 pods, musl's takes a lock per call (docs/benchmark.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One thread runs everything. The work is one judging loop fed by watch streams: on the
/// 2-core runners it targets, a thread pool spent its time handing each watch event from a
/// worker thread to the loop (a wakeup and a context switch per event) and kept a malloc
/// arena per thread. At 2,000 pods one thread took 15% less CPU (docs/benchmark.md). While
/// a deploy is judged, the thread lets watch events gather before it waits (`pacing`).
fn main() -> ExitCode {
    let cli = deploy_action::cli::Cli::parse();
    // As `#[tokio::main]` does: only a process out of threads or file descriptors fails.
    let runtime = deploy_action::pacing::PACING
        .runtime()
        .expect("Failed building the Runtime");
    ExitCode::from(runtime.block_on(deploy_action::app::main(cli)))
}
