//! The bearer-token leg of registry auth (Docker token spec): trade Basic credentials, or
//! nothing, at the realm a 401 names for a token scoped to pulling one repository.

use reqwest::StatusCode;
use serde::Deserialize;
use tokio::time::Instant;

use super::credentials::Auth;
use super::lookup::Lookup;
use super::response;
use super::transport::Transport;

/// The token answer; older servers send `access_token` (OAuth2 style) instead of `token`.
#[derive(Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    token: String,
    #[serde(default)]
    access_token: String,
}

pub(crate) struct TokenRequest<'a> {
    pub realm: &'a str,
    pub service: Option<&'a str>,
    pub scope: &'a str,
    /// The registry the token is for, for details.
    pub registry: &'a str,
}

/// Fetches a token. A refusal (401/403) is `Denied`; anything else that yields no token is
/// `Unreachable`, since the registry cannot be asked without one.
pub(crate) async fn fetch(
    transport: &Transport,
    request: &TokenRequest<'_>,
    auth: Option<&Auth>,
    deadline: Instant,
) -> Result<String, Lookup> {
    let realm = reqwest::Url::parse(request.realm).map_err(|_| Lookup::Unreachable {
        detail: format!(
            "registry {} named an invalid token realm {:?}",
            request.registry, request.realm
        ),
    })?;
    let basic = match auth {
        Some(Auth::Basic { username, password }) => Some((username.as_str(), password.as_str())),
        _ => None,
    };
    let identity = match auth {
        Some(Auth::IdentityToken { token }) => Some(token.as_str()),
        _ => None,
    };
    // A registry may name any realm; credentials only travel there over TLS unless the realm
    // host is one we would talk plain HTTP to anyway.
    let realm_host = realm.host_str().unwrap_or_default();
    let realm_authority = match realm.port() {
        Some(port) => format!("{realm_host}:{port}"),
        None => realm_host.to_string(),
    };
    if (basic.is_some() || identity.is_some())
        && realm.scheme() != "https"
        && !transport.allows_plain_http(&realm_authority)
    {
        return Err(Lookup::Denied {
            detail: format!(
                "refusing to send credentials for {} to the plain-HTTP token realm {realm}",
                request.registry
            ),
        });
    }

    let mut query = vec![("scope", request.scope)];
    if let Some(service) = request.service {
        query.push(("service", service));
    }
    let what = format!("token request to {realm}");
    // An identity token is an OAuth2 refresh token: POSTed as a form, as docker does.
    let form = identity.map(|refresh_token| {
        let mut form = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", "deploy-action"),
        ];
        form.extend(query.iter().copied());
        form_urlencoded(&form)
    });
    let response = transport
        .send(
            |client| {
                if let Some(form) = &form {
                    return client
                        .post(realm.clone())
                        .header(
                            reqwest::header::CONTENT_TYPE,
                            "application/x-www-form-urlencoded",
                        )
                        .body(form.clone());
                }
                let builder = client.get(realm.clone()).query(&query);
                match basic {
                    Some((username, password)) => builder.basic_auth(username, Some(password)),
                    None => builder,
                }
            },
            &what,
            deadline,
        )
        .await?;

    let status = response.status();
    let body = response.bytes().await.map_err(|e| Lookup::Unreachable {
        detail: format!("{what}: failed to read the answer: {e}"),
    })?;
    let who = if basic.is_some() {
        "the credentials"
    } else if identity.is_some() {
        "the identity token"
    } else {
        "anonymous access"
    };
    match status {
        StatusCode::OK => {
            let answer: TokenAnswer =
                serde_json::from_slice(&body).map_err(|_| Lookup::Unreachable {
                    detail: format!("{what}: answer is not a token response"),
                })?;
            let token = if answer.token.is_empty() {
                answer.access_token
            } else {
                answer.token
            };
            if token.is_empty() {
                return Err(Lookup::Unreachable {
                    detail: format!("{what}: answer holds no token"),
                });
            }
            Ok(token)
        }
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Err(Lookup::Denied {
            detail: format!(
                "token service for {} refused {who}: {}",
                request.registry,
                response::error_detail(status, &body)
            ),
        }),
        _ => Err(Lookup::Unreachable {
            detail: format!("{what}: {}", response::error_detail(status, &body)),
        }),
    }
}

/// `application/x-www-form-urlencoded`, by the URL parser's own query serializer.
fn form_urlencoded(pairs: &[(&str, &str)]) -> String {
    let mut url = reqwest::Url::parse("http://form.invalid/").expect("a constant URL parses");
    url.query_pairs_mut().extend_pairs(pairs);
    url.query().unwrap_or_default().to_string()
}
