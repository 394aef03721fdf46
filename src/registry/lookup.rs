//! The plain answer of one image lookup, with no judgement attached: whether a missing or
//! denied image fails a deployment is decided by the caller.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Lookup {
    /// The registry served the manifest; `digest` is its `Docker-Content-Digest` when sent.
    Exists { digest: Option<String> },
    /// 404, with the registry's error code (`MANIFEST_UNKNOWN`, `NAME_UNKNOWN`) in `detail`.
    Missing { detail: String },
    /// 401/403 after presenting what we had. Registries such as Docker Hub answer this way for
    /// repositories that do not exist too, so this does not prove the image exists.
    Denied { detail: String },
    /// No usable answer: DNS, TLS, connect, timeout, or 429/5xx that outlasted the retries.
    Unreachable { detail: String },
    /// The reference cannot be parsed, so no registry was asked (the kubelet's
    /// `InvalidImageName`).
    Invalid { detail: String },
}

impl Lookup {
    /// The explanation carried by every answer but `Exists`.
    pub fn detail(&self) -> Option<&str> {
        match self {
            Lookup::Exists { .. } => None,
            Lookup::Missing { detail }
            | Lookup::Denied { detail }
            | Lookup::Unreachable { detail }
            | Lookup::Invalid { detail } => Some(detail),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serialises_as_a_tagged_record_for_reports() {
        let exists = Lookup::Exists {
            digest: Some("sha256:ab".into()),
        };
        let denied = Lookup::Denied {
            detail: "HTTP 401".into(),
        };
        assert_eq!(
            serde_json::to_value(&exists).unwrap(),
            json!({"result": "exists", "digest": "sha256:ab"})
        );
        assert_eq!(
            serde_json::to_value(&denied).unwrap(),
            json!({"result": "denied", "detail": "HTTP 401"})
        );
        assert_eq!(exists.detail(), None);
        assert_eq!(denied.detail(), Some("HTTP 401"));
    }
}
