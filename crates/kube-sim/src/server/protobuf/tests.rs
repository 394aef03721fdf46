use super::wire::encode;
use super::*;

/// `k8s\0` + runtime.Unknown{typeMeta, raw}.
fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::new();
    encode::bytes(&mut type_meta, 1, api_version.as_bytes());
    encode::bytes(&mut type_meta, 2, kind.as_bytes());
    let mut out = MAGIC.to_vec();
    encode::bytes(&mut out, 1, &type_meta);
    encode::bytes(&mut out, 2, raw);
    encode::bytes(&mut out, 3, b"");
    encode::bytes(&mut out, 4, b"");
    out
}

fn meta(name: &str) -> Vec<u8> {
    let mut m = Vec::new();
    encode::bytes(&mut m, 1, name.as_bytes());
    encode::bytes(&mut m, 2, b"");
    encode::bytes(&mut m, 3, b"");
    encode::uint(&mut m, 7, 0);
    encode::bytes(&mut m, 8, b"");
    encode::entry(&mut m, 11, "app", b"web");
    m
}

#[test]
fn decodes_a_namespace_as_kubectl_create_sends_it() {
    let mut ns = Vec::new();
    encode::bytes(&mut ns, 1, &meta("foo"));
    encode::bytes(&mut ns, 2, b"");
    encode::bytes(&mut ns, 3, b"");
    let obj = decode(&envelope("v1", "Namespace", &ns)).unwrap();
    assert_eq!(
        obj,
        json!({"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": "foo", "labels": {"app": "web"}}, "spec": {}, "status": {}})
    );
}

#[test]
fn decodes_configmap_and_secret_data() {
    let mut cm = Vec::new();
    encode::bytes(&mut cm, 1, &meta("x"));
    encode::entry(&mut cm, 2, "a", b"b");
    encode::entry(&mut cm, 2, "c", b"d");
    let obj = decode(&envelope("v1", "ConfigMap", &cm)).unwrap();
    assert_eq!(obj["data"], json!({"a": "b", "c": "d"}));

    let mut secret = Vec::new();
    encode::bytes(&mut secret, 1, &meta("s"));
    encode::entry(&mut secret, 2, "k", b"v");
    encode::bytes(&mut secret, 3, b"Opaque");
    let obj = decode(&envelope("v1", "Secret", &secret)).unwrap();
    assert_eq!(obj["data"], json!({"k": "dg=="}));
    assert_eq!(obj["type"], "Opaque");
}

#[test]
fn refuses_what_it_cannot_decode() {
    assert_eq!(decode(b"{}"), Err(ProtobufError::Magic));
    assert_eq!(
        decode(&envelope("apps/v1", "StatefulSet", b"")),
        Err(ProtobufError::Unsupported {
            api_version: "apps/v1".into(),
            kind: "StatefulSet".into()
        })
    );
    // A field the schema does not list is refused when set, skipped when zero.
    let mut spec = Vec::new();
    encode::bytes(&mut spec, 23, b"");
    let mut pod = Vec::new();
    encode::bytes(&mut pod, 2, &spec);
    assert!(decode(&envelope("v1", "Pod", &pod)).is_ok());
    let mut alias = Vec::new();
    encode::bytes(&mut alias, 1, b"10.0.0.1");
    let mut spec = Vec::new();
    encode::bytes(&mut spec, 23, &alias);
    let mut pod = Vec::new();
    encode::bytes(&mut pod, 2, &spec);
    assert_eq!(
        decode(&envelope("v1", "Pod", &pod)),
        Err(ProtobufError::UnknownField {
            path: "Pod.spec".into(),
            number: 23
        })
    );
    let mut truncated = envelope("v1", "ConfigMap", b"");
    truncated.push(0x0a);
    assert!(matches!(decode(&truncated), Err(ProtobufError::Wire(_))));
}

/// Writes one field of a message.
type Write<'a> = &'a dyn Fn(&mut Vec<u8>);

/// A message of `fields`, each written as Go writes it.
fn msg(fields: &[Write<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in fields {
        f(&mut out);
    }
    out
}

#[test]
fn decodes_a_deployment_keeping_set_zeros_and_dropping_unset_ones() {
    let container = msg(&[
        &|m| encode::bytes(m, 1, b"nginx"),
        &|m| encode::bytes(m, 2, b"nginx"),
        &|m| encode::bytes(m, 3, b""),
        &|m| encode::bytes(m, 3, b"-c"),
        &|m| {
            encode::bytes(
                m,
                6,
                &msg(&[&|p| encode::uint(p, 2, 0), &|p| encode::uint(p, 3, 80)]),
            );
        },
        &|m| {
            encode::bytes(
                m,
                8,
                &msg(&[&|r| {
                    let q = msg(&[&|q| encode::bytes(q, 1, b"250m")]);
                    let e = msg(&[&|e| encode::bytes(e, 1, b"cpu"), &|e| {
                        encode::bytes(e, 2, &q);
                    }]);
                    encode::bytes(r, 2, &e);
                }]),
            );
        },
        &|m| encode::uint(m, 16, 0),
    ]);
    let pod_spec = msg(&[
        &|s| encode::bytes(s, 2, &container),
        &|s| encode::bytes(s, 3, b"Always"),
        &|s| encode::uint(s, 11, 0),
    ]);
    let template = msg(&[&|t| encode::bytes(t, 1, &meta("web")), &|t| {
        encode::bytes(t, 2, &pod_spec);
    }]);
    let max_surge = msg(&[&|i| encode::uint(i, 1, 1), &|i| encode::bytes(i, 3, b"25%")]);
    let strategy = msg(&[&|s| encode::bytes(s, 1, b""), &|s| {
        encode::bytes(s, 2, &msg(&[&|r| encode::bytes(r, 2, &max_surge)]));
    }]);
    let spec = msg(&[
        &|s| encode::uint(s, 1, 0),
        &|s| encode::bytes(s, 2, &msg(&[&|l| encode::entry(l, 1, "app", b"web")])),
        &|s| encode::bytes(s, 3, &template),
        &|s| encode::bytes(s, 4, &strategy),
        &|s| encode::uint(s, 5, 0),
        &|s| encode::uint(s, 7, 0),
    ]);
    let status = msg(&[&|s| encode::uint(s, 1, 0), &|s| encode::uint(s, 2, 0)]);
    let deployment = msg(&[
        &|d| encode::bytes(d, 1, &meta("web")),
        &|d| encode::bytes(d, 2, &spec),
        &|d| encode::bytes(d, 3, &status),
    ]);
    let obj = decode(&envelope("apps/v1", "Deployment", &deployment)).unwrap();
    assert_eq!(
        obj["spec"],
        json!({"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
               "template": {"metadata": {"name": "web", "labels": {"app": "web"}},
                   "spec": {"containers": [{"name": "nginx", "image": "nginx", "command": ["", "-c"],
                       "ports": [{"containerPort": 80}], "resources": {"requests": {"cpu": "250m"}}}],
                       "restartPolicy": "Always"}},
               "strategy": {"rollingUpdate": {"maxSurge": "25%"}}})
    );
    assert_eq!(obj["status"], json!({}));
}

#[test]
fn decodes_a_service_target_port_as_a_number_or_a_name() {
    let port = |target: Vec<u8>| {
        msg(&[
            &|p| encode::bytes(p, 1, b"80-8080"),
            &|p| encode::bytes(p, 2, b"TCP"),
            &|p| encode::uint(p, 3, 80),
            &|p| encode::bytes(p, 4, &target),
            &|p| encode::uint(p, 5, 0),
        ])
    };
    let by_number = msg(&[
        &|i| encode::uint(i, 1, 0),
        &|i| encode::uint(i, 2, 8080),
        &|i| encode::bytes(i, 3, b""),
    ]);
    let by_name = msg(&[
        &|i| encode::uint(i, 1, 1),
        &|i| encode::uint(i, 2, 0),
        &|i| encode::bytes(i, 3, b"http"),
    ]);
    let spec = msg(&[
        &|s| encode::bytes(s, 1, &port(by_number.clone())),
        &|s| encode::bytes(s, 1, &port(by_name.clone())),
        &|s| encode::entry(s, 2, "app", b"web"),
        &|s| encode::bytes(s, 3, b""),
        &|s| encode::bytes(s, 4, b"ClusterIP"),
    ]);
    let service = msg(&[&|d| encode::bytes(d, 1, &meta("web")), &|d| {
        encode::bytes(d, 2, &spec);
    }]);
    let obj = decode(&envelope("v1", "Service", &service)).unwrap();
    assert_eq!(
        obj["spec"],
        json!({"ports": [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080},
                         {"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": "http"}],
               "selector": {"app": "web"}, "type": "ClusterIP"})
    );
}
