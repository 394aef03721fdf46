//! The few fields of an object the snapshot files it by (its key, owners, template labels,
//! an Event's object): read from its text by serde, or gathered by the watchers while they
//! copy the object (`cluster::raw`), so that it is read once.

use crate::rules::object_key::ObjectKey;
use serde_json::Value;
use std::sync::Arc;

/// The few fields of an object its key and the snapshot's index links are made of, read leniently: a field
/// of an unexpected type (a custom resource's `spec: "x"`) reads as absent, never as an
/// error, as a lookup in a `Value` would.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default)]
pub struct Head {
    #[serde(rename = "apiVersion")]
    pub(crate) api_version: Option<Value>,
    pub(crate) kind: Option<Value>,
    pub(crate) metadata: Lenient<HeadMeta>,
    #[serde(rename = "involvedObject")]
    pub(crate) involved_object: Option<Value>,
    pub(crate) spec: Lenient<HeadSpec>,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct HeadMeta {
    pub(crate) name: Option<Value>,
    pub(crate) namespace: Option<Value>,
    pub(crate) uid: Option<Value>,
    #[serde(rename = "ownerReferences")]
    pub(crate) owner_references: Option<Owners>,
    pub(crate) labels: Option<Value>,
    #[serde(rename = "deletionTimestamp")]
    pub(crate) deletion_timestamp: Option<Value>,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct HeadSpec {
    pub(crate) replicas: Option<Value>,
    pub(crate) template: Lenient<HeadTemplate>,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct HeadTemplate {
    pub(crate) metadata: Lenient<HeadTemplateMeta>,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct HeadTemplateMeta {
    pub(crate) labels: Option<Value>,
}

/// What the snapshot reads of an object's ownerReferences, read without a `Value` (every
/// pod has one, and building that tree for each pod event cost more than reading the
/// pod): the uids they name, and whether one of them is a controller. Lenient as the rest
/// of the [`Head`]: a list that is not one, an item that is not an object, a uid that is
/// not a string and a `controller` that is not `true` read as absent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Owners {
    /// Made as the snapshot's links hold them, so a pod's owner uid is not copied again.
    pub(crate) uids: Vec<Arc<str>>,
    pub(crate) controlled: bool,
}

impl<'de> serde::Deserialize<'de> for Owners {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// One ownerReference, of which `uid` and `controller` are read.
        #[derive(Default, serde::Deserialize)]
        #[serde(default)]
        struct Reference {
            uid: Option<Value>,
            controller: Option<Value>,
        }
        let LenientList(references) = LenientList::<Reference>::deserialize(d)?;
        let mut owners = Owners::default();
        for reference in references {
            if let Some(Value::String(uid)) = reference.uid {
                owners.uids.push(Arc::from(uid));
            }
            owners.controlled |= reference.controller == Some(Value::Bool(true));
        }
        Ok(owners)
    }
}

/// The visits of a lenient reading's visitor for the values it reads as absent (every
/// scalar and null): `$absent`, never an error.
macro_rules! absent_otherwise {
    ($absent:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($absent)
        }
    };
}

/// The items of a list that are objects, each read as `T`: a value that is not a list
/// reads as empty, an item that is not an object is skipped (neither is an error).
#[derive(Debug, Clone)]
pub(crate) struct LenientList<T>(pub(crate) Vec<T>);

impl<T> Default for LenientList<T> {
    fn default() -> Self {
        LenientList(Vec::new())
    }
}

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for LenientList<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct List<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for List<T> {
            type Value = LenientList<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(Lenient(item)) = seq.next_element::<Lenient<T>>()? {
                    items.extend(item);
                }
                Ok(LenientList(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(LenientList::default())
            }
            absent_otherwise!(LenientList::default());
        }
        d.deserialize_any(List(std::marker::PhantomData))
    }
}

/// `T` when the value is an object, else absent (skipped unparsed).
#[derive(Debug, Clone, Default)]
pub(crate) struct Lenient<T>(pub(crate) Option<T>);

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Lenient<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Any<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Any<T> {
            type Value = Lenient<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(|t| Lenient(Some(t)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Self::Value, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Lenient(None))
            }
            absent_otherwise!(Lenient(None));
        }
        d.deserialize_any(Any(std::marker::PhantomData))
    }
}

impl Head {
    pub(crate) fn meta(&self) -> Option<&HeadMeta> {
        self.metadata.0.as_ref()
    }

    pub(crate) fn key(&self) -> Option<ObjectKey> {
        fn text(v: Option<&Value>) -> Option<&str> {
            v.and_then(Value::as_str)
        }
        let meta = self.meta()?;
        Some(ObjectKey::new(
            text(self.api_version.as_ref())?,
            text(self.kind.as_ref())?,
            text(meta.namespace.as_ref()),
            text(meta.name.as_ref())?,
        ))
    }

    pub(crate) fn template_labels(&self) -> Option<&Value> {
        let template = self.spec.0.as_ref()?.template.0.as_ref()?;
        template.metadata.0.as_ref()?.labels.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn owners(refs: &Value) -> Option<Owners> {
        let object = json!({"metadata": {"ownerReferences": refs}});
        let head: Head = serde_json::from_value(object).expect("a head reads anything");
        head.meta()?.owner_references.clone()
    }

    #[test]
    fn owners_are_the_uids_named_and_whether_one_controls() {
        let read = owners(&json!([
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c",
                "uid": "rs-uid-2", "controller": true, "blockOwnerDeletion": true},
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "cm-1"},
        ]));
        let uids = vec![Arc::from("rs-uid-2"), Arc::from("cm-1")];
        assert_eq!(
            read,
            Some(Owners {
                uids,
                controlled: true
            })
        );
        let free = owners(&json!([{"uid": "cm-1", "controller": false}]));
        assert_eq!(free.map(|o| o.controlled), Some(false));
    }

    #[test]
    fn owners_of_an_unexpected_shape_read_as_absent_never_as_an_error() {
        assert_eq!(owners(&Value::Null), None);
        for odd in [json!("no"), json!(7), json!({"uid": "x"}), json!([])] {
            assert_eq!(owners(&odd), Some(Owners::default()), "{odd}");
        }
        // Only the items that are objects with a string uid name an owner; only a
        // `controller: true` controls.
        let mixed = owners(&json!([7, null, ["x"], {"uid": 3, "controller": "true"},
            {"uid": "rs-1"}]));
        let uids = vec![Arc::from("rs-1")];
        assert_eq!(
            mixed,
            Some(Owners {
                uids,
                controlled: false
            })
        );
    }
}
