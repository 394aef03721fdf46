//! Deploy waves: what must be applied and judged before what. Bare Pods first (krane's
//! predeploy: a migration), Helm's pre-install/pre-upgrade hooks by weight, the rest, then
//! post hooks; Argo CD's sync-wave and our own `deploy-action.io/wave` order within each.
//! Pure, so the order is tested without a cluster.

use crate::manifest::Manifest;
use crate::phases::{Phase, Step};
use std::fmt;

pub const WAVE_ANNOTATIONS: [&str; 2] = ["deploy-action.io/wave", "argocd.argoproj.io/sync-wave"];
pub const HOOK_ANNOTATION: &str = "helm.sh/hook";
pub const HOOK_WEIGHT_ANNOTATION: &str = "helm.sh/hook-weight";
pub const HOOK_DELETE_ANNOTATION: &str = "helm.sh/hook-delete-policy";

/// The stages of a deploy, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Bare Pods, applied and watched to their verdict before anything else changes.
    Predeploy,
    /// Helm `pre-install` / `pre-upgrade` hooks.
    PreHooks,
    Main,
    /// Helm `post-install` / `post-upgrade` hooks.
    PostHooks,
}

/// A wave's place in the order: stage, then wave number, then hook weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub stage: Stage,
    pub wave: i64,
    pub weight: i64,
}

impl Key {
    const MAIN: Key = Key {
        stage: Stage::Main,
        wave: 0,
        weight: 0,
    };
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.stage {
            Stage::Predeploy => "bare pods first (predeploy)",
            Stage::PreHooks => "helm pre-install/pre-upgrade hooks",
            Stage::Main => "the rest",
            Stage::PostHooks => "helm post-install/post-upgrade hooks",
        };
        f.write_str(what)?;
        match (self.wave, self.weight) {
            (0, 0) => Ok(()),
            (w, 0) => write!(f, ", wave {w}"),
            (0, h) => write!(f, ", weight {h}"),
            (w, h) => write!(f, ", wave {w}, weight {h}"),
        }
    }
}

/// What Helm's delete policy asks of a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeletePolicy {
    /// Delete the previous object before creating it (Helm's default): a Job's template
    /// cannot change in place.
    pub before_creation: bool,
    pub on_success: bool,
    pub on_failure: bool,
}

/// How a manifest takes part in the deploy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// Applied in the wave with this key.
    In(Key, Option<DeletePolicy>),
    /// Not part of a deploy (a Helm `test` hook, or one only for delete or rollback):
    /// reported, never applied.
    Skipped(String),
}

/// One wave: its key and the steps (phase order kept) it applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wave {
    pub key: Key,
    pub steps: Vec<Step>,
}

/// An annotation of `m`.
fn annotation<'a>(m: &'a Manifest, key: &str) -> Option<&'a str> {
    m.object
        .get("metadata")?
        .get("annotations")?
        .get(key)?
        .as_str()
        .map(str::trim)
}

/// A wave or weight annotation's number; unreadable ones are refused by validation
/// (`manifest::validate`), so here they count as 0.
fn number(m: &Manifest, keys: &[&str]) -> i64 {
    keys.iter()
        .find_map(|k| annotation(m, k))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The role a manifest plays; `phase` is its apply phase.
pub fn role(m: &Manifest, phase: Phase) -> Role {
    let wave = number(m, &WAVE_ANNOTATIONS);
    if let Some(hooks) = annotation(m, HOOK_ANNOTATION) {
        let hooks: Vec<&str> = hooks.split(',').map(str::trim).collect();
        let has = |names: &[&str]| hooks.iter().any(|h| names.contains(h));
        let stage = if has(&["pre-install", "pre-upgrade"]) {
            Stage::PreHooks
        } else if has(&["post-install", "post-upgrade"]) {
            Stage::PostHooks
        } else {
            return Role::Skipped(format!(
                "a Helm {} hook: not part of a deploy, so not applied",
                hooks.join(",")
            ));
        };
        let policy = annotation(m, HOOK_DELETE_ANNOTATION).map_or(
            // Helm's default when none is given.
            DeletePolicy {
                before_creation: true,
                ..DeletePolicy::default()
            },
            |p| {
                let p: Vec<&str> = p.split(',').map(str::trim).collect();
                DeletePolicy {
                    before_creation: p.contains(&"before-hook-creation"),
                    on_success: p.contains(&"hook-succeeded"),
                    on_failure: p.contains(&"hook-failed"),
                }
            },
        );
        let key = Key {
            stage,
            wave,
            weight: number(m, &[HOOK_WEIGHT_ANNOTATION]),
        };
        return Role::In(key, Some(policy));
    }
    let explicit = WAVE_ANNOTATIONS.iter().any(|k| annotation(m, k).is_some());
    let stage = if m.kind == "Pod" && m.group().is_empty() {
        Stage::Predeploy
    } else {
        Stage::Main
    };
    // What everything else needs goes with the first wave: CRDs and namespaces always
    // (nothing could be applied into them before), config and policy unless they name a
    // wave of their own.
    if phase <= Phase::Namespaces || (phase < Phase::Rest && !explicit) {
        return Role::In(FIRST, None);
    }
    Role::In(
        Key {
            stage,
            wave,
            weight: 0,
        },
        None,
    )
}

/// Stands for "the first wave": the lowest key of all.
const FIRST: Key = Key {
    stage: Stage::Predeploy,
    wave: i64::MIN,
    weight: i64::MIN,
};

/// The waves `steps` fall into, in order, and the manifests left out (index, why). Setup
/// objects without a wave of their own join the first wave, ahead of its other steps by
/// phase. One wave when nothing asks for more: the deploy applies as one.
pub fn plan(manifests: &[Manifest], steps: &[Step]) -> (Vec<Wave>, Vec<(usize, String)>) {
    let mut keyed: Vec<(Key, Step)> = Vec::new();
    let mut skipped = Vec::new();
    for step in steps {
        match role(&manifests[step.index], step.phase) {
            Role::In(key, _) => keyed.push((key, step.clone())),
            Role::Skipped(why) => skipped.push((step.index, why)),
        }
    }
    let first = keyed
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| *k != FIRST)
        .min()
        .unwrap_or(Key::MAIN);
    let mut waves: Vec<Wave> = Vec::new();
    for (key, step) in keyed {
        let key = if key == FIRST { first } else { key };
        match waves.iter_mut().find(|w| w.key == key) {
            Some(w) => w.steps.push(step),
            None => waves.push(Wave {
                key,
                steps: vec![step],
            }),
        }
    }
    waves.sort_by_key(|w| w.key);
    for w in &mut waves {
        w.steps.sort_by_key(|s| (s.phase, s.index));
    }
    (waves, skipped)
}

/// The delete policy of a Helm hook manifest (`None` for anything else).
pub fn delete_policy(m: &Manifest, phase: Phase) -> Option<DeletePolicy> {
    // Only a hook has one: the rest of what `role` reads need not be read (this is asked
    // of every manifest, more than once).
    if !is_hook(m) {
        return None;
    }
    match role(m, phase) {
        Role::In(_, policy) => policy,
        Role::Skipped(_) => None,
    }
}

/// Whether `m` is a Helm hook (never a member of a pruned set: Helm does not track them
/// either).
pub fn is_hook(m: &Manifest) -> bool {
    annotation(m, HOOK_ANNOTATION).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::load_str;
    use crate::phases::order;
    use std::collections::BTreeSet;

    /// A `helm template`-shaped release with a migration Job hook, a test hook, a bare Pod
    /// and sync waves.
    const RELEASE: &str = r#"
# Source: shop/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata: {name: shop-config, namespace: shop}
data: {LOG_LEVEL: info}
---
# Source: shop/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: registry.local/shop/web:2}]}
---
# Source: shop/templates/migrate-job.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: shop-migrate
  namespace: shop
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: "-5"
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: registry.local/shop/web:2}]
---
# Source: shop/templates/seed-job.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: shop-seed
  namespace: shop
  annotations: {helm.sh/hook: pre-upgrade}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: seed, image: registry.local/shop/web:2}]
---
# Source: shop/templates/tests/test-connection.yaml
apiVersion: v1
kind: Pod
metadata:
  name: shop-test-connection
  namespace: shop
  annotations: {helm.sh/hook: test}
spec: {restartPolicy: Never, containers: [{name: wget, image: busybox}]}
---
# Source: shop/templates/notify.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: shop-notify
  namespace: shop
  annotations: {helm.sh/hook: post-upgrade}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: notify, image: registry.local/shop/notify:1}]
---
apiVersion: v1
kind: Pod
metadata: {name: migrate, namespace: shop}
spec: {restartPolicy: Never, containers: [{name: migrate, image: registry.local/shop/web:2}]}
---
apiVersion: v1
kind: Service
metadata:
  name: web-canary
  namespace: shop
  annotations: {argocd.argoproj.io/sync-wave: "2"}
spec: {selector: {app: web}, ports: [{port: 80}]}
"#;

    /// Each wave's label with its manifests' names, and the skipped manifests with why.
    type Planned = (Vec<(String, Vec<String>)>, Vec<(String, String)>);

    fn waves_of(yaml: &str) -> Planned {
        let manifests = load_str("release.yaml", yaml).unwrap();
        let steps = order(&manifests, &BTreeSet::new());
        let (waves, skipped) = plan(&manifests, &steps);
        let names = |steps: &[Step]| {
            steps
                .iter()
                .map(|s| manifests[s.index].name.clone())
                .collect()
        };
        (
            waves
                .iter()
                .map(|w| (w.key.to_string(), names(&w.steps)))
                .collect(),
            skipped
                .into_iter()
                .map(|(i, why)| (manifests[i].name.clone(), why))
                .collect(),
        )
    }

    #[test]
    fn pods_then_pre_hooks_by_weight_then_the_rest_by_wave_then_post_hooks() {
        let (waves, skipped) = waves_of(RELEASE);
        let expect = |k: &str, names: &[&str]| {
            (
                k.to_owned(),
                names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            waves,
            vec![
                // setup objects go first, with the first wave
                expect("bare pods first (predeploy)", &["shop-config", "migrate"]),
                expect(
                    "helm pre-install/pre-upgrade hooks, weight -5",
                    &["shop-migrate"]
                ),
                expect("helm pre-install/pre-upgrade hooks", &["shop-seed"]),
                expect("the rest", &["web"]),
                expect("the rest, wave 2", &["web-canary"]),
                expect("helm post-install/post-upgrade hooks", &["shop-notify"]),
            ]
        );
        assert_eq!(
            skipped,
            vec![(
                "shop-test-connection".to_owned(),
                "a Helm test hook: not part of a deploy, so not applied".to_owned()
            )]
        );
    }

    #[test]
    fn a_deploy_that_asks_for_no_waves_is_one() {
        let plain = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\n---\n\
            apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\n\
            apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n";
        let (waves, skipped) = waves_of(plain);
        assert_eq!(
            waves,
            vec![(
                "the rest".to_owned(),
                vec!["shop".to_owned(), "c".to_owned(), "web".to_owned()]
            )]
        );
        assert!(skipped.is_empty());
        // Only pods: one wave, setup objects with it.
        let pods = "apiVersion: v1\nkind: Pod\nmetadata: {name: task, namespace: shop}\n---\n\
            apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: shop}\n";
        let (waves, _) = waves_of(pods);
        assert_eq!(
            waves,
            vec![(
                "bare pods first (predeploy)".to_owned(),
                vec!["creds".to_owned(), "task".to_owned()]
            )]
        );
    }

    #[test]
    fn negative_sync_waves_come_before_the_rest_and_setup_objects_may_name_theirs() {
        let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: late-config, namespace: shop, annotations: {argocd.argoproj.io/sync-wave: \"1\"}}\n---\n\
            apiVersion: batch/v1\nkind: Job\nmetadata: {name: schema, namespace: shop, annotations: {deploy-action.io/wave: \"-1\"}}\n---\n\
            apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: shop}\n---\n\
            apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n";
        let (waves, _) = waves_of(yaml);
        assert_eq!(
            waves,
            vec![
                (
                    "the rest, wave -1".to_owned(),
                    vec!["creds".to_owned(), "schema".to_owned()]
                ),
                ("the rest".to_owned(), vec!["web".to_owned()]),
                (
                    "the rest, wave 1".to_owned(),
                    vec!["late-config".to_owned()]
                ),
            ]
        );
    }

    #[test]
    fn helm_delete_policies() {
        let manifests = load_str("release.yaml", RELEASE).unwrap();
        let by_name = |n: &str| manifests.iter().find(|m| m.name == n).unwrap();
        assert_eq!(
            delete_policy(by_name("shop-migrate"), Phase::Rest),
            Some(DeletePolicy {
                before_creation: true,
                on_success: true,
                on_failure: false
            })
        );
        // Helm's default: before-hook-creation
        assert_eq!(
            delete_policy(by_name("shop-seed"), Phase::Rest),
            Some(DeletePolicy {
                before_creation: true,
                ..DeletePolicy::default()
            })
        );
        assert_eq!(delete_policy(by_name("web"), Phase::Rest), None);
        assert!(is_hook(by_name("shop-notify")) && !is_hook(by_name("migrate")));
    }
}
