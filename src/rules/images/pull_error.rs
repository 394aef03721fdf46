//! Sorts an image-pull error text (containerd, CRI-O, Docker, kubelet, or a registry's own
//! words) by what it proves, because only some pull errors are evidence that waiting
//! cannot fix: a missing manifest is, a 429 is not.

/// What a pull error says about the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PullErrorClass {
    /// The registry says the repository or the tag/digest does not exist.
    NotFound,
    /// The registry refused us (401/403, denied, authentication required).
    Unauthorized,
    /// The registry's words fit both "missing" and "no access": registries answer an
    /// unknown repository with a denial so they do not leak which private ones exist.
    Ambiguous,
    /// Docker's daemon: `repository X not found` (`: does not exist or no pull access`),
    /// which Docker Hub also said for private repositories. It reads as "missing" but
    /// proves nothing until the runner's own registry lookup says which.
    MissingOrPrivate,
    /// The reference cannot be pulled at all (unparsable, or pull policy Never).
    InvalidName,
    /// Anything time may fix (rate limits, 5xx, network, DNS, TLS), and every unknown text.
    Transient,
}

/// Texts that say "denied" and "may not exist" in one breath (Docker Hub and containerd's
/// "pull access denied", Google Artifact Registry).
const AMBIGUOUS: [&str; 3] = [
    "does not exist or may require",
    "or it may not exist",
    "pull access denied",
];
const DOCKER_DAEMON: &str = "error response from daemon: ";
/// Old Docker's tail to "repository X not found".
const NO_PULL_ACCESS: &str = "does not exist or no pull access";
const INVALID_NAME: [&str; 4] = [
    "invalid reference format",
    "couldn't parse image name",
    "failed to apply default image tag",
    "not present with pull policy of never",
];
const INVALID_NAME_WORDS: [&str; 2] = ["invalidimagename", "errimageneverpull"];
/// Checked before the hard classes: a network failure text may name a host or a path that
/// reads like something else, and its own words settle the matter.
const TRANSIENT: [&str; 17] = [
    "too many requests",
    "rate limit",
    "internal server error",
    "bad gateway",
    "service unavailable",
    "gateway timeout",
    "i/o timeout",
    "timed out",
    "deadline exceeded",
    "connection reset",
    "connection refused",
    "no such host",
    "tls handshake",
    "temporary failure in name resolution",
    "server misbehaving",
    "network is unreachable",
    "unexpected eof",
];
const TRANSIENT_WORDS: [&str; 2] = ["toomanyrequests", "registryunavailable"];
const NOT_FOUND: [&str; 4] = [
    "not found",
    "manifest unknown",
    "name unknown",
    "not known to registry",
];
const NOT_FOUND_WORDS: [&str; 2] = ["manifest_unknown", "name_unknown"];
const UNAUTHORIZED: [&str; 5] = [
    "authentication required",
    "no basic auth credentials",
    "not authorized",
    "failed to authorize",
    "access to the resource is denied",
];
const UNAUTHORIZED_WORDS: [&str; 4] = ["unauthorized", "forbidden", "insufficient_scope", "denied"];
/// Words before a status code that mark it as HTTP.
const STATUS_WORDS: [&str; 5] = ["code", "status", "http", "statuscode", "(status"];
/// First words of the HTTP reason phrases that follow a status code in these texts.
const REASON_WORDS: [&str; 8] = [
    "unauthorized",
    "forbidden",
    "not",
    "too",
    "internal",
    "bad",
    "service",
    "gateway",
];

/// Classifies one pull error text. Pure; unknown texts are `Transient`.
pub fn classify(text: &str) -> PullErrorClass {
    use PullErrorClass::{
        Ambiguous, InvalidName, MissingOrPrivate, NotFound, Transient, Unauthorized,
    };
    let t = text.to_lowercase();
    let any = |phrases: &[&str]| phrases.iter().any(|p| t.contains(p));
    let any_word = |words: &[&str]| words.iter().any(|w| has_word(&t, w));
    let codes = http_codes(&t);
    let code = |f: fn(u16) -> bool| codes.iter().copied().any(f);
    // A node's own "permission denied" (a file, a socket) says nothing about the registry.
    let without_local_denials = t.replace("permission denied", "");

    if any(&INVALID_NAME) || any_word(&INVALID_NAME_WORDS) {
        InvalidName
    } else if t.contains(NO_PULL_ACCESS)
        || docker_repository_not_found(&t)
        || docker_image_not_found(&t)
    {
        MissingOrPrivate
    } else if any(&AMBIGUOUS) {
        Ambiguous
    } else if any(&TRANSIENT) || any_word(&TRANSIENT_WORDS) || code(|c| c == 429 || c >= 500) {
        Transient
    } else if any(&NOT_FOUND) || any_word(&NOT_FOUND_WORDS) || code(|c| c == 404) {
        NotFound
    } else if any(&UNAUTHORIZED)
        || UNAUTHORIZED_WORDS
            .iter()
            .any(|w| has_word(&without_local_denials, w))
        || code(|c| c == 401 || c == 403)
    {
        Unauthorized
    } else {
        Transient
    }
}

/// Old Docker's `Error: image library/<name> not found` (krane's missing-image text),
/// which Docker Hub gave for a private repository as much as for a missing one.
fn docker_image_not_found(t: &str) -> bool {
    t.split("error: image ").skip(1).any(|rest| {
        let mut words = rest.split_whitespace();
        words.next().is_some()
            && words.next() == Some("not")
            && words.next().is_some_and(|w| w.starts_with("found"))
    })
}

/// The Docker daemon's `Error response from daemon: repository <name> not found`, which
/// Docker Hub also answered for private repositories (a missing tag reads differently:
/// `manifest for <ref> not found`).
fn docker_repository_not_found(t: &str) -> bool {
    let Some((_, rest)) = t.split_once(DOCKER_DAEMON) else {
        return false;
    };
    let mut words = rest.split_whitespace();
    words.next() == Some("repository")
        && words.next().is_some()
        && words.next() == Some("not")
        && words.next().is_some_and(|w| w.starts_with("found"))
}

/// `word` standing alone: not part of an image reference (`acme/denied:v1`), a URL's
/// query (`?error=denied`) or a longer word. Phrases need no such care: references, hosts
/// and URLs never contain spaces.
fn has_word(t: &str, word: &str) -> bool {
    t.match_indices(word).any(|(i, _)| {
        let before = t[..i].chars().next_back();
        let after = &t[i + word.len()..];
        let starts = before.is_none_or(|c| c.is_whitespace() || "([{,;".contains(c));
        let mut next = after.chars();
        let ends = match next.next() {
            None => true,
            Some(':') => next.next().is_none_or(char::is_whitespace),
            Some(c) => c.is_whitespace() || ")]},;.".contains(c),
        };
        starts && ends
    })
}

/// HTTP status codes in the text: a three-digit word after `status`/`code`/`HTTP` or before
/// a reason phrase, so digits inside tags, digests or addresses do not count.
fn http_codes(t: &str) -> Vec<u16> {
    let words: Vec<&str> = t.split_whitespace().collect();
    let mut codes = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let w = w.trim_end_matches([':', ',', '.', ')', ';']);
        let Ok(code) = w.parse::<u16>() else {
            continue;
        };
        if w.len() != 3 || !(100..=599).contains(&code) {
            continue;
        }
        let after_status = i > 0 && STATUS_WORDS.contains(&words[i - 1].trim_end_matches(':'));
        let before_reason = words
            .get(i + 1)
            .is_some_and(|n| REASON_WORDS.contains(&n.trim_end_matches([':', ','])));
        if after_status || before_reason {
            codes.push(code);
        }
    }
    codes
}

#[cfg(test)]
mod tests {
    use super::PullErrorClass::{self, *};
    use super::classify;

    const R: &str = "registry.local/shop/web:missing";

    #[track_caller]
    fn case(text: &str, expected: PullErrorClass) {
        assert_eq!(classify(text), expected, "{text}");
    }

    #[test]
    fn containerd_texts() {
        case(
            &format!(
                "rpc error: code = NotFound desc = failed to pull and unpack image \"{R}\": failed to resolve reference \"{R}\": {R}: not found"
            ),
            NotFound,
        );
        case(
            &format!(
                "rpc error: code = Unknown desc = failed to pull and unpack image \"{R}\": failed to resolve reference \"{R}\": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed"
            ),
            Ambiguous,
        );
        case(
            &format!(
                "rpc error: code = Unknown desc = failed to pull and unpack image \"{R}\": failed to resolve reference \"{R}\": failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://auth.registry.local/token?scope=repository%3Ashop%2Fweb%3Apull&service=registry.local: 401 Unauthorized"
            ),
            Unauthorized,
        );
        case(
            &format!(
                "rpc error: code = Unknown desc = failed to pull and unpack image \"{R}\": failed to resolve reference \"{R}\": unexpected status from HEAD request to https://registry.local/v2/shop/web/manifests/missing: 403 Forbidden"
            ),
            Unauthorized,
        );
        case(
            &format!(
                "rpc error: code = Unknown desc = failed to pull and unpack image \"{R}\": failed to resolve reference \"{R}\": unexpected status from HEAD request to https://registry.local/v2/shop/web/manifests/missing: 429 Too Many Requests"
            ),
            Transient,
        );
        case(
            "rpc error: code = Unknown desc = failed to pull and unpack image \"docker.io/library/nginx:1.27\": failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/library/nginx/manifests/sha256:9f86d081884c: 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit",
            Transient,
        );
        case(
            &format!(
                "rpc error: code = Unknown desc = failed to pull and unpack image \"{R}\": failed to resolve reference \"{R}\": unexpected status from HEAD request to https://registry.local/v2/shop/web/manifests/missing: 503 Service Unavailable"
            ),
            Transient,
        );
        case(
            &format!(
                "rpc error: code = Unknown desc = failed to pull and unpack image \"{R}\": failed to resolve reference \"{R}\": failed to do request: Head \"https://registry.local/v2/shop/web/manifests/missing\": dial tcp 10.0.0.1:443: i/o timeout"
            ),
            Transient,
        );
        case(
            "rpc error: code = Unknown desc = failed to pull and unpack image \"registry.local/shop/web:7\": failed to copy: read tcp 10.0.0.11:51234->10.0.0.1:443: read: connection reset by peer",
            Transient,
        );
        case(
            "rpc error: code = Unknown desc = failed to pull and unpack image \"registry.local/shop/web:7\": failed to resolve reference \"registry.local/shop/web:7\": failed to do request: Head \"https://registry.local/v2/shop/web/manifests/7\": dial tcp: lookup registry.local: no such host",
            Transient,
        );
        case(
            "rpc error: code = Unknown desc = failed to pull and unpack image \"registry.local/shop/web:7\": failed to resolve reference \"registry.local/shop/web:7\": failed to do request: Head \"https://registry.local/v2/shop/web/manifests/7\": net/http: TLS handshake timeout",
            Transient,
        );
        case(
            "rpc error: code = Unknown desc = failed to pull and unpack image \"registry.local/shop/web:7\": failed to resolve reference \"registry.local/shop/web:7\": failed to do request: Head \"https://registry.local/v2/shop/web/manifests/7\": remote error: tls: handshake failure",
            Transient,
        );
    }

    #[test]
    fn cri_o_docker_and_kubelet_texts() {
        case(
            "reading manifest missing in registry.local/shop/web: manifest unknown",
            NotFound,
        );
        case(
            "rpc error: code = Unknown desc = reading manifest missing in registry.local/shop/web: manifest unknown: manifest unknown",
            NotFound,
        );
        case(
            "initializing source docker://registry.local/shop/web:missing: reading manifest missing in registry.local/shop/web: name unknown: repository name not known to registry",
            NotFound,
        );
        case(
            "initializing source docker://registry.local/shop/web:7: reading manifest 7 in registry.local/shop/web: unauthorized: authentication required",
            Unauthorized,
        );
        case(
            "initializing source docker://quay.io/acme/web:7: reading manifest 7 in quay.io/acme/web: unauthorized: access to the requested resource is not authorized",
            Unauthorized,
        );
        case(
            "initializing source docker://docker.io/acme/web:7: reading manifest 7 in docker.io/acme/web: requested access to the resource is denied",
            Unauthorized,
        );
        case(
            "initializing source docker://docker.io/library/nginx:1.27: reading manifest 1.27 in docker.io/library/nginx: toomanyrequests: You have reached your pull rate limit. You may increase the limit by authenticating and upgrading: https://www.docker.com/increase-rate-limit",
            Transient,
        );
        case(
            "rpc error: code = Unknown desc = Error response from daemon: manifest for registry.local/shop/web:missing not found: manifest unknown: manifest unknown",
            NotFound,
        );
        case(
            "rpc error: code = Unknown desc = Error response from daemon: pull access denied for acme/web, repository does not exist or may require 'docker login': denied: requested access to the resource is denied",
            Ambiguous,
        );
        case(
            "rpc error: code = Unknown desc = Error response from daemon: repository registry.local/shop/web not found: does not exist or no pull access",
            MissingOrPrivate,
        );
        // Docker Hub answered this for private repositories too
        case(
            "rpc error: code = Unknown desc = Error response from daemon: repository acme/web not found",
            MissingOrPrivate,
        );
        case(
            "Error response from daemon: repository docker.io/acme/web not found: does not exist or no pull access",
            MissingOrPrivate,
        );
        case(
            "repository acme/web not found: does not exist or no pull access",
            MissingOrPrivate,
        );
        // Old Docker (krane's test_deploy_failed_is_true_for_missing_image_error): the same
        // answer for a private repository as for a missing one.
        case(
            "Failed to pull image \"hello-world:latest\": rpc error: code = Unknown desc = Error: image library/hello-world not found",
            MissingOrPrivate,
        );
        case("Error: image acme/web:1.2 not found", MissingOrPrivate);
        case(
            "Failed to apply default image tag \"registry.local/Shop/web\": couldn't parse image name \"registry.local/Shop/web\": invalid reference format: repository name must be lowercase",
            InvalidName,
        );
        case(
            "Container image \"registry.local/shop/web:7\" is not present with pull policy of Never",
            InvalidName,
        );
        case("InvalidImageName", InvalidName);
        case("ErrImageNeverPull", InvalidName);
        case("RegistryUnavailable", Transient);
        case(
            "Back-off pulling image \"registry.local/shop/web:7\"",
            Transient,
        );
    }

    #[test]
    fn registry_texts() {
        case(
            "{\"errors\":[{\"code\":\"MANIFEST_UNKNOWN\",\"message\":\"manifest unknown\",\"detail\":{\"Tag\":\"missing\"}}]}",
            NotFound,
        );
        case("MANIFEST_UNKNOWN: manifest unknown", NotFound);
        case(
            "NAME_UNKNOWN: repository name not known to registry",
            NotFound,
        );
        case("HTTP 404", NotFound);
        case(
            "unexpected status code 404 Not Found (HEAD https://registry.local/v2/shop/web/manifests/missing)",
            NotFound,
        );
        case(
            "failed to resolve reference \"123456789012.dkr.ecr.eu-west-1.amazonaws.com/web:9\": 123456789012.dkr.ecr.eu-west-1.amazonaws.com/web:9: not found",
            NotFound,
        );
        case(
            "Requested image not found (Service: AmazonECR; Status Code: 400; Error Code: ImageNotFoundException)",
            NotFound,
        );
        case("unknown: artifact library/web:missing not found", NotFound);
        case("401 Unauthorized", Unauthorized);
        case("403 Forbidden", Unauthorized);
        case(
            "DENIED: requested access to the resource is denied",
            Unauthorized,
        );
        case("UNAUTHORIZED: authentication required", Unauthorized);
        case(
            "denied: Permission \"artifactregistry.repositories.downloadArtifacts\" denied on resource \"projects/acme/locations/europe/repositories/shop\" (or it may not exist)",
            Ambiguous,
        );
        case("no basic auth credentials", Unauthorized);
        case("TOOMANYREQUESTS: too many requests", Transient);
        case("429 Too Many Requests (Retry-After: 30)", Transient);
        case("500 Internal Server Error", Transient);
        case("502 Bad Gateway", Transient);
        case(
            "received unexpected HTTP status: 504 Gateway Time-out",
            Transient,
        );
    }

    #[test]
    fn words_inside_names_urls_and_hosts_do_not_count() {
        // A host or path that reads "not found" or "denied" is not the registry's verdict.
        case(
            "failed to do request: Head \"https://not-found.registry.local/v2/shop/web/manifests/7\": dial tcp: lookup not-found.registry.local: no such host",
            Transient,
        );
        case(
            "unexpected status from HEAD request to https://registry.local/v2/shop/not%20found/manifests/7: 502 Bad Gateway",
            Transient,
        );
        case(
            "failed to resolve reference \"registry.local/denied/web:timeout\": registry.local/denied/web:timeout: not found",
            NotFound,
        );
        case(
            "failed to resolve reference \"registry.local/acme/web:503\": registry.local/acme/web:503: not found",
            NotFound,
        );
        case(
            "failed to pull and unpack image \"registry.local/forbidden/web:v1\": failed to extract layer sha256:401abc: write /var/lib/containerd/tmpmounts/x: no space left on device",
            Transient,
        );
        case(
            "failed to create temp dir: open /var/lib/containerd/tmp: permission denied",
            Transient,
        );
        case(
            "failed to do request: Get \"https://auth.registry.local/token?scope=repository%3Ashop%2Fweb%3Apull&error=denied\": EOF",
            Transient,
        );
        case("", Transient);
        case("something nobody has seen before", Transient);
    }
}
