//! Loopback stand-ins for what sits between deploy-action and a real cluster: a forward proxy
//! (HTTP `CONNECT` for https, absolute-URI forwarding for http) that resolves names of its
//! own and records every request it carried, and an API-server front that wants a bearer
//! token and answers 401 to any other.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// Accept connections on `listener` for the rest of the test, each served by `serve`.
fn serve_each<F, Fut>(listener: TcpListener, serve: F)
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            tokio::spawn(serve(client));
        }
    });
}

/// Read a request or response head, byte by byte (nothing past it is consumed).
async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8];
        if stream.read(&mut byte).await.ok()? == 0 || head.len() > 64 * 1024 {
            return None;
        }
        head.push(byte[0]);
    }
    String::from_utf8(head).ok()
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim()
            .eq_ignore_ascii_case(name)
            .then_some(value.trim())
    })
}

/// The head with `Connection: close` in place of any connection header: one request per
/// connection, so every request passes through the code that looks at it.
fn closing(head: &str, first_line: &str) -> String {
    let mut out = format!("{first_line}\r\n");
    for line in head.lines().skip(1).filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or_default().trim();
        if !name.eq_ignore_ascii_case("connection")
            && !name.to_ascii_lowercase().starts_with("proxy-")
        {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out.push_str("Connection: close\r\n\r\n");
    out
}

/// What a proxy carried: `CONNECT host:port`, or `GET http://host:port/path`, and the
/// `Proxy-Authorization` it was sent, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    pub request: String,
    pub proxy_authorization: Option<String>,
}

#[derive(Clone)]
pub struct ForwardProxy {
    pub addr: SocketAddr,
    names: Arc<Mutex<BTreeMap<String, SocketAddr>>>,
    carried: Arc<Mutex<Vec<Carried>>>,
}

impl ForwardProxy {
    pub async fn start() -> ForwardProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let proxy = ForwardProxy {
            addr: listener.local_addr().expect("addr"),
            names: Arc::default(),
            carried: Arc::default(),
        };
        let serving = proxy.clone();
        serve_each(listener, move |client| {
            let proxy = serving.clone();
            async move { proxy.serve(client).await }
        });
        proxy
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Resolve `host` to `to`, as a proxy's own DNS would (the test machine cannot).
    pub fn resolve(&self, host: &str, to: SocketAddr) {
        self.names.lock().unwrap().insert(host.to_owned(), to);
    }

    pub fn carried(&self) -> Vec<Carried> {
        self.carried.lock().unwrap().clone()
    }

    fn upstream(&self, authority: &str) -> Option<SocketAddr> {
        let (host, port) = authority.rsplit_once(':')?;
        let port: u16 = port.parse().ok()?;
        if let Some(mapped) = self.names.lock().unwrap().get(host) {
            return Some(SocketAddr::new(mapped.ip(), mapped.port()));
        }
        Some(SocketAddr::new(host.parse().ok()?, port))
    }

    async fn serve(&self, mut client: TcpStream) {
        let Some(head) = read_head(&mut client).await else {
            return;
        };
        let first = head.lines().next().unwrap_or_default().to_owned();
        let mut parts = first.split(' ');
        let (method, target, version) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or("HTTP/1.1"),
        );
        self.carried.lock().unwrap().push(Carried {
            request: format!("{method} {target}"),
            proxy_authorization: header(&head, "proxy-authorization").map(str::to_owned),
        });
        if method == "CONNECT" {
            let Some(mut upstream) = self.connect(target).await else {
                let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
                return;
            };
            let _ = client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await;
            let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            return;
        }
        // Absolute form: http://authority/path -> origin form to the authority.
        let Some(rest) = target.strip_prefix("http://") else {
            let _ = client.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
            return;
        };
        let (authority, path) = rest
            .find('/')
            .map_or((rest, "/"), |at| (&rest[..at], &rest[at..]));
        let authority = if authority.contains(':') {
            authority.to_owned()
        } else {
            format!("{authority}:80")
        };
        let Some(mut upstream) = self.connect(&authority).await else {
            let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
            return;
        };
        let head = closing(&head, &format!("{method} {path} {version}"));
        if upstream.write_all(head.as_bytes()).await.is_ok() {
            let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
        }
    }

    async fn connect(&self, authority: &str) -> Option<TcpStream> {
        TcpStream::connect(self.upstream(authority)?).await.ok()
    }
}

/// An API server front on loopback: a request whose bearer token is not the current one is
/// answered 401 (a Kubernetes Status); any other is passed to `upstream`.
#[derive(Clone)]
pub struct TokenFront {
    pub addr: SocketAddr,
    upstream: SocketAddr,
    token: Arc<Mutex<String>>,
    refused: Arc<Mutex<usize>>,
    accepted: Arc<Mutex<usize>>,
}

impl TokenFront {
    pub async fn start(upstream: SocketAddr, token: &str) -> TokenFront {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let front = TokenFront {
            addr: listener.local_addr().expect("addr"),
            upstream,
            token: Arc::new(Mutex::new(token.to_owned())),
            refused: Arc::default(),
            accepted: Arc::default(),
        };
        let serving = front.clone();
        serve_each(listener, move |client| {
            let front = serving.clone();
            async move { front.serve(client).await }
        });
        front
    }

    /// From now on only `token` is accepted.
    pub fn rotate(&self, token: &str) {
        token.clone_into(&mut self.token.lock().unwrap());
    }

    /// Requests answered 401, and requests passed on.
    pub fn counts(&self) -> (usize, usize) {
        (
            *self.refused.lock().unwrap(),
            *self.accepted.lock().unwrap(),
        )
    }

    async fn serve(&self, mut client: TcpStream) {
        let Some(head) = read_head(&mut client).await else {
            return;
        };
        let wanted = format!("Bearer {}", self.token.lock().unwrap());
        if header(&head, "authorization") != Some(wanted.as_str()) {
            *self.refused.lock().unwrap() += 1;
            let body = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#;
            let response = format!(
                "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = client.write_all(response.as_bytes()).await;
            return;
        }
        *self.accepted.lock().unwrap() += 1;
        let Ok(mut upstream) = TcpStream::connect(self.upstream).await else {
            return;
        };
        let first = head.lines().next().unwrap_or_default().to_owned();
        let head = closing(&head, &first);
        if upstream.write_all(head.as_bytes()).await.is_ok() {
            let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
        }
    }
}
