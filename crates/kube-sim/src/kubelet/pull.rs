//! Image references as containerd normalises them, and image pulls as containerd 1.7 reports
//! them to the kubelet: how long a pull takes and the exact runtime error texts.

use super::ids::hex64;
use crate::scenario::PullBehaviour;
use std::time::Duration;

/// What the kubelet reports as the pulled image's size (`Image size: 28 bytes.`).
pub const IMAGE_SIZE_BYTES: u64 = 28;

/// Re-pulling an image the node already has only resolves the manifest again.
const REPULL: Duration = Duration::from_millis(500);

/// containerd's resolver gives up dialing the registry after 30 s.
const DIAL_TIMEOUT: Duration = Duration::from_secs(30);

/// A parsed image reference: `nginx:1.27` is `docker.io` / `library/nginx` / tag `1.27`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    pub domain: String,
    pub path: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl ImageRef {
    /// Parse as `reference.ParseNormalizedNamed` does, then apply the default `latest` tag.
    /// The error is the reference library's text (`invalid reference format`).
    pub fn parse(image: &str) -> Result<ImageRef, String> {
        const INVALID: &str = "invalid reference format";
        let (rest, digest) = match image.split_once('@') {
            Some((rest, digest)) => (rest, Some(digest)),
            None => (image, None),
        };
        if let Some(d) = digest {
            let (algo, hex) = d.split_once(':').ok_or(INVALID)?;
            let hex_ok = hex.len() >= 32 && hex.bytes().all(|b| b.is_ascii_hexdigit());
            if algo.is_empty() || !algo.bytes().all(|b| b.is_ascii_alphanumeric()) || !hex_ok {
                return Err(INVALID.into());
            }
        }
        let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
        let (name, tag) = match rest[last_slash..].rfind(':') {
            Some(i) => (&rest[..last_slash + i], Some(&rest[last_slash + i + 1..])),
            None => (rest, None),
        };
        if let Some(t) = tag {
            let mut chars = t.chars();
            let first_ok = chars
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
            if !first_ok || !rest_ok || t.len() > 128 {
                return Err(INVALID.into());
            }
        }
        let (domain, path) = match name.split_once('/') {
            Some((first, path))
                if first.contains(['.', ':'])
                    || first == "localhost"
                    || first.chars().any(|c| c.is_ascii_uppercase()) =>
            {
                (first.to_owned(), path.to_owned())
            }
            _ => ("docker.io".to_owned(), name.to_owned()),
        };
        let path = if domain == "docker.io" && !path.contains('/') {
            format!("library/{path}")
        } else {
            path
        };
        if domain.is_empty()
            || !domain
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-:".contains(c))
        {
            return Err(INVALID.into());
        }
        if path.chars().any(|c| c.is_ascii_uppercase()) {
            return Err(format!(
                "{INVALID}: repository name ({path}) must be lowercase"
            ));
        }
        let component_ok = |c: &str| {
            !c.is_empty()
                && c.starts_with(|ch: char| ch.is_ascii_alphanumeric())
                && c.ends_with(|ch: char| ch.is_ascii_alphanumeric())
                && c.chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || "._-".contains(ch))
        };
        if !path.split('/').all(component_ok) {
            return Err(INVALID.into());
        }
        let tag = match (tag, digest) {
            (None, None) => Some("latest".to_owned()),
            (t, _) => t.map(str::to_owned),
        };
        Ok(ImageRef {
            domain,
            path,
            tag,
            digest: digest.map(str::to_owned),
        })
    }

    /// `docker.io/library/nginx`
    pub fn repository(&self) -> String {
        format!("{}/{}", self.domain, self.path)
    }

    /// The fully qualified reference containerd reports: `docker.io/library/nginx:1.27`.
    pub fn normalized(&self) -> String {
        let mut s = self.repository();
        if let Some(t) = &self.tag {
            s = format!("{s}:{t}");
        }
        if let Some(d) = &self.digest {
            s = format!("{s}@{d}");
        }
        s
    }

    /// The repo digest reported as `imageID`.
    pub fn image_id(&self) -> String {
        match &self.digest {
            Some(d) => format!("{}@{d}", self.repository()),
            None => format!("{}@sha256:{}", self.repository(), hex64(&self.normalized())),
        }
    }

    /// The registry host containerd talks to (Docker Hub is served by registry-1).
    fn host(&self) -> &str {
        if self.domain == "docker.io" {
            "registry-1.docker.io"
        } else {
            &self.domain
        }
    }

    fn manifest_url(&self) -> String {
        let reference = self
            .digest
            .as_deref()
            .or(self.tag.as_deref())
            .unwrap_or("latest");
        format!(
            "https://{}/v2/{}/manifests/{reference}",
            self.host(),
            self.path
        )
    }
}

/// How one pull attempt ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// Time the runtime spends on the pull (not counting the wait for the node's pull slot).
    pub took: Duration,
    /// The runtime's error, when the pull fails.
    pub error: Option<String>,
}

/// The `n`-th (0-based) pull of an image with behaviour `b`; `present` when the node
/// already has the image (an `Always` re-pull only resolves the manifest).
pub fn attempt(b: &PullBehaviour, n: usize, r: &ImageRef, present: bool) -> Attempt {
    let fail = |error: String, took| Attempt {
        took,
        error: Some(error),
    };
    match b {
        PullBehaviour::Succeeds { after } => Attempt {
            took: if present {
                (*after).min(REPULL)
            } else {
                *after
            },
            error: None,
        },
        PullBehaviour::NotFound => fail(not_found(r), Duration::ZERO),
        PullBehaviour::Unauthorized => fail(unauthorized(r), Duration::ZERO),
        // The kubelet rejects such a reference before pulling; should one get here, the
        // runtime refuses it the same way.
        PullBehaviour::InvalidName => fail(
            format!("{}invalid reference format", unpack_prefix("Unknown", r)),
            Duration::ZERO,
        ),
        PullBehaviour::Errors { errors, then } => match errors.get(n) {
            Some(short) => {
                let took = if short.trim().eq_ignore_ascii_case("timeout") {
                    DIAL_TIMEOUT
                } else {
                    Duration::ZERO
                };
                fail(runtime_error(r, short), took)
            }
            None => attempt(then, n - errors.len(), r, present),
        },
    }
}

fn unpack_prefix(code: &str, r: &ImageRef) -> String {
    format!(
        "rpc error: code = {code} desc = failed to pull and unpack image \"{}\": ",
        r.normalized()
    )
}

fn resolve_prefix(code: &str, r: &ImageRef) -> String {
    format!(
        "{}failed to resolve reference \"{}\": ",
        unpack_prefix(code, r),
        r.normalized()
    )
}

pub fn not_found(r: &ImageRef) -> String {
    format!(
        "{}{}: not found",
        resolve_prefix("NotFound", r),
        r.normalized()
    )
}

pub fn unauthorized(r: &ImageRef) -> String {
    format!(
        "{}pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed",
        resolve_prefix("Unknown", r)
    )
}

/// The runtime's error for a scenario's short form (`429`, `503`, `timeout`, ...); other
/// texts are used verbatim after containerd's prefix.
pub fn runtime_error(r: &ImageRef, short: &str) -> String {
    let text = short.trim();
    let lower = text.to_ascii_lowercase();
    let code: Option<u16> = text
        .get(..3)
        .and_then(|c| c.parse().ok())
        .filter(|_| text.len() == 3 || text.as_bytes()[3] == b' ');
    match (lower.as_str(), code) {
        ("not_found" | "notfound" | "not found", _) | (_, Some(404)) => not_found(r),
        ("unauthorized" | "forbidden", _) | (_, Some(401 | 403)) => unauthorized(r),
        ("timeout", _) => format!(
            "{}failed to do request: Head \"{}\": dial tcp 10.96.0.42:443: i/o timeout",
            resolve_prefix("Unknown", r),
            r.manifest_url()
        ),
        ("toomanyrequests", _) => status_error(r, 429, None),
        (_, Some(c @ 400..=599)) => {
            status_error(r, c, Some(text[3..].trim()).filter(|p| !p.is_empty()))
        }
        _ => format!("{}{text}", unpack_prefix("Unknown", r)),
    }
}

fn status_error(r: &ImageRef, code: u16, phrase: Option<&str>) -> String {
    let phrase = phrase.unwrap_or(match code {
        400 => "Bad Request",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        507 => "Insufficient Storage",
        508 => "Loop Detected",
        511 => "Network Authentication Required",
        _ => "",
    });
    let status = if phrase.is_empty() {
        code.to_string()
    } else {
        format!("{code} {phrase}")
    };
    format!(
        "{}unexpected status from HEAD request to {}: {status}",
        resolve_prefix("Unknown", r),
        r.manifest_url()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn normalizes(image: &str, want: &str) {
        assert_eq!(ImageRef::parse(image).unwrap().normalized(), want);
    }

    #[test]
    fn references_normalize_as_containerd_does() {
        normalizes("nginx", "docker.io/library/nginx:latest");
        normalizes("nginx:1.27", "docker.io/library/nginx:1.27");
        normalizes("bitnami/redis:7.2", "docker.io/bitnami/redis:7.2");
        normalizes(
            "registry.local/shop/web:1.4.2",
            "registry.local/shop/web:1.4.2",
        );
        normalizes("localhost:5000/web", "localhost:5000/web:latest");
        let digest = format!("sha256:{}", "a".repeat(64));
        normalizes(
            &format!("nginx@{digest}"),
            &format!("docker.io/library/nginx@{digest}"),
        );
        assert_eq!(
            ImageRef::parse("nginx:1.27").unwrap().image_id().len(),
            "docker.io/library/nginx@sha256:".len() + 64
        );
    }

    #[test]
    fn invalid_references_are_rejected_with_the_library_text() {
        assert_eq!(
            ImageRef::parse("nginx:"),
            Err("invalid reference format".into())
        );
        assert_eq!(
            ImageRef::parse("web app:1"),
            Err("invalid reference format".into())
        );
        assert_eq!(
            ImageRef::parse("registry.local/shop//web"),
            Err("invalid reference format".into())
        );
        assert_eq!(
            ImageRef::parse("Nginx:1.27"),
            Err(
                "invalid reference format: repository name (library/Nginx) must be lowercase"
                    .into()
            )
        );
    }

    #[track_caller]
    fn error_text(short: &str, want: &str) {
        let r = ImageRef::parse("registry.local/shop/api:flaky").unwrap();
        assert_eq!(runtime_error(&r, short), want);
    }

    #[test]
    fn short_error_forms_expand_to_containerd_texts() {
        let head = "rpc error: code = Unknown desc = failed to pull and unpack image \"registry.local/shop/api:flaky\": failed to resolve reference \"registry.local/shop/api:flaky\": ";
        let url = "https://registry.local/v2/shop/api/manifests/flaky";
        let too_many =
            format!("{head}unexpected status from HEAD request to {url}: 429 Too Many Requests");
        error_text("429", &too_many);
        error_text("429 Too Many Requests", &too_many);
        error_text("toomanyrequests", &too_many);
        error_text(
            "503",
            &format!("{head}unexpected status from HEAD request to {url}: 503 Service Unavailable"),
        );
        error_text(
            "502 Bad Gateway",
            &format!("{head}unexpected status from HEAD request to {url}: 502 Bad Gateway"),
        );
        error_text(
            "timeout",
            &format!(
                "{head}failed to do request: Head \"{url}\": dial tcp 10.96.0.42:443: i/o timeout"
            ),
        );
        error_text(
            "failed to copy: read tcp: connection reset by peer",
            "rpc error: code = Unknown desc = failed to pull and unpack image \"registry.local/shop/api:flaky\": failed to copy: read tcp: connection reset by peer",
        );
    }

    #[test]
    fn docker_hub_errors_name_the_normalized_reference_and_registry_1() {
        let r = ImageRef::parse("nginx:1.27").unwrap();
        assert_eq!(
            not_found(&r),
            "rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/nginx:1.27\": failed to resolve reference \"docker.io/library/nginx:1.27\": docker.io/library/nginx:1.27: not found"
        );
        assert!(runtime_error(&r, "500").ends_with(
            "HEAD request to https://registry-1.docker.io/v2/library/nginx/manifests/1.27: 500 Internal Server Error"
        ));
    }

    #[test]
    fn attempts_walk_the_error_list_then_succeed() {
        let r = ImageRef::parse("registry.local/shop/api:flaky").unwrap();
        let b = PullBehaviour::Errors {
            errors: vec!["429".into(), "timeout".into()],
            then: Box::new(PullBehaviour::Succeeds {
                after: Duration::from_secs(3),
            }),
        };
        assert!(
            attempt(&b, 0, &r, false)
                .error
                .unwrap()
                .ends_with("429 Too Many Requests")
        );
        assert_eq!(attempt(&b, 1, &r, false).took, Duration::from_secs(30));
        assert_eq!(
            attempt(&b, 2, &r, false),
            Attempt {
                took: Duration::from_secs(3),
                error: None
            }
        );
        assert_eq!(attempt(&b, 2, &r, true).took, Duration::from_millis(500));
    }
}
