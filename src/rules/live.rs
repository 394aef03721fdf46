//! A target's object as last seen, read only as far as its rule asks. The snapshot keeps
//! objects as text; a rule that reads its own type (a Deployment's) parses that text once,
//! instead of first building a `serde_json::Value` (a map per object, a string per key)
//! and converting it: in a profile of 2,000- and 10,000-pod rollouts, reading the judged
//! target as a Value was about 7% of the run's CPU.

use serde::de::DeserializeOwned;
use serde_json::Value;
use std::borrow::Cow;
use std::cell::OnceCell;

/// One object, as compact JSON text or (an Event, or a caller holding one) as a `Value`.
/// The text is borrowed from the snapshot while it holds it unpacked.
#[derive(Debug)]
pub struct Live<'a> {
    /// The object's text, when it came as text.
    text: Option<Cow<'a, str>>,
    /// The parsed object: given, or parsed from `text` on the first [`Live::value`].
    value: OnceCell<Value>,
}

impl<'a> Live<'a> {
    /// An object from its compact JSON text.
    pub fn text(text: impl Into<Cow<'a, str>>) -> Live<'a> {
        Live {
            text: Some(text.into()),
            value: OnceCell::new(),
        }
    }

    /// An object already parsed.
    pub fn value_of(value: Value) -> Live<'a> {
        Live {
            text: None,
            value: OnceCell::from(value),
        }
    }

    /// The object as a `Value`, parsed on the first call; `Null` if its text is not JSON
    /// (never for text a watcher made).
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| {
            let text = self.text.as_deref().unwrap_or("null");
            serde_json::from_str(text).unwrap_or(Value::Null)
        })
    }

    /// The object as a `Value` if it has been parsed already (or came as one).
    pub fn parsed(&self) -> Option<&Value> {
        self.value.get()
    }

    /// The object read as `T` from its text: no `Value` in between. An object given as a
    /// `Value` is written out and read back, so every type has one deserializer (from
    /// text), not a second one from `Value`.
    pub fn typed<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        match &self.text {
            Some(text) => serde_json::from_str(text),
            None => serde_json::from_str(&self.value().to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;
    use serde_json::json;

    fn deployment() -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "uid": "d-1", "generation": 3},
            "spec": {"replicas": 4, "minReadySeconds": 5,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "shop/web:1"}]}}},
            "status": {"observedGeneration": 3, "replicas": 4, "updatedReplicas": 4}})
    }

    #[test]
    fn text_and_value_read_the_same_object_both_ways() {
        let from_text = Live::text(deployment().to_string());
        let from_value = Live::value_of(deployment());
        for live in [&from_text, &from_value] {
            assert_eq!(live.value(), &deployment());
            let typed: Deployment = live.typed().unwrap();
            assert_eq!(typed.metadata.generation, Some(3));
            let spec = typed.spec.unwrap();
            assert_eq!((spec.replicas, spec.min_ready_seconds), (Some(4), Some(5)));
        }
    }

    #[test]
    fn text_is_parsed_as_a_value_once_and_only_when_asked() {
        let live = Live::text(deployment().to_string());
        let _: Deployment = live.typed().unwrap();
        assert!(live.parsed().is_none(), "a typed read builds no Value");
        let first: *const Value = live.value();
        assert!(std::ptr::eq(first, live.value()));
        assert!(std::ptr::eq(first, live.parsed().unwrap()));
    }

    #[test]
    fn unreadable_text_is_null_as_a_value_and_an_error_typed() {
        let live = Live::text("{\"metadata\":".to_owned());
        assert_eq!(live.value(), &Value::Null);
        assert!(live.typed::<Deployment>().is_err());
        let wrong = Live::text(json!({"spec": {"replicas": "four"}}).to_string());
        assert!(wrong.typed::<Deployment>().is_err());
        assert_eq!(wrong.value()["spec"]["replicas"], "four");
    }
}
