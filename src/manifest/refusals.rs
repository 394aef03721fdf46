//! What the API server would refuse in a manifest of a built-in kind, found with no
//! cluster by kube-strict, the code kube-sim's API server runs: a wrong JSON type, an
//! undeclared field (with the declared name it is near), an unsupported enum value, a
//! missing required field. Each is a problem at the line of its field, in the server's
//! words.

use super::document::Manifest;
use super::error::Problem;
use super::near::nearest;

/// Add what the server would refuse in `m`. Where `problems` already has one at the same
/// line of the same file (`shape`'s selector and name checks), that one is kept alone.
pub fn check(m: &Manifest, problems: &mut Vec<Problem>) {
    let Some(refusals) = kube_strict::refusals(&m.object) else {
        return; // a custom resource or an unknown kind: not the server's built-in types
    };
    let before = problems.len();
    for refusal in refusals {
        let line = m.line_within(&refusal.pointer);
        if problems[..before]
            .iter()
            .any(|p| p.file == m.file && p.line == Some(line))
        {
            continue;
        }
        let mut problem = Problem::new(&m.file, Some(line), refusal.message.clone());
        if let Some(field) = undeclared(&refusal) {
            problem = problem.with_hint(match nearest(field, refusal.declared.iter().copied()) {
                Some(near) => format!("did you mean {near}?"),
                None => {
                    format!("{field} is not a field here: the server refuses undeclared fields")
                }
            });
        }
        problems.push(problem);
    }
}

/// The name of the undeclared field a refusal is about, if it is about one.
fn undeclared(refusal: &kube_strict::Refusal) -> Option<&str> {
    if refusal.declared.is_empty() {
        return None;
    }
    refusal.pointer.rsplit('/').next()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(yaml: &str) -> Vec<String> {
        crate::manifest::tests::found_by(check, yaml)
    }

    const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: REPLICAS
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      restartPolicy: RESTART
      containers:
      - name: web
        image: nginx
        PULL: IfNotPresent
";

    fn deployment(replicas: &str, restart: &str, pull: &str) -> String {
        DEPLOYMENT
            .replace("REPLICAS", replicas)
            .replace("RESTART", restart)
            .replace("PULL", pull)
    }

    #[test]
    fn a_valid_deployment_has_no_problems() {
        assert_eq!(
            run(&deployment("2", "Always", "imagePullPolicy")),
            Vec::<String>::new()
        );
    }

    #[test]
    fn each_refusal_is_at_its_fields_line_with_a_near_name() {
        let problems = run(&deployment("2", "Always", "imagePullPolcy"));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("app.yaml:14: .spec.template.spec.containers[name=\"web\"].imagePullPolcy: field not declared in schema"),
            "{}",
            problems[0]
        );
        assert!(
            problems[0].contains("did you mean imagePullPolicy?"),
            "{}",
            problems[0]
        );
        let problems = run(&deployment("\"two\"", "Always", "imagePullPolicy"));
        assert!(
            problems[0].starts_with("app.yaml:5: .spec.replicas: expected numeric"),
            "{problems:?}"
        );
        let problems = run(&deployment("2", "Sometimes", "imagePullPolicy"));
        assert!(
            problems[0].starts_with(
                "app.yaml:10: spec.template.spec.restartPolicy: Unsupported value: \"Sometimes\""
            ),
            "{problems:?}"
        );
    }

    #[test]
    fn a_missing_required_field_is_at_its_parents_line() {
        let problems = run("apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  restartPolicy: Never
");
        assert_eq!(
            problems,
            ["app.yaml:4: spec.containers: Required value"],
            "{problems:?}"
        );
    }
}
