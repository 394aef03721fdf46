//! What the watches deliver, fed into the snapshot: objects added, changed and deleted,
//! each scope's complete lists (which drop what a relist no longer shows), and the
//! failures of lists and watches, counted, so a rule waiting on them can say why.

use crate::cluster::watch::Seen;
use crate::rules::object_key::KeySet;
use crate::rules::{ObjectKey, Prepared, Snapshot};
use crate::vocab::events::{Observer, RunEvent};
use futures::{Stream, StreamExt};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Duration;
use tokio::time::Instant;

/// How long the loop keeps gathering watch events after the first of a batch before it
/// judges: short against the verdict's latency, long enough that a burst of changes (a
/// Deployment's pods becoming ready together) is judged once instead of once per event.
const BATCH_WINDOW: Duration = Duration::from_millis(20);

/// How often each watch scope's list or watch failed, and the last error.
pub type Troubles = HashMap<usize, (usize, String)>;

/// What the loop knows of its watch scopes besides the objects.
#[derive(Debug, Default)]
pub struct Feed {
    /// The objects each watch scope holds (listed, or added since), to drop what a relist
    /// no longer shows. Events filed under their object are not members (see
    /// [`Snapshot::holds`]): a relist leaves those as they are.
    members: HashMap<usize, KeySet>,
    /// The objects of the lists underway, by scope.
    listing: HashMap<usize, KeySet>,
    /// Scopes whose first complete list has arrived (or that may be done without).
    pub listed: HashSet<usize>,
    pub troubles: Troubles,
    /// Scopes whose watch has failed since their last complete list, and since when (time
    /// since the run started): what the snapshot holds of them may be stale.
    pub blind: HashMap<usize, Duration>,
    /// Scopes listed or failed since [`Feed::take_changed`]: a relist can end a scope's
    /// blindness, and a failure begin it, without changing any object.
    changed: BTreeSet<usize>,
    /// Evidence the rules can do without (Events, Nodes): a refusal counts as listed and
    /// empty, so the rules judge more strictly, never more leniently.
    optional: HashSet<usize>,
    /// CustomResourceDefinition scopes: refused, custom resources are judged without their
    /// CRDs (the snapshot is told, and says what that leaves unchecked).
    crds: HashSet<usize>,
    /// Scopes the deployer may not list (403), with the refusal: waiting will not bring them.
    pub forbidden: HashMap<usize, String>,
}

impl Feed {
    pub fn new(optional: HashSet<usize>, crds: HashSet<usize>) -> Feed {
        Feed {
            optional,
            crds,
            ..Feed::default()
        }
    }

    /// The scopes whose lists arrived or whose lists or watches failed since the last
    /// call: what a rule reading them may say has changed, though no object may have.
    pub fn take_changed(&mut self) -> BTreeSet<usize> {
        std::mem::take(&mut self.changed)
    }

    /// Whether `scope`'s view is stale now: its watch failed after its last complete list.
    /// Optional evidence (Events, Nodes) never makes a resource wait.
    pub fn blind_since(&self, scope: usize) -> Option<Duration> {
        self.blind
            .get(&scope)
            .copied()
            .filter(|_| !self.optional.contains(&scope))
    }

    /// Apply `first` and what else `events` bring within the batch window, so that a
    /// rollout's burst of changes is judged once. `false` when the watches have ended.
    pub async fn batch(
        &mut self,
        snapshot: &mut Snapshot,
        first: Seen<Prepared>,
        events: &mut (impl Stream<Item = Seen<Prepared>> + Unpin),
        observer: &mut dyn Observer,
        start: Instant,
    ) -> bool {
        self.observe(snapshot, first, observer, start.elapsed());
        let until = Instant::now() + BATCH_WINDOW;
        loop {
            match tokio::time::timeout_at(until, events.next()).await {
                Ok(Some(more)) => self.observe(snapshot, more, observer, start.elapsed()),
                Ok(None) => return false,
                Err(_) => return true,
            }
        }
    }

    /// Ends the list of `scope` underway, if any, without completing it: what it showed is
    /// kept, as members, for the next complete list to keep or remove.
    fn abandon(&mut self, scope: usize) {
        if let Some(shown) = self.listing.remove(&scope) {
            self.members.entry(scope).or_default().extend(shown);
        }
    }

    /// Apply one watch observation to the snapshot.
    fn observe(
        &mut self,
        snapshot: &mut Snapshot,
        seen: Seen<Prepared>,
        observer: &mut dyn Observer,
        at: Duration,
    ) {
        match seen {
            // Every object kept is a member of its scope, so that a relist that no longer
            // shows it (deleted while the watch was down) removes it.
            Seen::Upsert { scope, object } => {
                let key = snapshot.insert(object);
                if snapshot.holds(&key) {
                    self.members.entry(scope).or_default().insert(key);
                }
            }
            Seen::Delete { scope, object } => {
                if let Some(key) = ObjectKey::of(&object) {
                    if let Some(members) = self.members.get_mut(&scope) {
                        members.remove(&key);
                    }
                    snapshot.remove_key(key);
                }
            }
            Seen::ListBegun { scope } => {
                self.abandon(scope);
                self.listing.insert(scope, KeySet::default());
            }
            // Kept as it comes (the members keep the snapshot's shared keys). Until the list
            // is done, the scope is not yet listed or still blind, so no rule reads a list
            // half way as the whole.
            Seen::Listed { scope, object } => {
                let key = snapshot.insert(object);
                if snapshot.holds(&key) {
                    self.listing.entry(scope).or_default().insert(key);
                }
            }
            Seen::ListDone { scope } => {
                // What the relist no longer shows is removed once it is complete.
                let fresh = self.listing.remove(&scope).unwrap_or_default();
                if let Some(old) = self.members.get(&scope) {
                    for key in old.difference(&fresh) {
                        snapshot.remove_key(key.clone());
                    }
                }
                self.members.insert(scope, fresh);
                self.listed.insert(scope);
                self.blind.remove(&scope);
                self.changed.insert(scope);
            }
            Seen::Trouble {
                scope,
                message,
                forbidden,
            } => {
                self.abandon(scope);
                // Optional evidence refused is evidence absent; CRDs refused leave custom
                // resources to be judged without them; anything else refused fails the
                // resources that need it.
                if forbidden && self.optional.contains(&scope) {
                    self.listed.insert(scope);
                } else if forbidden && self.crds.contains(&scope) {
                    self.listed.insert(scope);
                    snapshot.set_crds_unreadable();
                } else {
                    if forbidden {
                        self.forbidden.insert(scope, message.clone());
                    }
                    self.blind.entry(scope).or_insert(at);
                }
                self.changed.insert(scope);
                let seen = self.troubles.entry(scope).or_insert((0, String::new()));
                seen.0 += 1;
                seen.1.clone_from(&message);
                observer.event(at, RunEvent::WatchTrouble(message));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::watch::listing;
    use crate::rules::fixtures;
    use crate::vocab::events::Recorder;
    use serde_json::json;

    fn pod(name: &str) -> Prepared {
        let status = json!({"phase": "Running"});
        Prepared::of(fixtures::pod(name, None, &json!({"app": "web"}), &status)).unwrap()
    }

    fn key(name: &str) -> ObjectKey {
        ObjectKey::of(&fixtures::pod(name, None, &json!({}), &json!({}))).unwrap()
    }

    /// A list of scope 0 begun, showing the pods `names`, and not (yet) done.
    fn begun(names: &[&str]) -> Vec<Seen<Prepared>> {
        let shown = names.iter().map(|n| Seen::Listed {
            scope: 0,
            object: pod(n),
        });
        std::iter::once(Seen::ListBegun { scope: 0 })
            .chain(shown)
            .collect()
    }

    /// A complete list of scope 0 showing the pods `names`.
    fn listed(names: &[&str]) -> Vec<Seen<Prepared>> {
        listing(0, names.iter().map(|n| pod(n)).collect()).collect()
    }

    fn trouble() -> Seen<Prepared> {
        Seen::Trouble {
            scope: 0,
            message: "watch failed: connection reset".to_owned(),
            forbidden: false,
        }
    }

    /// Feeds `seen` in order; the run's clock stands at `at` seconds.
    fn feed_all(feed: &mut Feed, snapshot: &mut Snapshot, seen: Vec<Seen<Prepared>>, at: u64) {
        let mut recorder = Recorder::default();
        for s in seen {
            feed.observe(snapshot, s, &mut recorder, Duration::from_secs(at));
        }
    }

    /// Which of the pods `names` the snapshot keeps.
    fn kept<'a>(snapshot: &Snapshot, names: &[&'a str]) -> Vec<&'a str> {
        let names = names.iter().copied();
        names
            .filter(|n| snapshot.get_raw(&key(n)).is_some())
            .collect()
    }

    #[test]
    fn a_list_counts_once_it_is_done_and_drops_only_then_what_it_no_longer_shows() {
        let (mut feed, mut snapshot) = (Feed::default(), Snapshot::new());
        feed_all(&mut feed, &mut snapshot, listed(&["a", "b"]), 1);
        assert!(feed.listed.contains(&0));
        assert_eq!(feed.take_changed(), BTreeSet::from([0]));

        // The watch fails, and the relist that follows is half way: `b` is still kept and
        // the scope is blind, so nothing reads the half list as the whole.
        let half = std::iter::once(trouble()).chain(begun(&["a"])).collect();
        feed_all(&mut feed, &mut snapshot, half, 5);
        assert_eq!(kept(&snapshot, &["a", "b"]), ["a", "b"]);
        assert_eq!(feed.blind_since(0), Some(Duration::from_secs(5)));

        feed_all(
            &mut feed,
            &mut snapshot,
            vec![Seen::ListDone { scope: 0 }],
            6,
        );
        assert_eq!(kept(&snapshot, &["a", "b"]), ["a"]);
        assert_eq!(feed.blind_since(0), None);
    }

    #[test]
    fn a_list_cut_short_is_forgotten_when_the_next_one_completes() {
        let (mut feed, mut snapshot) = (Feed::default(), Snapshot::new());
        feed_all(&mut feed, &mut snapshot, listed(&["a", "b", "c"]), 1);
        // A list that fails after showing `c`, then a complete one showing only `a`: what
        // the failed list showed does not count for the complete one.
        let mut seen = begun(&["c"]);
        seen.push(trouble());
        seen.extend(listed(&["a"]));
        feed_all(&mut feed, &mut snapshot, seen, 3);
        assert_eq!(kept(&snapshot, &["a", "b", "c"]), ["a"]);

        // A list begun again without a failure between (the watcher relisting by itself)
        // starts from nothing too.
        let mut seen = begun(&["b"]);
        seen.extend(listed(&["a"]));
        feed_all(&mut feed, &mut snapshot, seen, 4);
        assert_eq!(kept(&snapshot, &["a", "b"]), ["a"]);
    }

    #[test]
    fn an_object_added_after_the_list_and_deleted_unseen_leaves_at_the_relist() {
        let (mut feed, mut snapshot) = (Feed::default(), Snapshot::new());
        feed_all(&mut feed, &mut snapshot, listed(&["a"]), 1);
        // `b` is created after the list; the watch goes down, `b` is deleted meanwhile, and
        // the relist does not show it: it must not stay behind as a ghost of itself.
        let added = Seen::Upsert {
            scope: 0,
            object: pod("b"),
        };
        let mut seen = vec![added, trouble()];
        seen.extend(listed(&["a"]));
        feed_all(&mut feed, &mut snapshot, seen, 3);
        assert_eq!(kept(&snapshot, &["a", "b"]), ["a"]);
        assert!(snapshot.was_deleted(&key("b")));
    }
}
