//! Why a run could not start: every variant exits 2, with nothing applied.

use crate::manifest::{self, Problem};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Load(#[from] manifest::LoadError),
    #[error("{}", manifest::render_problems(.0))]
    Invalid(Vec<Problem>),
    /// The `--rules` files, every problem in them.
    #[error("found {} in the health rules:\n{}", manifest::count(.0.len()), manifest::render_problems(.0))]
    Rules(Vec<Problem>),
    #[error(transparent)]
    Connect(#[from] crate::cluster::connect::ConnectError),
    /// Discovery, the first request a run makes, failed: `cannot reach the API server at
    /// https://...: connection refused`, or what the server answered.
    #[error("{0}")]
    Discovery(String),
    #[error("--image-preflight require: could not confirm {}", .0.join("; "))]
    Unconfirmed(Vec<String>),
    #[error("failed to set up registry lookups")]
    Registry(#[from] crate::registry::RegistryError),
    #[error(transparent)]
    Restart(#[from] super::restart::RestartError),
    #[error(transparent)]
    Task(#[from] super::task::TaskError),
    #[error(transparent)]
    Prune(#[from] crate::prune::PruneRefusal),
    /// An output the run would write at its end cannot be written (`--report` into a
    /// directory that does not exist).
    #[error("{0}")]
    Unwritable(String),
}

impl RunError {
    /// The located problems it names, if it is made of them.
    pub fn problems(&self) -> &[Problem] {
        match self {
            RunError::Invalid(p) | RunError::Rules(p) => p,
            RunError::Load(l) => l.problems(),
            _ => &[],
        }
    }

    /// Whether the input itself was refused (the manifests, the command's arguments, an
    /// image `--image-preflight require` could not confirm): said as it is, where other
    /// errors are reported as what failed.
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            RunError::Invalid(_)
                | RunError::Rules(_)
                | RunError::Unwritable(_)
                | RunError::Load(_)
                | RunError::Config(_)
                | RunError::Unconfirmed(_)
                | RunError::Restart(_)
                | RunError::Task(_)
        )
    }
}
