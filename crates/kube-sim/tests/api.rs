//! The API server as kube-rs sees it: CRUD, selectors, watch semantics.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube_sim::{Scenario, Sim};
use serde_json::json;

fn cm(name: &str, app: &str) -> ConfigMap {
    serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": app}}, "data": {"k": "v"}}))
    .unwrap()
}

#[tokio::test(start_paused = true)]
async fn crud_and_label_selected_lists_round_trip_through_kube_rs() {
    let sim = Sim::start(Scenario::default());
    let api: Api<ConfigMap> = Api::namespaced(sim.client(), "default");
    let created = api
        .create(&PostParams::default(), &cm("a", "web"))
        .await
        .unwrap();
    assert!(created.metadata.uid.is_some());
    assert!(created.metadata.resource_version.is_some());
    api.create(&PostParams::default(), &cm("b", "api"))
        .await
        .unwrap();
    let err = api
        .create(&PostParams::default(), &cm("a", "web"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 409 && s.reason == "AlreadyExists"),
        "{err:?}"
    );

    let web = api
        .list(&ListParams::default().labels("app=web"))
        .await
        .unwrap();
    assert_eq!(
        web.items
            .iter()
            .map(|c| c.metadata.name.clone().unwrap())
            .collect::<Vec<_>>(),
        ["a"]
    );
    let page = api.list(&ListParams::default().limit(1)).await.unwrap();
    assert_eq!(page.items.len(), 1);
    let rest = api
        .list(
            &ListParams::default()
                .limit(1)
                .continue_token(page.metadata.continue_.as_deref().unwrap()),
        )
        .await
        .unwrap();
    assert_eq!(rest.items[0].metadata.name.as_deref(), Some("b"));

    api.delete("a", &DeleteParams::default()).await.unwrap();
    let err = api.get("a").await.unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 404),
        "{err:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_delete_with_a_uid_precondition_only_deletes_that_object() {
    let sim = Sim::start(Scenario::default());
    let api: Api<ConfigMap> = Api::namespaced(sim.client(), "default");
    let live = api
        .create(&PostParams::default(), &cm("a", "web"))
        .await
        .unwrap();
    let mut stale = DeleteParams::background();
    stale.preconditions = Some(kube::api::Preconditions {
        uid: Some("not-its-uid".into()),
        resource_version: None,
    });
    let err = api.delete("a", &stale).await.unwrap_err();
    let uid = live.metadata.uid.clone().unwrap();
    let expected = format!(
        "Operation cannot be fulfilled on configmaps \"a\": Precondition failed: UID in precondition: not-its-uid, UID in object meta: {uid}"
    );
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 409 && s.reason == "Conflict" && s.message == expected),
        "{err:?}"
    );
    assert!(api.get_opt("a").await.unwrap().is_some());
    let mut current = DeleteParams::background();
    current.preconditions = Some(kube::api::Preconditions {
        uid: live.metadata.uid.clone(),
        resource_version: None,
    });
    api.delete("a", &current).await.unwrap();
    assert!(api.get_opt("a").await.unwrap().is_none());
}

#[tokio::test(start_paused = true)]
async fn a_watch_with_a_selector_sees_deleted_when_an_object_stops_matching() {
    let sim = Sim::start(Scenario::default());
    let api: Api<ConfigMap> = Api::namespaced(sim.client(), "default");
    let created = api
        .create(&PostParams::default(), &cm("a", "web"))
        .await
        .unwrap();
    let rv = created.metadata.resource_version.clone().unwrap();
    let mut stream = api
        .watch(&WatchParams::default().labels("app=web").timeout(10), &rv)
        .await
        .unwrap()
        .boxed();
    let relabel = json!({"metadata": {"labels": {"app": "other"}}});
    api.patch("a", &PatchParams::default(), &Patch::Merge(&relabel))
        .await
        .unwrap();
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Deleted(obj)) => {
            assert_ne!(obj.metadata.resource_version.as_deref(), Some(rv.as_str()));
        }
        other => panic!("expected DELETED, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_watch_from_a_compacted_version_gets_410_in_stream() {
    let sim = Sim::start(Scenario::builder().watch_history(2).build());
    let api: Api<ConfigMap> = Api::namespaced(sim.client(), "default");
    let first = api
        .create(&PostParams::default(), &cm("a", "web"))
        .await
        .unwrap();
    for n in ["b", "c", "d"] {
        api.create(&PostParams::default(), &cm(n, "web"))
            .await
            .unwrap();
    }
    let rv = first.metadata.resource_version.unwrap();
    let mut stream = api
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Error(e)) => assert_eq!((e.code, e.reason.as_str()), (410, "Expired")),
        other => panic!("expected an in-stream 410, got {other:?}"),
    }
}

/// Creates a ConfigMap of label `app=web` for each of `names`.
async fn create_all(api: &Api<ConfigMap>, names: &[&str]) {
    for n in names {
        api.create(&PostParams::default(), &cm(n, "web"))
            .await
            .unwrap();
    }
}

/// The names and `data.k` of a page's ConfigMaps.
fn names_and_data(list: &kube::core::ObjectList<ConfigMap>) -> Vec<(String, String)> {
    list.items
        .iter()
        .map(|c| {
            let data = c.data.as_ref().and_then(|d| d.get("k")).cloned();
            (c.metadata.name.clone().unwrap(), data.unwrap_or_default())
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn every_page_of_a_list_is_served_at_the_first_pages_version_and_a_watch_from_it_misses_nothing()
 {
    // An informer lists in pages and watches from the list's resourceVersion: a change
    // between two pages must be in neither the later page nor lost, but in the watch.
    let sim = Sim::start(Scenario::default());
    let api: Api<ConfigMap> = Api::namespaced(sim.client(), "default");
    create_all(&api, &["a", "b", "c"]).await;
    let first = api.list(&ListParams::default().limit(1)).await.unwrap();
    let rv = first.metadata.resource_version.clone().unwrap();
    assert_eq!(names_and_data(&first), [("a".into(), "v".into())]);

    // Between the pages: one on a later page changes, one goes, one comes.
    let changed = json!({"data": {"k": "changed"}});
    api.patch("b", &PatchParams::default(), &Patch::Merge(&changed))
        .await
        .unwrap();
    api.delete("c", &DeleteParams::default()).await.unwrap();
    api.create(&PostParams::default(), &cm("d", "web"))
        .await
        .unwrap();

    let mut pages = vec![first];
    while let Some(token) = pages.last().unwrap().metadata.continue_.clone() {
        let next = ListParams::default().limit(1).continue_token(&token);
        pages.push(api.list(&next).await.unwrap());
    }
    let served: Vec<_> = pages.iter().flat_map(names_and_data).collect();
    assert_eq!(
        served,
        [("a", "v"), ("b", "v"), ("c", "v")].map(|(n, d)| (n.to_owned(), d.to_owned()))
    );
    for page in &pages {
        assert_eq!(page.metadata.resource_version.as_deref(), Some(rv.as_str()));
    }

    let mut stream = api
        .watch(&WatchParams::default().timeout(10), &rv)
        .await
        .unwrap()
        .boxed();
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(match stream.try_next().await.unwrap() {
            Some(WatchEvent::Modified(o)) => format!("modified {}", o.metadata.name.unwrap()),
            Some(WatchEvent::Deleted(o)) => format!("deleted {}", o.metadata.name.unwrap()),
            Some(WatchEvent::Added(o)) => format!("added {}", o.metadata.name.unwrap()),
            other => panic!("expected a change, got {other:?}"),
        });
    }
    assert_eq!(seen, ["modified b", "deleted c", "added d"]);
}

#[tokio::test(start_paused = true)]
async fn a_continue_token_older_than_compaction_gets_410_expired() {
    let sim = Sim::start(Scenario::default());
    let api: Api<ConfigMap> = Api::namespaced(sim.client(), "default");
    create_all(&api, &["a", "b"]).await;
    let first = api.list(&ListParams::default().limit(1)).await.unwrap();
    let token = first.metadata.continue_.clone().unwrap();
    let next = ListParams::default().limit(1).continue_token(&token);
    tokio::time::advance(std::time::Duration::from_secs(299)).await;
    assert_eq!(api.list(&next).await.unwrap().items.len(), 1);
    // etcd compacts every 5 minutes; the API server then cannot serve that version.
    tokio::time::advance(std::time::Duration::from_secs(1)).await;
    let err = api.list(&next).await.unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 410 && s.reason == "Expired"
            && s.message.starts_with("The provided continue parameter is too old")),
        "{err:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn server_side_dry_run_stores_nothing() {
    let sim = Sim::start(Scenario::default());
    let api: Api<ConfigMap> = Api::namespaced(sim.client(), "default");
    let before = sim.store.current_rv();
    let params = PatchParams::apply("deploy-action").dry_run();
    let applied = api
        .patch("dry", &params, &Patch::Apply(cm("dry", "web")))
        .await
        .unwrap();
    assert_eq!(applied.metadata.name.as_deref(), Some("dry"));
    assert_eq!(sim.store.current_rv(), before);
    assert!(api.get_opt("dry").await.unwrap().is_none());
}

#[tokio::test(start_paused = true)]
async fn streaming_lists_end_their_initial_burst_with_a_bookmark() {
    use kube::runtime::watcher::{self, Event};
    let sim = Sim::start(Scenario::default());
    let api: Api<ConfigMap> = Api::namespaced(sim.client(), "default");
    create_all(&api, &["a", "b"]).await;
    let mut stream = watcher::watcher(api, watcher::Config::default().streaming_lists()).boxed();
    let mut initial = Vec::new();
    loop {
        match stream.try_next().await.unwrap().expect("watch event") {
            Event::Init => {}
            Event::InitApply(c) => initial.push(c.metadata.name.unwrap()),
            Event::InitDone => break,
            other => panic!("unexpected {other:?} before InitDone"),
        }
    }
    assert_eq!(initial, ["a", "b"]);
    let calls = sim.server.recorder.calls();
    assert!(
        calls
            .iter()
            .any(|c| c.verb == "watch" && c.path_and_query.contains("sendInitialEvents=true")),
        "{calls:?}"
    );
    assert!(
        calls.iter().all(|c| c.verb != "list"),
        "a streaming list must not list: {calls:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn logs_of_a_container_waiting_on_its_image_are_refused_as_the_kubelet_does() {
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::LogParams;
    use kube_sim::scenario::ImageBehaviour;
    let sim = Sim::start(
        Scenario::builder()
            .image("registry.local/web:missing", ImageBehaviour::not_found())
            .build(),
    );
    let pods: Api<Pod> = Api::namespaced(sim.client(), "default");
    let pod: Pod = serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
        "spec": {"containers": [{"name": "web", "image": "registry.local/web:missing"}]}}),
    )
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    let err = pods.logs("web", &LogParams::default()).await.unwrap_err();
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 400);
            assert_eq!(
                s.message,
                "container \"web\" in pod \"web\" is waiting to start: trying and failing to pull image"
            );
        }
        other => panic!("expected a 400, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn debug_requests_counts_calls_by_verb_and_resource() {
    let sim = Sim::start(Scenario::default());
    let client = sim.client();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    api.create(&PostParams::default(), &cm("a", "web"))
        .await
        .unwrap();
    api.list(&ListParams::default()).await.unwrap();
    api.list(&ListParams::default()).await.unwrap();
    let request = http::Request::get("/debug/requests")
        .body(Vec::new())
        .unwrap();
    let text = client.request_text(request).await.unwrap();
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    let count = |verb: &str| {
        body["requests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["verb"] == verb && r["resource"] == "configmaps")
            .map(|r| r["count"].clone())
    };
    assert_eq!(count("create"), Some(json!(1)), "{body}");
    assert_eq!(count("list"), Some(json!(2)), "{body}");
}
