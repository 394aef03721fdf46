//! What a command does once connected: deploy, plan or watch manifests, restart workloads,
//! or run a task's pod; its own arguments are checked before any I/O.

use crate::cli::Command;
use crate::cluster::connect;
use crate::config::Config;
use crate::pipeline::{self, RunError};
use crate::vocab::outcome::RunOutcome;

/// What the command does once connected: deploy or watch manifests, restart workloads, or
/// run a pod.
pub enum Work {
    Manifests,
    Restart(pipeline::restart::Request),
    Run(pipeline::task::Request, Option<Box<pipeline::task::Task>>),
}

impl Work {
    /// The command's own arguments, checked before any I/O.
    pub fn of(command: &Command) -> Result<Work, RunError> {
        Ok(match command {
            Command::Restart(args) => Work::Restart(pipeline::restart::Request::from_args(args)?),
            Command::Run(args) => Work::Run(pipeline::task::Request::from_args(args)?, None),
            _ => Work::Manifests,
        })
    }

    /// `run`: the template becomes the pod to start (the manifests are then that pod).
    pub fn prepare(
        &mut self,
        manifests: Vec<crate::manifest::Manifest>,
    ) -> Result<Vec<crate::manifest::Manifest>, RunError> {
        let Work::Run(request, prepared) = self else {
            return Ok(manifests);
        };
        let pod = pipeline::task::prepare(&manifests, request)?;
        let manifests = vec![pod.manifest.clone()];
        *prepared = Some(Box::new(pod));
        Ok(manifests)
    }

    pub async fn run(
        self,
        conn: &connect::Connection,
        config: &Config,
        manifests: Vec<crate::manifest::Manifest>,
        access: &pipeline::RegistryAccess,
        observer: &mut dyn crate::vocab::events::Observer,
    ) -> Result<RunOutcome, RunError> {
        match self {
            Work::Manifests | Work::Run(_, None) => {
                pipeline::deploy(conn, config, manifests, access, observer).await
            }
            Work::Restart(request) => {
                Box::pin(pipeline::restart::restart(
                    conn, config, &request, access, observer,
                ))
                .await
            }
            Work::Run(_, Some(pod)) => {
                Box::pin(pipeline::task::execute(
                    conn, config, *pod, access, observer,
                ))
                .await
            }
        }
    }
}
