//! The protobuf messages of Pods and the workloads that template them (Deployment, Job),
//! as far as `kubectl run`, `kubectl create deployment` and `kubectl create job` fill them
//! in (k8s.io/api core/v1, apps/v1, batch/v1 `generated.proto`).

use super::schema::{EMPTY_STATUS, Field, LOCAL_OBJECT_REFERENCE, OBJECT_META, Ty, many, one};

const LABEL_SELECTOR_REQUIREMENT: &[Field] = &[
    one(1, "key", Ty::Str),
    one(2, "operator", Ty::Str),
    many(3, "values", Ty::Str),
];

pub const LABEL_SELECTOR: &[Field] = &[
    many(1, "matchLabels", Ty::StrMap),
    many(2, "matchExpressions", Ty::Msg(LABEL_SELECTOR_REQUIREMENT)),
];

const CONTAINER_PORT: &[Field] = &[
    one(1, "name", Ty::Str),
    one(2, "hostPort", Ty::Int),
    one(3, "containerPort", Ty::OptInt),
    one(4, "protocol", Ty::Str),
    one(5, "hostIP", Ty::Str),
];

const ENV_VAR: &[Field] = &[one(1, "name", Ty::Str), one(2, "value", Ty::Str)];

const RESOURCE_REQUIREMENTS: &[Field] = &[
    many(1, "limits", Ty::QuantityMap),
    many(2, "requests", Ty::QuantityMap),
];

const SECURITY_CONTEXT: &[Field] = &[
    one(2, "privileged", Ty::OptBool),
    one(4, "runAsUser", Ty::OptInt),
    one(8, "runAsGroup", Ty::OptInt),
    one(5, "runAsNonRoot", Ty::OptBool),
    one(6, "readOnlyRootFilesystem", Ty::OptBool),
    one(7, "allowPrivilegeEscalation", Ty::OptBool),
];

const CONTAINER: &[Field] = &[
    one(1, "name", Ty::Str),
    one(2, "image", Ty::Str),
    many(3, "command", Ty::Str),
    many(4, "args", Ty::Str),
    one(5, "workingDir", Ty::Str),
    many(6, "ports", Ty::Msg(CONTAINER_PORT)),
    many(7, "env", Ty::Msg(ENV_VAR)),
    one(8, "resources", Ty::Msg(RESOURCE_REQUIREMENTS)),
    one(24, "restartPolicy", Ty::Str),
    one(13, "terminationMessagePath", Ty::Str),
    one(20, "terminationMessagePolicy", Ty::Str),
    one(14, "imagePullPolicy", Ty::Str),
    one(15, "securityContext", Ty::Msg(SECURITY_CONTEXT)),
    one(16, "stdin", Ty::Bool),
    one(17, "stdinOnce", Ty::Bool),
    one(18, "tty", Ty::Bool),
];

const POD_SPEC: &[Field] = &[
    many(20, "initContainers", Ty::Msg(CONTAINER)),
    many(2, "containers", Ty::Msg(CONTAINER)),
    one(3, "restartPolicy", Ty::Str),
    one(4, "terminationGracePeriodSeconds", Ty::OptInt),
    one(5, "activeDeadlineSeconds", Ty::OptInt),
    one(6, "dnsPolicy", Ty::Str),
    many(7, "nodeSelector", Ty::StrMap),
    one(8, "serviceAccountName", Ty::Str),
    one(9, "serviceAccount", Ty::Str),
    one(21, "automountServiceAccountToken", Ty::OptBool),
    one(10, "nodeName", Ty::Str),
    one(11, "hostNetwork", Ty::Bool),
    one(12, "hostPID", Ty::Bool),
    one(13, "hostIPC", Ty::Bool),
    one(27, "shareProcessNamespace", Ty::OptBool),
    many(15, "imagePullSecrets", Ty::Msg(LOCAL_OBJECT_REFERENCE)),
    one(16, "hostname", Ty::Str),
    one(17, "subdomain", Ty::Str),
    one(19, "schedulerName", Ty::Str),
    one(24, "priorityClassName", Ty::Str),
    one(25, "priority", Ty::OptInt),
    one(29, "runtimeClassName", Ty::Str),
    one(30, "enableServiceLinks", Ty::OptBool),
    one(31, "preemptionPolicy", Ty::Str),
];

const POD_TEMPLATE_SPEC: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    one(2, "spec", Ty::Msg(POD_SPEC)),
];

pub const POD: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    one(2, "spec", Ty::Msg(POD_SPEC)),
    one(3, "status", Ty::Msg(EMPTY_STATUS)),
];

const ROLLING_UPDATE_DEPLOYMENT: &[Field] = &[
    one(1, "maxUnavailable", Ty::IntOrString),
    one(2, "maxSurge", Ty::IntOrString),
];

const DEPLOYMENT_STRATEGY: &[Field] = &[
    one(1, "type", Ty::Str),
    one(2, "rollingUpdate", Ty::Msg(ROLLING_UPDATE_DEPLOYMENT)),
];

const DEPLOYMENT_SPEC: &[Field] = &[
    one(1, "replicas", Ty::OptInt),
    one(2, "selector", Ty::Msg(LABEL_SELECTOR)),
    one(3, "template", Ty::Msg(POD_TEMPLATE_SPEC)),
    one(4, "strategy", Ty::Msg(DEPLOYMENT_STRATEGY)),
    one(5, "minReadySeconds", Ty::Int),
    one(6, "revisionHistoryLimit", Ty::OptInt),
    one(7, "paused", Ty::Bool),
    one(9, "progressDeadlineSeconds", Ty::OptInt),
];

pub const DEPLOYMENT: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    one(2, "spec", Ty::Msg(DEPLOYMENT_SPEC)),
    one(3, "status", Ty::Msg(EMPTY_STATUS)),
];

const JOB_SPEC: &[Field] = &[
    one(1, "parallelism", Ty::OptInt),
    one(2, "completions", Ty::OptInt),
    one(3, "activeDeadlineSeconds", Ty::OptInt),
    one(7, "backoffLimit", Ty::OptInt),
    one(12, "backoffLimitPerIndex", Ty::OptInt),
    one(13, "maxFailedIndexes", Ty::OptInt),
    one(4, "selector", Ty::Msg(LABEL_SELECTOR)),
    one(5, "manualSelector", Ty::OptBool),
    one(6, "template", Ty::Msg(POD_TEMPLATE_SPEC)),
    one(8, "ttlSecondsAfterFinished", Ty::OptInt),
    one(9, "completionMode", Ty::Str),
    one(10, "suspend", Ty::OptBool),
    one(14, "podReplacementPolicy", Ty::Str),
    one(15, "managedBy", Ty::Str),
];

pub const JOB: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    one(2, "spec", Ty::Msg(JOB_SPEC)),
    one(3, "status", Ty::Msg(EMPTY_STATUS)),
];
