//! Docker credential helpers (`credsStore`, `credHelpers`): `docker-credential-<name> get`
//! with the server URL on stdin, `{"ServerURL","Username","Secret"}` on stdout. Run lazily,
//! once per helper and server in a run, bounded in time; what a helper prints is never
//! quoted on success, since it holds the secret.

use serde::Deserialize;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncWriteExt as _;
use tokio::sync::OnceCell;

use super::credentials::Auth;

/// What docker answers on stdout, with a non-zero exit, for a host it holds nothing for.
const NOT_FOUND: &str = "credentials not found";
/// Characters of a failing helper's message kept in an error.
const MESSAGE_MAX: usize = 200;

/// A helper that could not give an answer. The text names the helper and the server, never
/// a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("credential helper docker-credential-{helper} for {server}: {problem}")]
pub struct HelperError {
    pub helper: String,
    pub server: String,
    pub problem: String,
}

/// How helpers are found and run: `docker-credential-<name>` on `PATH`, or in one directory
/// (tests), optionally through an interpreter.
#[derive(Debug, Clone)]
pub struct CredentialHelpers {
    dir: Option<PathBuf>,
    /// Prepended to the helper's path: tests run their `#!/bin/sh` fakes as `sh FILE`, which
    /// no concurrent fork elsewhere in the test binary can make "text file busy".
    prefix: Vec<OsString>,
    timeout: Duration,
    cache: Arc<Mutex<Cache>>,
}

type Answer = Result<Option<Auth>, HelperError>;
/// One answer per (helper, server), shared by the clones of a run's credentials.
type Cache = HashMap<(String, String), Arc<OnceCell<Answer>>>;

/// The `get` answer.
#[derive(Deserialize)]
struct HelperCredentials {
    #[serde(rename = "Username", default)]
    username: String,
    #[serde(rename = "Secret")]
    secret: String,
}

impl Default for CredentialHelpers {
    fn default() -> Self {
        Self::on_path()
    }
}

impl CredentialHelpers {
    /// Helpers looked up on `PATH`, as docker does, each given 10 s.
    pub fn on_path() -> Self {
        CredentialHelpers {
            dir: None,
            prefix: Vec::new(),
            timeout: Duration::from_secs(10),
            cache: Arc::default(),
        }
    }

    /// Helpers looked up in `dir` only.
    pub fn in_dir(dir: impl Into<PathBuf>, timeout: Duration) -> Self {
        CredentialHelpers {
            dir: Some(dir.into()),
            timeout,
            ..Self::on_path()
        }
    }

    /// Runs each helper as `<prefix...> <helper path> get`.
    pub fn with_prefix(mut self, prefix: impl IntoIterator<Item = impl Into<OsString>>) -> Self {
        self.prefix = prefix.into_iter().map(Into::into).collect();
        self
    }

    /// The credentials `helper` holds for `server`: `None` when it has none. Asked once per
    /// helper and server; concurrent callers wait for the one answer.
    pub async fn get(&self, helper: &str, server: &str) -> Answer {
        let cell = {
            let mut cache = self
                .cache
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            cache
                .entry((helper.to_string(), server.to_string()))
                .or_default()
                .clone()
        };
        cell.get_or_init(|| self.run(helper, server)).await.clone()
    }

    async fn run(&self, helper: &str, server: &str) -> Answer {
        let fail = |problem: String| HelperError {
            helper: helper.to_string(),
            server: server.to_string(),
            problem,
        };
        let program = format!("docker-credential-{helper}");
        let path = match &self.dir {
            Some(dir) => {
                let path = dir.join(&program);
                if !path.is_file() {
                    return Err(fail(format!("not installed (not in {})", dir.display())));
                }
                path
            }
            None => PathBuf::from(&program),
        };
        let mut command = match self.prefix.split_first() {
            Some((first, rest)) => {
                let mut c = tokio::process::Command::new(first);
                c.args(rest).arg(&path);
                c
            }
            None => tokio::process::Command::new(&path),
        };
        command
            .arg("get")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|e| {
            fail(if e.kind() == std::io::ErrorKind::NotFound {
                "not installed (not found on PATH)".to_string()
            } else {
                format!("could not be started ({e})")
            })
        })?;
        let talk = async {
            if let Some(mut stdin) = child.stdin.take() {
                // A helper that exits without reading is judged by its answer, not here.
                let _ = stdin.write_all(server.as_bytes()).await;
                let _ = stdin.shutdown().await;
            }
            child.wait_with_output().await
        };
        let output = match tokio::time::timeout(self.timeout, talk).await {
            Ok(Ok(output)) => output,
            Ok(Err(e)) => return Err(fail(format!("failed while running ({e})"))),
            // Dropping the future drops the child, which kills it.
            Err(_) => return Err(fail(format!("no answer within {:?}", self.timeout))),
        };
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            if stdout.to_ascii_lowercase().contains(NOT_FOUND) {
                return Ok(None);
            }
            let stderr = String::from_utf8_lossy(&output.stderr);
            let message = [stdout.trim(), stderr.trim()]
                .into_iter()
                .find(|m| !m.is_empty())
                .map(|m| {
                    let line: String = m
                        .lines()
                        .next()
                        .unwrap_or("")
                        .chars()
                        .take(MESSAGE_MAX)
                        .collect();
                    format!(" ({line})")
                })
                .unwrap_or_default();
            return Err(fail(format!("failed with {}{message}", output.status)));
        }
        let answer: HelperCredentials = serde_json::from_slice(&output.stdout).map_err(|_| {
            fail("answered with something other than a JSON object with Username and Secret".into())
        })?;
        if answer.secret.is_empty() {
            return Ok(None);
        }
        Ok(Some(if answer.username == "<token>" {
            Auth::IdentityToken {
                token: answer.secret,
            }
        } else {
            Auth::Basic {
                username: answer.username,
                password: answer.secret,
            }
        }))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A tempdir holding `docker-credential-<name>` scripts, and helpers that run them.
    pub(crate) struct FakeHelpers {
        pub dir: tempfile::TempDir,
    }

    impl FakeHelpers {
        pub(crate) fn new(scripts: &[(&str, &str)]) -> Self {
            let dir = tempfile::tempdir().unwrap();
            for (name, body) in scripts {
                let script = format!("#!/bin/sh\n{body}\n");
                std::fs::write(dir.path().join(format!("docker-credential-{name}")), script)
                    .unwrap();
            }
            FakeHelpers { dir }
        }

        pub(crate) fn helpers(&self) -> CredentialHelpers {
            CredentialHelpers::in_dir(self.dir.path(), Duration::from_secs(5))
                .with_prefix(["/bin/sh"])
        }
    }

    /// A helper that answers `username`/`secret` for `server` only and logs each call.
    pub(crate) fn answering(server: &str, username: &str, secret: &str) -> String {
        format!(
            r#"[ "$1" = get ] || exit 3
read -r url
echo "$url" >> "$(dirname "$0")/calls"
if [ "$url" = "{server}" ]; then
  printf '{{"ServerURL":"%s","Username":"{username}","Secret":"{secret}"}}' "$url"
else
  echo "credentials not found in native keychain"; exit 1
fi"#
        )
    }

    fn basic(username: &str, password: &str) -> Auth {
        Auth::Basic {
            username: username.into(),
            password: password.into(),
        }
    }

    #[tokio::test]
    async fn answers_are_read_and_cached_per_helper_and_server() {
        let fake = FakeHelpers::new(&[
            ("pass", &answering("registry.example.com", "ci", "s3cret")),
            (
                "acr",
                &answering("acme.azurecr.io", "<token>", "refresh-me"),
            ),
        ]);
        let helpers = fake.helpers();
        for _ in 0..3 {
            assert_eq!(
                helpers.get("pass", "registry.example.com").await,
                Ok(Some(basic("ci", "s3cret")))
            );
        }
        assert_eq!(helpers.get("pass", "other.example.com").await, Ok(None));
        assert_eq!(
            helpers.get("acr", "acme.azurecr.io").await,
            Ok(Some(Auth::IdentityToken {
                token: "refresh-me".into()
            }))
        );
        let calls = std::fs::read_to_string(fake.dir.path().join("calls")).unwrap();
        assert_eq!(
            calls, "registry.example.com\nother.example.com\nacme.azurecr.io\n",
            "one call per helper and server"
        );
    }

    #[tokio::test]
    async fn failures_name_the_helper_and_server_but_never_the_output() {
        let fake = FakeHelpers::new(&[
            ("garbage", "cat >/dev/null; echo 'user=ci secret=hunter2'"),
            ("broken", "echo 'keychain is locked' >&2; exit 2"),
            ("slow", "sleep 5"),
        ]);
        let helpers = fake.helpers();
        let problem = |answer: Answer| answer.unwrap_err().to_string();

        let garbage = problem(helpers.get("garbage", "registry.example.com").await);
        assert_eq!(
            garbage,
            "credential helper docker-credential-garbage for registry.example.com: answered with \
             something other than a JSON object with Username and Secret"
        );
        assert!(!garbage.contains("hunter2"));
        assert_eq!(
            problem(helpers.get("missing", "registry.example.com").await),
            format!(
                "credential helper docker-credential-missing for registry.example.com: not installed (not in {})",
                fake.dir.path().display()
            )
        );
        assert_eq!(
            problem(helpers.get("broken", "registry.example.com").await),
            "credential helper docker-credential-broken for registry.example.com: failed with \
             exit status: 2 (keychain is locked)"
        );
        let quick = CredentialHelpers::in_dir(fake.dir.path(), Duration::from_millis(200))
            .with_prefix(["/bin/sh"]);
        assert_eq!(
            problem(quick.get("slow", "registry.example.com").await),
            "credential helper docker-credential-slow for registry.example.com: no answer within 200ms"
        );
    }

    #[tokio::test]
    async fn a_helper_missing_from_path_is_named() {
        let helpers = CredentialHelpers::on_path();
        let err = helpers
            .get(
                "deploy-action-test-no-such-helper",
                "https://index.docker.io/v1/",
            )
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "credential helper docker-credential-deploy-action-test-no-such-helper for \
             https://index.docker.io/v1/: not installed (not found on PATH)"
        );
    }
}
