//! Lookups against a scripted registry (wiremock) for what a plain distribution registry does
//! not do: token auth, refusals, rate limits, outages, slowness.

use base64::Engine as _;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use super::testing::free_port;
use super::{Credentials, Lookup, Registry, RegistryOptions};

const DIGEST: &str = "sha256:2d7a3f4f0b9e6c1d8a5b7e9f1c3d5a7b9e1f3a5c7e9b1d3f5a7c9e1b3d5f7a9c";
const UNAUTHORIZED: &str = r#"{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":[{"Type":"repository","Name":"shop/web","Action":"pull"}]}]}"#;
const MEDIA_TYPES: [&str; 4] = [
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.docker.distribution.manifest.v2+json",
];

fn options() -> RegistryOptions {
    RegistryOptions {
        timeout: Duration::from_secs(5),
        retry_delay: Duration::from_millis(10),
        ..RegistryOptions::default()
    }
}

fn host(server: &MockServer) -> String {
    server.address().to_string()
}

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn creds(host: &str, username: &str, password: &str) -> Credentials {
    let config = json!({"auths": {host: {"auth": b64(&format!("{username}:{password}"))}}});
    Credentials::from_docker_config_json(&config.to_string()).unwrap()
}

fn authorized(expected: String) -> impl Fn(&Request) -> bool + Send + Sync {
    move |request: &Request| {
        request
            .headers
            .get("authorization")
            .is_some_and(|v| v.as_bytes() == expected.as_bytes())
    }
}

fn accepts_every_manifest_kind(request: &Request) -> bool {
    let accept = request
        .headers
        .get("accept")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    MEDIA_TYPES
        .iter()
        .all(|media_type| accept.split(',').any(|a| a.trim() == *media_type))
}

fn found() -> ResponseTemplate {
    ResponseTemplate::new(200)
        .insert_header("docker-content-digest", DIGEST)
        .insert_header("content-type", "application/vnd.oci.image.index.v1+json")
}

/// 401 naming the token realm and the repository scope taken from the request path, as
/// distribution's token auth does.
fn challenge(realm: String) -> impl Fn(&Request) -> ResponseTemplate + Send + Sync {
    move |request: &Request| {
        let repository = request
            .url
            .path()
            .trim_start_matches("/v2/")
            .split("/manifests/")
            .next()
            .unwrap_or("");
        ResponseTemplate::new(401)
            .insert_header(
                "www-authenticate",
                format!(r#"Bearer realm="{realm}",service="registry.local",scope="repository:{repository}:pull""#),
            )
            .set_body_raw(UNAUTHORIZED, "application/json")
    }
}

/// A registry that serves `shop/web:1.0` only to `Bearer <token>`, and a token service that
/// hands that token to `ci:s3cret` only.
async fn token_registry(server: &MockServer) {
    let realm = format!("{}/token", server.uri());
    Mock::given(path("/v2/shop/web/manifests/1.0"))
        .and(authorized("Bearer full-grant".into()))
        .and(accepts_every_manifest_kind)
        .respond_with(found())
        .with_priority(1)
        .mount(server)
        .await;
    Mock::given(path("/v2/shop/web/manifests/1.0"))
        .respond_with(challenge(realm))
        .with_priority(10)
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path("/token"))
        .and(query_param("service", "registry.local"))
        .and(query_param("scope", "repository:shop/web:pull"))
        .and(authorized(format!("Basic {}", b64("ci:s3cret"))))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "token": "full-grant", "expires_in": 300, "issued_at": "2025-05-01T10:00:00Z"
        })))
        .with_priority(1)
        .named("token for ci")
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path("/token"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_json(json!({"details": "incorrect username or password"})),
        )
        .with_priority(10)
        .mount(server)
        .await;
}

#[tokio::test]
async fn bearer_token_flow_with_docker_config_credentials() {
    let server = MockServer::start().await;
    token_registry(&server).await;
    let registry = Registry::new(&options()).unwrap();
    let image = format!("{}/shop/web:1.0", host(&server));

    let answer = registry
        .lookup(&image, Some(&creds(&host(&server), "ci", "s3cret")))
        .await;
    assert_eq!(
        answer,
        Lookup::Exists {
            digest: Some(DIGEST.into())
        }
    );

    let refused = "incorrect username or password";
    let wrong = registry
        .lookup(&image, Some(&creds(&host(&server), "ci", "wrong")))
        .await;
    let expected = format!(
        r#"token service for {} refused the credentials: HTTP 401 Unauthorized: {{"details":"{refused}"}}"#,
        host(&server)
    );
    assert_eq!(wrong, Lookup::Denied { detail: expected });

    // Credentials for another registry are not sent here: the lookup is anonymous.
    let elsewhere = registry
        .lookup(&image, Some(&creds("registry.local", "ci", "s3cret")))
        .await;
    let expected = format!(
        r#"token service for {} refused anonymous access: HTTP 401 Unauthorized: {{"details":"{refused}"}}"#,
        host(&server)
    );
    assert_eq!(elsewhere, Lookup::Denied { detail: expected });
}

#[tokio::test]
async fn an_empty_grant_is_denied_whether_or_not_the_repository_exists() {
    let server = MockServer::start().await;
    // Docker Hub's way: valid credentials get a token, but with no access to the repository,
    // so the registry refuses it, for a repository that exists and one that does not.
    Mock::given(path("/v2/shop/web/manifests/1.0"))
        .and(authorized("Bearer full-grant".into()))
        .respond_with(found())
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(path_regex_manifests())
        .respond_with(challenge(format!("{}/token", server.uri())))
        .with_priority(10)
        .mount(&server)
        .await;
    Mock::given(path("/token"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"token": "empty-grant", "access_token": "empty-grant"})),
        )
        .expect(2)
        .mount(&server)
        .await;
    let registry = Registry::new(&options()).unwrap();
    let creds = creds(&host(&server), "ci", "s3cret");
    let expected = Lookup::Denied {
        detail: "HTTP 401 Unauthorized: UNAUTHORIZED (authentication required), with a bearer token issued to user \"ci\"".into(),
    };
    for repository in ["shop/web", "shop/ghost"] {
        let image = format!("{}/{repository}:1.0", host(&server));
        assert_eq!(
            registry.lookup(&image, Some(&creds)).await,
            expected,
            "{image}"
        );
    }
}

fn path_regex_manifests() -> wiremock::matchers::PathRegexMatcher {
    wiremock::matchers::path_regex(r"^/v2/.+/manifests/[^/]+$")
}

#[tokio::test]
async fn basic_challenge_and_forbidden_answers() {
    let server = MockServer::start().await;
    // distribution's htpasswd auth: Basic, no token service.
    Mock::given(path("/v2/shop/web/manifests/1.0"))
        .and(authorized(format!("Basic {}", b64("ci:s3cret"))))
        .respond_with(found())
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(path("/v2/shop/web/manifests/1.0"))
        .and(authorized(format!("Basic {}", b64("intern:pw"))))
        .respond_with(ResponseTemplate::new(403).set_body_raw(
            r#"{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}"#,
            "application/json",
        ))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(path("/v2/shop/web/manifests/1.0"))
        .respond_with(
            ResponseTemplate::new(401)
                .insert_header("www-authenticate", r#"Basic realm="basic-realm""#)
                .set_body_raw(UNAUTHORIZED, "application/json"),
        )
        .with_priority(10)
        .mount(&server)
        .await;
    let registry = Registry::new(&options()).unwrap();
    let image = format!("{}/shop/web:1.0", host(&server));

    assert_eq!(
        registry
            .lookup(&image, Some(&creds(&host(&server), "ci", "s3cret")))
            .await,
        Lookup::Exists {
            digest: Some(DIGEST.into()),
        },
    );
    assert_eq!(
        registry.lookup(&image, Some(&creds(&host(&server), "intern", "pw"))).await,
        Lookup::Denied {
            detail: "HTTP 403 Forbidden: DENIED (requested access to the resource is denied), with basic credentials of user \"intern\"".into(),
        },
    );
    assert_eq!(
        registry.lookup(&image, None).await,
        Lookup::Denied {
            detail: "HTTP 401 Unauthorized: UNAUTHORIZED (authentication required), anonymously"
                .into(),
        },
    );
}

#[tokio::test]
async fn a_registry_token_from_the_config_skips_the_challenge() {
    let server = MockServer::start().await;
    Mock::given(method("HEAD"))
        .and(path("/v2/shop/web/manifests/1.0"))
        .and(authorized("Bearer eyJhbGciOiJSUzI1NiJ9.e30.sig".into()))
        .respond_with(found())
        .expect(1)
        .mount(&server)
        .await;
    let config =
        json!({"auths": {host(&server): {"registrytoken": "eyJhbGciOiJSUzI1NiJ9.e30.sig"}}});
    let creds = Credentials::from_docker_config_json(&config.to_string()).unwrap();
    let registry = Registry::new(&options()).unwrap();
    let answer = registry
        .lookup(&format!("{}/shop/web:1.0", host(&server)), Some(&creds))
        .await;
    assert_eq!(
        answer,
        Lookup::Exists {
            digest: Some(DIGEST.into())
        }
    );
}

#[tokio::test]
async fn rate_limit_waits_as_long_as_retry_after_says() {
    let server = MockServer::start().await;
    Mock::given(method("HEAD"))
        .and(path("/v2/shop/web/manifests/1.0"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "1"))
        .up_to_n_times(1)
        .expect(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("HEAD"))
        .and(path("/v2/shop/web/manifests/1.0"))
        .respond_with(found())
        .expect(1)
        .mount(&server)
        .await;
    let registry = Registry::new(&options()).unwrap();
    let started = Instant::now();
    let answer = registry
        .lookup(&format!("{}/shop/web:1.0", host(&server)), None)
        .await;
    assert_eq!(
        answer,
        Lookup::Exists {
            digest: Some(DIGEST.into())
        }
    );
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "retried after {:?}, before Retry-After",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_retry_after_past_the_timeout_gives_up_at_once() {
    let server = MockServer::start().await;
    Mock::given(method("HEAD"))
        .and(path("/v2/shop/web/manifests/1.0"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "120"))
        .expect(1)
        .mount(&server)
        .await;
    let registry = Registry::new(&options()).unwrap();
    let started = Instant::now();
    let answer = registry
        .lookup(&format!("{}/shop/web:1.0", host(&server)), None)
        .await;
    let detail = format!(
        "HEAD http://{}/v2/shop/web/manifests/1.0: HTTP 429 Too Many Requests, asked to retry after 120s, past the lookup timeout",
        host(&server)
    );
    assert_eq!(answer, Lookup::Unreachable { detail });
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "waited {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn outages_are_unreachable_after_the_retries() {
    let server = MockServer::start().await;
    Mock::given(path("/v2/shop/web/manifests/1.0"))
        .respond_with(ResponseTemplate::new(503))
        .expect(3)
        .mount(&server)
        .await;
    Mock::given(path("/v2/shop/api/manifests/1.0"))
        .respond_with(challenge(format!("{}/token", server.uri())))
        .mount(&server)
        .await;
    Mock::given(path("/token"))
        .respond_with(ResponseTemplate::new(503).set_body_string("upstream connect error"))
        .expect(3)
        .mount(&server)
        .await;
    let registry = Registry::new(&options()).unwrap();
    let host = host(&server);
    assert_eq!(
        registry.lookup(&format!("{host}/shop/web:1.0"), None).await,
        Lookup::Unreachable {
            detail: format!(
                "HEAD http://{host}/v2/shop/web/manifests/1.0: after 3 tries, HTTP 503 Service Unavailable"
            ),
        }
    );
    // A token service outage is not a refusal.
    assert_eq!(
        registry
            .lookup(
                &format!("{host}/shop/api:1.0"),
                Some(&creds(&host, "ci", "s3cret"))
            )
            .await,
        Lookup::Unreachable {
            detail: format!(
                "token request to http://{host}/token: after 3 tries, HTTP 503 Service Unavailable: upstream connect error"
            ),
        }
    );
}

#[tokio::test]
async fn refused_connections_and_silence_are_unreachable() {
    let registry = Registry::new(&RegistryOptions {
        timeout: Duration::from_millis(300),
        ..options()
    })
    .unwrap();
    let port = free_port();
    let answer = registry
        .lookup(&format!("127.0.0.1:{port}/shop/web:1.0"), None)
        .await;
    let Lookup::Unreachable { detail } = &answer else {
        panic!("expected Unreachable, got {answer:?}")
    };
    let prefix =
        format!("HEAD http://127.0.0.1:{port}/v2/shop/web/manifests/1.0: failed to connect: ");
    assert!(
        detail.starts_with(&prefix) && detail.contains("Connection refused"),
        "{detail}"
    );

    let server = MockServer::start().await;
    Mock::given(path("/v2/shop/web/manifests/1.0"))
        .respond_with(found().set_delay(Duration::from_secs(3)))
        .mount(&server)
        .await;
    let started = Instant::now();
    let answer = registry
        .lookup(&format!("{}/shop/web:1.0", host(&server)), None)
        .await;
    let detail = format!("no answer from {} within 300ms", host(&server));
    assert_eq!(answer, Lookup::Unreachable { detail });
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn credentials_never_go_to_a_plain_http_realm_elsewhere() {
    let server = MockServer::start().await;
    Mock::given(path("/v2/shop/web/manifests/1.0"))
        .respond_with(challenge("http://auth.invalid/token".into()))
        .mount(&server)
        .await;
    let registry = Registry::new(&options()).unwrap();
    let answer = registry
        .lookup(
            &format!("{}/shop/web:1.0", host(&server)),
            Some(&creds(&host(&server), "ci", "s3cret")),
        )
        .await;
    let detail = format!(
        "refusing to send credentials for {} to the plain-HTTP token realm http://auth.invalid/token",
        host(&server)
    );
    assert_eq!(answer, Lookup::Denied { detail });
}

#[tokio::test]
async fn lookup_all_stops_asking_a_host_once_it_gave_no_answer() {
    // Ten images on a registry in an outage, two asked at a time, and one on a healthy
    // registry: the outage is asked about the first two only; the healthy one still is.
    let down = MockServer::start().await;
    Mock::given(method("HEAD"))
        .respond_with(ResponseTemplate::new(503))
        .mount(&down)
        .await;
    let up = MockServer::start().await;
    Mock::given(path("/v2/shop/web/manifests/1.0"))
        .respond_with(found())
        .expect(1)
        .mount(&up)
        .await;
    let registry = Registry::new(&RegistryOptions {
        concurrency: 2,
        ..options()
    })
    .unwrap();
    let (down_host, up_host) = (host(&down), host(&up));
    let mut images: Vec<String> = (0..10)
        .map(|i| format!("{down_host}/shop/app-{i}:1.0"))
        .collect();
    images.push(format!("{up_host}/shop/web:1.0"));
    let answers = registry.lookup_all(&images, None).await;

    assert_eq!(answers.len(), 11);
    assert_eq!(
        answers[&format!("{up_host}/shop/web:1.0")],
        Lookup::Exists {
            digest: Some(DIGEST.into())
        }
    );
    let asked: Vec<&String> = images[..10]
        .iter()
        .filter(|i| {
            matches!(&answers[*i], Lookup::Unreachable { detail } if detail.starts_with("HEAD "))
        })
        .collect();
    assert_eq!(asked.len(), 2, "{answers:#?}");
    // Three tries for each of the two asked, none for the rest.
    assert_eq!(down.received_requests().await.unwrap().len(), 6);
    for image in &images[..10] {
        if asked.contains(&image) {
            continue;
        }
        let Lookup::Unreachable { detail } = &answers[image] else {
            panic!("{image}: {:?}", answers[image])
        };
        let borrowed = |first: &&String| {
            detail.starts_with(&format!(
                "not asked: {down_host} gave no answer for {first}: HEAD "
            ))
        };
        assert!(asked.iter().any(borrowed), "{detail}");
        assert!(
            detail.ends_with("after 3 tries, HTTP 503 Service Unavailable"),
            "{detail}"
        );
    }
}

#[tokio::test]
async fn lookup_all_answers_each_distinct_image() {
    let server = MockServer::start().await;
    let manifest_unknown = r#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{"Tag":"2.0"}}]}"#;
    let name_unknown = r#"{"errors":[{"code":"NAME_UNKNOWN","message":"repository name not known to registry","detail":{"name":"shop/gone"}}]}"#;
    Mock::given(path("/v2/shop/web/manifests/1.0"))
        .respond_with(found())
        .expect(1)
        .mount(&server)
        .await;
    for repository in ["shop/web", "shop/gone"] {
        Mock::given(path(format!("/v2/{repository}/manifests/2.0")))
            .respond_with(
                ResponseTemplate::new(404).set_body_raw(manifest_unknown, "application/json"),
            )
            .mount(&server)
            .await;
    }
    Mock::given(path("/v2/shop/web/tags/list"))
        .and(query_param("n", "1"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"name": "shop/web", "tags": ["1.0"]})),
        )
        .mount(&server)
        .await;
    Mock::given(path("/v2/shop/gone/tags/list"))
        .respond_with(ResponseTemplate::new(404).set_body_raw(name_unknown, "application/json"))
        .mount(&server)
        .await;
    let host = host(&server);
    let registry = Registry::new(&RegistryOptions {
        concurrency: 2,
        ..options()
    })
    .unwrap();
    let images: Vec<String> = [
        format!("{host}/shop/web:1.0"),
        format!("{host}/shop/web:2.0"),
        format!("{host}/shop/gone:2.0"),
        format!("{host}/shop/web:1.0"),
        "Shop/Web".to_string(),
    ]
    .into();
    let answers = registry.lookup_all(&images, None).await;
    let invalid = answers["Shop/Web"].clone();
    assert!(
        matches!(&invalid, Lookup::Invalid { detail } if detail.starts_with("invalid image reference \"Shop/Web\""))
    );
    let expected: BTreeMap<String, Lookup> = [
        (
            format!("{host}/shop/web:1.0"),
            Lookup::Exists {
                digest: Some(DIGEST.into()),
            },
        ),
        (
            format!("{host}/shop/web:2.0"),
            Lookup::Missing {
                detail: "HTTP 404 Not Found: MANIFEST_UNKNOWN (manifest unknown)".into(),
            },
        ),
        (
            format!("{host}/shop/gone:2.0"),
            Lookup::Missing {
                detail: "HTTP 404 Not Found: NAME_UNKNOWN (repository name not known to registry)"
                    .into(),
            },
        ),
        ("Shop/Web".to_string(), invalid),
    ]
    .into();
    assert_eq!(answers, expected);
}

#[tokio::test]
async fn a_credential_helpers_answer_is_what_the_token_service_sees() {
    use super::helper::tests::{FakeHelpers, answering};
    let server = MockServer::start().await;
    token_registry(&server).await;
    // An identity token is traded as an OAuth2 refresh token, POSTed as a form.
    Mock::given(method("POST"))
        .and(path("/token"))
        .and(|request: &Request| {
            let form: BTreeMap<String, String> = url_form(&String::from_utf8_lossy(&request.body));
            form.get("grant_type").map(String::as_str) == Some("refresh_token")
                && form.get("refresh_token").map(String::as_str) == Some("refresh-me")
                && form.get("service").map(String::as_str) == Some("registry.local")
                && form.get("scope").map(String::as_str) == Some("repository:shop/web:pull")
                && request
                    .headers
                    .get("content-type")
                    .is_some_and(|v| v == "application/x-www-form-urlencoded")
        })
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"access_token": "full-grant"})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let fake = FakeHelpers::new(&[
        ("vault", &answering(&host(&server), "ci", "s3cret")),
        ("acr", &answering(&host(&server), "<token>", "refresh-me")),
    ]);
    let registry = Registry::new(&options()).unwrap();
    let image = format!("{}/shop/web:1.0", host(&server));
    let exists = Lookup::Exists {
        digest: Some(DIGEST.into()),
    };

    let config = json!({"credHelpers": {host(&server): "vault"}});
    let creds =
        Credentials::from_runner_docker_config(&config.to_string(), fake.helpers()).unwrap();
    assert_eq!(registry.lookup(&image, Some(&creds)).await, exists);
    assert_eq!(registry.lookup(&image, Some(&creds)).await, exists);

    let config = json!({"auths": {"registry.local": {"auth": b64("x:y")}}, "credsStore": "acr"});
    let creds =
        Credentials::from_runner_docker_config(&config.to_string(), fake.helpers()).unwrap();
    assert_eq!(registry.lookup(&image, Some(&creds)).await, exists);
    let calls = std::fs::read_to_string(fake.dir.path().join("calls")).unwrap();
    assert_eq!(
        calls.lines().collect::<Vec<_>>(),
        [host(&server), host(&server)],
        "each helper asked once for the host, as docker passes it"
    );

    // A helper that fails: the image cannot be confirmed, and the detail says why.
    let config = json!({"credsStore": "gone"});
    let creds =
        Credentials::from_runner_docker_config(&config.to_string(), fake.helpers()).unwrap();
    let Lookup::Unreachable { detail } = registry.lookup(&image, Some(&creds)).await else {
        panic!("expected Unreachable")
    };
    assert!(
        detail.starts_with(&format!(
            "credential helper docker-credential-gone for {}: not installed",
            host(&server)
        )),
        "{detail}"
    );
}

fn url_form(body: &str) -> BTreeMap<String, String> {
    let url = reqwest::Url::parse(&format!("http://form.invalid/?{body}")).unwrap();
    url.query_pairs().into_owned().collect()
}
