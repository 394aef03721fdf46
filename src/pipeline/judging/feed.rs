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
    /// The objects each watch scope last listed, to drop what a relist no longer shows.
    members: HashMap<usize, KeySet>,
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

    /// Apply one watch observation to the snapshot.
    fn observe(
        &mut self,
        snapshot: &mut Snapshot,
        seen: Seen<Prepared>,
        observer: &mut dyn Observer,
        at: Duration,
    ) {
        match seen {
            Seen::Upsert(prepared) => {
                snapshot.insert(prepared);
            }
            Seen::Delete(v) => {
                if let Some(key) = ObjectKey::of(&v) {
                    snapshot.remove_key(key);
                }
            }
            Seen::Relisted { scope, objects } => {
                // Inserted first so that the members keep the snapshot's shared keys; what
                // the relist no longer shows is removed after, which comes to the same.
                let fresh: KeySet = objects.into_iter().map(|p| snapshot.insert(p)).collect();
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
