//! `deploy-action rbac`: load the manifests, read the cluster's discovery (which kind is
//! which resource, namespaced or not), and print the Role and ClusterRole a deploy of them
//! needs. Applies nothing; the derivation itself is `pipeline::permissions`.

use crate::cli::RbacArgs;
use crate::cluster::{Served, connect};
use crate::exit::Ended;
use crate::manifest::{self, Manifest, Scope};
use crate::pipeline::permissions::{self, Resource};
use crate::pointer::Pointer;
use crate::vocab::verdict::RunResult;
use anyhow::Context;
use std::io::Write;

pub async fn run(args: &RbacArgs, stdin: Option<&str>) -> anyhow::Result<Ended> {
    let mut manifests = manifest::load(&args.manifests.files, stdin)?;
    let c = &args.connection;
    let conn = connect::connect(
        c.kubeconfig.as_deref(),
        c.context.as_deref(),
        c.namespace.as_deref(),
    )
    .await?;
    let served = Served::discover(&conn.client)
        .await
        .with_context(|| format!("cannot read the API server's discovery at {}", conn.server))?;
    let crds: Vec<(String, String, Resource)> = manifests.iter().filter_map(crd_resource).collect();
    let lookup = |api_version: &str, kind: &str| {
        served
            .resolve(api_version, kind)
            .map(|(ar, namespaced)| Resource {
                group: ar.group,
                plural: ar.plural,
                namespaced,
            })
            .or_else(|| {
                let group = api_version.split_once('/').map_or("", |(g, _)| g);
                crds.iter()
                    .find(|(g, k, _)| g == group && k == kind)
                    .map(|(_, _, r)| r.clone())
            })
    };
    manifest::resolve_namespaces(&mut manifests, &conn.default_namespace, |av, kind| {
        lookup(av, kind).map(|r| {
            if r.namespaced {
                Scope::Namespaced
            } else {
                Scope::Cluster
            }
        })
    });
    let (grants, unknown) = permissions::needed(&manifests, lookup, args.prune);
    if !unknown.is_empty() {
        anyhow::bail!(
            "the cluster at {} serves no {} and no CRD in the manifests defines {}",
            conn.server,
            unknown.join(", "),
            if unknown.len() == 1 { "it" } else { "them" }
        );
    }
    let header = format!(
        "What `deploy-action deploy{} -f {}` needs in {} (deploy-action rbac).\n\
         Bind it to the deployer with a RoleBinding per namespace (and a ClusterRoleBinding\n\
         for the ClusterRole).",
        if args.prune { " --prune" } else { "" },
        args.manifests.files.join(","),
        conn.server
    );
    let yaml = crate::render::rbac::roles(&grants, &args.name, &header);
    let mut out = std::io::stdout().lock();
    out.write_all(yaml.as_bytes())
        .context("failed to write to stdout")?;
    Ok(Ended::Judged(RunResult::Success))
}

/// A CRD among the manifests: the group and kind it defines, and its resource.
fn crd_resource(m: &Manifest) -> Option<(String, String, Resource)> {
    if m.kind != "CustomResourceDefinition" {
        return None;
    }
    let spec = m.object.get("spec")?;
    let text = |p: &str| {
        spec.at(p)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    Some((
        text("/group")?,
        text("/names/kind")?,
        Resource {
            group: text("/group")?,
            plural: text("/names/plural")?,
            namespaced: text("/scope").as_deref() != Some("Cluster"),
        },
    ))
}
