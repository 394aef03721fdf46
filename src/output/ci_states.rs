//! Which resource states a CI log prints, where nothing is redrawn and every line stays: a
//! state once it has held for [`HOLD`] (the second after an apply is a blur of "pod is
//! Pending" that one line per change would spell out), and only when it says more than
//! the state printed before it (a clock that moved, "over 11s" after "over 1s", is not news).

use crate::shrink::shrink_as_emptied;
use crate::vocab::outcome::ResourceId;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// How long a state must hold before a CI log prints it.
pub const HOLD: Duration = Duration::from_secs(1);

/// The states seen and not yet printed, and what was printed last, per resource.
#[derive(Debug, Default)]
pub struct CiStates {
    /// The newest state of each resource, and since when, while it waits out [`HOLD`].
    held: HashMap<ResourceId, Held>,
    /// The held states by when they began (and a count, so that two which began together
    /// stay apart), earliest first: [`CiStates::due`] takes the ones that have held from
    /// the front and never looks at the rest (a deploy of thousands holds thousands).
    by_since: BTreeMap<(Duration, u64), ResourceId>,
    /// How many states have been held so far: the next one's place among equals.
    count: u64,
    /// The last state printed for each resource, its times blanked out.
    printed: HashMap<ResourceId, String>,
}

/// A state waiting out [`HOLD`]: its newest words, since when it holds (and its place in
/// [`CiStates::by_since`]), and its words without times (what it is compared by, worked
/// out once).
#[derive(Debug)]
struct Held {
    words: String,
    since: (Duration, u64),
    timeless: String,
}

impl CiStates {
    /// `id` is in `state` from `at` on.
    pub fn seen(&mut self, id: &ResourceId, state: &str, at: Duration) {
        let timeless = without_times(state);
        if self.printed.get(id) == Some(&timeless) {
            self.forget(id);
            return;
        }
        match self.held.get_mut(id) {
            Some(held) if held.timeless == timeless => {
                // The same state with a newer clock: print the newest words, held since
                // the state began.
                state.clone_into(&mut held.words);
            }
            _ => {
                self.forget(id);
                self.count += 1;
                let since = (at, self.count);
                self.by_since.insert(since, id.clone());
                let held = Held {
                    words: state.to_owned(),
                    since,
                    timeless,
                };
                self.held.insert(id.clone(), held);
            }
        }
    }

    /// The states that have held for [`HOLD`] by `at`, in resource order: to print now.
    pub fn due(&mut self, at: Duration) -> Vec<(ResourceId, String)> {
        let mut ready = Vec::new();
        while let Some(first) = self.by_since.first_entry() {
            if at.saturating_sub(first.key().0) < HOLD {
                break;
            }
            let id = first.remove();
            if let Some(held) = self.held.remove(&id) {
                self.printed.insert(id.clone(), held.timeless);
                ready.push((id, held.words));
            }
        }
        ready.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
        ready
    }

    /// `id` has its verdict: the verdict line says where it ended.
    pub fn decided(&mut self, id: &ResourceId) {
        self.forget(id);
        self.printed.remove(id);
        shrink_as_emptied(&mut self.held);
        shrink_as_emptied(&mut self.printed);
    }

    /// Drops what is held for `id`, if anything.
    fn forget(&mut self, id: &ResourceId) {
        if let Some(held) = self.held.remove(id) {
            self.by_since.remove(&held.since);
        }
    }
}

/// `state` with every duration (`11s`, `1m05s`, `0.5s`, `300ms`) replaced by `#`, and a
/// span (` over 11s`) dropped whole: it is written only once it is longer than nothing.
fn without_times(state: &str) -> String {
    let mut out = String::with_capacity(state.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if is_duration(word) {
            out.push('#');
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in state.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out.replace(" over #", "")
}

/// Whether `word` is a duration as deploy-action and Kubernetes write them: numbers, each
/// followed by a unit (`h`, `m`, `s`, `ms`), a trailing `.` (end of a sentence) allowed.
fn is_duration(word: &str) -> bool {
    let word = word.strip_suffix('.').unwrap_or(word);
    let mut rest = word;
    let mut parts = 0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 || !rest[..digits].starts_with(|c: char| c.is_ascii_digit()) {
            return false;
        }
        rest = &rest[digits..];
        let unit = ["ms", "h", "m", "s"]
            .into_iter()
            .find(|u| rest.starts_with(u));
        match unit {
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
        parts += 1;
    }
    parts > 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixtures;

    fn web() -> ResourceId {
        fixtures::id("apps/v1", "Deployment", Some("shop"), "web")
    }

    fn api() -> ResourceId {
        fixtures::id("apps/v1", "Deployment", Some("shop"), "api")
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn decided_resources_give_back_their_room() {
        let mut ci = CiStates::default();
        let ids: Vec<ResourceId> = (0..1_000)
            .map(|i| fixtures::id("apps/v1", "Deployment", Some("shop"), &format!("web-{i}")))
            .collect();
        for id in &ids {
            ci.seen(id, "0/4 replicas available", secs(0.0));
        }
        assert_eq!(ci.due(secs(1.0)).len(), 1_000);
        for id in &ids[..995] {
            ci.seen(id, "2/4 replicas available", secs(1.5));
            ci.decided(id);
        }
        assert_eq!((ci.held.len(), ci.printed.len()), (0, 5));
        assert!(
            ci.printed.capacity() < 64,
            "{} slots",
            ci.printed.capacity()
        );
        assert!(ci.held.capacity() < 64, "{} slots", ci.held.capacity());
        // The five left still print a new state, and only that.
        ci.seen(&ids[999], "3/4 replicas available", secs(2.0));
        assert_eq!(
            ci.due(secs(3.0)),
            [(ids[999].clone(), "3/4 replicas available".to_owned())]
        );
    }

    #[test]
    fn durations_are_blanked_and_counts_are_kept() {
        assert_eq!(
            without_times(
                "still pulling after 2 failed attempts over 11s; ran 1m05s, 0.5s, 300ms."
            ),
            "still pulling after 2 failed attempts; ran #, #, #"
        );
        assert_eq!(
            without_times("2/3 replicas updated, 1 available; watching 10s for restarts"),
            "2/3 replicas updated, 1 available; watching # for restarts"
        );
        // Words that only look like units stay.
        assert_eq!(without_times("v2s 10x 5 ms m3"), "v2s 10x 5 ms m3");
    }

    #[test]
    fn a_state_replaced_within_a_second_is_never_printed() {
        let mut ci = CiStates::default();
        ci.seen(&web(), "waiting for the deployment controller", secs(0.3));
        ci.seen(&web(), "0/2 replicas updated, 0 available", secs(0.4));
        assert_eq!(ci.due(secs(0.9)), []);
        ci.seen(
            &web(),
            "0/2 replicas updated, 0 available; 2 of 2 new pods starting: pod is Pending",
            secs(0.5),
        );
        ci.seen(
            &web(),
            "2/2 replicas updated, 0 available; pulling",
            secs(0.8),
        );
        assert_eq!(ci.due(secs(1.7)), []);
        assert_eq!(
            ci.due(secs(1.8)),
            [(
                web(),
                "2/2 replicas updated, 0 available; pulling".to_owned()
            )]
        );
        // Printed once.
        assert_eq!(ci.due(secs(5.0)), []);
    }

    #[test]
    fn every_held_state_is_printed_once_it_has_held_whatever_came_and_went_before() {
        let mut ci = CiStates::default();
        ci.seen(&web(), "0/2 replicas updated", secs(0.0));
        ci.seen(&api(), "0/1 replicas updated", secs(0.6));
        // The earliest goes before it is due: the later one is still printed on time.
        ci.decided(&web());
        assert_eq!(ci.due(secs(1.5)), []);
        assert_eq!(
            ci.due(secs(1.6)),
            [(api(), "0/1 replicas updated".to_owned())]
        );
        // Seen after a look found nothing due.
        ci.seen(&web(), "1/2 replicas updated", secs(2.0));
        assert_eq!(ci.due(secs(2.9)), []);
        ci.seen(&api(), "1/1 replicas updated", secs(2.5));
        assert_eq!(
            ci.due(secs(3.0)),
            [(web(), "1/2 replicas updated".to_owned())]
        );
        assert_eq!(ci.due(secs(3.4)), []);
        assert_eq!(
            ci.due(secs(3.5)),
            [(api(), "1/1 replicas updated".to_owned())]
        );
    }

    #[test]
    fn a_moving_clock_is_not_a_new_state() {
        let mut ci = CiStates::default();
        ci.seen(&web(), "still pulling after 1 failed attempt", secs(1.0));
        assert_eq!(ci.due(secs(2.0)).len(), 1);
        ci.seen(
            &web(),
            "still pulling after 1 failed attempt over 9s",
            secs(9.0),
        );
        assert_eq!(ci.due(secs(20.0)), []);
        // A new attempt is news.
        ci.seen(
            &web(),
            "still pulling after 2 failed attempts over 10s",
            secs(10.0),
        );
        ci.seen(
            &web(),
            "still pulling after 2 failed attempts over 11s",
            secs(11.0),
        );
        assert_eq!(
            ci.due(secs(11.0)),
            [(
                web(),
                "still pulling after 2 failed attempts over 11s".to_owned()
            )],
            "held since 10 s, printed in its newest words"
        );
    }

    #[test]
    fn a_verdict_drops_what_was_held_and_resources_come_in_order() {
        let mut ci = CiStates::default();
        ci.seen(&web(), "0/2 replicas updated", secs(0.0));
        ci.seen(&api(), "0/1 replicas updated", secs(0.5));
        ci.decided(&web());
        assert_eq!(
            ci.due(secs(3.0)),
            [(api(), "0/1 replicas updated".to_owned())]
        );
        // A change, then back to the state printed last before either held: nothing new.
        ci.seen(&api(), "1/1 replicas updated", secs(3.0));
        ci.seen(&api(), "0/1 replicas updated", secs(3.5));
        assert_eq!(ci.due(secs(4.0)), []);
        ci.seen(&web(), "0/2 replicas updated", secs(4.0));
        assert_eq!(
            ci.due(secs(5.0)),
            [(web(), "0/2 replicas updated".to_owned())]
        );
    }

    #[test]
    fn states_that_began_together_are_printed_together_in_resource_order() {
        let mut ci = CiStates::default();
        ci.seen(&web(), "0/2 replicas updated", secs(0.2));
        ci.seen(&api(), "0/1 replicas updated", secs(0.2));
        assert_eq!(
            ci.due(secs(1.2)),
            [
                (api(), "0/1 replicas updated".to_owned()),
                (web(), "0/2 replicas updated".to_owned())
            ]
        );
        ci.seen(&web(), "1/2 replicas updated", secs(1.3));
        ci.seen(&api(), "1/1 replicas updated", secs(1.4));
        // Replaced before it held: its hold begins again.
        ci.seen(&web(), "2/2 replicas updated", secs(1.6));
        assert_eq!(
            ci.due(secs(2.4)),
            [(api(), "1/1 replicas updated".to_owned())]
        );
        assert_eq!(
            ci.due(secs(2.6)),
            [(web(), "2/2 replicas updated".to_owned())]
        );
        assert_eq!(ci.due(secs(9.0)), []);
    }
}
