//! The entry point of the rules: find the target among the objects seen and hand it to
//! the rule its kind's row names (`rules::kinds`).

use crate::rules::assessment::Assessment;
use crate::rules::kinds;
use crate::rules::live::Live;
use crate::rules::snapshot::Snapshot;
use crate::rules::target::Target;
use crate::vocab::verdict::Reason;

/// Where `target` stands given everything seen so far.
pub fn assess(target: &Target, snapshot: &Snapshot) -> Assessment {
    assess_seen(target, snapshot.live(&target.key()).as_ref(), snapshot)
}

/// [`assess`] for a caller that has read the target's object (`obj`, `None` when it is
/// not in the snapshot) already.
pub fn assess_seen(target: &Target, obj: Option<&Live>, snapshot: &Snapshot) -> Assessment {
    let Some(obj) = obj else {
        return match (target.group(), target.kind()) {
            // Nothing recreates a pod applied by name once it is gone.
            ("", "Pod") if snapshot.was_deleted(&target.key()) => {
                Assessment::failed(Reason::PodFailed, "pod was deleted")
            }
            _ if snapshot.was_deleted(&target.key()) => {
                Assessment::not_ready("deleted from the cluster since it was seen")
            }
            _ => Assessment::not_ready("not seen in the cluster yet"),
        };
    };
    (kinds::of(target.group(), target.kind()).rule)(obj, target, snapshot)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures;
    use crate::rules::judge;
    use crate::vocab::verdict::Verdict;
    use serde_json::{Value, json};
    use std::time::Duration;

    use fixtures::snapshot;

    #[track_caller]
    fn case(target: &Target, objects: &[Value], expected: (Option<Reason>, &str)) {
        let got = assess(target, &snapshot(objects));
        assert_eq!((got.reason(), got.message()), expected, "{got:?}");
    }

    #[test]
    fn dispatches_by_group_and_kind() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "web-config", "namespace": "shop", "uid": "cm-1", "resourceVersion": "1"},
            "data": {"LOG_LEVEL": "info"}});
        case(
            &Target::new("v1", "ConfigMap", Some("shop"), "web-config"),
            &[cm],
            (None, "exists"),
        );
        case(
            &Target::new("v1", "ConfigMap", Some("shop"), "other"),
            &[],
            (Some(Reason::NotReady), "not seen in the cluster yet"),
        );

        let quota = json!({"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": "compute", "namespace": "shop", "uid": "rq-1", "resourceVersion": "2"},
            "spec": {"hard": {"requests.cpu": "4"}},
            "status": {"hard": {"requests.cpu": "4"}, "used": {"requests.cpu": "300m"}}});
        case(
            &Target::new("v1", "ResourceQuota", Some("shop"), "compute"),
            &[quota],
            (None, "exists"),
        );

        let pod = fixtures::pod(
            "task",
            None,
            &json!({"app": "task"}),
            &fixtures::crash_loop_status(1, "Error", 2),
        );
        case(
            &Target::new("v1", "Pod", Some("shop"), "task"),
            &[pod],
            (
                Some(Reason::CrashLoop),
                "container web exited with code 1, restarted 2 times",
            ),
        );

        let cron = json!({"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "report", "namespace": "shop", "uid": "cj-1", "resourceVersion": "3", "generation": 1},
            "spec": {"schedule": "*/5 * * * *", "concurrencyPolicy": "Allow", "suspend": false,
                "jobTemplate": {"spec": {"template": fixtures::pod_template(&json!({}))}},
                "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1},
            "status": {}});
        case(
            &Target::new("batch/v1", "CronJob", Some("shop"), "report"),
            &[cron],
            (None, "created (schedule \"*/5 * * * *\")"),
        );

        let ingress = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "web", "namespace": "shop", "uid": "in-1", "resourceVersion": "4", "generation": 1},
            "spec": {"ingressClassName": "nginx", "rules": [{"host": "shop.example.com"}]},
            "status": {"loadBalancer": {}}});
        case(
            &Target::new("networking.k8s.io/v1", "Ingress", Some("shop"), "web"),
            &[ingress],
            (None, "created"),
        );

        let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "shop", "uid": "pdb-1", "resourceVersion": "5", "generation": 2},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
            "status": {"observedGeneration": 1, "disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3}});
        let pdb_target = Target::new("policy/v1", "PodDisruptionBudget", Some("shop"), "web");
        case(
            &pdb_target,
            std::slice::from_ref(&pdb),
            (
                Some(Reason::NotReady),
                "waiting for the disruption controller to observe generation 2 (status is for 1)",
            ),
        );
        let mut caught_up = pdb;
        caught_up["status"]["observedGeneration"] = json!(2);
        case(
            &pdb_target,
            &[caught_up],
            (None, "observed: 3/2 pods healthy, 1 disruptions allowed"),
        );
    }

    #[test]
    fn a_pod_deleted_after_it_was_seen_has_failed() {
        let pod = fixtures::pod(
            "task",
            None,
            &json!({"app": "task"}),
            &fixtures::ready_status(),
        );
        let mut snap = snapshot(&[pod]);
        snap.remove("v1", "Pod", Some("shop"), "task");
        let target = Target::new("v1", "Pod", Some("shop"), "task");
        assert_eq!(
            assess(&target, &snap),
            Assessment::failed(Reason::PodFailed, "pod was deleted")
        );
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "web-config", "namespace": "shop", "uid": "cm-1", "resourceVersion": "1"},
            "data": {"LOG_LEVEL": "info"}});
        snap.upsert(cm).unwrap();
        snap.remove("v1", "ConfigMap", Some("shop"), "web-config");
        let target = Target::new("v1", "ConfigMap", Some("shop"), "web-config");
        assert_eq!(
            assess(&target, &snap),
            Assessment::not_ready("deleted from the cluster since it was seen")
        );
    }

    #[test]
    fn a_custom_resource_whose_crd_declares_no_status_exists_and_is_judged_at_once() {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "certificates.cert-manager.io", "uid": "crd-1", "resourceVersion": "2", "generation": 1},
            "spec": {"group": "cert-manager.io", "scope": "Namespaced",
                "names": {"plural": "certificates", "kind": "Certificate"},
                "versions": [{"name": "v1", "served": true, "storage": true}]}});
        let cert = json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
            "metadata": {"name": "web-tls", "namespace": "shop", "uid": "ce-1", "resourceVersion": "6", "generation": 1},
            "spec": {"secretName": "web-tls", "dnsNames": ["shop.example.com"], "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"}}});
        let target = Target::new("cert-manager.io/v1", "Certificate", Some("shop"), "web-tls");
        let judged = |crd: &Value| {
            judge(
                assess(&target, &snapshot(&[cert.clone(), crd.clone()])),
                Duration::ZERO,
                Duration::from_secs(300),
            )
        };
        assert_eq!(
            judged(&crd),
            Some((
                Verdict::Succeeded,
                None,
                "exists (its CRD declares no status: nothing reports on it)".to_owned()
            ))
        );
        // cert-manager's real CRD declares a status: a Certificate no controller has
        // touched is not done (by the bundled rule), and at its deadline says why.
        let mut with_status = crd;
        with_status["spec"]["versions"][0]["subresources"] = json!({"status": {}});
        assert_eq!(
            judge(
                assess(&target, &snapshot(&[cert.clone(), with_status.clone()])),
                Duration::ZERO,
                Duration::from_secs(300),
            ),
            None
        );
        assert_eq!(
            judge(
                assess(&target, &snapshot(&[cert, with_status])),
                Duration::from_secs(300),
                Duration::from_secs(300),
            ),
            Some((
                Verdict::TimedOut,
                Some(Reason::NotReconciled),
                "no controller has reported on it yet (it has no status)".to_owned()
            ))
        );
    }

    /// What a reader sees for each pod trouble once judged at the deadline, in one place.
    #[test]
    fn pod_verdicts_read_well() {
        let image = fixtures::IMAGE;
        let bare = format!("Back-off pulling image \"{image}\"");
        let scenarios = [
            (
                "oom crash loop",
                fixtures::crash_loop_status(137, "OOMKilled", 5),
            ),
            (
                "missing configmap",
                fixtures::waiting_status(
                    "CreateContainerConfigError",
                    "configmap \"web-config\" not found",
                ),
            ),
            (
                "cold secret cache",
                fixtures::waiting_status(
                    "CreateContainerConfigError",
                    "failed to sync secret cache: timed out waiting for the condition",
                ),
            ),
            (
                "bare back-off (<= 1.31)",
                fixtures::waiting_status("ImagePullBackOff", &bare),
            ),
            (
                "back-off with cause (1.32+)",
                fixtures::waiting_status(
                    "ImagePullBackOff",
                    &format!(
                        "{bare}: ErrImagePull: failed to pull and unpack image \"{image}\": failed to resolve reference \"{image}\": {image}: not found"
                    ),
                ),
            ),
            ("unschedulable", fixtures::unschedulable_status()),
            ("readiness", fixtures::running_not_ready_status()),
            (
                "evicted",
                json!({"phase": "Failed", "reason": "Evicted",
                    "message": "The node was low on resource: ephemeral-storage.", "startTime": "2025-03-04T10:15:00Z"}),
            ),
        ];
        let rendered: Vec<String> = scenarios
            .into_iter()
            .map(|(name, status)| {
                let pod = fixtures::pod("task", None, &json!({"app": "task"}), &status);
                let target = Target::new("v1", "Pod", Some("shop"), "task");
                let deadline = Duration::from_secs(600);
                match judge(assess(&target, &snapshot(&[pod])), deadline, deadline) {
                    Some((verdict, reason, message)) => {
                        let reason = reason.map_or("-", |r| r.as_str());
                        format!("{name}: {verdict} {reason}: {message}")
                    }
                    None => format!("{name}: undecided"),
                }
            })
            .collect();
        insta::assert_snapshot!(rendered.join("\n"));
    }
}
