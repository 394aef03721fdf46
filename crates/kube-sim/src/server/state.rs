//! Everything a request handler needs, shared by every request.

use super::authn::Authenticator;
use super::faults::FaultInjector;
use super::milestones::Milestones;
use super::outage::Outage;
use super::recorder::RequestRecorder;
use crate::logs::LogStore;
use crate::resources::Registry;
use crate::scenario::Scenario;
use crate::store::Store;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;

/// Shared state of the simulated API server.
pub struct ServerState {
    pub store: Arc<Store>,
    pub registry: Arc<Registry>,
    pub scenario: Arc<Scenario>,
    pub logs: Arc<LogStore>,
    pub faults: FaultInjector,
    /// Bearer tokens (static and from files); off unless the scenario lists some.
    pub authn: Authenticator,
    /// Whether RBAC authorizes each request (the scenario's `auth.rbac`).
    pub rbac: bool,
    pub recorder: RequestRecorder,
    /// Moments a benchmark times a tool's verdict against (`/debug/milestones`).
    pub milestones: Milestones,
    /// An outage a test started: watches cut, requests refused until it ends.
    pub outage: Outage,
    /// The collections paged lists underway were cut from, for their continue tokens.
    pub(crate) pages: super::pages::Pages,
    /// Next ClusterIP to hand out.
    pub(crate) cluster_ips: AtomicU32,
    /// Counter behind generated names (`generateName`).
    pub(crate) names: AtomicU32,
}

impl ServerState {
    pub fn new(
        store: Arc<Store>,
        registry: Arc<Registry>,
        scenario: Arc<Scenario>,
        logs: Arc<LogStore>,
    ) -> Self {
        let faults = FaultInjector::new(&scenario.faults);
        let authn = Authenticator::new(&scenario.auth, store.clock().clone());
        let rbac = scenario.auth.rbac;
        ServerState {
            authn,
            rbac,
            store,
            registry,
            scenario,
            logs,
            faults,
            recorder: RequestRecorder::default(),
            milestones: Milestones::default(),
            outage: Outage::default(),
            pages: super::pages::Pages::default(),
            cluster_ips: AtomicU32::new(10),
            names: AtomicU32::new(0),
        }
    }
}
