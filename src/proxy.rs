//! Which proxy a connection goes through, decided as Go's `net/http` (and so kubectl) decides,
//! and a connector that goes through it.
//!
//! - `HTTPS_PROXY` for `https://` destinations, `HTTP_PROXY` for `http://` ones (upper case
//!   first, then lower case; an empty value counts as unset). A value without a scheme is an
//!   `http://` proxy. `ALL_PROXY` is not read (Go does not read it).
//! - `NO_PROXY` (then `no_proxy`): comma-separated; `*` (everything direct), an IP, a CIDR,
//!   a host (`example.com` matches it and its subdomains), `.example.com` or `*.example.com`
//!   (subdomains only), each optionally with `:port`.
//! - `localhost` and loopback IPs are never sent to an environment proxy.
//! - A kubeconfig cluster's `proxy-url` is used for that cluster whatever the environment
//!   says, `NO_PROXY` included (as kubectl does).
//!
//! Proxy URLs may hold a user and password; they are sent as `Proxy-Authorization` (in the
//! `CONNECT` of a tunnel, on each request forwarded as plain HTTP) and never shown:
//! [`Proxy`]'s `Display` is its scheme, host and port.

use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::TokioIo;
use std::fmt;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

/// A proxy URL that cannot be used, with where it came from. Never holds the URL's password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin} is not a usable proxy URL: {why}")]
pub struct ProxyUrlError {
    pub origin: String,
    pub why: String,
}

/// How a proxy is spoken to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyKind {
    /// An HTTP proxy: `CONNECT` for `https://` destinations, absolute URIs for `http://`.
    Http,
    /// A SOCKS5 proxy (host names resolved by the proxy).
    Socks5,
}

/// One proxy, ready to connect through.
#[derive(Clone, PartialEq, Eq)]
pub struct Proxy {
    kind: ProxyKind,
    /// `scheme://host:port`, no user information.
    address: http::Uri,
    /// The URL as given, for clients that take a URL (reqwest). Never shown.
    original: String,
    user: Option<(String, String)>,
    /// Where it was configured: `HTTPS_PROXY`, `the kubeconfig's proxy-url`.
    pub origin: String,
}

impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Proxy({self} from {})", self.origin)
    }
}

impl fmt::Display for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.address.to_string().trim_end_matches('/'))
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Proxy {
    /// Parse a proxy URL as Go does: without a scheme it is `http://`.
    pub fn parse(text: &str, origin: &str) -> Result<Proxy, ProxyUrlError> {
        let fail = |why: &str| ProxyUrlError {
            origin: origin.to_owned(),
            why: why.to_owned(),
        };
        let text = text.trim();
        let with_scheme = if text.contains("://") {
            text.to_owned()
        } else {
            format!("http://{text}")
        };
        let (scheme, rest) = with_scheme.split_once("://").expect("has a scheme");
        let scheme = scheme.to_ascii_lowercase();
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let (user, host_port) = match authority.rsplit_once('@') {
            Some((userinfo, host)) => {
                let (name, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
                (Some((percent_decode(name), percent_decode(password))), host)
            }
            None => (None, authority),
        };
        let (kind, default_port) = match scheme.as_str() {
            "http" => (ProxyKind::Http, 80),
            "socks5" | "socks5h" => (ProxyKind::Socks5, 1080),
            "https" => {
                return Err(fail(
                    "https:// proxies are not supported; use an http:// or socks5:// proxy",
                ));
            }
            _ => return Err(fail("the scheme must be http:// or socks5://")),
        };
        if host_port.is_empty() {
            return Err(fail("it names no host"));
        }
        let host_port = if host_port
            .rsplit_once(':')
            .is_some_and(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        {
            host_port.to_owned()
        } else {
            format!("{host_port}:{default_port}")
        };
        let address = format!(
            "{}://{host_port}",
            if kind == ProxyKind::Http {
                "http"
            } else {
                "socks5"
            }
        )
        .parse::<http::Uri>()
        .map_err(|_| fail("its host or port is not valid"))?;
        Ok(Proxy {
            kind,
            address,
            original: with_scheme,
            user,
            origin: origin.to_owned(),
        })
    }

    pub fn kind(&self) -> ProxyKind {
        self.kind
    }

    /// The URL as configured, user and password included: for a client that takes a URL.
    /// Never to be shown.
    pub fn url_with_credentials(&self) -> &str {
        &self.original
    }

    fn basic_auth(&self) -> Option<String> {
        use base64::Engine as _;
        self.user.as_ref().map(|(name, password)| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{name}:{password}"))
            )
        })
    }
}

/// One `NO_PROXY` entry, as Go's `httpproxy` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Bypass {
    All,
    Cidr(IpAddr, u8),
    Ip(IpAddr, Option<u16>),
    /// `suffix` starts with a dot; `exact` also matches the name without it.
    Domain {
        suffix: String,
        exact: bool,
        port: Option<u16>,
    },
}

fn parse_cidr(entry: &str) -> Option<Bypass> {
    let (ip, bits) = entry.split_once('/')?;
    let ip: IpAddr = ip.parse().ok()?;
    let bits: u8 = bits.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (bits <= max).then_some(Bypass::Cidr(ip, bits))
}

fn in_cidr(net: IpAddr, bits: u8, ip: IpAddr) -> bool {
    let (net, ip, width) = match (net, ip) {
        (IpAddr::V4(n), IpAddr::V4(i)) => (u128::from(n.to_bits()), u128::from(i.to_bits()), 32),
        (IpAddr::V6(n), IpAddr::V6(i)) => (n.to_bits(), i.to_bits(), 128),
        (IpAddr::V4(n), IpAddr::V6(i)) => match i.to_ipv4_mapped() {
            Some(i) => (u128::from(n.to_bits()), u128::from(i.to_bits()), 32),
            None => return false,
        },
        (IpAddr::V6(_), IpAddr::V4(_)) => return false,
    };
    let shift = width - u32::from(bits);
    shift >= width || (net >> shift) == (ip >> shift)
}

/// Split `host:port` / `[v6]:port`; `None` when there is no port.
fn split_port(entry: &str) -> (&str, Option<u16>) {
    if let Some(rest) = entry.strip_prefix('[')
        && let Some((host, after)) = rest.split_once(']')
    {
        return (host, after.strip_prefix(':').and_then(|p| p.parse().ok()));
    }
    match entry.rsplit_once(':') {
        // One colon: host:port. More: a bare IPv6 address.
        Some((host, port)) if !host.contains(':') => (host, port.parse().ok()),
        _ => (entry, None),
    }
}

fn parse_bypass(entry: &str) -> Option<Bypass> {
    let entry = entry.trim().to_ascii_lowercase();
    if entry.is_empty() {
        return None;
    }
    if entry == "*" {
        return Some(Bypass::All);
    }
    if let Some(cidr) = parse_cidr(&entry) {
        return Some(cidr);
    }
    let (host, port) = split_port(&entry);
    if host.is_empty() {
        return None;
    }
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Some(Bypass::Ip(ip, port));
    }
    let host = host.strip_prefix('*').unwrap_or(host);
    if host.is_empty() {
        return None;
    }
    Some(match host.strip_prefix('.') {
        Some(_) => Bypass::Domain {
            suffix: host.to_owned(),
            exact: false,
            port,
        },
        None => Bypass::Domain {
            suffix: format!(".{host}"),
            exact: true,
            port,
        },
    })
}

/// The proxies the environment names, read once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyEnv {
    https: Option<Proxy>,
    http: Option<Proxy>,
    bypass: Vec<Bypass>,
}

impl ProxyEnv {
    /// From this process's environment.
    pub fn from_env() -> Result<ProxyEnv, ProxyUrlError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// No proxy at all.
    pub fn none() -> ProxyEnv {
        ProxyEnv::default()
    }

    /// From variables `get` looks up (`HTTPS_PROXY`, `https_proxy`, ...).
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<ProxyEnv, ProxyUrlError> {
        let first = |names: [&'static str; 2]| {
            names.into_iter().find_map(|name| {
                get(name)
                    .filter(|v| !v.trim().is_empty())
                    .map(|v| (name, v))
            })
        };
        let proxy = |names| {
            first(names)
                .map(|(name, value)| Proxy::parse(&value, name))
                .transpose()
        };
        Ok(ProxyEnv {
            https: proxy(["HTTPS_PROXY", "https_proxy"])?,
            http: proxy(["HTTP_PROXY", "http_proxy"])?,
            bypass: first(["NO_PROXY", "no_proxy"])
                .map(|(_, v)| v.split(',').filter_map(parse_bypass).collect())
                .unwrap_or_default(),
        })
    }

    /// Whether any proxy is set.
    pub fn is_empty(&self) -> bool {
        self.https.is_none() && self.http.is_none()
    }

    /// The proxy for a connection to `scheme://host:port`, or `None` to go direct.
    pub fn proxy_for(&self, scheme: &str, host: &str, port: Option<u16>) -> Option<&Proxy> {
        let proxy = match scheme {
            "https" | "wss" => self.https.as_ref(),
            "http" | "ws" => self.http.as_ref(),
            _ => None,
        }?;
        let port = port.or(match scheme {
            "https" | "wss" => Some(443),
            _ => Some(80),
        });
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim_end_matches('.')
            .to_ascii_lowercase();
        let ip = host.parse::<IpAddr>().ok();
        if host == "localhost" || ip.is_some_and(|ip| ip.is_loopback()) {
            return None;
        }
        let bypassed = self.bypass.iter().any(|entry| match entry {
            Bypass::All => true,
            Bypass::Cidr(net, bits) => ip.is_some_and(|ip| in_cidr(*net, *bits, ip)),
            Bypass::Ip(addr, p) => ip == Some(*addr) && (p.is_none() || *p == port),
            Bypass::Domain {
                suffix,
                exact,
                port: p,
            } => {
                (host.ends_with(suffix.as_str()) || (*exact && host == suffix[1..]))
                    && (p.is_none() || *p == port)
            }
        });
        (!bypassed).then_some(proxy)
    }

    /// [`Self::proxy_for`] a URI.
    pub fn proxy_for_uri(&self, uri: &http::Uri) -> Option<&Proxy> {
        self.proxy_for(uri.scheme_str()?, uri.host()?, uri.port_u16())
    }
}

/// Which proxy each destination goes through.
#[derive(Debug, Clone)]
pub enum Routes {
    /// This one, for every destination (a kubeconfig's `proxy-url`).
    Always(Proxy),
    /// As the environment says, per destination.
    Env(Box<ProxyEnv>),
}

impl Routes {
    pub fn proxy_for(&self, uri: &http::Uri) -> Option<&Proxy> {
        match self {
            Routes::Always(proxy) => Some(proxy),
            Routes::Env(env) => env.proxy_for_uri(uri),
        }
    }
}

/// Why a connection through a proxy failed, naming the proxy (never its password).
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("cannot reach the proxy {proxy} (from {origin}): {cause}")]
    Unreachable {
        proxy: String,
        origin: String,
        cause: String,
    },
    #[error("the proxy {proxy} (from {origin}) answered {status} to CONNECT {target}")]
    Refused {
        proxy: String,
        origin: String,
        target: String,
        status: String,
    },
    #[error("the proxy {proxy} (from {origin}) closed the connection during CONNECT {target}")]
    Closed {
        proxy: String,
        origin: String,
        target: String,
    },
    #[error("the SOCKS5 proxy {proxy} (from {origin}) failed: {cause}")]
    Socks {
        proxy: String,
        origin: String,
        cause: String,
    },
    #[error("{0} names no host")]
    NoHost(String),
}

/// A TCP stream, straight to the destination or through a proxy. Marked proxied when
/// requests on it must use absolute URIs (plain HTTP through an HTTP proxy).
pub struct ProxyStream {
    io: TokioIo<TcpStream>,
    forwarded: bool,
}

impl Connection for ProxyStream {
    fn connected(&self) -> Connected {
        self.io.connected().proxy(self.forwarded)
    }
}

impl Read for ProxyStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl Write for ProxyStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
}

/// A connector (for hyper's client, under TLS) that goes through the proxy [`Routes`] names
/// for each destination, or straight to it.
#[derive(Clone)]
pub struct ProxyConnector {
    direct: HttpConnector,
    routes: Arc<Routes>,
}

impl ProxyConnector {
    pub fn new(routes: Routes) -> ProxyConnector {
        let mut direct = HttpConnector::new();
        direct.enforce_http(false);
        direct.set_nodelay(true);
        ProxyConnector {
            direct,
            routes: Arc::new(routes),
        }
    }

    /// The layer that gives plain-HTTP requests forwarded through one of these proxies its
    /// `Proxy-Authorization` (a tunnel carries it in its `CONNECT`): innermost, on the
    /// client that uses this connector.
    pub fn forward_auth_layer(&self) -> ForwardAuthLayer {
        ForwardAuthLayer(Arc::clone(&self.routes))
    }
}

/// See [`ProxyConnector::forward_auth_layer`].
#[derive(Clone)]
pub struct ForwardAuthLayer(Arc<Routes>);

impl<S> tower::Layer<S> for ForwardAuthLayer {
    type Service = ForwardAuth<S>;
    fn layer(&self, inner: S) -> ForwardAuth<S> {
        ForwardAuth {
            inner,
            routes: Arc::clone(&self.0),
        }
    }
}

#[derive(Clone)]
pub struct ForwardAuth<S> {
    inner: S,
    routes: Arc<Routes>,
}

impl<S, B> tower::Service<http::Request<B>> for ForwardAuth<S>
where
    S: tower::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> S::Future {
        let auth = (request.uri().scheme_str() == Some("http"))
            .then(|| self.routes.proxy_for(request.uri()))
            .flatten()
            .filter(|p| p.kind == ProxyKind::Http)
            .and_then(Proxy::basic_auth)
            .and_then(|a| http::HeaderValue::try_from(a).ok());
        if let Some(mut auth) = auth {
            auth.set_sensitive(true);
            request
                .headers_mut()
                .insert(http::header::PROXY_AUTHORIZATION, auth);
        }
        self.inner.call(request)
    }
}

fn unreachable(proxy: &Proxy, cause: &(dyn std::error::Error + 'static)) -> ProxyError {
    ProxyError::Unreachable {
        proxy: proxy.to_string(),
        origin: proxy.origin.clone(),
        cause: crate::cluster::connect::root_cause(cause),
    }
}

/// `CONNECT host:port` on `stream`, reading the answer byte by byte so no byte of the tunnel
/// is consumed.
async fn tunnel(stream: &mut TcpStream, proxy: &Proxy, target: &str) -> Result<(), ProxyError> {
    let mut request = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
    if let Some(auth) = proxy.basic_auth() {
        request.push_str(&format!("Proxy-Authorization: {auth}\r\n"));
    }
    request.push_str("\r\n");
    let io_failed = |e: io::Error| unreachable(proxy, &e);
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(io_failed)?;
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 16 * 1024 {
            break;
        }
        let mut byte = [0u8];
        if stream.read(&mut byte).await.map_err(io_failed)? == 0 {
            return Err(ProxyError::Closed {
                proxy: proxy.to_string(),
                origin: proxy.origin.clone(),
                target: target.to_owned(),
            });
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    let status_line = head.lines().next().unwrap_or_default();
    let status = status_line.split_once(' ').map_or("", |(_, s)| s.trim());
    if status.starts_with("200") {
        Ok(())
    } else {
        Err(ProxyError::Refused {
            proxy: proxy.to_string(),
            origin: proxy.origin.clone(),
            target: target.to_owned(),
            status: if status.is_empty() {
                "something that is not HTTP".to_owned()
            } else {
                status.chars().take(80).collect()
            },
        })
    }
}

async fn socks5(
    direct: HttpConnector,
    proxy: &Proxy,
    dst: http::Uri,
) -> Result<TokioIo<TcpStream>, ProxyError> {
    use hyper_util::client::legacy::connect::proxy::SocksV5;
    use tower::ServiceExt as _;
    let mut socks = SocksV5::new(proxy.address.clone(), direct).local_dns(false);
    if let Some((name, password)) = &proxy.user {
        socks = socks.with_auth(name.clone(), password.clone());
    }
    socks.oneshot(dst).await.map_err(|e| ProxyError::Socks {
        proxy: proxy.to_string(),
        origin: proxy.origin.clone(),
        cause: crate::cluster::connect::root_cause(&e),
    })
}

impl tower::Service<http::Uri> for ProxyConnector {
    type Response = ProxyStream;
    type Error = Box<dyn std::error::Error + Send + Sync>;
    type Future = Pin<Box<dyn Future<Output = Result<ProxyStream, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        tower::Service::<http::Uri>::poll_ready(&mut self.direct, cx).map_err(Into::into)
    }

    fn call(&mut self, dst: http::Uri) -> Self::Future {
        use tower::ServiceExt as _;
        let direct = self.direct.clone();
        let routes = Arc::clone(&self.routes);
        Box::pin(async move {
            let Some(proxy) = routes.proxy_for(&dst).cloned() else {
                let io = direct.oneshot(dst).await?;
                return Ok(ProxyStream {
                    io,
                    forwarded: false,
                });
            };
            if proxy.kind == ProxyKind::Socks5 {
                let io = socks5(direct, &proxy, dst).await?;
                return Ok(ProxyStream {
                    io,
                    forwarded: false,
                });
            }
            let io = direct
                .oneshot(proxy.address.clone())
                .await
                .map_err(|e| unreachable(&proxy, &e))?;
            if dst.scheme_str() == Some("http") {
                // Plain HTTP: hyper sends absolute URIs on a connection marked proxied.
                return Ok(ProxyStream {
                    io,
                    forwarded: true,
                });
            }
            let host = dst
                .host()
                .ok_or_else(|| ProxyError::NoHost(dst.to_string()))?;
            let port = dst.port_u16().unwrap_or(443);
            let target = if host.contains(':') && !host.starts_with('[') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            };
            let mut io = io;
            tunnel(io.inner_mut(), &proxy, &target).await?;
            Ok(ProxyStream {
                io,
                forwarded: false,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> ProxyEnv {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        ProxyEnv::from_vars(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
            .unwrap()
    }

    fn via(env: &ProxyEnv, url: &str) -> Option<String> {
        env.proxy_for_uri(&url.parse().unwrap())
            .map(ToString::to_string)
    }

    #[test]
    fn https_and_http_destinations_use_their_own_variable_upper_case_first() {
        let e = env(&[
            ("HTTPS_PROXY", "http://secure:3128"),
            ("https_proxy", "http://lower:1"),
            ("http_proxy", "plain:8080"),
        ]);
        assert_eq!(
            via(&e, "https://api.example.com").as_deref(),
            Some("http://secure:3128")
        );
        assert_eq!(
            via(&e, "http://api.example.com").as_deref(),
            Some("http://plain:8080")
        );
        let lower = env(&[("https_proxy", "http://lower:1"), ("HTTPS_PROXY", "")]);
        assert_eq!(
            via(&lower, "https://a.b").as_deref(),
            Some("http://lower:1")
        );
        assert_eq!(via(&lower, "http://a.b"), None);
    }

    #[test]
    fn no_proxy_reads_as_go_reads_it() {
        let e = env(&[
            ("HTTPS_PROXY", "http://p:3128"),
            (
                "NO_PROXY",
                " example.com, .internal, *.corp.net, 10.0.0.0/8, 192.168.1.7, api.x:6443, [fd00::1]:443,,",
            ),
        ]);
        let direct = [
            "https://example.com",
            "https://sub.example.com",
            "https://EXAMPLE.com:8443",
            "https://a.internal",
            "https://a.corp.net",
            "https://10.1.2.3:6443",
            "https://192.168.1.7",
            "https://api.x:6443",
            "https://[fd00::1]",
            "https://localhost:6443",
            "https://127.0.0.2:6443",
            "https://[::1]:6443",
        ];
        for url in direct {
            assert_eq!(via(&e, url), None, "{url} goes direct");
        }
        let proxied = [
            "https://notexample.com",
            "https://internal",
            "https://corp.net",
            "https://11.0.0.1",
            "https://192.168.1.8",
            "https://api.x",
            "https://[fd00::2]",
        ];
        for url in proxied {
            assert_eq!(
                via(&e, url).as_deref(),
                Some("http://p:3128"),
                "{url} is proxied"
            );
        }
        let all = env(&[("HTTPS_PROXY", "http://p:3128"), ("no_proxy", "*")]);
        assert_eq!(via(&all, "https://anything.example"), None);
    }

    #[test]
    fn a_kubeconfig_proxy_url_ignores_no_proxy_and_loopback() {
        let proxy = Proxy::parse("http://p:3128", "the kubeconfig's proxy-url").unwrap();
        let routes = Routes::Always(proxy);
        assert!(
            routes
                .proxy_for(&"http://127.0.0.1:1".parse().unwrap())
                .is_some()
        );
    }

    #[test]
    fn proxy_urls_never_show_their_password() {
        let proxy = Proxy::parse("http://user:s%40cret@proxy.corp:3128/", "HTTPS_PROXY").unwrap();
        assert_eq!(proxy.to_string(), "http://proxy.corp:3128");
        assert_eq!(proxy.user, Some(("user".to_owned(), "s@cret".to_owned())));
        let shown = format!("{proxy} {proxy:?}");
        assert!(!shown.contains("cret"), "{shown}");
        assert_eq!(
            Proxy::parse("proxy", "HTTP_PROXY").unwrap().to_string(),
            "http://proxy:80"
        );
        let err = Proxy::parse("ftp://user:s3cret@p", "HTTPS_PROXY").unwrap_err();
        assert!(!err.to_string().contains("s3cret"));
        assert_eq!(
            err.to_string(),
            "HTTPS_PROXY is not a usable proxy URL: the scheme must be http:// or socks5://"
        );
    }

    #[test]
    fn cidrs_match_by_prefix() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(in_cidr(ip("10.0.0.0"), 8, ip("10.255.0.1")));
        assert!(!in_cidr(ip("10.0.0.0"), 8, ip("11.0.0.1")));
        assert!(in_cidr(ip("0.0.0.0"), 0, ip("8.8.8.8")));
        assert!(in_cidr(ip("fd00::"), 8, ip("fd12::1")));
        assert!(!in_cidr(ip("fd00::"), 16, ip("fd12::1")));
    }
}
