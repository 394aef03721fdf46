//! Which docker config key applies to which image, by the kubelet's keyring rules: scheme
//! ignored, `/v1/` and `/v2/` mean the bare host, other paths are repository prefixes, and a
//! `*` stands for part of one host label.

use super::reference::{ImageRef, canonical_registry};

/// Where an entry applies: a host (labels may be `*`) and an optional repository prefix.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Pattern {
    pub(crate) host: String,
    pub(crate) path: Option<String>,
}

impl Pattern {
    /// Reads a config key as the kubelet does: scheme dropped, `/v1/` and `/v2/` mean the host
    /// itself, any other path is a repository prefix.
    pub(crate) fn from_key(key: &str) -> Self {
        let rest = key.trim();
        let rest = rest
            .strip_prefix("https://")
            .or_else(|| rest.strip_prefix("http://"))
            .unwrap_or(rest);
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        let path = path.trim_matches('/');
        let path =
            if path == "v1" || path == "v2" || path.starts_with("v1/") || path.starts_with("v2/") {
                path[2..].trim_matches('/')
            } else {
                path
            };
        Pattern {
            host: canonical_registry(host),
            path: (!path.is_empty()).then(|| path.to_string()),
        }
    }

    pub(crate) fn matches(&self, image: &ImageRef) -> bool {
        if !host_matches(&self.host, image.registry()) {
            return false;
        }
        match &self.path {
            None => true,
            Some(prefix) => {
                let repo = image.repository();
                repo == prefix
                    || repo
                        .strip_prefix(prefix.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            }
        }
    }
}

/// `*.example.com` matches `eu.example.com` but not `example.com` or `a.eu.example.com`;
/// ports must be equal, as in the kubelet's keyring.
fn host_matches(pattern: &str, host: &str) -> bool {
    let (pattern_name, pattern_port) = pattern.split_once(':').unwrap_or((pattern, ""));
    let (name, port) = host.split_once(':').unwrap_or((host, ""));
    if pattern_port != port {
        return false;
    }
    if pattern_name == name {
        return true;
    }
    let labels: Vec<&str> = name.split('.').collect();
    let pattern_labels: Vec<&str> = pattern_name.split('.').collect();
    pattern_name.contains('*')
        && labels.len() == pattern_labels.len()
        && pattern_labels
            .iter()
            .zip(&labels)
            .all(|(p, l)| label_matches(p, l))
}

/// A shell-style match where `*` stands for any run of characters inside one label.
fn label_matches(pattern: &str, label: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == label,
        Some((head, tail)) => {
            let Some(rest) = label.strip_prefix(head) else {
                return false;
            };
            (0..=rest.len())
                .filter(|&i| rest.is_char_boundary(i))
                .any(|i| label_matches(tail, &rest[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn case(key: &str, image: &str, matches: bool) {
        let image_ref = ImageRef::parse(image).unwrap();
        assert_eq!(
            Pattern::from_key(key).matches(&image_ref),
            matches,
            "key {key:?} for {image}"
        );
    }

    #[test]
    fn matches_keys_to_images_like_the_kubelet() {
        case("registry.local", "registry.local/shop/web:1.0", true);
        case(
            "https://registry.local",
            "registry.local/shop/web:1.0",
            true,
        );
        case(
            "http://registry.local/v2/",
            "registry.local/shop/web:1.0",
            true,
        );
        case(
            "https://registry.local/v1/",
            "registry.local/shop/web:1.0",
            true,
        );
        case("REGISTRY.local", "registry.local/shop/web:1.0", true);
        case("registry.local", "registry.local:5000/shop/web:1.0", false);
        case("registry.local:5000", "registry.local/shop/web:1.0", false);
        case("registry.local/shop", "registry.local/shop/web:1.0", true);
        case(
            "registry.local/shop/web",
            "registry.local/shop/web:1.0",
            true,
        );
        case("registry.local/sho", "registry.local/shop/web:1.0", false);
        case("registry.local/team", "registry.local/shop/web:1.0", false);
        case("*.example.com", "eu.example.com/a/b", true);
        case("*.example.com", "example.com/a/b", false);
        case("*.example.com", "a.eu.example.com/a/b", false);
        case("eu-*.example.com", "eu-west.example.com/a/b", true);
        case("eu-*.example.com", "us-west.example.com/a/b", false);
        case("*.example.com:5000", "eu.example.com:5000/a/b", true);
        case("*.example.com:5000", "eu.example.com/a/b", false);
        case("https://index.docker.io/v1/", "nginx", true);
        case("registry-1.docker.io", "library/nginx", true);
        case("docker.io", "ghcr.io/library/nginx", false);
    }
}
