//! Where a rendered document came from: `helm template` writes `# Source: chart/templates/x.yaml`
//! above each document, and kustomize (with `buildMetadata: [originAnnotations]`) writes a
//! `config.kubernetes.io/origin` annotation whose `path:` names the file. Read here, so a
//! deploy fed through `-f -` can still be pointed at a file of the repository.

use crate::pointer::Pointer;
use serde_json::Value;

/// kustomize's annotation naming the file a resource was built from.
pub const KUSTOMIZE_ORIGIN_ANNOTATION: &str = "config.kubernetes.io/origin";

/// The origin of the object that starts at 1-based `line` of `lines`: the nearest
/// `# Source:` comment between the previous `---` and the object, else the kustomize
/// annotation's `path`.
pub fn of(lines: &[&str], line: usize, object: &Value) -> Option<String> {
    let above = lines.get(..line.saturating_sub(1).min(lines.len()))?;
    for text in above.iter().rev() {
        let text = text.trim();
        if text.starts_with("---") {
            break;
        }
        if let Some(path) = text.strip_prefix("# Source:") {
            let path = path.trim();
            if !path.is_empty() {
                return Some(path.to_owned());
            }
        }
    }
    let annotation = object
        .at("/metadata/annotations")?
        .get(KUSTOMIZE_ORIGIN_ANNOTATION)?
        .as_str()?;
    annotation.lines().find_map(|l| {
        let path = l.trim().strip_prefix("path:")?.trim();
        let path = path.trim_matches(|c| c == '"' || c == '\'');
        (!path.is_empty()).then(|| path.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use crate::manifest::load_str;

    #[test]
    fn helm_source_comments_and_kustomize_origins_name_the_file() {
        let stream = "---
# Source: shop/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata: {name: shop}
---
# Source: shop/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations:
    config.kubernetes.io/origin: |
      path: base/settings.yaml
      repo: https://github.com/acme/shop
---
apiVersion: v1
kind: ConfigMap
metadata: {name: plain}
";
        let origins: Vec<_> = load_str("<stdin>", stream)
            .unwrap()
            .into_iter()
            .map(|m| (m.name, m.origin))
            .collect();
        assert_eq!(
            origins,
            [
                (
                    "shop".into(),
                    Some("shop/templates/serviceaccount.yaml".into())
                ),
                ("web".into(), Some("shop/templates/deployment.yaml".into())),
                ("settings".into(), Some("base/settings.yaml".into())),
                ("plain".into(), None),
            ]
        );
    }
}
