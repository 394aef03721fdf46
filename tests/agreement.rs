//! `check`'s offline validation and kube-sim's server-side apply dry run, run over the
//! same manifests, accept and refuse the same ones: both take their rules from
//! kube-strict, and this is where a divergence between them would show. Custom resources
//! too: both hold them to their CRD's schema with `kube_strict::crd_schema`.

use deploy_action::manifest::{load_str, offline};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube_sim::{Scenario, Sim};

const TEMPLATE: &str = "
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]";

/// `(name, manifest, refused)`: invalid manifests of each workload kind and their valid
/// twins.
fn cases() -> Vec<(&'static str, String, bool)> {
    let deployment = |spec: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n{spec}{TEMPLATE}\n"
        )
    };
    let pod =
        |spec: &str| format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: web}}\nspec:\n{spec}\n");
    let job = |restart: &str| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: once}}\nspec:\n  template:\n    spec:\n      restartPolicy: {restart}\n      containers: [{{name: once, image: busybox}}]\n"
        )
    };
    let service = |port: &str| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: web}}\nspec:\n  selector: {{app: web}}\n  ports: [{port}]\n"
        )
    };
    let stateful = |replicas: &str| {
        format!(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: db}}\nspec:\n  serviceName: db\n  replicas: {replicas}{TEMPLATE}\n"
        )
    };
    let daemon = |strategy: &str| {
        format!(
            "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: agent}}\nspec:\n  updateStrategy: {{type: {strategy}}}{TEMPLATE}\n"
        )
    };
    let config = |data: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: web}}\ndata: {{{data}}}\n")
    };
    let containers = "  containers: [{name: web, image: nginx";
    vec![
        ("deployment", deployment("  replicas: 2\n"), false),
        (
            "replicas as a word",
            deployment("  replicas: \"two\"\n"),
            true,
        ),
        ("undeclared spec field", deployment("  replica: 2\n"), true),
        (
            "pod",
            pod(&format!("  restartPolicy: Never\n{containers}}}]")),
            false,
        ),
        (
            "restartPolicy Sometimes",
            pod(&format!("  restartPolicy: Sometimes\n{containers}}}]")),
            true,
        ),
        (
            "imagePullPolcy",
            pod(&format!("{containers}, imagePullPolcy: Always}}]")),
            true,
        ),
        (
            "imagePullPolicy Sometimes",
            pod(&format!("{containers}, imagePullPolicy: Sometimes}}]")),
            true,
        ),
        ("no containers", pod("  restartPolicy: Never"), true),
        (
            "container port as text",
            pod(&format!(
                "{containers}, ports: [{{containerPort: \"80\"}}]}}]"
            )),
            true,
        ),
        ("job", job("Never"), false),
        ("job restarting Always", job("Always"), true),
        ("service", service("{port: 80, targetPort: 8080}"), false),
        (
            "service protocol",
            service("{port: 80, protocol: TCPX}"),
            true,
        ),
        ("service port out of range", service("{port: 70000}"), true),
        ("statefulset", stateful("3"), false),
        ("negative replicas", stateful("-1"), true),
        ("daemonset", daemon("RollingUpdate"), false),
        ("daemonset strategy", daemon("Sometimes"), true),
        ("configmap", config("MODE: a"), false),
        ("configmap number", config("PORT: 80"), true),
        ("widget", widget("{name: blue, size: 3, mode: safe}"), false),
        (
            "widget size as a word",
            widget("{name: blue, size: big}"),
            true,
        ),
        ("widget without its name", widget("{size: 3}"), true),
        ("widget mode wild", widget("{name: blue, mode: wild}"), true),
        (
            "widget too big for its rule",
            widget("{name: blue, size: 11}"),
            true,
        ),
        (
            "widget unknown field, pruned",
            widget("{name: blue, sise: 3}"),
            false,
        ),
    ]
}

/// The CRD of the Widgets among the cases: typed, required, enumerated and ruled fields.
const WIDGET_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.acme.io}
spec:
  group: acme.io
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [name]
              x-kubernetes-validations: [{rule: 'self.size <= 10', message: too big}]
              properties:
                name: {type: string}
                size: {type: integer, default: 1}
                mode: {type: string, enum: [safe, fast]}
";

fn widget(spec: &str) -> String {
    format!("apiVersion: acme.io/v1\nkind: Widget\nmetadata: {{name: blue}}\nspec: {spec}\n")
}

/// Whether check, with no cluster, finds problems in `yaml`: loading's own or the offline
/// ones.
fn check_refuses(yaml: &str) -> bool {
    let crds = load_str("crd.yaml", WIDGET_CRD).expect("the CRD loads");
    match load_str("case.yaml", yaml) {
        Ok(manifests) => !offline::kinds(&manifests, &crds).0.is_empty(),
        Err(_) => true,
    }
}

/// Whether kube-sim refuses a server-side apply dry run of `yaml`, as a deploy sends it.
async fn sim_refuses(sim: &Sim, yaml: &str) -> bool {
    let object: DynamicObject = serde_yaml_ng::from_str(yaml).expect("the case parses");
    let types = object.types.clone().expect("apiVersion and kind");
    let gvk = GroupVersionKind::try_from(&types).expect("a group/version");
    let resource = ApiResource::from_gvk(&gvk);
    let api: Api<DynamicObject> = Api::namespaced_with(sim.client(), "default", &resource);
    let name = object.metadata.name.clone().expect("a name");
    let params = PatchParams::apply("deploy-action").dry_run();
    api.patch(&name, &params, &Patch::Apply(&object))
        .await
        .is_err()
}

#[tokio::test]
async fn check_and_kube_sim_accept_and_refuse_the_same_manifests() {
    let sim = Sim::start(Scenario::default());
    let crds: Api<CustomResourceDefinition> = Api::all(sim.client());
    let crd = serde_yaml_ng::from_str(WIDGET_CRD).expect("the CRD parses");
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("kube-sim takes the CRD");
    sim.settle(std::time::Duration::from_secs(1)).await;
    let mut disagreements = Vec::new();
    for (name, yaml, refused) in cases() {
        let (check, server) = (check_refuses(&yaml), sim_refuses(&sim, &yaml).await);
        if check != server || check != refused {
            disagreements.push(format!(
                "{name}: check refuses {check}, kube-sim refuses {server}, expected {refused}"
            ));
        }
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}
