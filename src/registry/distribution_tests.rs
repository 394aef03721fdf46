//! Lookups against a real distribution registry, so the answers we classify are the ones a
//! registry really gives (status, digest header, error envelope on 404).

use super::testing::Distribution;
use super::{Credentials, Lookup, Registry, RegistryOptions};
use base64::Engine as _;

const MANIFEST_UNKNOWN: &str = "HTTP 404 Not Found: MANIFEST_UNKNOWN (manifest unknown)";
const NAME_UNKNOWN: &str =
    "HTTP 404 Not Found: NAME_UNKNOWN (repository name not known to registry)";

fn missing(detail: &str) -> Lookup {
    Lookup::Missing {
        detail: detail.to_string(),
    }
}

#[tokio::test]
async fn answers_from_a_real_distribution_registry() {
    let Some(distribution) = Distribution::start().await else {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("SKIPPED: docker-registry not installed");
        }
        return;
    };
    let host = distribution.host();
    let web = distribution.push_image("shop/web", "1.0").await;
    let api = distribution.push_image("shop/api", "2.3.1").await;
    assert_ne!(
        web, api,
        "images with different configs have different manifests"
    );

    let unknown_digest = format!("sha256:{}", "0".repeat(64));
    let exists = |digest: &str| Lookup::Exists {
        digest: Some(digest.to_string()),
    };
    let cases = vec![
        (format!("{host}/shop/web:1.0"), exists(&web)),
        (format!("{host}/shop/web@{web}"), exists(&web)),
        (format!("{host}/shop/web:9.9@{web}"), exists(&web)),
        (
            format!("localhost:{}/shop/web:1.0", distribution.port()),
            exists(&web),
        ),
        (format!("{host}/shop/web:2.0"), missing(MANIFEST_UNKNOWN)),
        (
            format!("{host}/shop/web@{unknown_digest}"),
            missing(MANIFEST_UNKNOWN),
        ),
        (format!("{host}/shop/nope:1.0"), missing(NAME_UNKNOWN)),
        (format!("{host}/shop/api:2.3.1"), exists(&api)),
        (format!("{host}/shop/api"), missing(MANIFEST_UNKNOWN)),
    ];

    let registry = Registry::new(&RegistryOptions::default()).unwrap();
    for (image, expected) in &cases {
        assert_eq!(&registry.lookup(image, None).await, expected, "{image}");
    }

    // An open registry sends no challenge, so credentials are never presented nor needed.
    let auth = base64::engine::general_purpose::STANDARD.encode("ci:s3cret");
    let config = format!(r#"{{"auths": {{"{host}": {{"auth": "{auth}"}}}}}}"#);
    let creds = Credentials::from_docker_config_json(&config).unwrap();
    let images: Vec<String> = cases.iter().map(|(image, _)| image.clone()).collect();
    let all = registry.lookup_all(&images, Some(&creds)).await;
    assert_eq!(all, cases.into_iter().collect());
}
