//! Leaving `spec.replicas` to the autoscaler: find the workloads one sizes (the manifests'
//! HorizontalPodAutoscalers and KEDA ScaledObjects, and the HPAs already in the manifests'
//! namespaces), take the count out of those that exist already, and, just before their
//! apply, hand the field over so it is never removed on the way.

use super::context::Context;
use crate::autoscale::{self, HANDOVER_MANAGER, Scaler};
use crate::cluster::Served;
use crate::cluster::apply::{self, api_for};
use crate::manifest::Manifest;
use crate::phases::Step;
use crate::pointer::Pointer;
use crate::vocab::events::RunEvent;
use crate::vocab::outcome::{Notice, SourceSpan};
use kube::api::{ListParams, PatchParams};
use serde_json::Value;
use std::collections::BTreeSet;

/// A workload whose count this deploy leaves to its autoscaler.
pub struct Autoscaled {
    pub index: usize,
    /// `HorizontalPodAutoscaler/web`.
    pub by: String,
    pub live: Value,
}

const SCALABLE: [&str; 4] = [
    "Deployment",
    "StatefulSet",
    "ReplicaSet",
    "ReplicationController",
];

/// The workloads that exist already and an autoscaler sizes, with `spec.replicas` taken
/// out of their manifests (a first deploy still sends it, to create them at that size).
pub async fn prepare(
    ctx: &mut Context<'_>,
    served: &Served,
    manifests: &mut [Manifest],
) -> (Vec<Autoscaled>, Vec<Notice>) {
    let default_ns = ctx.conn.default_namespace.clone();
    let mut scalers: Vec<Scaler> = manifests
        .iter()
        .filter_map(|m| autoscale::scaler(&m.object, &default_ns))
        .collect();
    let namespaces: BTreeSet<String> = manifests
        .iter()
        .filter(|m| SCALABLE.contains(&m.kind.as_str()) || m.object.at("/spec/replicas").is_some())
        .filter_map(|m| m.namespace.clone())
        .collect();
    if namespaces.is_empty() {
        return (Vec::new(), Vec::new());
    }
    if let Some((ar, _)) = served.resolve("autoscaling/v2", "HorizontalPodAutoscaler") {
        for ns in &namespaces {
            let api = api_for(&ctx.conn.client, &ar, Some(ns));
            let params = ListParams::default();
            match apply::retrying("list", || api.list(&params)).await {
                Ok(list) => scalers.extend(list.items.iter().filter_map(|hpa| {
                    serde_json::to_value(hpa)
                        .ok()
                        .and_then(|mut v| {
                            v["apiVersion"] = "autoscaling/v2".into();
                            v["kind"] = "HorizontalPodAutoscaler".into();
                            autoscale::scaler(&v, ns)
                        })
                })),
                Err(e) => ctx.event(RunEvent::Warning(format!(
                    "could not list the HorizontalPodAutoscalers in namespace {ns} ({}): spec.replicas is applied as the manifests say",
                    e.message
                ))),
            }
        }
    }
    let mut autoscaled = Vec::new();
    let mut notices = Vec::new();
    for (index, m) in manifests.iter_mut().enumerate() {
        let Some(scaler) = autoscale::scaler_of(m, &scalers) else {
            continue;
        };
        let Some((ar, ns)) = served.address(m) else {
            continue;
        };
        let live = match apply::live(&ctx.conn.client, &ar, ns, &m.name).await {
            Ok(Some(live)) => live,
            // Not there yet: created at the manifest's count, then the autoscaler's.
            Ok(None) => continue,
            Err(e) => {
                ctx.event(RunEvent::Warning(format!(
                    "could not read {} to leave its replicas to {} ({}): spec.replicas is applied as the manifest says",
                    m.display_name(),
                    scaler.by,
                    e.message
                )));
                continue;
            }
        };
        let line = m.line_of("/spec/replicas").unwrap_or(m.line);
        if let Some(declared) = autoscale::leave_replicas(m) {
            let now = live
                .at("/spec/replicas")
                .map_or_else(|| "unset".to_owned(), Value::to_string);
            let message = format!(
                "{} sets spec.replicas: {declared}, but {} sizes it: the count is left to the autoscaler (now {now})",
                m.display_name(),
                scaler.by
            );
            ctx.event(RunEvent::Warning(format!("{}:{line}: {message}", m.file)));
            notices.push(Notice {
                source: SourceSpan {
                    file: m.file.clone(),
                    line,
                },
                message,
            });
        }
        autoscaled.push(Autoscaled {
            index,
            by: scaler.by.clone(),
            live,
        });
    }
    (autoscaled, notices)
}

/// Before the wave's apply: where deploy-action alone applied `spec.replicas`, another
/// manager takes it on at the live count, so leaving it out does not remove it (and drop
/// the count to 1) before the autoscaler writes it again.
pub async fn hand_over(
    ctx: &mut Context<'_>,
    served: &Served,
    manifests: &[Manifest],
    steps: &[Step],
    autoscaled: &[Autoscaled],
) {
    for a in autoscaled
        .iter()
        .filter(|a| steps.iter().any(|s| s.index == a.index))
    {
        if !autoscale::applies_replicas(&a.live, apply::FIELD_MANAGER) {
            continue;
        }
        let m = &manifests[a.index];
        let (Some((ar, ns)), Some(body)) = (served.address(m), autoscale::handover(&a.live)) else {
            continue;
        };
        let params = PatchParams::apply(HANDOVER_MANAGER);
        if let Err(e) = apply::apply_with(&ctx.conn.client, &ar, ns, &body, params).await {
            ctx.event(RunEvent::Warning(format!(
                "could not hand spec.replicas of {} over to {} before leaving it out ({}): the count may drop to 1 until the autoscaler sets it again",
                m.display_name(),
                a.by,
                e.message
            )));
        }
    }
}
