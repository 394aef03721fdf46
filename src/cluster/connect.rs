//! Connecting to the cluster the user named (kubeconfig, context) and learning its default
//! namespace.

use kube::config::{KubeConfigOptions, Kubeconfig};
use std::path::Path;

/// A client and the namespace unqualified resources go to.
#[derive(Clone)]
pub struct Connection {
    pub client: kube::Client,
    pub default_namespace: String,
    /// The kubeconfig context in use, when known (names the check run).
    pub context: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("failed to read kubeconfig {path}")]
    ReadKubeconfig {
        path: String,
        #[source]
        source: kube::config::KubeconfigError,
    },
    #[error("failed to load the kubeconfig (context {context:?})")]
    Kubeconfig {
        context: Option<String>,
        #[source]
        source: kube::config::KubeconfigError,
    },
    #[error(
        "failed to find cluster credentials (no --kubeconfig, $KUBECONFIG, ~/.kube/config or in-cluster account)"
    )]
    Infer(#[source] kube::config::InferConfigError),
    #[error("failed to create a client")]
    Client(#[source] kube::Error),
}

/// Build a client from `--kubeconfig`/`--context`, else the usual inference.
pub async fn connect(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
    namespace: Option<&str>,
) -> Result<Connection, ConnectError> {
    let options = KubeConfigOptions {
        context: context.map(str::to_owned),
        ..KubeConfigOptions::default()
    };
    let mut context_name = context.map(str::to_owned);
    let config = match kubeconfig {
        Some(path) => {
            let kc =
                Kubeconfig::read_from(path).map_err(|source| ConnectError::ReadKubeconfig {
                    path: path.display().to_string(),
                    source,
                })?;
            context_name = context_name.or_else(|| kc.current_context.clone());
            kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|source| ConnectError::Kubeconfig {
                    context: context.map(str::to_owned),
                    source,
                })?
        }
        None if context.is_some() => {
            kube::Config::from_kubeconfig(&options)
                .await
                .map_err(|source| ConnectError::Kubeconfig {
                    context: context.map(str::to_owned),
                    source,
                })?
        }
        None => {
            context_name = Kubeconfig::read().ok().and_then(|kc| kc.current_context);
            kube::Config::infer().await.map_err(ConnectError::Infer)?
        }
    };
    let default_namespace =
        namespace.map_or_else(|| config.default_namespace.clone(), str::to_owned);
    let client = kube::Client::try_from(config).map_err(ConnectError::Client)?;
    Ok(Connection {
        client,
        default_namespace,
        context: context_name,
    })
}
