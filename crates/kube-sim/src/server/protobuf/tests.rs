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
        decode(&envelope("apps/v1", "Deployment", b"")),
        Err(ProtobufError::Unsupported {
            api_version: "apps/v1".into(),
            kind: "Deployment".into()
        })
    );
    let mut truncated = envelope("v1", "ConfigMap", b"");
    truncated.push(0x0a);
    assert!(matches!(decode(&truncated), Err(ProtobufError::Wire(_))));
}
