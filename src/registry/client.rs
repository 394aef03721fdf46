//! `Registry`: asks `HEAD /v2/<name>/manifests/<ref>`, answers one auth challenge, and reads a
//! refusal's body for the reason, ending in a plain `Lookup`.
//!
//! Why not `oci_client::Client::fetch_manifest_digest`: its errors keep too little to tell the
//! outcomes apart. A token endpoint's 401 and 503 both become `AuthenticationFailure(text)`,
//! and a failed token fetch is swallowed so the manifest request goes out anonymously; 429
//! loses its `Retry-After`; and a client keeps the first credentials it saw per registry,
//! which is wrong when each call may bring its own. So the HTTP is driven here with reqwest
//! (the one already in oci-client's tree) and oci-client supplies reference parsing and media
//! types.

use futures::StreamExt as _;
use reqwest::StatusCode;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use tokio::time::Instant;

use super::credentials::{Auth, Credentials};
use super::lookup::Lookup;
use super::reference::ImageRef;
use super::response::{self, Challenge};
use super::token::{self, TokenRequest};
use super::transport::{RegistryError, RetryPolicy, Transport, http_client};

/// Every manifest kind a node may pull: multi-arch indexes and single manifests, OCI and
/// Docker. Spelled out because `concat!` cannot take oci_client's constants; a test below
/// keeps the two in step.
const MANIFEST_ACCEPT: &str = "application/vnd.oci.image.index.v1+json, \
     application/vnd.oci.image.manifest.v1+json, \
     application/vnd.docker.distribution.manifest.list.v2+json, \
     application/vnd.docker.distribution.manifest.v2+json";

/// The error code that says the repository itself is unknown, not just the tag.
const NAME_UNKNOWN: &str = "NAME_UNKNOWN";

#[derive(Debug, Clone)]
pub struct RegistryOptions {
    /// Budget for one image, token fetch and retries included.
    pub timeout: Duration,
    /// Extra tries after a 429 or 5xx.
    pub max_retries: u32,
    /// First backoff when the registry gives no `Retry-After`; doubles per retry.
    pub retry_delay: Duration,
    /// Lookups in flight at once in `lookup_all`.
    pub concurrency: usize,
    /// Registries (`host:port` or `host`) spoken to over plain HTTP. Loopback always is.
    pub insecure_registries: Vec<String>,
    /// The proxies to use; `None`: those `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` name.
    pub proxies: Option<crate::proxy::ProxyEnv>,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        RegistryOptions {
            timeout: Duration::from_secs(10),
            max_retries: 2,
            retry_delay: Duration::from_millis(500),
            concurrency: 8,
            insecure_registries: Vec::new(),
            proxies: None,
        }
    }
}

#[derive(Debug)]
pub struct Registry {
    transport: Transport,
    timeout: Duration,
    concurrency: usize,
}

/// What went with a manifest request, so a refusal can say what was refused.
enum Presented {
    Nothing,
    Basic { username: String, password: String },
    Bearer { token: String, how: String },
}

impl Presented {
    fn describe(&self) -> String {
        match self {
            Presented::Nothing => "anonymously".to_string(),
            Presented::Basic { username, .. } => {
                format!("with basic credentials of user {username:?}")
            }
            Presented::Bearer { how, .. } => format!("with a bearer token {how}"),
        }
    }

    fn apply(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self {
            Presented::Nothing => request,
            Presented::Basic { username, password } => request.basic_auth(username, Some(password)),
            Presented::Bearer { token, .. } => request.bearer_auth(token),
        }
    }
}

impl Registry {
    pub fn new(options: &RegistryOptions) -> Result<Self, RegistryError> {
        let proxies = match &options.proxies {
            Some(p) => p.clone(),
            None => crate::proxy::ProxyEnv::from_env()?,
        };
        let client = http_client(options.timeout, &proxies)?;
        let retry = RetryPolicy {
            max_retries: options.max_retries,
            base_delay: options.retry_delay,
        };
        Ok(Registry {
            transport: Transport::new(client, &options.insecure_registries, retry),
            timeout: options.timeout,
            concurrency: options.concurrency.max(1),
        })
    }

    /// Whether `image` exists for `creds` (the entry matching its registry is used, its
    /// credential helper asked first if it names one; none means anonymous). A helper that
    /// fails makes the image `Unreachable`: it could not be asked as configured.
    pub async fn lookup(&self, image: &str, creds: Option<&Credentials>) -> Lookup {
        match parsed(image) {
            Ok(image) => self.lookup_ref(&image, creds).await,
            Err(invalid) => invalid,
        }
    }

    /// [`Registry::lookup`] of a reference already parsed.
    async fn lookup_ref(&self, image: &ImageRef, creds: Option<&Credentials>) -> Lookup {
        // Before the lookup's own budget starts: a helper has its own, and answers once a run.
        let auth = match creds {
            Some(c) => match c.resolve(image).await {
                Ok(auth) => auth,
                Err(e) => {
                    return Lookup::Unreachable {
                        detail: e.to_string(),
                    };
                }
            },
            None => None,
        };
        let auth = auth.as_ref();
        let deadline = Instant::now() + self.timeout;
        match tokio::time::timeout_at(deadline, self.ask(image, auth, deadline)).await {
            Ok(Ok(answer) | Err(answer)) => answer,
            Err(_) => Lookup::Unreachable {
                detail: format!(
                    "no answer from {} within {:?}",
                    image.api_host(),
                    self.timeout
                ),
            },
        }
    }

    /// Looks up each distinct image, at most `concurrency` at a time. Once a registry host
    /// has given no usable answer for one image, its images not yet asked are not asked:
    /// they get that answer, marked as not asked. 400 images on a host the runner could not
    /// resolve held a run's preflight for 80 s, 8 lookups at a time.
    pub async fn lookup_all(
        &self,
        images: &[String],
        creds: Option<&Credentials>,
    ) -> BTreeMap<String, Lookup> {
        let distinct: BTreeSet<&str> = images.iter().map(String::as_str).collect();
        let down = Mutex::default();
        futures::stream::iter(distinct)
            .map(|image| {
                let down = &down;
                async move {
                    let answer = match parsed(image) {
                        Ok(parsed) => self.unless_down(image, &parsed, creds, down).await,
                        Err(invalid) => invalid,
                    };
                    (image.to_string(), answer)
                }
            })
            .buffer_unordered(self.concurrency)
            .collect()
            .await
    }

    /// `image` (`parsed`) looked up, unless its host gave no usable answer for another image
    /// of the batch; `down` holds, by host, the first image it did not answer for, and why.
    async fn unless_down(
        &self,
        image: &str,
        parsed: &ImageRef,
        creds: Option<&Credentials>,
        down: &Mutex<HashMap<String, (String, String)>>,
    ) -> Lookup {
        let host = parsed.api_host();
        let known = (down.lock().unwrap_or_else(PoisonError::into_inner))
            .get(host)
            .cloned();
        if let Some((first, why)) = known {
            let detail = format!("not asked: {host} gave no answer for {first}: {why}");
            return Lookup::Unreachable { detail };
        }
        let answer = self.lookup_ref(parsed, creds).await;
        if let Lookup::Unreachable { detail } = &answer {
            (down.lock().unwrap_or_else(PoisonError::into_inner))
                .entry(host.to_owned())
                .or_insert_with(|| (image.to_owned(), detail.clone()));
        }
        answer
    }

    /// `Err` carries a final answer reached early (a refused token, an unreachable host).
    async fn ask(
        &self,
        image: &ImageRef,
        auth: Option<&Auth>,
        deadline: Instant,
    ) -> Result<Lookup, Lookup> {
        let url = format!(
            "{}{}",
            self.transport.base_url(image.api_host()),
            image.manifest_path()
        );
        // A `registrytoken` already is the bearer token: no challenge round needed.
        if let Some(Auth::Bearer { token }) = auth {
            let presented = Presented::Bearer {
                token: token.clone(),
                how: "from the docker config".into(),
            };
            return self.manifest(&url, image, &presented, deadline).await;
        }
        let anonymous = self.head(&url, &Presented::Nothing, deadline).await?;
        if anonymous.status() != StatusCode::UNAUTHORIZED {
            return self
                .conclude(anonymous, &url, image, &Presented::Nothing, deadline)
                .await;
        }
        let presented = match response::challenge(anonymous.headers()) {
            Some(Challenge::Bearer {
                realm,
                service,
                scope,
            }) => {
                let scope = scope.unwrap_or_else(|| image.pull_scope());
                let request = TokenRequest {
                    realm: &realm,
                    service: service.as_deref(),
                    scope: &scope,
                    registry: image.registry(),
                };
                let token = token::fetch(&self.transport, &request, auth, deadline).await?;
                let how = match auth {
                    Some(Auth::Basic { username, .. }) => format!("issued to user {username:?}"),
                    Some(Auth::IdentityToken { .. }) => {
                        "issued for the credential helper's identity token".to_string()
                    }
                    _ => "issued anonymously".to_string(),
                };
                Presented::Bearer { token, how }
            }
            Some(Challenge::Basic) => match auth {
                Some(Auth::Basic { username, password }) => Presented::Basic {
                    username: username.clone(),
                    password: password.clone(),
                },
                _ => {
                    return self
                        .conclude(anonymous, &url, image, &Presented::Nothing, deadline)
                        .await;
                }
            },
            None => {
                return self
                    .conclude(anonymous, &url, image, &Presented::Nothing, deadline)
                    .await;
            }
        };
        self.manifest(&url, image, &presented, deadline).await
    }

    async fn manifest(
        &self,
        url: &str,
        image: &ImageRef,
        presented: &Presented,
        deadline: Instant,
    ) -> Result<Lookup, Lookup> {
        let response = self.head(url, presented, deadline).await?;
        self.conclude(response, url, image, presented, deadline)
            .await
    }

    async fn head(
        &self,
        url: &str,
        presented: &Presented,
        deadline: Instant,
    ) -> Result<reqwest::Response, Lookup> {
        let what = format!("HEAD {url}");
        self.transport
            .send(
                |client| {
                    presented.apply(
                        client
                            .head(url)
                            .header(reqwest::header::ACCEPT, MANIFEST_ACCEPT),
                    )
                },
                &what,
                deadline,
            )
            .await
    }

    /// Turns a final manifest answer into a `Lookup`.
    async fn conclude(
        &self,
        response: reqwest::Response,
        url: &str,
        image: &ImageRef,
        presented: &Presented,
        deadline: Instant,
    ) -> Result<Lookup, Lookup> {
        let status = response.status();
        if status.is_success() {
            let digest =
                response::digest(response.headers()).or_else(|| image.digest().map(str::to_string));
            return Ok(Lookup::Exists { digest });
        }
        match status {
            StatusCode::NOT_FOUND => {
                let body = self.error_body(url, status, presented, deadline).await;
                if response::error_codes(&body)
                    .iter()
                    .any(|c| c == NAME_UNKNOWN)
                {
                    return Ok(Lookup::Missing {
                        detail: response::error_detail(status, &body),
                    });
                }
                let detail = match self.repository_unknown(image, presented, deadline).await {
                    Some(repository_detail) => repository_detail,
                    None => response::error_detail(status, &body),
                };
                Ok(Lookup::Missing { detail })
            }
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                let body = self.error_body(url, status, presented, deadline).await;
                let reason = response::error_detail(status, &body);
                Ok(Lookup::Denied {
                    detail: format!("{reason}, {}", presented.describe()),
                })
            }
            _ => Ok(Lookup::Unreachable {
                detail: format!("HEAD {url}: unexpected HTTP {status}"),
            }),
        }
    }

    /// A HEAD answer has no body, and the body is what names the error; a GET repeats the
    /// question to read it. If the GET answers differently (or not at all) there is no body.
    async fn error_body(
        &self,
        url: &str,
        status: StatusCode,
        presented: &Presented,
        deadline: Instant,
    ) -> Vec<u8> {
        let what = format!("GET {url}");
        let build = |client: &reqwest::Client| {
            presented.apply(
                client
                    .get(url)
                    .header(reqwest::header::ACCEPT, MANIFEST_ACCEPT),
            )
        };
        if let Ok(again) = self.transport.send(build, &what, deadline).await
            && again.status() == status
            && let Ok(body) = again.bytes().await
        {
            return body.to_vec();
        }
        Vec::new()
    }

    /// Some registries (distribution 2.x among them) answer MANIFEST_UNKNOWN for a repository
    /// that does not exist at all; its tag list tells the two apart. `Some` only when the
    /// registry says NAME_UNKNOWN there.
    async fn repository_unknown(
        &self,
        image: &ImageRef,
        presented: &Presented,
        deadline: Instant,
    ) -> Option<String> {
        let url = format!(
            "{}/v2/{}/tags/list?n=1",
            self.transport.base_url(image.api_host()),
            image.repository()
        );
        let what = format!("GET {url}");
        let answer = self
            .transport
            .send(|client| presented.apply(client.get(&url)), &what, deadline)
            .await
            .ok()?;
        let status = answer.status();
        if status != StatusCode::NOT_FOUND {
            return None;
        }
        let body = answer.bytes().await.ok()?;
        let unknown = response::error_codes(&body)
            .iter()
            .any(|c| c == NAME_UNKNOWN);
        unknown.then(|| response::error_detail(status, &body))
    }
}

/// `image` parsed, or the `Invalid` answer a reference that does not parse gets (the
/// kubelet's `InvalidImageName`): no registry is asked.
fn parsed(image: &str) -> Result<ImageRef, Lookup> {
    ImageRef::parse(image).map_err(|e| {
        let cause = std::error::Error::source(&e)
            .map(|s| format!(": {s}"))
            .unwrap_or_default();
        Lookup::Invalid {
            detail: format!("{e}{cause}"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use oci_client::manifest::{
        IMAGE_MANIFEST_LIST_MEDIA_TYPE, IMAGE_MANIFEST_MEDIA_TYPE, OCI_IMAGE_INDEX_MEDIA_TYPE,
        OCI_IMAGE_MEDIA_TYPE,
    };

    #[test]
    fn accept_lists_every_manifest_kind_a_node_pulls() {
        let listed: Vec<&str> = MANIFEST_ACCEPT.split(',').map(str::trim).collect();
        assert_eq!(
            listed,
            [
                OCI_IMAGE_INDEX_MEDIA_TYPE,
                OCI_IMAGE_MEDIA_TYPE,
                IMAGE_MANIFEST_LIST_MEDIA_TYPE,
                IMAGE_MANIFEST_MEDIA_TYPE
            ]
        );
    }

    #[tokio::test]
    async fn invalid_references_are_not_sent_anywhere() {
        let registry = Registry::new(&RegistryOptions::default()).unwrap();
        let answer = registry.lookup("Shop/Web:1.0", None).await;
        let Lookup::Invalid { detail } = answer else {
            panic!("expected Invalid, got {answer:?}")
        };
        assert!(
            detail.starts_with("invalid image reference \"Shop/Web:1.0\": "),
            "{detail}"
        );
    }
}
