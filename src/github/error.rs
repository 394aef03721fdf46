//! How reporting to GitHub can fail, as values: the caller logs them and carries on, since
//! no GitHub failure may change a deploy's verdict or exit code.

use std::time::Duration;

/// Why reporting to GitHub did not work. Never a reason to change the deploy's verdict or
/// exit code; texts are redacted (no token, no registered secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GithubError {
    /// The token may not write check runs (fork pull requests, Dependabot, personal
    /// tokens): expected, report with workflow commands and the job summary instead.
    #[error("the token may not {what} ({status}: {message}); reporting with workflow commands")]
    Fallback {
        what: &'static str,
        status: u16,
        message: String,
    },
    #[error("failed to {what}: GitHub answered {status}: {message}")]
    Status {
        what: &'static str,
        status: u16,
        message: String,
    },
    #[error("failed to {what}: rate limited for {} more seconds", wait.as_secs())]
    RateLimited { what: &'static str, wait: Duration },
    #[error("failed to {what}: {detail}")]
    Transport { what: &'static str, detail: String },
    #[error("failed to {what}: unexpected answer: {detail}")]
    Decode { what: &'static str, detail: String },
    #[error("failed to set up the GitHub client: {0}")]
    Setup(String),
}

impl GithubError {
    /// The read-only-token case: expected, so the caller notes it rather than warns.
    pub fn is_fallback(&self) -> bool {
        matches!(self, GithubError::Fallback { .. })
    }
}

/// An octocrab error with its causes, `a: b: c`, as transport errors hide the cause.
pub(super) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
