//! Reads the parts of a registry's answer that decide what to do next: the auth challenge, the
//! `Retry-After` delay, the digest, and the error envelope that says *why* (`NAME_UNKNOWN`).

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER, WWW_AUTHENTICATE};
use serde::Deserialize;
use std::time::Duration;

const DIGEST_HEADER: &str = "docker-content-digest";

/// Longest piece of a non-JSON error body worth quoting in a detail.
const MAX_QUOTED_BODY: usize = 200;

/// How the registry asks us to authenticate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Challenge {
    Bearer {
        realm: String,
        service: Option<String>,
        scope: Option<String>,
    },
    Basic,
}

/// The challenge we can answer, preferring Bearer when a registry offers both.
pub(crate) fn challenge(headers: &HeaderMap) -> Option<Challenge> {
    let mut basic = false;
    for value in headers.get_all(WWW_AUTHENTICATE) {
        let Ok(text) = value.to_str() else { continue };
        let Ok(challenges) = http_auth::parse_challenges(text) else {
            continue;
        };
        for challenge in challenges {
            if challenge.scheme.eq_ignore_ascii_case("bearer") {
                let param = |name: &str| {
                    challenge
                        .params
                        .iter()
                        .find(|(key, _)| key.eq_ignore_ascii_case(name))
                        .map(|(_, value)| value.to_unescaped())
                };
                if let Some(realm) = param("realm") {
                    return Some(Challenge::Bearer {
                        realm,
                        service: param("service"),
                        scope: param("scope"),
                    });
                }
            } else if challenge.scheme.eq_ignore_ascii_case("basic") {
                basic = true;
            }
        }
    }
    basic.then_some(Challenge::Basic)
}

/// `Retry-After` in delta-seconds. The HTTP-date form would need a clock; callers fall back
/// to their own backoff then.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds: u64 = headers
        .get(RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(seconds))
}

pub(crate) fn digest(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(DIGEST_HEADER)?.to_str().ok()?.trim();
    (!value.is_empty()).then(|| value.to_string())
}

/// Whether another try may get a different answer.
pub(crate) fn is_transient(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}

#[derive(Deserialize)]
struct Envelope {
    errors: Vec<EnvelopeError>,
}

#[derive(Deserialize)]
struct EnvelopeError {
    code: String,
    #[serde(default)]
    message: String,
}

/// The codes of an error envelope (`MANIFEST_UNKNOWN`, `NAME_UNKNOWN`, ...); none when the
/// body is not one.
pub(crate) fn error_codes(body: &[u8]) -> Vec<String> {
    serde_json::from_slice::<Envelope>(body)
        .map(|e| e.errors.into_iter().map(|e| e.code).collect())
        .unwrap_or_default()
}

/// `HTTP 404 Not Found: NAME_UNKNOWN (repository name not known to registry)`. A HEAD answer
/// has no body, so this alone carries just the status.
pub(crate) fn error_detail(status: StatusCode, body: &[u8]) -> String {
    let mut detail = format!("HTTP {status}");
    if let Ok(envelope) = serde_json::from_slice::<Envelope>(body)
        && !envelope.errors.is_empty()
    {
        let errors: Vec<String> = envelope
            .errors
            .iter()
            .map(|e| {
                if e.message.is_empty() {
                    e.code.clone()
                } else {
                    format!("{} ({})", e.code, e.message)
                }
            })
            .collect();
        detail.push_str(": ");
        detail.push_str(&errors.join("; "));
        return detail;
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if !text.is_empty() {
        let quoted: String = text.chars().take(MAX_QUOTED_BODY).collect();
        detail.push_str(": ");
        detail.push_str(&quoted);
        if quoted.len() < text.len() {
            detail.push('…');
        }
    }
    detail
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[track_caller]
    fn case(www_authenticate: &[&str], expected: Option<&Challenge>) {
        let pairs: Vec<(&'static str, &str)> = www_authenticate
            .iter()
            .map(|v| ("www-authenticate", *v))
            .collect();
        assert_eq!(
            challenge(&headers(&pairs)).as_ref(),
            expected,
            "{www_authenticate:?}"
        );
    }

    fn bearer(realm: &str, service: Option<&str>, scope: Option<&str>) -> Challenge {
        Challenge::Bearer {
            realm: realm.into(),
            service: service.map(Into::into),
            scope: scope.map(Into::into),
        }
    }

    #[test]
    fn reads_auth_challenges_as_registries_send_them() {
        // Docker Hub.
        case(
            &[
                r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull""#,
            ],
            Some(&bearer(
                "https://auth.docker.io/token",
                Some("registry.docker.io"),
                Some("repository:library/nginx:pull"),
            )),
        );
        // GHCR-style with a space after commas and lower-case scheme.
        case(
            &[
                r#"bearer realm="https://ghcr.io/token", service="ghcr.io", scope="repository:acme/api:pull""#,
            ],
            Some(&bearer(
                "https://ghcr.io/token",
                Some("ghcr.io"),
                Some("repository:acme/api:pull"),
            )),
        );
        // /v2/ ping answers carry no scope.
        case(
            &[r#"Bearer realm="https://registry.local/auth""#],
            Some(&bearer("https://registry.local/auth", None, None)),
        );
        // distribution's htpasswd auth.
        case(&[r#"Basic realm="basic-realm""#], Some(&Challenge::Basic));
        case(
            &[
                r#"Basic realm="r""#,
                r#"Bearer realm="https://r.io/token",service="r.io""#,
            ],
            Some(&bearer("https://r.io/token", Some("r.io"), None)),
        );
        case(&[r"Negotiate"], None);
        case(&[r#"Bearer service="no-realm""#], None);
        case(&[], None);
    }

    #[test]
    fn reads_retry_after_and_digest() {
        assert_eq!(
            retry_after(&headers(&[("retry-after", "7")])),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(&headers(&[(
                "retry-after",
                "Wed, 21 Oct 2015 07:28:00 GMT"
            )])),
            None
        );
        assert_eq!(retry_after(&headers(&[])), None);
        let sha = "sha256:0e5d2fd8a9d2ac6a5fc4d6e36f6a8b1e36cd3b67ffa52e4bf1f8f4b9a94b4b71";
        assert_eq!(
            digest(&headers(&[("Docker-Content-Digest", sha)])).as_deref(),
            Some(sha)
        );
        assert_eq!(digest(&headers(&[("Docker-Content-Digest", "")])), None);
    }

    #[test]
    fn transient_statuses_are_429_and_5xx() {
        for (status, transient) in [
            (429, true),
            (500, true),
            (502, true),
            (503, true),
            (404, false),
            (401, false),
            (200, false),
        ] {
            assert_eq!(
                is_transient(StatusCode::from_u16(status).unwrap()),
                transient,
                "{status}"
            );
        }
    }

    #[track_caller]
    fn detail_case(status: u16, body: &str, expected: &str) {
        assert_eq!(
            error_detail(StatusCode::from_u16(status).unwrap(), body.as_bytes()),
            expected
        );
    }

    #[test]
    fn quotes_the_registry_error_envelope() {
        detail_case(
            404,
            r#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{"Tag":"2.0"}}]}"#,
            "HTTP 404 Not Found: MANIFEST_UNKNOWN (manifest unknown)",
        );
        detail_case(
            404,
            r#"{"errors":[{"code":"NAME_UNKNOWN","message":"repository name not known to registry","detail":{"name":"shop/nope"}}]}"#,
            "HTTP 404 Not Found: NAME_UNKNOWN (repository name not known to registry)",
        );
        detail_case(
            401,
            r#"{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"},{"code":"DENIED"}]}"#,
            "HTTP 401 Unauthorized: UNAUTHORIZED (authentication required); DENIED",
        );
        detail_case(
            401,
            r#"{"details":"incorrect username or password"}"#,
            r#"HTTP 401 Unauthorized: {"details":"incorrect username or password"}"#,
        );
        detail_case(404, "", "HTTP 404 Not Found");
        assert_eq!(
            error_codes(br#"{"errors":[{"code":"UNAUTHORIZED"},{"code":"DENIED","message":"requested access to the resource is denied"}]}"#),
            ["UNAUTHORIZED", "DENIED"]
        );
        assert!(error_codes(b"<html>502</html>").is_empty());
        detail_case(
            502,
            &"x".repeat(300),
            &format!("HTTP 502 Bad Gateway: {}…", "x".repeat(200)),
        );
    }
}
