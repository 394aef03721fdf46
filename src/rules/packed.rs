//! Kept objects' JSON text with its repeated strings stored once: every key, and every
//! value seen before, is replaced by a number into a table the snapshot owns. Ten thousand
//! pods spell out the same hundred keys and the same images, owners, labels and condition
//! types; a pod's text was mostly those. Unpacking is a copy, so a rule still reads the
//! text the API server sent.
//!
//! The packed form is the compact text with each replaced string literal (quotes included)
//! turned into [`MARK`] and the string's number as a LEB128 varint. Compact JSON never
//! holds a raw control byte (in a string it is escaped), so a [`MARK`] is never text.

use foldhash::fast::FixedState;
use hashbrown::HashTable;
use memchr::{memchr, memchr2};
use std::hash::BuildHasher;

/// Stands for a string from the table, its number following.
const MARK: u8 = 0x01;

/// Strings shorter than this stay in the text: a mark and a number would not be shorter.
const SHORTEST: usize = 3;

/// Longer values stay in the text: a long value is a message or a blob, seldom repeated.
const LONGEST_VALUE: usize = 160;

/// Slots remembering the hashes of values seen once: only a value seen twice is put in
/// the table, so the unique ones (names, uids) never are. A slot is overwritten by the
/// next value hashing to it, so a repeat seen much later may be left in the text: a
/// fixed 256 KiB, and no work but a store per value.
const SEEN_ONCE_SLOTS: usize = 1 << 15;

/// The strings packed texts refer to, and the values seen once. Owned by one snapshot;
/// grows with the distinct keys and repeated values of what it keeps, never shrinks.
#[derive(Debug, Clone, Default)]
pub(crate) struct Strings {
    by_number: Vec<Box<str>>,
    /// The numbers of the strings in `by_number`, found by the strings' hashes: a string
    /// is hashed once whether it is there or not (the same hash picks its slot in
    /// `seen_once`), and held once.
    numbers: HashTable<u32>,
    /// Hashes of values seen once, by hash modulo the slots (empty until the first).
    seen_once: Vec<u64>,
    /// Where [`Strings::pack`] writes before the result is copied out at its size.
    scratch: Vec<u8>,
}

/// One object's text, packed against a [`Strings`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Packed(Box<[u8]>);

impl Strings {
    /// `text` (compact JSON, as the watchers make it) packed.
    pub(crate) fn pack(&mut self, text: &str) -> Packed {
        let bytes = text.as_bytes();
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        push_varint(&mut out, bytes.len());
        let mut copied = 0;
        let mut at = 0;
        while let Some(start) = memchr(b'"', &bytes[at..]).map(|i| at + i) {
            // Never unterminated in a watcher's text; left as it is if it were.
            let Some(end) = string_end(bytes, start) else {
                break;
            };
            let is_key = bytes.get(end) == Some(&b':');
            let inner = &text[start + 1..end - 1];
            if let Some(number) = self.number(inner, is_key) {
                out.extend_from_slice(&bytes[copied..start]);
                out.push(MARK);
                push_varint(&mut out, number as usize);
                copied = end;
            }
            at = end;
        }
        out.extend_from_slice(&bytes[copied..]);
        let packed = Packed(Box::from(out.as_slice()));
        self.scratch = out;
        packed
    }

    /// The text `packed` was made from; `None` if it was not made by this table.
    pub(crate) fn unpack(&self, packed: &Packed) -> Option<String> {
        let bytes: &[u8] = &packed.0;
        let (len, mut at) = read_varint(bytes, 0)?;
        let mut text = Vec::with_capacity(len);
        while let Some(mark) = memchr(MARK, &bytes[at..]).map(|i| at + i) {
            text.extend_from_slice(&bytes[at..mark]);
            let (number, next) = read_varint(bytes, mark + 1)?;
            let string = self.by_number.get(number)?;
            text.push(b'"');
            text.extend_from_slice(string.as_bytes());
            text.push(b'"');
            at = next;
        }
        text.extend_from_slice(&bytes[at..]);
        String::from_utf8(text).ok()
    }

    /// The number of `inner` (a string literal's text, escapes as written), when it is a
    /// key or a value seen before; `None` to leave it in the text.
    fn number(&mut self, inner: &str, is_key: bool) -> Option<u32> {
        if inner.len() < SHORTEST || (!is_key && inner.len() > LONGEST_VALUE) {
            return None;
        }
        let hash = hash_of(inner);
        let by_number = &self.by_number;
        if let Some(&n) = self
            .numbers
            .find(hash, |&n| &*by_number[n as usize] == inner)
        {
            return Some(n);
        }
        if !is_key {
            if self.seen_once.is_empty() {
                self.seen_once = vec![0; SEEN_ONCE_SLOTS];
            }
            // A hash of 0 marks an empty slot, so it is seen as 1.
            let mark = hash.max(1);
            // Truncation intended: the low bits pick the slot.
            let slot = &mut self.seen_once[mark as usize % SEEN_ONCE_SLOTS];
            if *slot != mark {
                *slot = mark;
                return None;
            }
            *slot = 0;
        }
        let n = u32::try_from(self.by_number.len()).ok()?;
        self.by_number.push(Box::from(inner));
        let by_number = &self.by_number;
        self.numbers
            .insert_unique(hash, n, |&m| hash_of(&by_number[m as usize]));
        Some(n)
    }

    /// How many strings the table holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.by_number.len()
    }
}

impl Packed {
    /// Bytes held (for tests that weigh the packing).
    #[cfg(test)]
    pub(crate) fn size(&self) -> usize {
        self.0.len()
    }
}

/// The hash a string is filed and remembered by.
fn hash_of(s: &str) -> u64 {
    FixedState::default().hash_one(s)
}

/// The index just past the string literal opening at `start` (its closing quote included).
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while let Some(found) = memchr2(b'"', b'\\', bytes.get(i..)?) {
        i += found;
        if bytes[i] == b'"' {
            return Some(i + 1);
        }
        i += 2;
    }
    None
}

fn push_varint(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        // Truncation intended: the low seven bits, flagged as not the last.
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// A varint at `at`: its value and the index after it.
fn read_varint(bytes: &[u8], mut at: usize) -> Option<(usize, usize)> {
    let mut n = 0usize;
    let mut shift = 0;
    loop {
        let b = *bytes.get(at)?;
        at += 1;
        n |= usize::from(b & 0x7f).checked_shl(shift)?;
        if b < 0x80 {
            return Some((n, at));
        }
        shift += 7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn pod(i: usize) -> String {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("web-7d4b9c-{i:05}"), "namespace": "shop",
                "uid": format!("5e1f0000-0000-4000-8000-{i:012x}"),
                "labels": {"app": "web", "pod-template-hash": "7d4b9c"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": "web-7d4b9c", "uid": "rs-uid-1", "controller": true}]},
            "spec": {"containers": [{"name": "web", "image": "ghcr.io/acme/web:v2"}]},
            "status": {"phase": "Running", "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-12-05T10:00:00Z"}],
                "message": "a \"quoted\" \\ message\u{1} with é"}})
        .to_string()
    }

    #[test]
    fn texts_come_back_as_they_went_in_and_repeats_are_stored_once() {
        let mut strings = Strings::default();
        let texts: Vec<String> = (0..100).map(pod).collect();
        let packed: Vec<Packed> = texts.iter().map(|t| strings.pack(t)).collect();
        for (text, packed) in texts.iter().zip(&packed) {
            assert_eq!(strings.unpack(packed).as_deref(), Some(text.as_str()));
        }
        let (first, last) = (&packed[0], &packed[99]);
        assert!(
            last.size() * 2 < texts[99].len(),
            "{} of {}",
            last.size(),
            texts[99].len()
        );
        assert!(
            first.size() > last.size(),
            "the first pod's values were seen once"
        );
        // Keys and repeated values, not the names and uids each pod has alone.
        let held = strings.len();
        assert!((20..40).contains(&held), "{held} strings held");
    }

    #[test]
    fn long_values_and_short_strings_stay_in_the_text() {
        let mut strings = Strings::default();
        let long = "x".repeat(LONGEST_VALUE + 1);
        let text = json!({"ab": "cd", "message": long}).to_string();
        for _ in 0..3 {
            let packed = strings.pack(&text);
            assert_eq!(strings.unpack(&packed).unwrap(), text);
        }
        assert_eq!(strings.len(), 1, "only the key `message`");
    }

    #[test]
    fn text_that_is_not_json_comes_back_unchanged() {
        let mut strings = Strings::default();
        for text in [
            "{\"ab\":\"unterminated",
            "\"abc\\",
            "\"abc\":\"é",
            "\"\"\"",
            "",
        ] {
            let packed = strings.pack(text);
            assert_eq!(strings.unpack(&packed).as_deref(), Some(text), "{text}");
        }
    }

    #[test]
    fn a_table_unpacks_only_what_it_packed() {
        let mut strings = Strings::default();
        let packed = strings.pack(&pod(1));
        assert_eq!(Strings::default().unpack(&packed), None);
    }

    proptest! {
        #[test]
        fn any_json_text_round_trips(v in any_json(), w in any_json()) {
            let mut strings = Strings::default();
            for value in [&v, &w, &v, &w] {
                let text = value.to_string();
                let packed = strings.pack(&text);
                prop_assert_eq!(strings.unpack(&packed), Some(text));
            }
        }
    }

    fn any_json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            "[a-z\"\\\\\u{1}\u{7f}é]{0,12}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map("[a-z\"é]{0,6}", inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }
}
