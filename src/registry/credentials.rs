//! Registry credentials read from docker config JSON (and the Kubernetes pull Secrets that carry
//! it), matched to an image the way the kubelet matches imagePullSecrets. Secrets never reach a
//! Debug or error message.
//!
//! The runner's own docker config may also name credential helpers (`credHelpers` per host,
//! `credsStore` for every host without inline auth), asked only when a lookup needs them.
//! Pull Secrets never run helpers: the kubelet reads only their `auths`, and a Secret read
//! from the cluster must not choose what the runner executes.

use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde_json::Value;
use std::fmt;

use super::helper::{CredentialHelpers, HelperError};

use super::pattern::Pattern;
use super::reference::ImageRef;
use crate::pointer::Pointer;

/// Docker writes `auth` padded; hand-made secrets often are not.
const LENIENT_BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    /// No `#[source]`: only the position and the kind of error are said, never the text
    /// around it (an `auth` value may be next to it).
    #[error("docker config is not valid JSON: line {line}, column {column}: {what}")]
    Json {
        line: usize,
        column: usize,
        what: String,
    },
    #[error("docker config is not a JSON object")]
    NotAnObject,
    #[error("docker config has no \"auths\" object")]
    NoAuths,
    // No #[source]: a base64 error quotes the offending byte of the secret.
    #[error("auth for registry {registry:?} is not valid base64")]
    AuthBase64 { registry: String },
    #[error("auth for registry {registry:?} is not \"username:password\"")]
    AuthFormat { registry: String },
    #[error("secret of type {secret_type:?} holds no registry credentials")]
    NotAPullSecret { secret_type: String },
    #[error("secret has no {key:?} key in data or stringData")]
    MissingKey { key: &'static str },
    #[error("secret key {key:?} is not valid base64")]
    SecretBase64 { key: &'static str },
    #[error("credential helper name {name:?} is not a plain name")]
    HelperName { name: String },
}

fn json_error(e: &serde_json::Error) -> CredentialsError {
    let text = e.to_string();
    // "expected `,` or `}` at line 3 column 5": the position is said in front.
    let what = text
        .rfind(" at line ")
        .map_or(text.as_str(), |at| &text[..at]);
    CredentialsError::Json {
        line: e.line(),
        column: e.column(),
        what: crate::cluster::connect::scrub_quoted(what),
    }
}

/// What to present to one registry.
#[derive(Clone, PartialEq, Eq)]
pub enum Auth {
    Basic {
        username: String,
        password: String,
    },
    /// `registrytoken` in a docker config: sent as a bearer token as it is.
    Bearer {
        token: String,
    },
    /// A credential helper's identity token (Username `<token>`): an OAuth2 refresh token,
    /// traded at the registry's token realm for an access token, as docker does.
    IdentityToken {
        token: String,
    },
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Auth::Basic { username, .. } => f
                .debug_struct("Basic")
                .field("username", username)
                .field("password", &"<redacted>")
                .finish(),
            Auth::Bearer { .. } => f
                .debug_struct("Bearer")
                .field("token", &"<redacted>")
                .finish(),
            Auth::IdentityToken { .. } => f
                .debug_struct("IdentityToken")
                .field("token", &"<redacted>")
                .finish(),
        }
    }
}

/// Where an entry's credentials come from.
#[derive(Clone)]
enum Source {
    Inline(Auth),
    /// `credHelpers`: the named helper, asked when an image needs it.
    Helper(String),
}

#[derive(Clone)]
struct Entry {
    key: String,
    pattern: Pattern,
    source: Source,
}

/// Credentials for any number of registries, in the order they were given.
#[derive(Clone, Default)]
pub struct Credentials {
    entries: Vec<Entry>,
    /// `credsStore`: asked for any registry no entry matches.
    store: Option<String>,
    /// How helpers run, with the answers of this run; `None` for configs that name none.
    helpers: Option<CredentialHelpers>,
}

#[expect(
    clippy::missing_fields_in_debug,
    reason = "entries hold passwords and tokens, helpers their cached answers: only registries are shown"
)]
impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("registries", &self.registries())
            .field("store", &self.store)
            .finish()
    }
}

impl Credentials {
    /// A `.dockerconfigjson`: `{"auths": {"host": {...}}}`. `credsStore` and `credHelpers`
    /// are ignored, as the kubelet ignores them; a config that has only them holds nothing.
    pub fn from_docker_config_json(json: &str) -> Result<Self, CredentialsError> {
        let value: Value = serde_json::from_str(json).map_err(|e| json_error(&e))?;
        match value.get("auths") {
            Some(auths) => Self::from_auths(auths),
            None if names_helpers(&value) => Ok(Credentials::default()),
            None => Err(CredentialsError::NoAuths),
        }
    }

    /// The runner's `~/.docker/config.json`: `auths`, and the credential helpers it names,
    /// run through `helpers` when a lookup needs them. `auths` may be absent when a helper
    /// is named.
    pub fn from_runner_docker_config(
        json: &str,
        helpers: CredentialHelpers,
    ) -> Result<Self, CredentialsError> {
        let value: Value = serde_json::from_str(json).map_err(|e| json_error(&e))?;
        let mut creds = match value.get("auths") {
            Some(auths) => Self::from_auths(auths)?,
            None if names_helpers(&value) => Credentials::default(),
            None => return Err(CredentialsError::NoAuths),
        };
        let plain = |name: &str| -> Result<String, CredentialsError> {
            let ok = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                && name != "."
                && name != "..";
            ok.then(|| name.to_string())
                .ok_or_else(|| CredentialsError::HelperName {
                    name: name.to_string(),
                })
        };
        let mut per_host = Vec::new();
        if let Some(map) = value.get("credHelpers").and_then(Value::as_object) {
            for (key, helper) in map {
                let Some(helper) = helper.as_str().filter(|h| !h.is_empty()) else {
                    continue;
                };
                per_host.push(Entry {
                    key: key.clone(),
                    pattern: Pattern::from_key(key),
                    source: Source::Helper(plain(helper)?),
                });
            }
        }
        // Before the inline entries: for the same host, docker asks `credHelpers` first.
        per_host.append(&mut creds.entries);
        creds.entries = per_host;
        creds.store = match value.get("credsStore").and_then(Value::as_str) {
            Some(store) if !store.is_empty() => Some(plain(store)?),
            _ => None,
        };
        creds.helpers = Some(helpers);
        Ok(creds)
    }

    /// The legacy `.dockercfg` format: the `auths` map without its wrapper.
    pub fn from_dockercfg(json: &str) -> Result<Self, CredentialsError> {
        let value: Value = serde_json::from_str(json).map_err(|e| json_error(&e))?;
        Self::from_auths(&value)
    }

    /// A Secret object as the API server returns it (or as written in a manifest, where
    /// `stringData` may stand in for `data` and wins over it, as on apply).
    pub fn from_secret(secret: &Value) -> Result<Self, CredentialsError> {
        let secret_type = secret
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("Opaque");
        let key = match secret_type {
            "kubernetes.io/dockerconfigjson" => ".dockerconfigjson",
            "kubernetes.io/dockercfg" => ".dockercfg",
            other => {
                return Err(CredentialsError::NotAPullSecret {
                    secret_type: other.to_string(),
                });
            }
        };
        let plain = secret
            .at(&format!("/stringData/{key}"))
            .and_then(Value::as_str);
        let content = if let Some(text) = plain {
            text.to_string()
        } else {
            let encoded = secret
                .at(&format!("/data/{key}"))
                .and_then(Value::as_str)
                .ok_or(CredentialsError::MissingKey { key })?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|_| CredentialsError::SecretBase64 { key })?;
            String::from_utf8(bytes).map_err(|_| CredentialsError::SecretBase64 { key })?
        };
        if key == ".dockercfg" {
            Self::from_dockercfg(&content)
        } else {
            Self::from_docker_config_json(&content)
        }
    }

    /// Appends `other`'s entries; on equally specific matches the earlier ones win, as the
    /// first of a Pod's imagePullSecrets does.
    pub fn merge(&mut self, other: Credentials) {
        self.entries.extend(other.entries);
        if self.store.is_none() {
            self.store = other.store;
        }
        if self.helpers.is_none() {
            self.helpers = other.helpers;
        }
    }

    /// The config keys we hold credentials for, for reports. No secrets.
    pub fn registries(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.key.as_str()).collect()
    }

    /// The credentials to present for `image`: the entry a kubelet would pick (exact hosts
    /// before wildcards, longer repository prefixes before shorter, then first given), its
    /// helper asked if it names one; with no entry, the `credsStore`. `Ok(None)`: anonymous.
    pub async fn resolve(&self, image: &ImageRef) -> Result<Option<Auth>, HelperError> {
        let helper = match self.best(image).map(|e| &e.source) {
            Some(Source::Inline(auth)) => return Ok(Some(auth.clone())),
            Some(Source::Helper(helper)) => helper,
            None => match &self.store {
                Some(store) => store,
                None => return Ok(None),
            },
        };
        let helpers = self.helpers.clone().unwrap_or_default();
        helpers.get(helper, &server_url(image)).await
    }

    /// The inline credentials a kubelet would present when pulling `image`.
    #[cfg(test)]
    pub fn auth_for(&self, image: &ImageRef) -> Option<&Auth> {
        match &self.best(image)?.source {
            Source::Inline(auth) => Some(auth),
            Source::Helper(_) => None,
        }
    }

    fn best(&self, image: &ImageRef) -> Option<&Entry> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.pattern.matches(image))
            .min_by_key(|(index, e)| {
                let wildcard = e.pattern.host.contains('*');
                let path_len = e.pattern.path.as_ref().map_or(0, String::len);
                (wildcard, std::cmp::Reverse(path_len), *index)
            })
            .map(|(_, e)| e)
    }

    fn from_auths(auths: &Value) -> Result<Self, CredentialsError> {
        let map = auths.as_object().ok_or(CredentialsError::NotAnObject)?;
        let mut entries = Vec::new();
        for (key, entry) in map {
            // Entries left empty by `credsStore` carry nothing we can use.
            if let Some(auth) = parse_entry(key, entry)? {
                entries.push(Entry {
                    key: key.clone(),
                    pattern: Pattern::from_key(key),
                    source: Source::Inline(auth),
                });
            }
        }
        Ok(Credentials {
            entries,
            ..Credentials::default()
        })
    }
}

fn names_helpers(config: &Value) -> bool {
    config.get("credsStore").is_some() || config.get("credHelpers").is_some()
}

/// The server a helper is asked about, as docker names it: the registry host (with its port),
/// or Docker Hub's legacy index URL.
fn server_url(image: &ImageRef) -> String {
    if image.registry() == super::reference::DOCKER_HUB {
        "https://index.docker.io/v1/".to_string()
    } else {
        image.registry().to_string()
    }
}

fn parse_entry(key: &str, entry: &Value) -> Result<Option<Auth>, CredentialsError> {
    let field = |name: &str| {
        entry
            .get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    if let Some(encoded) = field("auth") {
        let registry = key.to_string();
        let bytes =
            LENIENT_BASE64
                .decode(encoded.trim())
                .map_err(|_| CredentialsError::AuthBase64 {
                    registry: registry.clone(),
                })?;
        let decoded = String::from_utf8(bytes).map_err(|_| CredentialsError::AuthBase64 {
            registry: registry.clone(),
        })?;
        let (username, password) = decoded
            .split_once(':')
            .ok_or(CredentialsError::AuthFormat { registry })?;
        return Ok(Some(Auth::Basic {
            username: username.to_string(),
            password: password.to_string(),
        }));
    }
    if let (Some(username), Some(password)) = (field("username"), field("password")) {
        return Ok(Some(Auth::Basic {
            username: username.to_string(),
            password: password.to_string(),
        }));
    }
    Ok(field("registrytoken").map(|token| Auth::Bearer {
        token: token.to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    fn basic(username: &str, password: &str) -> Auth {
        Auth::Basic {
            username: username.to_string(),
            password: password.to_string(),
        }
    }

    #[track_caller]
    fn case(creds: &Credentials, image: &str, expected: Option<&Auth>) {
        let image_ref = ImageRef::parse(image).unwrap();
        assert_eq!(
            creds.auth_for(&image_ref),
            expected,
            "credentials for {image}"
        );
    }

    #[test]
    fn reads_auth_and_username_password_entries() {
        let config = json!({
            "auths": {
                "registry.local": {"auth": b64("ci:s3cret:with:colons")},
                "https://ghcr.io": {"username": "octo", "password": "ghp_token"},
                "quay.io": {"auth": b64("robot+ci:pw").trim_end_matches('=').to_string()},
                "helper.example.com": {},
                "tokens.example.com": {"registrytoken": "eyJhbGciOi"}
            },
            "credsStore": "desktop"
        });
        let creds = Credentials::from_docker_config_json(&config.to_string()).unwrap();
        assert_eq!(
            creds.registries(),
            [
                "registry.local",
                "https://ghcr.io",
                "quay.io",
                "tokens.example.com"
            ]
        );
        case(
            &creds,
            "registry.local/shop/web:1.0",
            Some(&basic("ci", "s3cret:with:colons")),
        );
        case(
            &creds,
            "ghcr.io/acme/api:2",
            Some(&basic("octo", "ghp_token")),
        );
        case(
            &creds,
            "quay.io/acme/worker",
            Some(&basic("robot+ci", "pw")),
        );
        case(
            &creds,
            "tokens.example.com/a/b",
            Some(&Auth::Bearer {
                token: "eyJhbGciOi".into(),
            }),
        );
        case(&creds, "helper.example.com/a/b", None);
        case(&creds, "registry.local:5000/shop/web:1.0", None);
        case(&creds, "nginx", None);
    }

    #[test]
    fn docker_hub_aliases_match_short_names() {
        for key in [
            "https://index.docker.io/v1/",
            "index.docker.io",
            "registry-1.docker.io",
            "docker.io",
        ] {
            let config = json!({"auths": {key: {"auth": b64("hubuser:hubpass")}}});
            let creds = Credentials::from_docker_config_json(&config.to_string()).unwrap();
            let hub = basic("hubuser", "hubpass");
            case(&creds, "nginx", Some(&hub));
            case(&creds, "bitnami/redis:7.2", Some(&hub));
            case(&creds, "index.docker.io/library/busybox", Some(&hub));
            case(&creds, "ghcr.io/library/nginx", None);
        }
    }

    #[test]
    fn most_specific_entry_wins() {
        let config = json!({"auths": {
            "*.example.com": {"auth": b64("wild:1")},
            "eu.example.com": {"auth": b64("host:2")},
            "eu.example.com/team-a": {"auth": b64("team:3")},
            "https://eu.example.com/v2/": {"auth": b64("later-host:4")}
        }});
        let creds = Credentials::from_docker_config_json(&config.to_string()).unwrap();
        case(
            &creds,
            "eu.example.com/team-a/api:1",
            Some(&basic("team", "3")),
        );
        case(
            &creds,
            "eu.example.com/team-ab/api:1",
            Some(&basic("host", "2")),
        );
        case(
            &creds,
            "eu.example.com/team-b/api:1",
            Some(&basic("host", "2")),
        );
        case(
            &creds,
            "us.example.com/team-b/api:1",
            Some(&basic("wild", "1")),
        );
        case(&creds, "a.us.example.com/team-b/api:1", None);
        case(&creds, "example.com/team-b/api:1", None);
    }

    #[test]
    fn merge_keeps_the_first_secret_first() {
        let first = json!({"auths": {"registry.local": {"auth": b64("first:1")}}});
        let second = json!({"auths": {"registry.local": {"auth": b64("second:2")}, "quay.io": {"auth": b64("q:3")}}});
        let mut creds = Credentials::from_docker_config_json(&first.to_string()).unwrap();
        creds.merge(Credentials::from_docker_config_json(&second.to_string()).unwrap());
        case(
            &creds,
            "registry.local/shop/web",
            Some(&basic("first", "1")),
        );
        case(&creds, "quay.io/acme/web", Some(&basic("q", "3")));
    }

    #[test]
    fn reads_pull_secrets_as_the_api_server_returns_them() {
        let config = json!({"auths": {"registry.local": {"username": "ci", "password": "s3cret", "auth": b64("ci:s3cret")}}});
        let secret = json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "regcred", "namespace": "shop", "resourceVersion": "4711",
                         "uid": "0b3c6f1e-5d0e-4c2a-9a59-1f3f8b2f9e11", "creationTimestamp": "2025-05-01T10:00:00Z"},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": b64(&config.to_string())}
        });
        let creds = Credentials::from_secret(&secret).unwrap();
        case(
            &creds,
            "registry.local/shop/web:1.0",
            Some(&basic("ci", "s3cret")),
        );

        let legacy =
            json!({"registry.local:5000": {"auth": b64("old:timer"), "email": "ci@example.com"}});
        let secret = json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "legacy", "namespace": "shop"},
            "type": "kubernetes.io/dockercfg",
            "data": {".dockercfg": b64(&legacy.to_string())}
        });
        let creds = Credentials::from_secret(&secret).unwrap();
        case(
            &creds,
            "registry.local:5000/shop/web:1.0",
            Some(&basic("old", "timer")),
        );

        let manifest = json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "from-manifest"},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": b64(r#"{"auths":{}}"#)},
            "stringData": {".dockerconfigjson": config.to_string()}
        });
        let creds = Credentials::from_secret(&manifest).unwrap();
        case(
            &creds,
            "registry.local/shop/web:1.0",
            Some(&basic("ci", "s3cret")),
        );
    }

    #[test]
    fn rejects_what_holds_no_usable_credentials() {
        #[track_caller]
        fn fails(result: Result<Credentials, CredentialsError>, message: &str) {
            assert_eq!(result.expect_err(message).to_string(), message);
        }
        fails(
            Credentials::from_docker_config_json("{\"auths\": "),
            "docker config is not valid JSON: line 1, column 10: EOF while parsing a value",
        );
        // A syntax error right after a credential: its position, never the text around it.
        fails(
            Credentials::from_docker_config_json(
                "{\"auths\": {\"r.io\": {\"auth\": \"Y2k6czNjcmV0\" \"x\"}}}",
            ),
            "docker config is not valid JSON: line 1, column 44: expected `,` or `}`",
        );
        fails(
            Credentials::from_docker_config_json(r#"{"registry.local": {}}"#),
            "docker config has no \"auths\" object",
        );
        fails(
            Credentials::from_dockercfg("[]"),
            "docker config is not a JSON object",
        );
        fails(
            Credentials::from_docker_config_json(
                r#"{"auths": {"registry.local": {"auth": "!!!"}}}"#,
            ),
            "auth for registry \"registry.local\" is not valid base64",
        );
        fails(
            Credentials::from_docker_config_json(
                &json!({"auths": {"r.io": {"auth": b64("nocolon")}}}).to_string(),
            ),
            "auth for registry \"r.io\" is not \"username:password\"",
        );
        let opaque = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}, "type": "Opaque", "data": {}});
        fails(
            Credentials::from_secret(&opaque),
            "secret of type \"Opaque\" holds no registry credentials",
        );
        let empty = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}, "type": "kubernetes.io/dockerconfigjson"});
        fails(
            Credentials::from_secret(&empty),
            "secret has no \".dockerconfigjson\" key in data or stringData",
        );
        let garbled = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"},
                             "type": "kubernetes.io/dockercfg", "data": {".dockercfg": "%%%"}});
        fails(
            Credentials::from_secret(&garbled),
            "secret key \".dockercfg\" is not valid base64",
        );
    }

    #[tokio::test]
    async fn helpers_answer_for_their_hosts_and_the_store_for_the_rest() {
        use crate::registry::helper::tests::{FakeHelpers, answering};
        let fake = FakeHelpers::new(&[
            (
                "gcloud",
                &answering("eu.gcr.io", "oauth2accesstoken", "ya29.gcr"),
            ),
            (
                "desktop",
                &answering("https://index.docker.io/v1/", "hubuser", "hubpass"),
            ),
        ]);
        let config = json!({
            "auths": {
                "registry.local": {"auth": b64("ci:inline")},
                "quay.io": {}
            },
            "credHelpers": {"eu.gcr.io": "gcloud", "registry.local": "gcloud"},
            "credsStore": "desktop"
        });
        let creds =
            Credentials::from_runner_docker_config(&config.to_string(), fake.helpers()).unwrap();
        let resolve = |image: &str| {
            let image = ImageRef::parse(image).unwrap();
            let creds = creds.clone();
            async move { creds.resolve(&image).await }
        };
        assert_eq!(
            resolve("eu.gcr.io/acme/api:1").await,
            Ok(Some(basic("oauth2accesstoken", "ya29.gcr")))
        );
        // credHelpers wins over the inline entry of the same host, as in docker; the helper
        // has nothing for it, so the lookup is anonymous.
        assert_eq!(resolve("registry.local/shop/web").await, Ok(None));
        assert_eq!(
            resolve("nginx").await,
            Ok(Some(basic("hubuser", "hubpass")))
        );
        // The store for a host it holds nothing for: "credentials not found", anonymous.
        assert_eq!(resolve("quay.io/acme/worker").await, Ok(None));
        let calls = std::fs::read_to_string(fake.dir.path().join("calls")).unwrap();
        assert_eq!(
            calls,
            "eu.gcr.io\nregistry.local\nhttps://index.docker.io/v1/\nquay.io\n"
        );

        // A missing helper is an error naming it and the host; other hosts are unaffected.
        let config = json!({"auths": {"registry.local": {"auth": b64("ci:inline")}},
                            "credsStore": "not-installed"});
        let creds =
            Credentials::from_runner_docker_config(&config.to_string(), fake.helpers()).unwrap();
        let err = creds
            .resolve(&ImageRef::parse("ghcr.io/acme/api").unwrap())
            .await
            .unwrap_err();
        assert!(
            err.to_string().starts_with(
                "credential helper docker-credential-not-installed for ghcr.io: not installed"
            ),
            "{err}"
        );
        assert_eq!(
            creds
                .resolve(&ImageRef::parse("registry.local/shop/web").unwrap())
                .await,
            Ok(Some(basic("ci", "inline")))
        );
    }

    #[test]
    fn helper_only_configs_are_accepted_and_pull_secrets_run_no_helper() {
        let store_only = r#"{"credsStore": "desktop"}"#;
        let creds =
            Credentials::from_runner_docker_config(store_only, CredentialHelpers::on_path())
                .unwrap();
        assert_eq!(creds.store.as_deref(), Some("desktop"));
        let helpers_only = r#"{"credHelpers": {"eu.gcr.io": "gcloud"}}"#;
        let creds =
            Credentials::from_runner_docker_config(helpers_only, CredentialHelpers::on_path())
                .unwrap();
        assert_eq!(creds.registries(), ["eu.gcr.io"]);

        // The kubelet reads only `auths`: a Secret naming helpers holds nothing.
        let creds = Credentials::from_docker_config_json(store_only).unwrap();
        assert!(creds.store.is_none() && creds.helpers.is_none());
        let creds = Credentials::from_docker_config_json(helpers_only).unwrap();
        assert!(creds.registries().is_empty());

        for bad in ["../../bin/sh", "a/b", ""] {
            let config = json!({"credHelpers": {"eu.gcr.io": bad}, "credsStore": bad});
            let result = Credentials::from_runner_docker_config(
                &config.to_string(),
                CredentialHelpers::on_path(),
            );
            if bad.is_empty() {
                assert!(result.is_ok(), "an empty name names no helper");
            } else {
                assert_eq!(
                    result.unwrap_err().to_string(),
                    format!("credential helper name {bad:?} is not a plain name")
                );
            }
        }
        assert_eq!(
            Credentials::from_runner_docker_config("{}", CredentialHelpers::on_path())
                .unwrap_err()
                .to_string(),
            "docker config has no \"auths\" object"
        );
    }

    #[test]
    fn debug_never_shows_secrets() {
        let config = json!({"auths": {
            "registry.local": {"auth": b64("ci:hunter2-basic")},
            "tokens.example.com": {"registrytoken": "hunter2-token"}
        }});
        let creds = Credentials::from_docker_config_json(&config.to_string()).unwrap();
        let auth = |i: usize| match &creds.entries[i].source {
            Source::Inline(auth) => auth.clone(),
            Source::Helper(_) => unreachable!(),
        };
        let identity = Auth::IdentityToken {
            token: "hunter2-identity".into(),
        };
        let printed = format!("{creds:?} {:?} {:#?} {identity:?}", auth(0), auth(1));
        assert!(!printed.contains("hunter2"), "{printed}");
        assert!(
            printed.contains("registry.local")
                && printed.contains("<redacted>")
                && printed.contains("\"ci\""),
            "{printed}"
        );
    }
}
