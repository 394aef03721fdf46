//! Image references normalised the way Docker and the kubelet read them, so a lookup asks the
//! registry (and the repository) that a node would really pull from.

use std::fmt;

/// The registry name that short references (`nginx`, `bitnami/redis`) belong to.
pub const DOCKER_HUB: &str = "docker.io";

/// `docker.io` is a name, not an endpoint: the distribution API is served here.
const DOCKER_HUB_API_HOST: &str = "registry-1.docker.io";

/// Other names people write for Docker Hub, in images and in docker config keys.
const DOCKER_HUB_ALIASES: &[&str] = &[
    "index.docker.io",
    "registry-1.docker.io",
    "registry.hub.docker.com",
];

#[derive(Debug, thiserror::Error)]
#[error("invalid image reference {image:?}")]
pub struct ReferenceError {
    image: String,
    #[source]
    source: oci_client::ParseError,
}

/// A parsed, normalised image reference: `nginx` is `docker.io/library/nginx:latest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    registry: String,
    repository: String,
    tag: Option<String>,
    digest: Option<String>,
}

impl ImageRef {
    /// Parses with oci-client's (oci-spec's) port of Docker's reference grammar, which already
    /// adds `docker.io`, `library/` and `:latest`; we only fold hostname case and Hub aliases.
    pub fn parse(image: &str) -> Result<Self, ReferenceError> {
        let parsed =
            oci_client::Reference::try_from(image.trim()).map_err(|source| ReferenceError {
                image: image.to_string(),
                source,
            })?;
        Ok(ImageRef {
            registry: canonical_registry(parsed.registry()),
            repository: parsed.repository().to_string(),
            tag: parsed.tag().map(str::to_string),
            digest: parsed.digest().map(str::to_string),
        })
    }

    /// The registry name as credentials are keyed: `docker.io`, `registry.local:5000`.
    pub fn registry(&self) -> &str {
        &self.registry
    }

    /// The `host[:port]` that serves the distribution API for this registry.
    pub fn api_host(&self) -> &str {
        if self.registry == DOCKER_HUB {
            DOCKER_HUB_API_HOST
        } else {
            &self.registry
        }
    }

    pub fn repository(&self) -> &str {
        &self.repository
    }

    pub fn tag(&self) -> Option<&str> {
        self.tag.as_deref()
    }

    pub fn digest(&self) -> Option<&str> {
        self.digest.as_deref()
    }

    /// The manifest path to ask for. A digest wins over a tag, as with the kubelet's
    /// `name:tag@digest` pulls: the tag is then only decoration.
    pub fn manifest_path(&self) -> String {
        let reference = self
            .digest
            .as_deref()
            .or(self.tag.as_deref())
            .unwrap_or("latest");
        format!("/v2/{}/manifests/{}", self.repository, reference)
    }

    /// The token scope that lets us read this repository's manifests.
    pub fn pull_scope(&self) -> String {
        format!("repository:{}:pull", self.repository)
    }
}

impl fmt::Display for ImageRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

/// Lower-cases a registry host and folds Docker Hub's aliases onto `docker.io`.
pub fn canonical_registry(host: &str) -> String {
    let host = host.to_ascii_lowercase();
    if DOCKER_HUB_ALIASES.contains(&host.as_str()) {
        DOCKER_HUB.to_string()
    } else {
        host
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:6a0ac01e5ee7d4c9c6cd1d9c7b7c1f0e1b8e5f3c4a2e0b0a8c6d1e9f2a3b4c5d";

    #[track_caller]
    fn case(image: &str, display: &str, api_host: &str, path: &str) {
        let parsed = ImageRef::parse(image).unwrap_or_else(|e| panic!("{image}: {e}"));
        assert_eq!(parsed.to_string(), display, "display of {image}");
        assert_eq!(parsed.api_host(), api_host, "api host of {image}");
        assert_eq!(parsed.manifest_path(), path, "manifest path of {image}");
    }

    #[test]
    fn normalises_like_docker() {
        case(
            "nginx",
            "docker.io/library/nginx:latest",
            "registry-1.docker.io",
            "/v2/library/nginx/manifests/latest",
        );
        case(
            "nginx:1.27",
            "docker.io/library/nginx:1.27",
            "registry-1.docker.io",
            "/v2/library/nginx/manifests/1.27",
        );
        case(
            "bitnami/redis:7.2",
            "docker.io/bitnami/redis:7.2",
            "registry-1.docker.io",
            "/v2/bitnami/redis/manifests/7.2",
        );
        case(
            "index.docker.io/library/busybox",
            "docker.io/library/busybox:latest",
            "registry-1.docker.io",
            "/v2/library/busybox/manifests/latest",
        );
        case(
            "registry-1.docker.io/grafana/grafana:11.0.0",
            "docker.io/grafana/grafana:11.0.0",
            "registry-1.docker.io",
            "/v2/grafana/grafana/manifests/11.0.0",
        );
        case(
            "ghcr.io/acme/shop/web:v2",
            "ghcr.io/acme/shop/web:v2",
            "ghcr.io",
            "/v2/acme/shop/web/manifests/v2",
        );
        case(
            "Registry.Local:5000/shop/web:1.0",
            "registry.local:5000/shop/web:1.0",
            "registry.local:5000",
            "/v2/shop/web/manifests/1.0",
        );
        case(
            "localhost:5000/web",
            "localhost:5000/web:latest",
            "localhost:5000",
            "/v2/web/manifests/latest",
        );
        case(
            "localhost/web:dev",
            "localhost/web:dev",
            "localhost",
            "/v2/web/manifests/dev",
        );
        case(
            "127.0.0.1:35000/shop/web:1.0",
            "127.0.0.1:35000/shop/web:1.0",
            "127.0.0.1:35000",
            "/v2/shop/web/manifests/1.0",
        );
    }

    #[test]
    fn digest_wins_over_tag() {
        case(
            &format!("registry.local/shop/web@{DIGEST}"),
            &format!("registry.local/shop/web@{DIGEST}"),
            "registry.local",
            &format!("/v2/shop/web/manifests/{DIGEST}"),
        );
        case(
            &format!("registry.local/shop/web:1.0@{DIGEST}"),
            &format!("registry.local/shop/web:1.0@{DIGEST}"),
            "registry.local",
            &format!("/v2/shop/web/manifests/{DIGEST}"),
        );
    }

    #[test]
    fn scope_names_the_repository() {
        let image = ImageRef::parse("registry.local/shop/web:1.0").unwrap();
        assert_eq!(image.pull_scope(), "repository:shop/web:pull");
        assert_eq!(image.registry(), "registry.local");
        assert_eq!(image.tag(), Some("1.0"));
        assert_eq!(image.digest(), None);
    }

    #[test]
    fn rejects_what_a_kubelet_would_call_invalid_image_name() {
        for image in [
            "",
            "Shop/Web:1.0",
            "registry.local/shop/web:",
            "web@sha256:abc",
            "web:tag with space",
        ] {
            let err = ImageRef::parse(image).expect_err(image);
            assert_eq!(
                err.to_string(),
                format!("invalid image reference {image:?}")
            );
        }
    }
}
