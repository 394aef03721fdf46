//! The Checks API request and response bodies, as GitHub's OpenAPI description spells them
//! (`checks/create`, `checks/update`). Our own types rather than octocrab's, whose builders
//! lack `started_at` and whose response model lacks `status`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Queued,
    InProgress,
    Completed,
}

/// The conclusions deploy-action uses; GitHub also knows `skipped` and `action_required`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Conclusion {
    Success,
    Failure,
    TimedOut,
    Cancelled,
    Neutral,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnnotationLevel {
    Notice,
    Warning,
    Failure,
}

/// One annotation: a line of a file in the repository. Columns are never sent: we know
/// lines, not columns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Annotation {
    /// Relative to the repository root, `/`-separated; required (a null path is a 422).
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    pub annotation_level: AnnotationLevel,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_details: Option<String>,
}

/// `output`: `title` and `summary` are required and replaced by every request that
/// carries an output; `annotations` are appended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Output {
    pub title: String,
    pub summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub annotations: Vec<Annotation>,
}

/// `POST /repos/{owner}/{repo}/check-runs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CreateCheckRun {
    pub name: String,
    pub head_sha: String,
    pub status: Status,
    /// ISO 8601, `YYYY-MM-DDTHH:MM:SSZ`.
    pub started_at: String,
    pub external_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details_url: Option<String>,
    pub output: Output,
}

/// `PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UpdateCheckRun {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Required with `status: completed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conclusion: Option<Conclusion>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    pub output: Output,
}

/// The parts of a check run GitHub returns that deploy-action reads.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckRunInfo {
    pub id: u64,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub external_id: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub status: Option<Status>,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub output: OutputInfo,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct OutputInfo {
    #[serde(default)]
    pub annotations_count: usize,
}

/// `GET /repos/{owner}/{repo}/commits/{ref}/check-runs`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct CheckRunList {
    pub check_runs: Vec<CheckRunInfo>,
}

/// `YYYY-MM-DDTHH:MM:SSZ`: the form GitHub documents, without fractional seconds.
pub(crate) fn iso8601(at: jiff::Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_serialise_to_the_documented_shape() {
        let update = UpdateCheckRun {
            status: Some(Status::Completed),
            conclusion: Some(Conclusion::TimedOut),
            completed_at: Some(iso8601("2025-03-14T09:26:53.589Z".parse().unwrap())),
            output: Output {
                title: "1 timed out: registry slow".into(),
                summary: "s".into(),
                text: None,
                annotations: vec![Annotation {
                    path: "k8s/worker.yaml".into(),
                    start_line: 18,
                    end_line: 18,
                    annotation_level: AnnotationLevel::Warning,
                    message: "m".into(),
                    title: None,
                    raw_details: None,
                }],
            },
        };
        assert_eq!(
            serde_json::to_value(&update).unwrap(),
            json!({
                "status": "completed",
                "conclusion": "timed_out",
                "completed_at": "2025-03-14T09:26:53Z",
                "output": {
                    "title": "1 timed out: registry slow",
                    "summary": "s",
                    "annotations": [{
                        "path": "k8s/worker.yaml", "start_line": 18, "end_line": 18,
                        "annotation_level": "warning", "message": "m"
                    }]
                }
            })
        );
    }

    #[test]
    fn a_check_run_as_github_returns_it_is_read() {
        // Trimmed from a real `checks/get` answer; unknown fields are ignored.
        let body = json!({
            "id": 4,
            "head_sha": "ce587453ced02b1526dfb4cb910479d431683101",
            "node_id": "MDg6Q2hlY2tSdW40",
            "external_id": "deploy-action/1/1/deploy/deploy",
            "url": "https://api.github.com/repos/github/hello-world/check-runs/4",
            "html_url": "https://github.com/github/hello-world/runs/4",
            "status": "in_progress",
            "conclusion": null,
            "started_at": "2018-05-04T01:14:52Z",
            "completed_at": null,
            "output": {"title": "Mighty Readme report", "summary": "There are 0 failures.",
                       "text": null, "annotations_count": 2,
                       "annotations_url": "https://api.github.com/repos/github/hello-world/check-runs/4/annotations"},
            "name": "deploy",
            "check_suite": {"id": 5},
            "app": {"id": 15368, "slug": "github-actions"},
            "pull_requests": []
        });
        let info: CheckRunInfo = serde_json::from_value(body).unwrap();
        assert_eq!(info.id, 4);
        assert_eq!(info.status, Some(Status::InProgress));
        assert_eq!(info.output.annotations_count, 2);
        assert_eq!(
            info.external_id.as_deref(),
            Some("deploy-action/1/1/deploy/deploy")
        );
        let bare: CheckRunInfo = serde_json::from_value(json!({"id": 7})).unwrap();
        assert_eq!((bare.html_url, bare.output.annotations_count), (None, 0));
    }
}
