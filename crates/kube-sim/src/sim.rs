//! A running simulated cluster: store, registry, engine with every controller and the
//! kubelet, the scenario's timeline, and handles for clients.

use crate::clock::Clock;
use crate::engine::Engine;
use crate::engine::world::key_of;
use crate::logs::LogStore;
use crate::resources::Registry;
use crate::scenario::{Scenario, TokenSpec, timeline};
use crate::serve::{self, Listener, ServeError, ServeOptions, Served};
use crate::server::{self, ServerState};
use crate::store::{DeleteOptions, ObjectKey, Store, StoreError};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::task::JoinHandle;

/// A simulated cluster running on the current tokio runtime.
pub struct Sim {
    pub store: Arc<Store>,
    pub registry: Arc<Registry>,
    pub logs: Arc<LogStore>,
    pub scenario: Arc<Scenario>,
    /// The API server's state (request recorder included).
    pub server: Arc<ServerState>,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Sim {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl Sim {
    /// Start a cluster with timestamps from a fixed epoch (deterministic; for tests).
    pub fn start(scenario: Scenario) -> Sim {
        Self::start_with_clock(scenario, Clock::fixed())
    }

    /// Start a cluster; must be called within a tokio runtime.
    ///
    /// # Panics
    /// On a timeline kube-sim cannot replay literally (scenario files and
    /// [`ScenarioBuilder::build`](crate::scenario::ScenarioBuilder::build) refuse those
    /// already; this catches a [`Scenario`] assembled by hand).
    pub fn start_with_clock(scenario: Scenario, clock: Clock) -> Sim {
        if let Err(e) = scenario.check_timeline() {
            panic!("kube-sim scenario refused: {e}");
        }
        let store = Arc::new(Store::new(clock, scenario.watch_history));
        let registry = Arc::new(Registry::builtin());
        let logs = Arc::new(LogStore::default());
        let scenario = Arc::new(scenario);
        bootstrap(&store, &scenario);
        let mut engine = Engine::new(
            store.clone(),
            registry.clone(),
            scenario.clone(),
            logs.clone(),
        );
        for c in crate::controllers::all() {
            engine.add(c);
        }
        let mut tasks = vec![tokio::spawn(engine.run())];
        if !scenario.timeline.is_empty() {
            tasks.push(tokio::spawn(replay(
                store.clone(),
                registry.clone(),
                scenario.clone(),
            )));
        }
        let server = Arc::new(ServerState::new(
            store.clone(),
            registry.clone(),
            scenario.clone(),
            logs.clone(),
        ));
        // Timed as each change commits, so a client can never see a change before its
        // milestone is set, and a burst of changes cannot make the milestones skip any. A
        // weak reference: the server holds the store, which holds this observer.
        let weak = Arc::downgrade(&server);
        store.observe_commits(move |change| {
            if let Some(server) = weak.upgrade() {
                server.milestones.observe_now(change);
            }
        });
        Sim {
            store,
            registry,
            logs,
            scenario,
            server,
            tasks,
        }
    }

    /// Wait until nothing has been written for `quiet` (the controllers have settled, e.g.
    /// after bootstrap), so a test can compare resourceVersions before and after a client.
    pub async fn settle(&self, quiet: std::time::Duration) {
        let mut last = self.store.current_rv();
        loop {
            tokio::time::sleep(quiet).await;
            let now = self.store.current_rv();
            if now == last {
                return;
            }
            last = now;
        }
    }

    /// A kube client talking to this cluster in-process (works under a paused clock). With
    /// authentication on it is the loopback superuser, in `system:masters`.
    pub fn client(&self) -> kube::Client {
        server::in_process_client(self.server.clone())
    }

    /// An in-process kube client authenticating with a bearer token: whoever the token
    /// names, subject to RBAC, or refused with 401.
    pub fn client_with_token(&self, token: &str) -> kube::Client {
        server::in_process_client_with_token(self.server.clone(), token)
    }

    /// Accept another bearer token from the next request on (authentication must be on:
    /// the scenario lists a token or turns RBAC on).
    pub fn add_token(&self, token: &TokenSpec) {
        self.server.authn.add(token);
    }

    /// Refuse a static token from the next request on (401); whether it was accepted.
    pub fn revoke_token(&self, token: &str) -> bool {
        self.server.authn.revoke(token)
    }

    /// Serve the API on `addr` (e.g. `127.0.0.1:0`) over plain HTTP; returns the bound
    /// address.
    ///
    /// # Errors
    /// When the address cannot be bound.
    pub async fn serve(&mut self, addr: &str) -> std::io::Result<std::net::SocketAddr> {
        match self.serve_with(ServeOptions::new(addr)).await {
            Ok(served) => Ok(served.addr),
            Err(ServeError::Listen { source, .. }) => Err(source),
            Err(e) => Err(std::io::Error::other(e)),
        }
    }

    /// Serve the API as `options` say (HTTPS with `.tls()`); the address, URL, CA and a
    /// kubeconfig to start from.
    ///
    /// # Errors
    /// When the address cannot be bound or the certificates cannot be made.
    pub async fn serve_with(&mut self, options: ServeOptions) -> Result<Served, ServeError> {
        let (listener, served) = serve::bind(&options).await?;
        let router = server::router(self.server.clone());
        self.tasks.push(tokio::spawn(async move {
            let result = match listener {
                Listener::Plain(l) => axum::serve(l, router).await,
                Listener::Tls(l) => axum::serve(l, router).await,
            };
            if let Err(e) = result {
                tracing::error!("kube-sim server stopped: {e}");
            }
        }));
        Ok(served)
    }

    /// The store key of an object.
    pub fn key_of(&self, object: &Value) -> Option<ObjectKey> {
        key_of(&self.registry, object)
    }

    /// Create an object as a client would (defaulted by the API server's rules).
    pub fn create(&self, mut object: Value) -> Result<Arc<Value>, StoreError> {
        let key = self
            .key_of(&object)
            .ok_or_else(|| StoreError::NotFound("kind of the object".into()))?;
        crate::defaults::default_object(&mut object);
        self.store.create(&key, object)
    }

    /// Delete an object as a client would (a RoleBinding's grant ends with it); the object
    /// as deleted (or marked, when finalizers hold it).
    pub fn delete(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Arc<Value>, StoreError> {
        let key = self
            .key_of(&json!({"apiVersion": api_version, "kind": kind,
                "metadata": {"name": name, "namespace": namespace}}))
            .ok_or_else(|| StoreError::NotFound(format!("kind {kind} of {api_version}")))?;
        self.store.delete(&key, DeleteOptions::default())
    }

    /// Get an object by apiVersion, kind, namespace and name.
    pub fn get(&self, api_version: &str, kind: &str, namespace: &str, name: &str) -> Option<Value> {
        let key = self.key_of(&json!({"apiVersion": api_version, "kind": kind,
            "metadata": {"name": name, "namespace": namespace}}))?;
        self.store.get(&key).map(|v| (*v).clone())
    }
}

/// Namespaces, nodes and a default StorageClass, as a fresh cluster has them.
fn bootstrap(store: &Store, scenario: &Scenario) {
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let _ = store.create(
            &ObjectKey::new("", "namespaces", "", ns),
            json!({"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}},
                   "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}),
        );
    }
    for node in &scenario.nodes {
        let mut labels = json!({"kubernetes.io/hostname": node.name, "kubernetes.io/os": "linux",
                                "kubernetes.io/arch": "amd64"});
        for (k, v) in &node.labels {
            labels[k] = json!(v);
        }
        let _ = store.create(
            &ObjectKey::new("", "nodes", "", &node.name),
            json!({"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": node.name, "labels": labels},
                   "spec": {"unschedulable": node.unschedulable},
                   "status": {
                       "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                       "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "kubelet is posting ready status"}],
                       "nodeInfo": {"kubeletVersion": format!("v{}.0", scenario.kubernetes_version),
                                    "containerRuntimeVersion": "containerd://1.7.24"}}}),
        );
    }
    let _ = store.create(
        &ObjectKey::new("storage.k8s.io", "storageclasses", "", "standard"),
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
               "metadata": {"name": "standard",
                            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
               "provisioner": "kube-sim.io/local", "reclaimPolicy": "Delete",
               "volumeBindingMode": "Immediate"}),
    );
    if scenario.auth.rbac {
        server::rbac::bootstrap_roles(store);
    }
}

/// Apply the timeline's literal objects at their offsets and freeze them. The scenario was
/// checked when it was loaded, so every object has a served kind; a CRD whose status says
/// Established=True is served from the moment it is stored (CRDs first within an entry).
async fn replay(store: Arc<Store>, registry: Arc<Registry>, scenario: Arc<Scenario>) {
    let start = store.clock().start();
    for step in &scenario.timeline {
        tokio::time::sleep_until(start + step.at).await;
        for object in timeline::replay_order(step) {
            let key = key_of(&registry, object)
                .unwrap_or_else(|| panic!("timeline object of unchecked kind: {object}"));
            store.freeze(&key);
            if timeline::is_established_crd(object) {
                registry.add_crd(object);
            }
            store.replay(&key, object.clone());
        }
        for r in &step.delete {
            let obj = json!({"apiVersion": r.api_version, "kind": r.kind,
                "metadata": {"name": r.name, "namespace": r.namespace}});
            if let Some(key) = key_of(&registry, &obj)
                && let Some(last) = store.remove_now(&key)
                && timeline::is_established_crd(&last)
            {
                registry.remove_crd(&last);
            }
        }
    }
}
