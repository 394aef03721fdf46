//! The GitHub Actions environment as one value, read from an environment map and the event
//! payload the caller passes in, so which commit and which paths we report on is testable
//! without a runner. The commit matters most: on pull requests GITHUB_SHA is a temporary
//! merge commit, and a check run on it never shows on the pull request.

use super::paths::{repo_relative, slashes};
use crate::pointer::Pointer;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

const DEFAULT_API_URL: &str = "https://api.github.com";
const DEFAULT_SERVER_URL: &str = "https://github.com";

/// `owner/repo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repository {
    pub owner: String,
    pub name: String,
}

/// What deploy-action needs to know about the workflow run it reports for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionsContext {
    /// `GITHUB_ACTIONS=true`: running on a runner, workflow commands are understood.
    pub actions: bool,
    pub repository: Repository,
    /// REST API root without a trailing slash; differs on GitHub Enterprise Server.
    pub api_url: String,
    /// Web root without a trailing slash, for links.
    pub server_url: String,
    /// The commit the check run belongs to (see [`ActionsContext::from_env`]).
    pub head_sha: String,
    pub event_name: String,
    pub run_id: Option<String>,
    pub run_attempt: Option<String>,
    pub job: Option<String>,
    /// The checkout root, with `/` separators.
    pub workspace: Option<String>,
    /// The directory relative manifest paths are relative to, with `/` separators.
    pub working_dir: Option<String>,
    pub output_file: Option<PathBuf>,
    pub step_summary_file: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ContextError {
    #[error("{0} is not set")]
    Missing(&'static str),
    #[error("GITHUB_REPOSITORY {0:?} is not of the form owner/repo")]
    Repository(String),
    #[error("{which} {value:?} is not a commit sha")]
    Sha { which: &'static str, value: String },
    #[error("failed to read the head commit of the {event} event from its payload: {detail}")]
    Payload { event: String, detail: String },
}

impl ActionsContext {
    /// Reads the context. The head commit is, in order: `sha` (an explicit `--sha`), the
    /// payload's `pull_request.head.sha` on `pull_request*` events, its
    /// `workflow_run.head_sha` on `workflow_run`, else `GITHUB_SHA`. `event_payload` is the
    /// text of the file `GITHUB_EVENT_PATH` names (see [`ActionsContext::event_path`]).
    pub fn from_env(
        env: &BTreeMap<String, String>,
        event_payload: Option<&str>,
        sha: Option<&str>,
    ) -> Result<Self, ContextError> {
        let var = |name: &str| env.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
        let repository = parse_repository(
            var("GITHUB_REPOSITORY").ok_or(ContextError::Missing("GITHUB_REPOSITORY"))?,
        )?;
        let event_name = var("GITHUB_EVENT_NAME").unwrap_or_default().to_owned();
        let head_sha = match sha {
            Some(sha) => valid_sha("--sha", sha)?,
            None => head_sha(&event_name, event_payload, var("GITHUB_SHA"))?,
        };
        Ok(ActionsContext {
            actions: var("GITHUB_ACTIONS") == Some("true"),
            repository,
            api_url: url_root(var("GITHUB_API_URL"), DEFAULT_API_URL),
            server_url: url_root(var("GITHUB_SERVER_URL"), DEFAULT_SERVER_URL),
            head_sha,
            event_name,
            run_id: var("GITHUB_RUN_ID").map(str::to_owned),
            run_attempt: var("GITHUB_RUN_ATTEMPT").map(str::to_owned),
            job: var("GITHUB_JOB").map(str::to_owned),
            workspace: var("GITHUB_WORKSPACE").map(slashes),
            working_dir: None,
            output_file: var("GITHUB_OUTPUT").map(PathBuf::from),
            step_summary_file: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
        })
    }

    /// The payload file to read and pass to [`ActionsContext::from_env`].
    pub fn event_path(env: &BTreeMap<String, String>) -> Option<PathBuf> {
        env.get("GITHUB_EVENT_PATH")
            .filter(|p| !p.trim().is_empty())
            .map(PathBuf::from)
    }

    /// The directory the manifest paths were given relative to (the process's current
    /// directory), when it is not the workspace (`working-directory:` in a workflow).
    pub fn with_working_dir(mut self, dir: &str) -> Self {
        self.working_dir = Some(slashes(dir));
        self
    }

    /// Identifies this check run across retries of its creation: unique per workflow run
    /// attempt, job and check name, and stable within one.
    pub fn external_id(&self, check_name: &str) -> String {
        let part = |p: &Option<String>| p.clone().unwrap_or_else(|| "local".to_owned());
        format!(
            "deploy-action/{}/{}/{}/{check_name}",
            part(&self.run_id),
            part(&self.run_attempt),
            part(&self.job)
        )
    }

    /// The workflow run's page, for `details_url` and links in the summary.
    pub fn run_url(&self) -> Option<String> {
        let run_id = self.run_id.as_ref()?;
        Some(format!(
            "{}/{}/actions/runs/{run_id}",
            self.server_url,
            self.slug()
        ))
    }

    /// A link to `line` of `path` (relative to the repository root) at the head commit.
    pub fn blob_url(&self, path: &str, line: usize) -> String {
        format!(
            "{}/{}/blob/{}/{path}#L{line}",
            self.server_url,
            self.slug(),
            self.head_sha
        )
    }

    /// `owner/repo`.
    pub fn slug(&self) -> String {
        format!("{}/{}", self.repository.owner, self.repository.name)
    }

    /// `file` as a path relative to the repository root, `/`-separated, as annotations
    /// need it; `None` for stdin (`-`) and for files outside the workspace.
    pub fn repo_path(&self, file: &str) -> Option<String> {
        repo_relative(file, self.workspace.as_deref(), self.working_dir.as_deref())
    }
}

fn parse_repository(slug: &str) -> Result<Repository, ContextError> {
    let valid = |part: &str| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    match slug.split_once('/') {
        Some((owner, name)) if valid(owner) && valid(name) => Ok(Repository {
            owner: owner.to_owned(),
            name: name.to_owned(),
        }),
        _ => Err(ContextError::Repository(slug.to_owned())),
    }
}

fn head_sha(
    event: &str,
    payload: Option<&str>,
    github_sha: Option<&str>,
) -> Result<String, ContextError> {
    let pointer = if event.starts_with("pull_request") {
        "/pull_request/head/sha"
    } else if event == "workflow_run" {
        "/workflow_run/head_sha"
    } else {
        let sha = github_sha.ok_or(ContextError::Missing("GITHUB_SHA"))?;
        return valid_sha("GITHUB_SHA", sha);
    };
    let fail = |detail: &str| ContextError::Payload {
        event: event.to_owned(),
        detail: detail.to_owned(),
    };
    let payload = payload.ok_or_else(|| fail("no payload (GITHUB_EVENT_PATH)"))?;
    let payload: Value =
        serde_json::from_str(payload).map_err(|e| fail(&format!("invalid JSON: {e}")))?;
    let sha = payload
        .at(pointer)
        .and_then(Value::as_str)
        .ok_or_else(|| fail(&format!("no {} in it", &pointer[1..].replace('/', "."))))?;
    valid_sha("the event's head sha", sha)
}

/// SHA-1 (40) or SHA-256 (64) hex, lower-cased as the API returns it.
fn valid_sha(which: &'static str, sha: &str) -> Result<String, ContextError> {
    let sha = sha.trim();
    if matches!(sha.len(), 40 | 64) && sha.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(sha.to_ascii_lowercase())
    } else {
        Err(ContextError::Sha {
            which,
            value: sha.to_owned(),
        })
    }
}

fn url_root(value: Option<&str>, default: &str) -> String {
    value.unwrap_or(default).trim_end_matches('/').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::github::testing::{HEAD_SHA, MERGE_SHA, env};

    fn pull_request_payload(head: &str) -> String {
        format!(
            r#"{{"action":"synchronize","number":42,"pull_request":{{"number":42,"state":"open",
            "head":{{"ref":"feature/web","sha":"{head}","repo":{{"full_name":"fork/shop"}}}},
            "base":{{"ref":"main","sha":"0b2d5f0c6a4e4f1f9d2b7f7b1f4c2c1e9a8b7c6d"}}}}}}"#
        )
    }

    #[track_caller]
    fn case_sha(event: &str, payload: Option<&str>, sha: Option<&str>, expected: &str) {
        let mut vars = env();
        vars.insert("GITHUB_EVENT_NAME".into(), event.into());
        let ctx = ActionsContext::from_env(&vars, payload, sha).unwrap();
        assert_eq!(ctx.head_sha, expected);
    }

    #[test]
    fn the_head_commit_depends_on_the_event() {
        let pr = pull_request_payload(HEAD_SHA);
        case_sha("push", None, None, MERGE_SHA);
        case_sha("pull_request", Some(&pr), None, HEAD_SHA);
        case_sha("pull_request_target", Some(&pr), None, HEAD_SHA);
        case_sha("pull_request_review", Some(&pr), None, HEAD_SHA);
        let workflow_run = format!(
            r#"{{"action":"completed","workflow_run":{{"id":9,"head_branch":"main","head_sha":"{HEAD_SHA}"}}}}"#
        );
        case_sha("workflow_run", Some(&workflow_run), None, HEAD_SHA);
        // An explicit --sha wins over everything, and is normalised.
        let explicit = "ABCDEF0123456789ABCDEF0123456789ABCDEF01";
        case_sha(
            "pull_request",
            Some(&pr),
            Some(explicit),
            &explicit.to_lowercase(),
        );
    }

    #[track_caller]
    fn case_error(vars: &BTreeMap<String, String>, payload: Option<&str>, expected: &str) {
        let err = ActionsContext::from_env(vars, payload, None).unwrap_err();
        assert_eq!(err.to_string(), expected);
    }

    #[test]
    fn a_pull_request_without_its_head_commit_is_an_error_not_the_merge_commit() {
        let mut vars = env();
        vars.insert("GITHUB_EVENT_NAME".into(), "pull_request".into());
        case_error(
            &vars,
            None,
            "failed to read the head commit of the pull_request event from its payload: \
             no payload (GITHUB_EVENT_PATH)",
        );
        case_error(
            &vars,
            Some(r#"{"pull_request":{"number":42}}"#),
            "failed to read the head commit of the pull_request event from its payload: \
             no pull_request.head.sha in it",
        );
        case_error(
            &vars,
            Some(&pull_request_payload("not-a-sha")),
            "the event's head sha \"not-a-sha\" is not a commit sha",
        );
    }

    #[test]
    fn missing_or_malformed_variables_are_named() {
        let mut vars = env();
        vars.remove("GITHUB_REPOSITORY");
        case_error(&vars, None, "GITHUB_REPOSITORY is not set");
        let mut vars = env();
        vars.insert("GITHUB_REPOSITORY".into(), "acme".into());
        case_error(
            &vars,
            None,
            "GITHUB_REPOSITORY \"acme\" is not of the form owner/repo",
        );
        let mut vars = env();
        vars.insert("GITHUB_REPOSITORY".into(), "acme/../x".into());
        case_error(
            &vars,
            None,
            "GITHUB_REPOSITORY \"acme/../x\" is not of the form owner/repo",
        );
        let mut vars = env();
        vars.remove("GITHUB_SHA");
        case_error(&vars, None, "GITHUB_SHA is not set");
    }

    #[test]
    fn urls_default_to_github_com_and_follow_enterprise_server() {
        let mut vars = env();
        vars.remove("GITHUB_API_URL");
        vars.remove("GITHUB_SERVER_URL");
        let ctx = ActionsContext::from_env(&vars, None, None).unwrap();
        assert_eq!(ctx.api_url, "https://api.github.com");
        assert_eq!(ctx.server_url, "https://github.com");
        vars.insert(
            "GITHUB_API_URL".into(),
            "https://ghe.acme.internal/api/v3/".into(),
        );
        vars.insert(
            "GITHUB_SERVER_URL".into(),
            "https://ghe.acme.internal".into(),
        );
        let ctx = ActionsContext::from_env(&vars, None, None).unwrap();
        assert_eq!(ctx.api_url, "https://ghe.acme.internal/api/v3");
        assert_eq!(
            ctx.blob_url("k8s/web.yaml", 21),
            format!("https://ghe.acme.internal/acme/shop/blob/{MERGE_SHA}/k8s/web.yaml#L21")
        );
        assert_eq!(
            ctx.run_url().as_deref(),
            Some("https://ghe.acme.internal/acme/shop/actions/runs/9876543210")
        );
    }

    #[test]
    fn the_rest_of_the_environment_is_carried_along() {
        let ctx = ActionsContext::from_env(&env(), None, None).unwrap();
        assert!(ctx.actions);
        assert_eq!(ctx.slug(), "acme/shop");
        assert_eq!(ctx.event_name, "push");
        assert_eq!(
            ctx.external_id("deploy"),
            "deploy-action/9876543210/2/deploy/deploy"
        );
        assert_eq!(
            ctx.output_file,
            Some(PathBuf::from(
                "/home/runner/work/_temp/_runner_file_commands/set_output_1"
            ))
        );
        assert_eq!(
            ctx.step_summary_file,
            Some(PathBuf::from(
                "/home/runner/work/_temp/_runner_file_commands/step_summary_1"
            ))
        );
        assert_eq!(
            ActionsContext::event_path(&env()),
            Some(PathBuf::from(
                "/home/runner/work/_temp/_github_workflow/event.json"
            ))
        );
        let mut local = env();
        for key in [
            "GITHUB_ACTIONS",
            "GITHUB_RUN_ID",
            "GITHUB_RUN_ATTEMPT",
            "GITHUB_JOB",
        ] {
            local.remove(key);
        }
        let ctx = ActionsContext::from_env(&local, None, None).unwrap();
        assert!(!ctx.actions);
        assert_eq!(
            ctx.external_id("deploy"),
            "deploy-action/local/local/local/deploy"
        );
        assert_eq!(ctx.run_url(), None);
    }
}
