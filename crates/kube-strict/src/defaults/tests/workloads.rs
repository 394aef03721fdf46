//! Deployment, StatefulSet, DaemonSet, ReplicaSet, Job and CronJob defaults.

use serde_json::json;

use super::{assert_json_eq, defaulted};
use crate::defaults::default_job_selector;

/// The container block every template container gets back from the server.
fn nginx_container() -> serde_json::Value {
    json!({
        "image": "nginx:1.27",
        "imagePullPolicy": "IfNotPresent",
        "name": "web",
        "ports": [{"containerPort": 80, "protocol": "TCP"}],
        "resources": {},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    })
}

fn template_spec_defaults(containers: &serde_json::Value, restart: &str) -> serde_json::Value {
    json!({
        "containers": containers,
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": restart,
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
    })
}

#[test]
fn minimal_deployment_reads_back_like_kubectl_get() {
    let applied = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [
                    {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}]},
                ]},
            },
        },
    });
    let expected = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "progressDeadlineSeconds": 600,
            "replicas": 1,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                "type": "RollingUpdate",
            },
            "template": {
                "metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
                "spec": template_spec_defaults(&json!([nginx_container()]), "Always"),
            },
        },
        "status": {},
    });
    assert_json_eq(&defaulted(applied), &expected);
}

#[test]
fn deployment_keeps_explicit_values_and_recreate_gets_no_rolling_update() {
    let applied = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "worker"},
        "spec": {
            "replicas": 0,
            "revisionHistoryLimit": 0,
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": {"app": "worker"}},
            "template": {
                "metadata": {"labels": {"app": "worker"}},
                "spec": {
                    "restartPolicy": "Always",
                    "terminationGracePeriodSeconds": 5,
                    "containers": [{"name": "w", "image": "busybox", "imagePullPolicy": "Never"}],
                },
            },
        },
    });
    let out = defaulted(applied);
    assert_eq!(out["spec"]["replicas"], json!(0));
    assert_eq!(out["spec"]["revisionHistoryLimit"], json!(0));
    assert_json_eq(&out["spec"]["strategy"], &json!({"type": "Recreate"}));
    let spec = &out["spec"]["template"]["spec"];
    assert_eq!(spec["terminationGracePeriodSeconds"], json!(5));
    assert_eq!(spec["containers"][0]["imagePullPolicy"], json!("Never"));
    assert!(
        spec.get("enableServiceLinks").is_none(),
        "pod-only default leaked"
    );
    assert!(
        spec.get("tolerations").is_none(),
        "admission default leaked"
    );
}

#[test]
fn minimal_statefulset_with_claim_template() {
    let applied = json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{
                    "name": "postgres",
                    "image": "postgres:16",
                    "volumeMounts": [{"name": "data", "mountPath": "/var/lib/postgresql/data"}],
                }]},
            },
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1024Mi"}},
                },
            }],
        },
    });
    let expected = json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
            "podManagementPolicy": "OrderedReady",
            "replicas": 1,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "db"}},
            "serviceName": "db",
            "template": {
                "metadata": {"creationTimestamp": null, "labels": {"app": "db"}},
                "spec": template_spec_defaults(&json!([{
                    "image": "postgres:16",
                    "imagePullPolicy": "IfNotPresent",
                    "name": "postgres",
                    "resources": {},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "volumeMounts": [{"mountPath": "/var/lib/postgresql/data", "name": "data"}],
                }]), "Always"),
            },
            "updateStrategy": {"rollingUpdate": {"partition": 0}, "type": "RollingUpdate"},
            "volumeClaimTemplates": [{
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"creationTimestamp": null, "name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                    "volumeMode": "Filesystem",
                },
                "status": {"phase": "Pending"},
            }],
        },
        "status": {"availableReplicas": 0, "replicas": 0},
    });
    assert_json_eq(&defaulted(applied), &expected);
}

#[test]
fn statefulset_explicit_rolling_update_type_gets_no_partition_block() {
    let applied = json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "updateStrategy": {"type": "RollingUpdate"},
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": []}},
        },
    });
    let out = defaulted(applied);
    assert_json_eq(
        &out["spec"]["updateStrategy"],
        &json!({"type": "RollingUpdate"}),
    );
}

#[test]
fn daemonset_and_replicaset_defaults() {
    let ds = defaulted(json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": "fluent/fluent-bit:latest"}]},
            },
        },
    }));
    assert_json_eq(
        &ds["spec"]["updateStrategy"],
        &json!({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}, "type": "RollingUpdate"}),
    );
    assert_eq!(ds["spec"]["revisionHistoryLimit"], json!(10));
    assert_eq!(
        ds["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
        json!("Always")
    );
    assert_json_eq(
        &ds["status"],
        &json!({
            "currentNumberScheduled": 0,
            "desiredNumberScheduled": 0,
            "numberMisscheduled": 0,
            "numberReady": 0,
        }),
    );

    let rs = defaulted(json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web-5d8c7b6f4"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [nginx_container()]}},
        },
    }));
    assert_eq!(rs["spec"]["replicas"], json!(1));
    assert_json_eq(&rs["status"], &json!({"replicas": 0}));
}

#[test]
fn minimal_job_with_generated_selector() {
    let uid = "863452e6-270d-420e-9b94-53a54146c223";
    let mut job = defaulted(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default"},
        "spec": {
            "backoffLimit": 4,
            "template": {"spec": {
                "containers": [{
                    "name": "pi",
                    "image": "perl:5.34.0",
                    "command": ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"],
                }],
                "restartPolicy": "Never",
            }},
        },
    }));
    default_job_selector(&mut job, uid);
    let labels = json!({
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": uid,
        "job-name": "pi",
    });
    let expected = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default", "labels": labels},
        "spec": {
            "backoffLimit": 4,
            "completionMode": "NonIndexed",
            "completions": 1,
            "parallelism": 1,
            "podReplacementPolicy": "TerminatingOrFailed",
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}},
            "suspend": false,
            "template": {
                "metadata": {"creationTimestamp": null, "labels": labels},
                "spec": template_spec_defaults(&json!([{
                    "command": ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"],
                    "image": "perl:5.34.0",
                    "imagePullPolicy": "IfNotPresent",
                    "name": "pi",
                    "resources": {},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }]), "Never"),
            },
        },
        "status": {},
    });
    assert_json_eq(&job, &expected);
}

#[test]
fn job_parallelism_completions_and_manual_selector() {
    let job = |spec: serde_json::Value| {
        defaulted(json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "work", "labels": {"team": "data"}},
            "spec": spec,
        }))
    };
    let parallel = job(json!({"parallelism": 3, "template": {"spec": {"containers": []}}}));
    assert!(
        parallel["spec"].get("completions").is_none(),
        "work-queue job keeps completions unset"
    );
    let completions = job(json!({"completions": 5, "template": {"spec": {"containers": []}}}));
    assert_eq!(completions["spec"]["parallelism"], json!(1));
    let per_index = job(json!({
        "completionMode": "Indexed",
        "completions": 3,
        "backoffLimitPerIndex": 1,
        "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
        "template": {"spec": {"containers": []}},
    }));
    assert_eq!(per_index["spec"]["backoffLimit"], json!(i32::MAX));
    assert_eq!(per_index["spec"]["podReplacementPolicy"], json!("Failed"));
    assert_eq!(
        per_index["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
        json!("True")
    );

    let mut manual = job(json!({
        "manualSelector": true,
        "selector": {"matchLabels": {"app": "work"}},
        "template": {"metadata": {"labels": {"app": "work"}}, "spec": {"containers": []}},
    }));
    let before = manual.clone();
    default_job_selector(&mut manual, "0f9f3c1e-5b8a-4c7e-9d21-7a6b5c4d3e2f");
    assert_json_eq(&manual, &before);
    assert_json_eq(&manual["metadata"]["labels"], &json!({"team": "data"}));
}

#[test]
fn minimal_cronjob_template_is_not_a_job() {
    let applied = json!({
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "hello", "namespace": "default"},
        "spec": {
            "schedule": "*/5 * * * *",
            "jobTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "hello", "image": "busybox:1.36", "command": ["sh", "-c", "date"]}],
                "restartPolicy": "OnFailure",
            }}}},
        },
    });
    let expected = json!({
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "hello", "namespace": "default"},
        "spec": {
            "concurrencyPolicy": "Allow",
            "failedJobsHistoryLimit": 1,
            "jobTemplate": {
                "metadata": {"creationTimestamp": null},
                "spec": {"template": {
                    "metadata": {"creationTimestamp": null},
                    "spec": template_spec_defaults(&json!([{
                        "command": ["sh", "-c", "date"],
                        "image": "busybox:1.36",
                        "imagePullPolicy": "IfNotPresent",
                        "name": "hello",
                        "resources": {},
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File",
                    }]), "OnFailure"),
                }},
            },
            "schedule": "*/5 * * * *",
            "successfulJobsHistoryLimit": 3,
            "suspend": false,
        },
        "status": {},
    });
    assert_json_eq(&defaulted(applied), &expected);
}
