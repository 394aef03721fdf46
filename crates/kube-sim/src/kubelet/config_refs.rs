//! ConfigMaps and Secrets a pod needs before it can run: environment references (their
//! absence is CreateContainerConfigError) and volumes (their absence blocks the mount).
//! Messages are the kubelet's, whose object caches name resources in the singular.

use crate::engine::World;
use crate::store::ObjectKey;
use serde_json::Value;

/// A referenced ConfigMap or Secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    ConfigMap,
    Secret,
}

impl Source {
    fn plural(self) -> &'static str {
        match self {
            Source::ConfigMap => "configmaps",
            Source::Secret => "secrets",
        }
    }

    /// How the kubelet's cache names it in a NotFound error.
    fn singular(self) -> &'static str {
        match self {
            Source::ConfigMap => "configmap",
            Source::Secret => "secret",
        }
    }

    /// How `couldn't find key` messages name it.
    fn kind(self) -> &'static str {
        match self {
            Source::ConfigMap => "ConfigMap",
            Source::Secret => "Secret",
        }
    }
}

fn optional(r: &Value) -> bool {
    r["optional"].as_bool().unwrap_or(false)
}

fn lookup(
    world: &World<'_>,
    ns: &str,
    source: Source,
    name: &str,
) -> Option<std::sync::Arc<Value>> {
    world.get(&ObjectKey::new("", source.plural(), ns, name))
}

fn not_found(source: Source, name: &str) -> String {
    format!("{} \"{name}\" not found", source.singular())
}

/// The first error building the container's environment (envFrom, then env, in order),
/// as `makeEnvironmentVariables` returns it.
pub fn env_error(world: &World<'_>, ns: &str, container: &Value) -> Option<String> {
    for from in container["envFrom"].as_array().into_iter().flatten() {
        for (field, source) in [
            ("configMapRef", Source::ConfigMap),
            ("secretRef", Source::Secret),
        ] {
            let r = &from[field];
            let Some(name) = r["name"].as_str() else {
                continue;
            };
            if lookup(world, ns, source, name).is_none() && !optional(r) {
                return Some(not_found(source, name));
            }
        }
    }
    for env in container["env"].as_array().into_iter().flatten() {
        for (field, source) in [
            ("configMapKeyRef", Source::ConfigMap),
            ("secretKeyRef", Source::Secret),
        ] {
            let r = &env["valueFrom"][field];
            let Some(name) = r["name"].as_str() else {
                continue;
            };
            let key = r["key"].as_str().unwrap_or_default();
            match lookup(world, ns, source, name) {
                None if optional(r) => {}
                None => return Some(not_found(source, name)),
                Some(obj) => {
                    let has_key =
                        obj["data"].get(key).is_some() || obj["stringData"].get(key).is_some();
                    if !has_key && !optional(r) {
                        return Some(format!(
                            "couldn't find key {key} in {} {ns}/{name}",
                            source.kind()
                        ));
                    }
                }
            }
        }
    }
    None
}

/// Volumes whose ConfigMap or Secret is missing, with the SetUp error for each.
pub fn missing_volumes(world: &World<'_>, ns: &str, pod: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for v in pod["spec"]["volumes"].as_array().into_iter().flatten() {
        let vol = v["name"].as_str().unwrap_or_default();
        let refs = [
            (&v["configMap"], "name", Source::ConfigMap),
            (&v["secret"], "secretName", Source::Secret),
        ];
        for (r, field, source) in refs {
            let Some(name) = r[field].as_str() else {
                continue;
            };
            if lookup(world, ns, source, name).is_none() && !optional(r) {
                out.push((vol.to_owned(), not_found(source, name)));
            }
        }
    }
    out
}

/// The `FailedMount` event message for a volume whose source is missing.
pub fn mount_failed_message(volume: &str, error: &str) -> String {
    format!("MountVolume.SetUp failed for volume \"{volume}\" : {error}")
}
