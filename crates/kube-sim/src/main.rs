//! The `kube-sim` binary: parse arguments, run, map the outcome to an exit code.

use clap::Parser;
use std::process::ExitCode;

/// mimalloc, as deploy-action uses: a simulated cluster builds and drops JSON maps by the
/// million (every write, watch event and controller pass), and glibc's malloc took about a
/// third of kube-sim's CPU bringing 4,000 pods up (docs/benchmark.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let cli = kube_sim::cli::Cli::parse();
    match kube_sim::cli::run(cli, &mut std::io::stdout()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let mut msg = format!("kube-sim: {e}");
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                msg.push_str(&format!(": {s}"));
                source = s.source();
            }
            #[expect(
                clippy::print_stderr,
                reason = "the binary's one place to report errors"
            )]
            {
                eprintln!("{msg}");
            }
            ExitCode::from(2)
        }
    }
}
