//! A loopback TCP relay in front of a real HTTP/1.1 server that keeps what passes through it, so
//! a test against a server it does not control can still see each request and the status it got.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// One request seen by an [`HttpTap`].
#[derive(Debug, Clone, PartialEq)]
pub struct TappedRequest {
    /// The request line, e.g. `POST /v1/chat/completions HTTP/1.1`.
    pub line: String,
    /// The body parsed as JSON (`Null` when empty or not JSON).
    pub body: Value,
    /// The status of the response, once its head has passed (0 before).
    pub status: u16,
}

#[derive(Default)]
struct Log {
    requests: Vec<TappedRequest>,
}

/// Relays 127.0.0.1:PORT to `upstream` and records the HTTP exchanges. Dropping it stops
/// accepting; connections already relayed run until either side closes.
pub struct HttpTap {
    addr: SocketAddr,
    log: Arc<Mutex<Log>>,
    task: JoinHandle<()>,
}

impl HttpTap {
    pub async fn start(upstream: SocketAddr) -> std::io::Result<HttpTap> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let log = Arc::new(Mutex::new(Log::default()));
        let shared = log.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let log = shared.clone();
                tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(upstream).await {
                        relay(client, server, log).await;
                    }
                });
            }
        });
        Ok(HttpTap { addr, log, task })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request so far, in the order they arrived.
    pub fn requests(&self) -> Vec<TappedRequest> {
        lock(&self.log).requests.clone()
    }
}

impl Drop for HttpTap {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Copies both ways; requests are logged as they complete, and the n-th response head on this
/// connection gives the n-th request's status (HTTP/1.1 answers in order).
async fn relay(client: TcpStream, server: TcpStream, log: Arc<Mutex<Log>>) {
    let (mut client_rx, mut client_tx) = client.into_split();
    let (mut server_rx, mut server_tx) = server.into_split();
    let mine = Arc::new(Mutex::new(Vec::<usize>::new()));
    let up = {
        let (log, mine) = (log.clone(), mine.clone());
        async move {
            let mut pending = Vec::new();
            let mut buf = vec![0u8; 16 * 1024];
            while let Ok(n) = client_rx.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                // Logged before it is passed on, so the answer always finds its request.
                pending.extend_from_slice(&buf[..n]);
                while let Some(req) = take_request(&mut pending) {
                    let mut log = lock(&log);
                    log.requests.push(req);
                    lock(&mine).push(log.requests.len() - 1);
                }
                if server_tx.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
            let _ = server_tx.shutdown().await;
        }
    };
    let down = async move {
        let mut responses = Responses::default();
        let mut buf = vec![0u8; 16 * 1024];
        while let Ok(n) = server_rx.read(&mut buf).await {
            if n == 0 || client_tx.write_all(&buf[..n]).await.is_err() {
                break;
            }
            let before = responses.heads;
            for (k, status) in responses.feed(&buf[..n]).into_iter().enumerate() {
                let index = lock(&mine).get(before + k).copied();
                if let Some(i) = index {
                    lock(&log).requests[i].status = status;
                }
            }
        }
        let _ = client_tx.shutdown().await;
    };
    tokio::join!(up, down);
}

/// Where the reader of a connection's responses is: in a head, or skipping a body.
#[derive(Default)]
enum Body {
    #[default]
    None,
    Length(usize),
    /// Inside a chunked body; `Some(n)` while `n` bytes of a chunk (and its CRLF) remain.
    Chunked(Option<usize>),
}

/// Follows the responses of one connection so each head is found, whatever the bodies hold.
#[derive(Default)]
struct Responses {
    pending: Vec<u8>,
    body: Body,
    heads: usize,
}

impl Responses {
    /// Takes the next bytes; returns the statuses of the heads completed by them (in order;
    /// `heads` counts them all so far).
    fn feed(&mut self, bytes: &[u8]) -> Vec<u16> {
        self.pending.extend_from_slice(bytes);
        let mut statuses = Vec::new();
        loop {
            match self.body {
                Body::None => {
                    let Some(end) = find(&self.pending, b"\r\n\r\n") else { break };
                    let head = String::from_utf8_lossy(&self.pending[..end]).into_owned();
                    self.pending.drain(..end + 4);
                    let status = head.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
                    let header = |name: &str| {
                        head.lines()
                            .filter_map(|l| l.split_once(':'))
                            .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
                            .map(|(_, v)| v.trim().to_ascii_lowercase())
                    };
                    self.body =
                        if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
                            Body::Chunked(None)
                        } else {
                            Body::Length(
                                header("content-length").and_then(|v| v.parse().ok()).unwrap_or(0),
                            )
                        };
                    self.heads += 1;
                    statuses.push(status);
                }
                Body::Length(n) => {
                    let take = n.min(self.pending.len());
                    self.pending.drain(..take);
                    if take < n {
                        self.body = Body::Length(n - take);
                        break;
                    }
                    self.body = Body::None;
                }
                Body::Chunked(None) => {
                    let Some(end) = find(&self.pending, b"\r\n") else { break };
                    let line = String::from_utf8_lossy(&self.pending[..end]).into_owned();
                    self.pending.drain(..end + 2);
                    let size = line
                        .split(';')
                        .next()
                        .and_then(|h| usize::from_str_radix(h.trim(), 16).ok());
                    // The last chunk is followed by an empty trailer line.
                    self.body = match size {
                        Some(0) | None => Body::Length(2),
                        Some(n) => Body::Chunked(Some(n + 2)),
                    };
                }
                Body::Chunked(Some(n)) => {
                    let take = n.min(self.pending.len());
                    self.pending.drain(..take);
                    self.body = Body::Chunked(if take < n { Some(n - take) } else { None });
                    if take < n {
                        break;
                    }
                }
            }
        }
        statuses
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Removes one complete request (head and `Content-Length` body) from the front of `pending`.
fn take_request(pending: &mut Vec<u8>) -> Option<TappedRequest> {
    let head_end = find(pending, b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&pending[..head_end]).into_owned();
    let length = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    if pending.len() < head_end + length {
        return None;
    }
    let body: Vec<u8> = pending.drain(..head_end + length).skip(head_end).collect();
    Some(TappedRequest {
        line: head.lines().next().unwrap_or_default().to_owned(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        status: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_cut_at_their_content_length() {
        let mut pending =
            b"POST /v1/x HTTP/1.1\r\nContent-Length: 11\r\n\r\n{\"a\":true}\nGET /".to_vec();
        let req = take_request(&mut pending);
        assert_eq!(
            req,
            Some(TappedRequest {
                line: "POST /v1/x HTTP/1.1".into(),
                body: serde_json::json!({"a": true}),
                status: 0,
            })
        );
        assert_eq!(pending, b"GET /");
        assert_eq!(take_request(&mut pending), None);
    }

    #[test]
    fn response_heads_are_found_after_chunked_and_sized_bodies_split_anywhere() {
        let stream = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                      d\r\nHTTP/1.1 999\n\r\n0\r\n\r\n\
                      HTTP/1.1 200 OK\r\ncontent-length: 8\r\n\r\n{\"a\":1}\n\
                      HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\n\r\n";
        for split in 1..stream.len() {
            let mut r = Responses::default();
            let mut got = r.feed(&stream.as_bytes()[..split]);
            got.extend(r.feed(&stream.as_bytes()[split..]));
            assert_eq!(got, [200, 200, 429], "split at {split}");
            assert_eq!(r.heads, 3);
        }
    }
}
