//! The plan of a dry run: each dry-run result is compared with the live object (read
//! once, bounded concurrency) to say what the apply would create or change.

use crate::cluster::apply::{self, Rejection};
use crate::cluster::{Connection, Served};
use crate::manifest::Manifest;
use crate::plan;
use crate::vocab::outcome::Change;
use futures::StreamExt;
use serde_json::Value;
use std::collections::HashMap;

/// Reads of live objects in flight at once.
const CONCURRENCY: usize = 8;

/// What applying each dry-run-checked manifest would change, by manifest index. A
/// manifest whose live object could not be read has no entry: its change is not known.
/// One the server could not check is known to be created when its namespace or its CRD
/// is (nothing can exist in a namespace or of a kind that does not).
pub async fn changes(
    conn: &Connection,
    kinds: &Served,
    manifests: &[Manifest],
    checked: &[(usize, Result<Value, Rejection>)],
) -> HashMap<usize, Change> {
    let mut changes = futures::stream::iter(checked.iter().filter_map(|(index, result)| {
        let planned = result.as_ref().ok()?;
        let m = &manifests[*index];
        let (ar, ns) = kinds.address(m)?;
        Some(async move {
            let live = apply::live(&conn.client, &ar, ns, &m.name).await.ok()?;
            Some((*index, plan::change(live.as_ref(), planned)))
        })
    }))
    .buffer_unordered(CONCURRENCY)
    .filter_map(std::future::ready)
    .collect::<HashMap<usize, Change>>()
    .await;
    created_with_their_home(manifests, checked, &mut changes);
    changes
}

/// Marks as created the unchecked manifests whose namespace or CRD is created.
fn created_with_their_home(
    manifests: &[Manifest],
    checked: &[(usize, Result<Value, Rejection>)],
    changes: &mut HashMap<usize, Change>,
) {
    let created = |i: &usize| changes.get(i) == Some(&Change::Created);
    let namespaces: Vec<&str> = (0..manifests.len())
        .filter(|i| created(i) && manifests[*i].kind == "Namespace")
        .map(|i| manifests[i].name.as_str())
        .collect();
    let kinds: Vec<(&str, &str)> = (0..manifests.len())
        .filter(|i| created(i))
        .filter_map(|i| manifests[i].defines())
        .collect();
    for (i, m) in manifests.iter().enumerate() {
        if checked.iter().any(|(c, _)| *c == i) {
            continue;
        }
        let home_is_new = m
            .namespace
            .as_deref()
            .is_some_and(|ns| namespaces.contains(&ns))
            || kinds.contains(&(m.group(), m.kind.as_str()));
        if home_is_new {
            changes.insert(i, Change::Created);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::load_str;

    #[test]
    fn custom_resources_of_a_new_crd_are_created_those_of_an_existing_one_not_known() {
        let manifests = load_str(
            "crd.yaml",
            "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.acme.io}
spec:
  group: acme.io
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget}
  versions: [{name: v1, served: true, storage: true,
              schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
---
apiVersion: acme.io/v1
kind: Widget
metadata: {name: blue, namespace: shop}
",
        )
        .unwrap();
        let checked = vec![(0, Ok(Value::Null))];
        let mut changes = HashMap::from([(0, Change::Created)]);
        created_with_their_home(&manifests, &checked, &mut changes);
        assert_eq!(changes.get(&1), Some(&Change::Created));

        // The CRD is already there (only changed): a Widget may exist too.
        let mut changes = HashMap::from([(0, Change::Unchanged)]);
        created_with_their_home(&manifests, &checked, &mut changes);
        assert_eq!(changes.get(&1), None);
    }
}
