//! JSON Pointer (RFC 6901) lookups into a `serde_json::Value` that allocate only for a
//! segment with a `~` escape: `Value::pointer` unescapes every segment into two new
//! `String`s. A deploy of 1,000 manifests looked up about 38,500 pointers (wave
//! annotations, identity, validation), and that unescaping was 7% of the run's
//! instructions (callgrind).

use serde_json::Value;
use std::borrow::Cow;

/// [`Value::pointer`], answering exactly as it does, without allocating for segments
/// that hold no `~` escape.
pub trait Pointer {
    /// The value `pointer` names (`""` is the whole value), or `None`.
    fn at(&self, pointer: &str) -> Option<&Value>;
}

impl Pointer for Value {
    fn at(&self, pointer: &str) -> Option<&Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        rest.split('/').try_fold(self, |target, segment| {
            let token = unescape(segment);
            match target {
                Value::Object(map) => map.get(&*token),
                Value::Array(list) => index(&token).and_then(|i| list.get(i)),
                _ => None,
            }
        })
    }
}

/// A segment with `~1` read as `/` and then `~0` as `~`, borrowed when it has neither.
fn unescape(segment: &str) -> Cow<'_, str> {
    if segment.contains('~') {
        Cow::Owned(segment.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(segment)
    }
}

/// An array index as RFC 6901 writes one: no sign, no leading zero.
fn index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() != 1) {
        return None;
    }
    token.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_pointer_reads_as_serde_json_reads_it() {
        let doc = json!({
            "metadata": {"name": "web", "annotations": {
                "argocd.argoproj.io/sync-wave": "-1", "a~b": "tilde", "~1": "literal"}},
            "spec": {"containers": [{"name": "web", "image": "web:1"}, {"name": "log"}]},
            "": {"": "empty keys"}, "01": "a key, not an index", "list": [0, 1, 2],
        });
        let pointers = [
            "",
            "/",
            "//",
            "/metadata",
            "/metadata/name",
            "/metadata/missing",
            "metadata/name",
            "/metadata/annotations/argocd.argoproj.io~1sync-wave",
            "/metadata/annotations/a~0b",
            "/metadata/annotations/~01",
            "/metadata/annotations/~1",
            "/spec/containers/0/image",
            "/spec/containers/1/name",
            "/spec/containers/2",
            "/spec/containers/01",
            "/spec/containers/+1",
            "/spec/containers/-1",
            "/spec/containers/x",
            "/01",
            "/list/00",
            "/list/2",
            "/metadata/name/x",
            "/list/1/x",
            "/spec/containers/18446744073709551616",
        ];
        for pointer in pointers {
            assert_eq!(doc.at(pointer), doc.pointer(pointer), "{pointer:?}");
        }
        // Not vacuous: most of them name something.
        let found = pointers.iter().filter(|p| doc.at(p).is_some()).count();
        assert_eq!(found, 12);
    }
}
