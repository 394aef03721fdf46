//! The bundled rules: one YAML file per project (cert-manager, Flux, ...), compiled into
//! the binary and read once. Each file's cases (`cases/`) are run by `cargo test`.

use crate::rules::health::load::parse;
use crate::rules::health::rule::HealthRules;
use std::sync::LazyLock;

/// File name and text of each bundled rules file.
pub const FILES: [(&str, &str); 12] = [
    (
        "argo-rollouts.yaml",
        include_str!("library/argo-rollouts.yaml"),
    ),
    (
        "cert-manager.yaml",
        include_str!("library/cert-manager.yaml"),
    ),
    (
        "cloudnative-pg.yaml",
        include_str!("library/cloudnative-pg.yaml"),
    ),
    ("crossplane.yaml", include_str!("library/crossplane.yaml")),
    (
        "external-secrets.yaml",
        include_str!("library/external-secrets.yaml"),
    ),
    ("flux.yaml", include_str!("library/flux.yaml")),
    ("gateway-api.yaml", include_str!("library/gateway-api.yaml")),
    ("keda.yaml", include_str!("library/keda.yaml")),
    ("knative.yaml", include_str!("library/knative.yaml")),
    (
        "prometheus-operator.yaml",
        include_str!("library/prometheus-operator.yaml"),
    ),
    (
        "sealed-secrets.yaml",
        include_str!("library/sealed-secrets.yaml"),
    ),
    ("strimzi.yaml", include_str!("library/strimzi.yaml")),
];

static BUNDLED: LazyLock<HealthRules> = LazyLock::new(|| {
    let mut rules = HealthRules::default();
    for (name, text) in FILES {
        // The library's own tests load every file: a bad one never ships.
        let parsed = parse(text, &format!("bundled {name}")).unwrap_or_else(|p| {
            panic!(
                "bundled rules {name}: {}",
                crate::manifest::render_problems(&p)
            )
        });
        rules.extend(parsed);
    }
    rules
});

pub fn bundled() -> &'static HealthRules {
    &BUNDLED
}
