//! A byte-exact scripted HTTP server for server behaviours the fake provider does not offer
//! (a stream that goes silent after its headers, odd content types, quirky chunk shapes).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[derive(Clone)]
pub enum Step {
    Send(Vec<u8>),
    Sleep(Duration),
    Hang,
}

pub fn sse_headers() -> Step {
    Step::Send(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n"
            .to_vec(),
    )
}

pub fn send(s: &str) -> Step {
    Step::Send(s.as_bytes().to_vec())
}

/// Serves `steps` to every connection; returns the `/v1` base URL.
pub async fn serve(steps: Vec<Step>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let steps = steps.clone();
            tokio::spawn(async move {
                read_request(&mut sock).await;
                for step in steps {
                    match step {
                        Step::Send(b) => {
                            if sock.write_all(&b).await.is_err() {
                                return;
                            }
                            let _ = sock.flush().await;
                        }
                        Step::Sleep(d) => tokio::time::sleep(d).await,
                        Step::Hang => std::future::pending::<()>().await,
                    }
                }
            });
        }
    });
    format!("http://{addr}/v1")
}

async fn read_request(sock: &mut tokio::net::TcpStream) {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    loop {
        let Ok(n) = sock.read(&mut tmp).await else { return };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                return;
            }
        }
    }
}
