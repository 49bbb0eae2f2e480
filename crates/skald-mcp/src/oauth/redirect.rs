//! The loopback redirect of an authorization (RFC 8252 §7.3): a listener on 127.0.0.1 and a
//! random port that takes one answer from the browser — the code, if its `state` is the one the
//! request carried — and closes, or closes at a timeout.

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// How long the browser has to come back with the code.
pub const AUTHORIZE_TIMEOUT: Duration = Duration::from_secs(300);
/// The path of the redirect URI.
const CALLBACK_PATH: &str = "/callback";
/// The longest request head read from the browser.
const MAX_REQUEST: usize = 16 * 1024;

/// What the authorization server sent back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callback {
    pub code: String,
    pub state: String,
    /// RFC 9207 `iss`, when the server sends it.
    pub issuer: Option<String>,
}

/// A listener waiting for one redirect.
pub struct Redirect {
    listener: TcpListener,
    uri: String,
}

impl Redirect {
    /// Listens on 127.0.0.1 (never another interface) on a port the OS picks.
    pub async fn bind() -> Result<Self, String> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| format!("cannot listen on 127.0.0.1 for the browser's answer: {e}"))?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        Ok(Self { listener, uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}") })
    }

    /// The redirect URI to register and send.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Waits (up to `timeout`) for the browser's answer to the request sent with `state`; the
    /// listener is closed when this returns. Other paths (a favicon) are answered 404 and the
    /// wait goes on; an error from the authorization server, or a `state` that is not the one
    /// sent (a forged or stale answer), ends the authorization.
    pub async fn wait(self, state: &str, timeout: Duration) -> Result<Callback, String> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let accepted = tokio::time::timeout_at(deadline, self.listener.accept()).await;
            let Ok(accepted) = accepted else {
                return Err(format!(
                    "the browser did not come back within {} minutes; authorize again",
                    timeout.as_secs() / 60
                ));
            };
            let Ok((mut stream, _)) = accepted else { continue };
            let Some(target) = read_target(&mut stream).await else { continue };
            let Ok(url) = url::Url::parse(&format!("http://127.0.0.1{target}")) else {
                respond(&mut stream, 400, "That is not an authorization answer.").await;
                continue;
            };
            if url.path() != CALLBACK_PATH {
                respond(&mut stream, 404, "Not found.").await;
                continue;
            }
            let param = |name: &str| {
                url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
            };
            if param("state").as_deref() != Some(state) {
                respond(
                    &mut stream,
                    400,
                    "Refused: this answer does not belong to Skald's request.",
                )
                .await;
                return Err("the authorization answer carried a `state` that does not match \
                            Skald's request (it may be forged), so it was refused; authorize again"
                    .into());
            }
            if let Some(error) = param("error") {
                let why = param("error_description").map(|d| format!(": {d}")).unwrap_or_default();
                respond(&mut stream, 200, "Authorization was not granted. You can close this tab.")
                    .await;
                return Err(format!("the authorization server refused ({error}{why})"));
            }
            let Some(code) = param("code") else {
                respond(&mut stream, 400, "The answer carries no authorization code.").await;
                return Err("the authorization server answered without a code".into());
            };
            respond(&mut stream, 200, "Skald is authorized. You can close this tab.").await;
            return Ok(Callback { code, state: state.to_string(), issuer: param("iss") });
        }
    }
}

/// The request target of a `GET` (`None` for anything else or a request that never ends).
async fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    let read = async {
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_REQUEST {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        Some(())
    };
    tokio::time::timeout(Duration::from_secs(10), read).await.ok()??;
    let head = String::from_utf8_lossy(&buf);
    let mut parts = head.lines().next()?.split_whitespace();
    (parts.next()? == "GET").then_some(())?;
    parts.next().filter(|t| t.starts_with('/')).map(str::to_string)
}

async fn respond(stream: &mut TcpStream, status: u16, text: &str) {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        _ => "Not Found",
    };
    let body = format!(
        "<!doctype html><meta charset=utf-8><title>Skald</title><p style=\"font:16px sans-serif\">{text}</p>"
    );
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use super::Redirect;

    async fn get(url: &str) -> (u16, String) {
        let r = reqwest13::get(url).await.unwrap();
        (r.status().as_u16(), r.text().await.unwrap_or_default())
    }

    #[tokio::test]
    async fn only_loopback_and_one_answer_with_the_right_state() {
        let redirect = Redirect::bind().await.unwrap();
        let uri = redirect.uri().to_string();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"), "{uri}");
        let wait = tokio::spawn(redirect.wait("s-1", Duration::from_secs(10)));
        assert_eq!(get(&uri.replace("/callback", "/favicon.ico")).await.0, 404);
        let (status, _) = get(&format!("{uri}?code=c-9&state=s-1&iss=https%3A%2F%2Fas")).await;
        assert_eq!(status, 200);
        let callback = wait.await.unwrap().unwrap();
        assert_eq!(
            (callback.code.as_str(), callback.issuer.as_deref()),
            ("c-9", Some("https://as"))
        );
        // Closed after the one code.
        assert!(reqwest13::get(&uri).await.is_err());
    }

    #[tokio::test]
    async fn a_state_mismatch_is_refused_and_ends_the_wait() {
        let redirect = Redirect::bind().await.unwrap();
        let uri = redirect.uri().to_string();
        let wait = tokio::spawn(redirect.wait("expected", Duration::from_secs(10)));
        let (status, body) = get(&format!("{uri}?code=stolen&state=forged")).await;
        assert_eq!(status, 400, "{body}");
        let err = wait.await.unwrap().unwrap_err();
        assert!(err.contains("does not match") && err.contains("authorize again"), "{err}");
        assert!(reqwest13::get(&uri).await.is_err(), "still listening after a refused answer");
    }

    #[tokio::test]
    async fn the_wait_ends_at_its_timeout_and_closes() {
        let redirect = Redirect::bind().await.unwrap();
        let uri = redirect.uri().to_string();
        let err = redirect.wait("s", Duration::from_millis(200)).await.unwrap_err();
        assert!(err.contains("did not come back"), "{err}");
        assert!(reqwest13::get(&uri).await.is_err());
    }

    #[tokio::test]
    async fn an_error_from_the_server_is_reported() {
        let redirect = Redirect::bind().await.unwrap();
        let uri = redirect.uri().to_string();
        let wait = tokio::spawn(redirect.wait("s", Duration::from_secs(10)));
        get(&format!("{uri}?error=access_denied&error_description=no&state=s")).await;
        let err = wait.await.unwrap().unwrap_err();
        assert_eq!(err, "the authorization server refused (access_denied: no)");
    }
}
