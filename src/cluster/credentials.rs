//! Bearer tokens that change during a run, handled as client-go handles them: a `tokenFile`
//! (a rotated projected service-account token, the in-cluster account) and an exec plugin
//! (`aws eks get-token`, `gke-gcloud-auth-plugin`, `kubelogin`).
//!
//! - A token file is re-read at most once a minute, and at once when the API server answers
//!   401; the request is then sent again, once, with the new token. A file that cannot be
//!   re-read keeps the last token (kubernetes/kubernetes#68164).
//! - An exec plugin runs once, and again only when its token nears its `expirationTimestamp`
//!   (a fifth of its lifetime before, at most 10 s), or after a 401: never once per request,
//!   however short-lived its tokens.
//!
//! kube's own auth layer caches a token file for a minute whatever the server says, and runs
//! an exec plugin whenever less than 60 s remain, so a plugin issuing 5-minute tokens runs
//! on every request in their last minute, and a 5-second one on every request.
//!
//! No error here quotes a token or the plugin's output.

use http::header::{AUTHORIZATION, HeaderValue};
use http::{Request, Response, StatusCode};
use jiff::{SignedDuration, Timestamp};
use kube::client::Body;
use kube::config::ExecConfig;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use tokio::sync::Mutex;
use tower::BoxError;

/// How long a token read from a file is used before the file is read again (absent a 401).
pub const TOKEN_FILE_PERIOD: std::time::Duration = std::time::Duration::from_secs(60);

/// Why no token could be had. Never holds a token or what the plugin printed on stdout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    #[error("cannot read the token file {path}: {cause}")]
    TokenFile { path: String, cause: String },
    #[error("the token file {path} is empty")]
    EmptyTokenFile { path: String },
    #[error("getting credentials: exec: executable {command} not found")]
    ExecNotFound {
        command: String,
        install_hint: Option<String>,
    },
    #[error("getting credentials: exec: cannot run {command}: {cause}")]
    ExecStart { command: String, cause: String },
    #[error("getting credentials: exec: executable {command} failed with exit code {code}{}", stderr_suffix(.stderr))]
    ExecFailed {
        command: String,
        code: String,
        stderr: String,
    },
    #[error("getting credentials: exec: {command} printed no ExecCredential: {why}")]
    ExecOutput { command: String, why: String },
    #[error("getting credentials: exec: the kubeconfig's exec section names no command")]
    ExecNoCommand,
    #[error("the token from {origin} is not a valid HTTP header value")]
    NotAHeader { origin: String },
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!(": {stderr}")
    }
}

impl CredentialError {
    /// What to do about it, if there is more to say than the message.
    pub fn hint(&self) -> Option<String> {
        match self {
            CredentialError::ExecNotFound { install_hint, .. } => Some(
                install_hint
                    .as_deref()
                    .map(|h| h.split_whitespace().collect::<Vec<_>>().join(" "))
                    .filter(|h| !h.is_empty())
                    .unwrap_or_else(|| {
                        "it is the client-go credential plugin the kubeconfig's user runs to get \
                         a token: install it, or put it on PATH"
                            .to_owned()
                    }),
            ),
            _ => None,
        }
    }
}

/// Where tokens come from.
#[derive(Debug, Clone)]
pub enum TokenSource {
    File(PathBuf),
    Exec(Box<ExecConfig>),
}

impl TokenSource {
    /// Take the token source out of `auth` when it is one that changes (a token file, an exec
    /// plugin) and nothing kubectl would prefer to it is set; `auth` then holds the rest
    /// (client certificates, impersonation) for kube to apply.
    pub fn take_from(auth: &mut kube::config::AuthInfo) -> Option<TokenSource> {
        let basic = auth.username.is_some() && auth.password.is_some();
        if auth.auth_provider.is_some() || basic || auth.token.is_some() {
            return None;
        }
        if let Some(file) = auth.token_file.take() {
            auth.exec = None;
            return Some(TokenSource::File(PathBuf::from(file)));
        }
        auth.exec.take().map(|e| TokenSource::Exec(Box::new(e)))
    }

    fn describe(&self) -> String {
        match self {
            TokenSource::File(path) => format!("the token file {}", path.display()),
            TokenSource::Exec(exec) => format!(
                "the exec plugin {}",
                exec.command.as_deref().unwrap_or_default()
            ),
        }
    }
}

/// What a source gave.
#[derive(Debug)]
pub enum Fetched {
    Token {
        token: String,
        expires: Option<Timestamp>,
    },
    /// An exec plugin answering with a client certificate (PEM) and key instead of a token.
    Certificate { certificate: String, key: String },
}

#[derive(Clone)]
struct Cached {
    header: HeaderValue,
    generation: u64,
    /// Re-read a token file from then on.
    reread_at: Option<tokio::time::Instant>,
    /// Re-run an exec plugin from then on (its expiry, less a margin).
    refresh_at: Option<Timestamp>,
}

/// The wall clock, replaceable in tests.
pub type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// A bearer token, cached, refreshed when it nears its expiry or when the server refuses it.
pub struct Credentials {
    source: TokenSource,
    cached: Mutex<Option<Cached>>,
    generations: AtomicU64,
    clock: Clock,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({})", self.source.describe())
    }
}

/// When to run a plugin again: a fifth of the token's lifetime before it expires, at most
/// 10 s before.
fn refresh_time(fetched: Timestamp, expires: Timestamp) -> Timestamp {
    let lifetime = expires.duration_since(fetched);
    let margin = (lifetime / 5).min(SignedDuration::from_secs(10));
    expires - margin.max(SignedDuration::ZERO)
}

impl Credentials {
    pub fn new(source: TokenSource) -> Credentials {
        Self::with_clock(source, Arc::new(Timestamp::now))
    }

    pub fn with_clock(source: TokenSource, clock: Clock) -> Credentials {
        Credentials {
            source,
            cached: Mutex::new(None),
            generations: AtomicU64::new(0),
            clock,
        }
    }

    /// Ask the source once, now: at connect time, so a missing plugin or file stops the run
    /// before anything is applied. A plugin answering with a certificate is returned as such
    /// (its certificate then goes into the TLS configuration).
    pub async fn prime(&self) -> Result<Fetched, CredentialError> {
        let fetched = fetch(&self.source).await?;
        if let Fetched::Token { token, expires } = &fetched {
            let cached = self.cache(token, *expires)?;
            *self.cached.lock().await = Some(cached);
        }
        Ok(fetched)
    }

    fn cache(&self, token: &str, expires: Option<Timestamp>) -> Result<Cached, CredentialError> {
        let mut header = HeaderValue::try_from(format!("Bearer {token}")).map_err(|_| {
            CredentialError::NotAHeader {
                origin: self.source.describe(),
            }
        })?;
        header.set_sensitive(true);
        let now = (self.clock)();
        Ok(Cached {
            header,
            generation: self.generations.fetch_add(1, Ordering::Relaxed) + 1,
            reread_at: matches!(self.source, TokenSource::File(_))
                .then(|| tokio::time::Instant::now() + TOKEN_FILE_PERIOD),
            refresh_at: expires.map(|e| refresh_time(now, e)),
        })
    }

    fn fresh(&self, cached: &Cached) -> bool {
        let reread = cached
            .reread_at
            .is_some_and(|at| tokio::time::Instant::now() >= at);
        let expiring = cached.refresh_at.is_some_and(|at| (self.clock)() >= at);
        !reread && !expiring
    }

    /// Fetch again; a token file that cannot be re-read keeps its last token.
    async fn refetch(&self, last: Option<&Cached>) -> Result<Cached, CredentialError> {
        match fetch(&self.source).await {
            Ok(Fetched::Token { token, expires }) => self.cache(&token, expires),
            Ok(Fetched::Certificate { .. }) => Err(CredentialError::ExecOutput {
                command: self.source.describe(),
                why: "it switched from a token to a client certificate".to_owned(),
            }),
            Err(e) => match (last, &self.source) {
                (Some(last), TokenSource::File(_)) => Ok(Cached {
                    reread_at: Some(tokio::time::Instant::now() + TOKEN_FILE_PERIOD),
                    ..last.clone()
                }),
                _ => Err(e),
            },
        }
    }

    /// The `Authorization` value to send, and the generation it belongs to.
    pub async fn header(&self) -> Result<(HeaderValue, u64), CredentialError> {
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.as_ref().filter(|c| self.fresh(c)) {
            return Ok((c.header.clone(), c.generation));
        }
        let next = self.refetch(cached.as_ref()).await?;
        let out = (next.header.clone(), next.generation);
        *cached = Some(next);
        Ok(out)
    }

    /// The server refused the token of generation `used`: read the file / run the plugin
    /// again (once, however many requests were refused with that token). `Some` new value
    /// to retry with, `None` when the source gives the same token again.
    pub async fn refused(&self, used: u64) -> Result<Option<HeaderValue>, CredentialError> {
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.as_ref()
            && c.generation != used
        {
            return Ok(Some(c.header.clone()));
        }
        let previous = cached.as_ref().map(|c| c.header.clone());
        let next = self.refetch(cached.as_ref()).await?;
        let changed = previous.as_ref() != Some(&next.header);
        let header = next.header.clone();
        *cached = Some(next);
        Ok(changed.then_some(header))
    }
}

async fn fetch(source: &TokenSource) -> Result<Fetched, CredentialError> {
    match source {
        TokenSource::File(path) => {
            let shown = path.display().to_string();
            let text =
                tokio::fs::read_to_string(path)
                    .await
                    .map_err(|e| CredentialError::TokenFile {
                        path: shown.clone(),
                        cause: super::connect::root_cause(&e),
                    })?;
            let token = text.trim();
            if token.is_empty() {
                return Err(CredentialError::EmptyTokenFile { path: shown });
            }
            Ok(Fetched::Token {
                token: token.to_owned(),
                expires: None,
            })
        }
        TokenSource::Exec(exec) => run_plugin(exec).await,
    }
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredentialStatus {
    token: Option<String>,
    expiration_timestamp: Option<String>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
}

#[derive(serde::Deserialize)]
struct ExecCredential {
    status: Option<ExecCredentialStatus>,
}

/// `KUBERNETES_EXEC_INFO`, as client-go sets it.
fn exec_info(exec: &ExecConfig, interactive: bool) -> String {
    let mut spec = serde_json::json!({ "interactive": interactive });
    if exec.provide_cluster_info
        && let Some(cluster) = &exec.cluster
    {
        spec["cluster"] = serde_json::to_value(cluster).unwrap_or_default();
    }
    serde_json::json!({
        "apiVersion": exec.api_version.as_deref().unwrap_or("client.authentication.k8s.io/v1beta1"),
        "kind": "ExecCredential",
        "spec": spec,
    })
    .to_string()
}

/// The last line the plugin wrote to stderr, shortened: what it says went wrong.
fn last_line(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let line = text
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let mut short: String = line.chars().take(200).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    short
}

async fn run_plugin(exec: &ExecConfig) -> Result<Fetched, CredentialError> {
    use std::io::IsTerminal as _;
    use std::process::Stdio;
    let command = exec
        .command
        .clone()
        .filter(|c| !c.trim().is_empty())
        .ok_or(CredentialError::ExecNoCommand)?;
    let interactive = exec.interactive_mode != Some(kube::config::ExecInteractiveMode::Never)
        && std::io::stdin().is_terminal();
    let mut cmd = tokio::process::Command::new(&command);
    cmd.args(exec.args.iter().flatten());
    for pair in exec.env.iter().flatten() {
        if let (Some(name), Some(value)) = (pair.get("name"), pair.get("value")) {
            cmd.env(name, value);
        }
    }
    cmd.env("KUBERNETES_EXEC_INFO", exec_info(exec, interactive));
    for name in exec.drop_env.iter().flatten() {
        cmd.env_remove(name);
    }
    cmd.stdout(Stdio::piped()).kill_on_drop(true);
    if interactive {
        cmd.stdin(Stdio::inherit()).stderr(Stdio::inherit());
    } else {
        cmd.stdin(Stdio::null()).stderr(Stdio::piped());
    }
    let output = cmd.output().await.map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => CredentialError::ExecNotFound {
            command: command.clone(),
            install_hint: exec.install_hint.clone(),
        },
        _ => CredentialError::ExecStart {
            command: command.clone(),
            cause: super::connect::root_cause(&e),
        },
    })?;
    if !output.status.success() {
        return Err(CredentialError::ExecFailed {
            command,
            code: output
                .status
                .code()
                .map_or_else(|| "none (killed by a signal)".to_owned(), |c| c.to_string()),
            stderr: last_line(&output.stderr),
        });
    }
    let bad = |why: String| CredentialError::ExecOutput {
        command: command.clone(),
        why,
    };
    // JSON, or the YAML some plugins print (client-go reads both). Only the position of an
    // error is said: its message could quote the token.
    let credential: ExecCredential = serde_saphyr::from_slice(&output.stdout).map_err(|e| {
        bad(match e.location() {
            Some(at) => format!(
                "its output is not valid JSON or YAML (line {}, column {})",
                at.line(),
                at.column()
            ),
            None => "its output is not valid JSON or YAML".to_owned(),
        })
    })?;
    let status = credential
        .status
        .ok_or_else(|| bad("its output has no status".to_owned()))?;
    if let (Some(certificate), Some(key)) = (status.client_certificate_data, status.client_key_data)
    {
        return Ok(Fetched::Certificate { certificate, key });
    }
    let token = status
        .token
        .filter(|t| !t.is_empty())
        .ok_or_else(|| bad("its status has no token".to_owned()))?;
    let expires = status
        .expiration_timestamp
        .map(|t| {
            t.parse::<Timestamp>().map_err(|_| {
                bad("its status.expirationTimestamp is not an RFC 3339 time".to_owned())
            })
        })
        .transpose()?;
    Ok(Fetched::Token { token, expires })
}

/// Sets `Authorization` from [`Credentials`]; on a 401, refreshes them and sends the request
/// once more.
#[derive(Clone)]
pub struct RefreshingAuthLayer(pub Arc<Credentials>);

impl<S> tower::Layer<S> for RefreshingAuthLayer {
    type Service = RefreshingAuth<S>;
    fn layer(&self, inner: S) -> RefreshingAuth<S> {
        RefreshingAuth {
            inner,
            credentials: Arc::clone(&self.0),
        }
    }
}

#[derive(Clone)]
pub struct RefreshingAuth<S> {
    inner: S,
    credentials: Arc<Credentials>,
}

fn clone_request(request: &Request<Body>) -> Option<Request<Body>> {
    let body = request.body().try_clone()?;
    let mut copy = Request::new(body);
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.version_mut() = request.version();
    *copy.headers_mut() = request.headers().clone();
    Some(copy)
}

impl<S, B> tower::Service<Request<Body>> for RefreshingAuth<S>
where
    S: tower::Service<Request<Body>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Send + 'static,
{
    type Response = Response<B>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<B>, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: Request<Body>) -> Self::Future {
        use tower::ServiceExt as _;
        // The clone may not be ready; the one polled ready is the one to call.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let credentials = Arc::clone(&self.credentials);
        Box::pin(async move {
            let (header, generation) = credentials.header().await?;
            let again = clone_request(&request);
            request.headers_mut().insert(AUTHORIZATION, header);
            let response = inner.call(request).await.map_err(Into::into)?;
            if response.status() != StatusCode::UNAUTHORIZED {
                return Ok(response);
            }
            let Some(mut again) = again else {
                return Ok(response);
            };
            let Some(header) = credentials.refused(generation).await? else {
                return Ok(response);
            };
            drop(response);
            again.headers_mut().insert(AUTHORIZATION, header);
            inner
                .ready()
                .await
                .map_err(Into::into)?
                .call(again)
                .await
                .map_err(Into::into)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicI64;
    use tower::{Layer as _, ServiceExt as _};

    /// An API server that accepts only the token in `valid`, counting what it was sent.
    fn server(
        valid: Arc<std::sync::Mutex<String>>,
        seen: Arc<std::sync::Mutex<Vec<u16>>>,
    ) -> impl tower::Service<
        Request<Body>,
        Response = Response<String>,
        Error = BoxError,
        Future = impl Future<Output = Result<Response<String>, BoxError>> + Send,
    > + Clone
    + Send
    + 'static {
        tower::service_fn(move |request: Request<Body>| {
            let valid = Arc::clone(&valid);
            let seen = Arc::clone(&seen);
            async move {
                let expected = format!("Bearer {}", valid.lock().unwrap());
                let sent = request.headers().get(AUTHORIZATION).cloned();
                let status = if sent
                    .as_ref()
                    .is_some_and(|h| h.as_bytes() == expected.as_bytes())
                {
                    StatusCode::OK
                } else {
                    StatusCode::UNAUTHORIZED
                };
                seen.lock().unwrap().push(status.as_u16());
                let mut response = Response::new(String::new());
                *response.status_mut() = status;
                Ok::<_, BoxError>(response)
            }
        })
    }

    fn get() -> Request<Body> {
        let mut request = Request::new(Body::from(b"{}".to_vec()));
        *request.uri_mut() = "/api/v1/namespaces".parse().unwrap();
        request
    }

    /// A token file holding `token`, its credentials primed, and a server that accepts
    /// `accepted` behind them.
    struct TokenFile {
        _dir: tempfile::TempDir,
        file: std::path::PathBuf,
        valid: Arc<std::sync::Mutex<String>>,
        seen: Arc<std::sync::Mutex<Vec<u16>>>,
        credentials: Arc<Credentials>,
    }

    impl TokenFile {
        async fn new(token: &str, accepted: &str) -> TokenFile {
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("token");
            std::fs::write(&file, token).unwrap();
            let credentials = Arc::new(Credentials::new(TokenSource::File(file.clone())));
            credentials.prime().await.unwrap();
            TokenFile {
                _dir: dir,
                file,
                valid: Arc::new(std::sync::Mutex::new(accepted.to_owned())),
                seen: Arc::default(),
                credentials,
            }
        }

        fn service(
            &self,
        ) -> impl tower::Service<Request<Body>, Response = Response<String>, Error = BoxError> + Clone
        {
            RefreshingAuthLayer(Arc::clone(&self.credentials))
                .layer(server(Arc::clone(&self.valid), Arc::clone(&self.seen)))
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_rotated_token_file_is_read_again_on_the_first_401_and_the_request_retried() {
        let setup = TokenFile::new("first-token\n", "first-token").await;
        let (file, valid, seen) = (&setup.file, &setup.valid, &setup.seen);
        let service = setup.service();

        let response = service.clone().oneshot(get()).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);

        // Rotation: the server now wants the new token; well inside kube's 60 s cache.
        std::fs::write(file, "second-token").unwrap();
        *valid.lock().unwrap() = "second-token".to_owned();
        tokio::time::advance(std::time::Duration::from_secs(5)).await;
        for _ in 0..3 {
            let response = service.clone().oneshot(get()).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
        }
        // One 401, answered by reading the file again; every request then succeeded.
        assert_eq!(*seen.lock().unwrap(), [200, 401, 200, 200, 200]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_token_the_file_still_holds_is_not_retried_and_an_unreadable_file_keeps_the_last() {
        let setup = TokenFile::new("the-token", "another").await;
        let (file, seen, credentials) = (&setup.file, &setup.seen, &setup.credentials);
        let service = setup.service();
        let response = service.clone().oneshot(get()).await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(*seen.lock().unwrap(), [401], "same token: not sent twice");

        std::fs::remove_file(file).unwrap();
        tokio::time::advance(TOKEN_FILE_PERIOD * 2).await;
        let (header, _) = credentials.header().await.unwrap();
        assert_eq!(header.as_bytes(), b"Bearer the-token");
    }

    /// A plugin printing `tok-N` (N its run count) expiring at the time in `dir/expiry`.
    fn plugin(dir: &Path) -> ExecConfig {
        let script = dir.join("plugin.sh");
        let d = dir.display();
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\necho run >> '{d}/runs'\nn=$(wc -l < '{d}/runs' | tr -d ' ')\n\
                 printf '{{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\
                 \"kind\":\"ExecCredential\",\"status\":{{\"token\":\"tok-%s\",\
                 \"expirationTimestamp\":\"%s\"}}}}' \"$n\" \"$(cat '{d}/expiry')\"\n"
            ),
        )
        .unwrap();
        ExecConfig {
            api_version: Some("client.authentication.k8s.io/v1beta1".to_owned()),
            command: Some("/bin/sh".to_owned()),
            args: Some(vec![script.display().to_string()]),
            ..ExecConfig::default()
        }
    }

    fn runs(dir: &Path) -> usize {
        std::fs::read_to_string(dir.join("runs")).map_or(0, |t| t.lines().count())
    }

    use std::path::Path;

    #[tokio::test]
    async fn an_exec_plugin_with_five_second_tokens_runs_once_per_token_and_again_on_401() {
        let dir = tempfile::tempdir().unwrap();
        let t0: Timestamp = "2030-01-01T00:00:00Z".parse().unwrap();
        std::fs::write(dir.path().join("expiry"), "2030-01-01T00:00:05Z").unwrap();
        let now = Arc::new(AtomicI64::new(0));
        let clock_now = Arc::clone(&now);
        let clock: Clock =
            Arc::new(move || t0 + SignedDuration::from_millis(clock_now.load(Ordering::SeqCst)));
        let credentials =
            Credentials::with_clock(TokenSource::Exec(Box::new(plugin(dir.path()))), clock);
        credentials.prime().await.unwrap();
        // Twenty requests over its first four seconds: the token is used, not re-fetched.
        for ms in (0..4000).step_by(200) {
            now.store(ms, Ordering::SeqCst);
            let (header, _) = credentials.header().await.unwrap();
            assert_eq!(header.as_bytes(), b"Bearer tok-1");
        }
        assert_eq!(runs(dir.path()), 1);
        // Within a fifth of its lifetime of its expiry: run again, once.
        std::fs::write(dir.path().join("expiry"), "2030-01-01T00:00:10Z").unwrap();
        now.store(4200, Ordering::SeqCst);
        let (header, generation) = credentials.header().await.unwrap();
        assert_eq!(header.as_bytes(), b"Bearer tok-2");
        credentials.header().await.unwrap();
        assert_eq!(runs(dir.path()), 2);
        // A 401: run again, once, however many requests saw it.
        let again = credentials.refused(generation).await.unwrap();
        assert_eq!(again.unwrap().as_bytes(), b"Bearer tok-3");
        let again = credentials.refused(generation).await.unwrap();
        assert_eq!(again.unwrap().as_bytes(), b"Bearer tok-3");
        assert_eq!(runs(dir.path()), 3);
    }

    #[tokio::test]
    async fn a_missing_plugin_is_named_with_its_install_hint_and_a_failing_one_with_its_exit() {
        let missing = ExecConfig {
            command: Some("aws-iam-authenticator-not-installed".to_owned()),
            install_hint: Some(
                "Install aws-iam-authenticator:\n  brew install aws-iam-authenticator".to_owned(),
            ),
            ..ExecConfig::default()
        };
        let err = run_plugin(&missing).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "getting credentials: exec: executable aws-iam-authenticator-not-installed not found"
        );
        assert_eq!(
            err.hint().as_deref(),
            Some("Install aws-iam-authenticator: brew install aws-iam-authenticator")
        );
        let failing = ExecConfig {
            command: Some("/bin/sh".to_owned()),
            args: Some(vec![
                "-c".to_owned(),
                "echo '{\"status\":{\"token\":\"leaked-token\"}}'; echo 'no SSO session' >&2; exit 3"
                    .to_owned(),
            ]),
            ..ExecConfig::default()
        };
        let err = run_plugin(&failing).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "getting credentials: exec: executable /bin/sh failed with exit code 3: no SSO session"
        );
        let garbled = ExecConfig {
            command: Some("/bin/sh".to_owned()),
            args: Some(vec![
                "-c".to_owned(),
                "echo '{\"status\": [leaked-token'".to_owned(),
            ]),
            ..ExecConfig::default()
        };
        let err = run_plugin(&garbled).await.unwrap_err().to_string();
        assert!(!err.contains("leaked"), "{err}");
        assert!(err.starts_with("getting credentials: exec: /bin/sh printed no ExecCredential: its output is not valid JSON or YAML (line 1"), "{err}");
    }
}
