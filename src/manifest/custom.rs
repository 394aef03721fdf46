//! A custom resource held to the schema its CRD gives its version (`crd_schema`), with
//! each finding placed at its field's line: errors are problems, as the server refuses
//! them; unknown fields are notices, as the server only warns and prunes them.

use super::document::Manifest;
use super::error::Problem;
use crate::vocab::outcome::{Notice, SourceSpan};
use kube_strict::crd_schema::served::schema;
use kube_strict::crd_schema::{self, Severity};

/// Validates `m` against the schema `crd` (a CustomResourceDefinition) gives its version;
/// a CRD without one says nothing. Each error's hint names the CRD and where it is.
pub(super) fn check(
    m: &Manifest,
    crd: &Manifest,
    version: &str,
    problems: &mut Vec<Problem>,
    notices: &mut Vec<Notice>,
) {
    let Some((schema, has_status)) = schema(&crd.object, version) else {
        return;
    };
    let source = format!(
        "as the schema of CRD {} at {version} says ({})",
        crd.name,
        Problem::location(&crd.file, Some(crd.line))
    );
    let mut object = m.object.clone();
    if has_status && let Some(fields) = object.as_object_mut() {
        fields.remove("status");
    }
    let mut findings = crd_schema::validate(schema, &object);
    findings.sort_by_key(|f| m.line_within(&f.pointer));
    for f in findings {
        let at = m.line_within(&f.pointer);
        match f.severity {
            Severity::Error => {
                let hint = f.hint.unwrap_or_else(|| source.clone());
                problems.push(Problem::new(&m.file, Some(at), f.message).with_hint(hint));
            }
            Severity::Warning => notices.push(Notice {
                source: SourceSpan {
                    file: m.file.clone(),
                    line: at,
                },
                message: match f.hint {
                    Some(h) => format!("{}: {} ({h})", m.display_name(), f.message),
                    None => format!("{}: {}", m.display_name(), f.message),
                },
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::manifest::load_str;
    use crate::manifest::offline::kinds;
    use crate::manifest::offline::tests::run_with;

    const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.acme.io}
spec:
  group: acme.io
  scope: Namespaced
  names: {plural: widgets, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [size]
              properties:
                size: {type: integer}
                parts:
                  type: array
                  items: {type: object, required: [name], properties: {name: {type: string}}}
            status: {type: object, properties: {phase: {type: string}}}
";

    const WIDGETS: &str = "apiVersion: acme.io/v1
kind: Widget
metadata: {name: a}
spec:
  parts:
    - name: x
    - {}
  sise: 3
status: {phase: 7}
---
apiVersion: acme.io/v2
kind: Widget
metadata: {name: b}
";

    #[test]
    fn a_schemas_crd_places_each_finding_at_its_field_or_its_object() {
        let crds = load_str("crds/widgets.yaml", CRD).unwrap();
        let (problems, notices) = run_with(WIDGETS, &crds);
        // The missing size is said where spec is; status is the server's (a subresource).
        assert_eq!(
            problems,
            [
                "app.yaml:4: spec.size: Required value\n  hint: as the schema of CRD widgets.acme.io at v1 says (crds/widgets.yaml:1)",
                "app.yaml:7: spec.parts[1].name: Required value\n  hint: as the schema of CRD widgets.acme.io at v1 says (crds/widgets.yaml:1)",
                "app.yaml:12: the CRD in --schemas serves acme.io Widget at v1, not v2\n  hint: use a version the CRD lists",
            ]
        );
        assert_eq!(
            notices,
            ["app.yaml:8: Widget/a: unknown field \"spec.sise\" (did you mean \"size\"?)"]
        );
    }

    #[test]
    fn the_manifests_crd_wins_over_one_in_schemas() {
        let mut manifests = load_str("app.yaml", CRD).unwrap();
        let loose = CRD.replace("required: [size]", "required: []");
        let schemas = load_str("crds/widgets.yaml", &loose).unwrap();
        let widget = load_str(
            "w.yaml",
            "apiVersion: acme.io/v1\nkind: Widget\nmetadata: {name: a}\nspec: {}\n",
        )
        .unwrap();
        manifests.extend(widget);
        let (problems, _) = kinds(&manifests, &schemas);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].message, "spec.size: Required value");
        assert_eq!(problems[0].file, "w.yaml");
    }
}
