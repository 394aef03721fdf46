//! The environment of a real GitHub-hosted runner job, shared by the github tests so every
//! renderer and request is checked against the same workflow run.

use super::context::ActionsContext;
use std::collections::BTreeMap;

/// The pull request's head commit: what a check run must be attached to.
pub const HEAD_SHA: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
/// GITHUB_SHA: on a push the pushed commit, on a pull request the temporary merge commit.
pub const MERGE_SHA: &str = "f3c1b2a4d5e6978812ab34cd56ef7890a1b2c3d4";

/// As a runner sets it for `push` to acme/shop, job `deploy`, second attempt.
pub fn env() -> BTreeMap<String, String> {
    [
        ("CI", "true"),
        ("GITHUB_ACTIONS", "true"),
        ("GITHUB_REPOSITORY", "acme/shop"),
        ("GITHUB_REPOSITORY_OWNER", "acme"),
        ("GITHUB_API_URL", "https://api.github.com"),
        ("GITHUB_SERVER_URL", "https://github.com"),
        ("GITHUB_SHA", MERGE_SHA),
        ("GITHUB_REF", "refs/heads/main"),
        ("GITHUB_EVENT_NAME", "push"),
        (
            "GITHUB_EVENT_PATH",
            "/home/runner/work/_temp/_github_workflow/event.json",
        ),
        ("GITHUB_RUN_ID", "9876543210"),
        ("GITHUB_RUN_ATTEMPT", "2"),
        ("GITHUB_JOB", "deploy"),
        ("GITHUB_WORKSPACE", "/home/runner/work/shop/shop"),
        (
            "GITHUB_OUTPUT",
            "/home/runner/work/_temp/_runner_file_commands/set_output_1",
        ),
        (
            "GITHUB_STEP_SUMMARY",
            "/home/runner/work/_temp/_runner_file_commands/step_summary_1",
        ),
        ("RUNNER_OS", "Linux"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

/// The context of that job, with manifests given relative to the checkout root.
pub fn ctx() -> ActionsContext {
    ActionsContext::from_env(&env(), None, None).expect("runner environment")
}
