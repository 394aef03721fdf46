//! Container states that waiting cannot fix (krane's "doomed" pods), shared by every
//! workload rule so a crash loop reads the same under a Deployment as under a Job.

use crate::vocab::outcome::ContainerRef;
use crate::vocab::verdict::Reason;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod};

/// The kubelet's reasons for a container that could not be started by the runtime.
const CANNOT_RUN_REASONS: [&str; 3] = ["ContainerCannotRun", "StartError", "RunContainerError"];
/// The runtime's own exit code for a failed start; seen on transient mount and sandbox
/// trouble, so it is not taken as proof that the container can never run.
const RUNTIME_START_EXIT_CODE: i32 = 128;
/// How the kubelet says its cache of some object (configmap, secret, any other) was not
/// warm yet: `failed to sync <object> cache: timed out waiting for the condition`.
const CACHE_SYNC_PREFIX: &str = "failed to sync ";
const CACHE_SYNC_SUFFIX: &str = " cache";

/// One container's hopeless state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doom {
    /// A failed-verdict reason.
    pub reason: Reason,
    pub container: ContainerRef,
    /// What happened, e.g. `container web exited with code 3 (OOMKilled), restarted 4 times`.
    pub detail: String,
}

impl Doom {
    /// How a count of pods reads with this doom: `2 of 3 pods crash looping`.
    /// What the pods do, agreeing with how many do it (`1 of 3 pods cannot pull its
    /// image`, `2 of 3 pods cannot pull their image`).
    pub fn phrase(&self, one: bool) -> &'static str {
        match (self.reason, one) {
            (Reason::CrashLoop, _) => "crash looping",
            (Reason::ContainerConfigError, true) => "cannot create its containers",
            (Reason::ContainerConfigError, false) => "cannot create their containers",
            (Reason::ContainerCannotRun, true) => "cannot run its containers",
            (Reason::ContainerCannotRun, false) => "cannot run their containers",
            (Reason::InvalidImageName, true) => "has an invalid image",
            (Reason::InvalidImageName, false) => "have an invalid image",
            (Reason::ImageNotFound | Reason::ImageUnauthorized, true) => "cannot pull its image",
            (Reason::ImageNotFound | Reason::ImageUnauthorized, false) => "cannot pull their image",
            _ => "failing",
        }
    }
}

/// `1 time`, `3 times`; `1 pod`, `2 pods`: counts read as a person writes them.
pub fn count(n: impl Into<i64>, singular: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {singular}")
    } else {
        format!("{n} {singular}s")
    }
}

/// The first doomed container of a pod, init containers first since they block the rest.
pub fn doom(pod: &Pod) -> Option<Doom> {
    let status = pod.status.as_ref()?;
    let statuses = status
        .init_container_statuses
        .iter()
        .chain(status.container_statuses.iter())
        .flatten();
    statuses.into_iter().find_map(|cs| {
        container_doom(cs).map(|(reason, detail)| Doom {
            reason,
            container: container_ref(pod, &cs.name, Some(&cs.image)),
            detail,
        })
    })
}

fn container_doom(cs: &ContainerStatus) -> Option<(Reason, String)> {
    let state = cs.state.as_ref();
    let waiting = state.and_then(|s| s.waiting.as_ref());
    let waiting_reason = waiting
        .and_then(|w| w.reason.as_deref())
        .unwrap_or_default();
    let waiting_message = waiting
        .and_then(|w| w.message.as_deref())
        .unwrap_or_default();
    // The exit that explains the current state: a terminated state now, else the last one.
    let terminated = state
        .and_then(|s| s.terminated.as_ref())
        .or_else(|| cs.last_state.as_ref().and_then(|s| s.terminated.as_ref()));
    let exit_code = terminated.map(|t| t.exit_code);
    let exit_reason = terminated
        .and_then(|t| t.reason.as_deref())
        .unwrap_or_default();
    let name = &cs.name;

    let cannot_run =
        CANNOT_RUN_REASONS.contains(&waiting_reason) || CANNOT_RUN_REASONS.contains(&exit_reason);
    if let (true, Some(code)) = (cannot_run, exit_code)
        && code != RUNTIME_START_EXIT_CODE
    {
        let text = terminated
            .and_then(|t| t.message.as_deref())
            .filter(|m| !m.is_empty())
            .unwrap_or(waiting_message);
        return Some((
            Reason::ContainerCannotRun,
            format!("container {name} cannot run (exit code {code}): {text}"),
        ));
    }
    match waiting_reason {
        "CrashLoopBackOff" => {
            let restarts = cs.restart_count;
            let exit = match (exit_code, exit_reason) {
                (Some(code), "" | "Error") => format!("exited with code {code}"),
                (Some(code), why) => format!("exited with code {code} ({why})"),
                (None, _) => "keeps exiting".to_owned(),
            };
            Some((
                Reason::CrashLoop,
                format!(
                    "container {name} {exit}, restarted {}",
                    count(restarts, "time")
                ),
            ))
        }
        "CreateContainerConfigError" if !is_transient_config_error(waiting_message) => Some((
            Reason::ContainerConfigError,
            format!("container {name} cannot be created: {waiting_message}"),
        )),
        "InvalidImageName" | "ErrImageNeverPull" => Some((
            Reason::InvalidImageName,
            format!(
                "container {name} cannot use image {:?} ({waiting_reason}): {waiting_message}",
                cs.image
            ),
        )),
        _ => None,
    }
}

/// A CreateContainerConfigError that only means a kubelet cache was cold.
fn is_transient_config_error(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    message.match_indices(CACHE_SYNC_PREFIX).any(|(at, _)| {
        let rest = &message[at + CACHE_SYNC_PREFIX.len()..];
        let what = rest.split(':').next().unwrap_or_default().trim_end();
        what.len() > CACHE_SYNC_SUFFIX.len() && what.ends_with(CACHE_SYNC_SUFFIX)
    })
}

/// Names a container, with the image as the manifest wrote it (the status may show the
/// runtime's normalised name, e.g. `docker.io/library/nginx:1.27`).
pub fn container_ref(pod: &Pod, container: &str, status_image: Option<&str>) -> ContainerRef {
    let spec_image = pod.spec.as_ref().and_then(|spec| {
        spec.init_containers
            .iter()
            .flatten()
            .chain(&spec.containers)
            .find(|c| c.name == container)
            .and_then(|c| c.image.clone())
    });
    ContainerRef {
        pod: pod.metadata.name.clone().unwrap_or_default(),
        container: container.to_owned(),
        image: spec_image.or_else(|| status_image.filter(|i| !i.is_empty()).map(str::to_owned)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_as_a_person_writes_them() {
        assert_eq!(count(1, "time"), "1 time");
        assert_eq!(count(3, "time"), "3 times");
        assert_eq!(count(0, "ready pod"), "0 ready pods");
        assert_eq!(count(1, "ready pod"), "1 ready pod");
    }
    use crate::rules::fixtures;
    use crate::rules::snapshot::typed;
    use serde_json::{Value, json};

    #[track_caller]
    fn case(status: &Value, expected: Option<(Reason, &str)>) {
        let pod: Pod = typed(&fixtures::rs_pod(
            "web-7d4b9c-x2x9q",
            "rs-uid-2",
            "7d4b9c",
            status,
        ))
        .unwrap();
        let got = doom(&pod);
        assert_eq!(
            got.as_ref().map(|d| (d.reason, d.detail.as_str())),
            expected
        );
        if let Some(d) = got {
            assert_eq!(d.container.pod, "web-7d4b9c-x2x9q");
            assert_eq!(d.container.container, "web");
            assert_eq!(d.container.image.as_deref(), Some("ghcr.io/acme/web:v2"));
        }
    }

    #[test]
    fn crash_loops_carry_exit_code_and_oom_kills() {
        case(
            &fixtures::crash_loop_status(3, "OOMKilled", 4),
            Some((
                Reason::CrashLoop,
                "container web exited with code 3 (OOMKilled), restarted 4 times",
            )),
        );
        case(
            &fixtures::crash_loop_status(1, "Error", 2),
            Some((
                Reason::CrashLoop,
                "container web exited with code 1, restarted 2 times",
            )),
        );
    }

    #[test]
    fn config_errors_fail_unless_the_cache_was_merely_cold() {
        case(
            &fixtures::waiting_status(
                "CreateContainerConfigError",
                "configmap \"web-config\" not found",
            ),
            Some((
                Reason::ContainerConfigError,
                "container web cannot be created: configmap \"web-config\" not found",
            )),
        );
        case(
            &fixtures::waiting_status(
                "CreateContainerConfigError",
                "failed to sync configmap cache: timed out waiting for the condition",
            ),
            None,
        );
        case(
            &fixtures::waiting_status(
                "CreateContainerConfigError",
                "failed to sync secret cache: timed out waiting for the condition",
            ),
            None,
        );
        // any object the kubelet caches, not only configmaps and secrets
        for message in [
            "failed to sync serviceaccount cache: timed out waiting for the condition",
            "failed to sync clustertrustbundle cache: timed out waiting for the condition",
            "failed to sync secret cache",
        ] {
            case(
                &fixtures::waiting_status("CreateContainerConfigError", message),
                None,
            );
        }
        // a sentence that merely mentions a cache is not a cold cache
        case(
            &fixtures::waiting_status(
                "CreateContainerConfigError",
                "failed to sync cache: secret \"db\" not found",
            ),
            Some((
                Reason::ContainerConfigError,
                "container web cannot be created: failed to sync cache: secret \"db\" not found",
            )),
        );
    }

    #[test]
    fn cannot_run_needs_an_exit_code_other_than_128() {
        let mut status = fixtures::waiting_status(
            "RunContainerError",
            "failed to create containerd task: exec: \"/app/serve\": permission denied",
        );
        status["containerStatuses"][0]["lastState"] = json!({"terminated": {
            "exitCode": 126, "reason": "ContainerCannotRun",
            "message": "exec: \"/app/serve\": permission denied",
            "startedAt": "2025-03-04T10:15:02Z", "finishedAt": "2025-03-04T10:15:02Z",
            "containerID": "containerd://9c1e0f4d"}});
        case(
            &status,
            Some((
                Reason::ContainerCannotRun,
                "container web cannot run (exit code 126): exec: \"/app/serve\": permission denied",
            )),
        );
        status["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] = json!(128);
        status["containerStatuses"][0]["lastState"]["terminated"]["reason"] = json!("StartError");
        case(&status, None);
        // exit 128 followed by the usual back-off is a crash loop, not "cannot run"
        let mut looping = fixtures::crash_loop_status(128, "StartError", 3);
        looping["containerStatuses"][0]["lastState"]["terminated"]["message"] = json!(
            "failed to create containerd task: error mounting \"/var/lib/kubelet/pods/x/volumes\""
        );
        case(
            &looping,
            Some((
                Reason::CrashLoop,
                "container web exited with code 128 (StartError), restarted 3 times",
            )),
        );
    }

    #[test]
    fn invalid_image_names_and_never_pull_fail_but_pull_errors_do_not() {
        case(
            &fixtures::waiting_status(
                "InvalidImageName",
                "Failed to apply default image tag \"ghcr.io/acme/Web:v2\": couldn't parse image name",
            ),
            Some((
                Reason::InvalidImageName,
                "container web cannot use image \"ghcr.io/acme/web:v2\" (InvalidImageName): Failed to apply default image tag \"ghcr.io/acme/Web:v2\": couldn't parse image name",
            )),
        );
        let never = fixtures::waiting_status(
            "ErrImageNeverPull",
            "Container image \"ghcr.io/acme/web:v2\" is not present with pull policy of Never",
        );
        assert_eq!(
            doom(&typed(&fixtures::rs_pod("p", "u", "h", &never)).unwrap()).map(|d| d.reason),
            Some(Reason::InvalidImageName)
        );
        case(
            &fixtures::waiting_status(
                "ErrImagePull",
                "rpc error: code = NotFound desc = failed to pull and unpack image \"ghcr.io/acme/web:v2\": not found",
            ),
            None,
        );
        case(
            &fixtures::waiting_status(
                "ImagePullBackOff",
                "Back-off pulling image \"ghcr.io/acme/web:v2\"",
            ),
            None,
        );
        case(&fixtures::ready_status(), None);
    }

    #[test]
    fn init_containers_are_checked_first() {
        let mut status = fixtures::crash_loop_status(2, "Error", 5);
        let init = status["containerStatuses"][0].clone();
        status["initContainerStatuses"] = json!([init]);
        status["initContainerStatuses"][0]["name"] = json!("migrate");
        status["containerStatuses"] = json!([{
            "name": "web", "image": "ghcr.io/acme/web:v2", "imageID": "", "ready": false,
            "restartCount": 0, "started": false,
            "state": {"waiting": {"reason": "PodInitializing"}}}]);
        let pod: Pod = typed(&fixtures::rs_pod(
            "web-7d4b9c-x2x9q",
            "rs-uid-2",
            "7d4b9c",
            &status,
        ))
        .unwrap();
        let d = doom(&pod).unwrap();
        assert_eq!(d.container.container, "migrate");
        assert_eq!(
            d.container.image.as_deref(),
            Some("ghcr.io/acme/migrate:v2")
        );
        assert_eq!(
            d.detail,
            "container migrate exited with code 2, restarted 5 times"
        );
    }
}
