//! Skald's OAuth 2.1 flow end to end against `scripts/mcp-peers/oauth-server.mjs`, an MCP
//! server written with the official SDK that is its own authorization server: the 401, discovery,
//! dynamic registration, the consent in a "browser" (an HTTP client following the redirect back
//! to Skald's loopback listener), the tokens in the vault, refresh, revocation, and the hostile
//! cases (a forged redirect, metadata naming another resource). #[ignore]d: `scripts/test.sh`
//! installs the SDK (`scripts/mcp-peers/install.sh`) and runs them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use skald_mcp::{
    McpError, McpManager, MemoryVault, ServerConfig, ServerState, TokenVault, Transport, vault_key,
};
use tokio::io::AsyncBufReadExt as _;
use tokio_util::sync::CancellationToken;

/// The test server, killed when dropped.
struct Peer {
    _child: tokio::process::Child,
    base: String,
}

async fn peer(env: &[(&str, &str)]) -> Peer {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts/mcp-peers/oauth-server.mjs");
    let mut child = tokio::process::Command::new("node")
        .arg(script)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs scripts/mcp-peers/oauth-server.mjs");
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("the server starts")
        .unwrap()
        .expect("it says where it listens");
    let base = line.strip_prefix("listening ").expect("listening <url>").to_string();
    Peer { _child: child, base }
}

fn config(name: &str, base: &str) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: Transport::Http {
            url: format!("{base}/mcp"),
            api_key: None,
            oauth: Default::default(),
        },
        description: None,
        enabled: true,
        call_timeout: None,
        trusted: false,
    }
}

fn manager(name: &str, peer: &Peer, vault: &Arc<MemoryVault>) -> McpManager {
    let manager = McpManager::new(vec![config(name, &peer.base)], None);
    manager.set_vault(vault.clone());
    manager
}

async fn stats(peer: &Peer) -> Value {
    reqwest13::get(format!("{}/stats", peer.base)).await.unwrap().json().await.unwrap()
}

/// What a person's browser does on consent: opens the page, follows the redirect to Skald.
async fn consent(url: &str) -> (u16, String) {
    let response = reqwest13::get(url).await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

fn param(url: &str, name: &str) -> Option<String> {
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// Authorizes `name` as a person would; returns the authorization URL.
async fn authorize(manager: &McpManager, name: &str) -> String {
    let url = manager.authorize(name).await.unwrap();
    let ((status, page), done) = tokio::join!(consent(&url), manager.wait_authorized(name));
    done.unwrap();
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Skald is authorized"), "{page}");
    url
}

fn state(manager: &McpManager) -> ServerState {
    manager.statuses()[0].state.clone()
}

#[tokio::test]
#[ignore = "needs the SDK of scripts/mcp-peers (scripts/mcp-peers/install.sh)"]
async fn a_server_asking_for_oauth_is_authorized_in_the_browser_and_its_tokens_kept() {
    let peer = peer(&[]).await;
    let vault = Arc::new(MemoryVault::default());
    let manager = manager("remote", &peer, &vault);
    let err = manager.connect("remote", true).await.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, McpError::Unauthorized { .. }), "{err:?}");
    assert!(text.contains("requires authorization") && text.contains("skald mcp login remote"));
    assert!(matches!(state(&manager), ServerState::NeedsAuthorization(_)));

    let url = manager.authorize("remote").await.unwrap();
    assert_eq!(state(&manager), ServerState::Authorizing);
    // PKCE S256, a state, the server as the resource, a loopback redirect, the server's scope.
    assert_eq!(param(&url, "code_challenge_method").as_deref(), Some("S256"));
    assert!(param(&url, "code_challenge").is_some_and(|c| c.len() >= 43));
    assert!(param(&url, "state").is_some_and(|s| !s.is_empty()));
    assert_eq!(param(&url, "resource"), Some(format!("{}/mcp", peer.base)));
    let redirect = param(&url, "redirect_uri").unwrap();
    assert!(redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"));
    assert!(param(&url, "scope").is_some_and(|s| s.split(' ').any(|s| s == "mcp")), "{url}");
    let ((status, _), done) = tokio::join!(consent(&url), manager.wait_authorized("remote"));
    done.unwrap();
    assert_eq!(status, 200);
    // The listener closed after its one answer.
    assert!(reqwest13::get(&redirect).await.is_err(), "the redirect listener is still open");

    // The tokens are in the vault, bound to the server's URL.
    let saved = vault.get(&vault_key("remote")).unwrap().expect("tokens in the vault");
    assert!(saved.contains("refresh_token") && saved.contains(&format!("{}/mcp", peer.base)));
    let tools = manager.connect("remote", false).await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    let cancel = CancellationToken::new();
    let out = manager.call("remote", "echo", &json!({"text": "hi"}), &cancel).await.unwrap();
    assert_eq!(out.text, "echo: hi");
    assert_eq!(state(&manager), ServerState::Ready);

    // After a restart: the tokens from the vault, no new authorization.
    let restarted = self::manager("remote", &peer, &vault);
    restarted.connect("remote", false).await.unwrap();
    let seen = stats(&peer).await;
    assert_eq!((seen["registrations"].as_u64(), seen["code_grants"].as_u64()), (Some(1), Some(1)));
    restarted.shutdown().await;

    // Forgetting removes them: the server asks again.
    manager.forget_authorization("remote").await.unwrap();
    assert!(vault.get(&vault_key("remote")).unwrap().is_none());
    let again = manager.connect("remote", true).await.unwrap_err();
    assert!(matches!(again, McpError::Unauthorized { .. }), "{again:?}");
    manager.shutdown().await;
}

#[tokio::test]
#[ignore = "needs the SDK of scripts/mcp-peers (scripts/mcp-peers/install.sh)"]
async fn tokens_are_refreshed_before_they_expire_and_a_revoked_one_asks_to_authorize_again() {
    // Tokens live 4 s; rmcp refreshes when less than half their life is left.
    let peer = peer(&[("TOKEN_TTL", "4")]).await;
    let vault = Arc::new(MemoryVault::default());
    let manager = manager("remote", &peer, &vault);
    let _ = manager.connect("remote", true).await;
    authorize(&manager, "remote").await;
    let cancel = CancellationToken::new();
    let echo = |text: &str| json!({ "text": text });
    assert_eq!(
        manager.call("remote", "echo", &echo("one"), &cancel).await.unwrap().text,
        "echo: one"
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        manager.call("remote", "echo", &echo("two"), &cancel).await.unwrap().text,
        "echo: two"
    );
    let seen = stats(&peer).await;
    assert!(seen["refresh_grants"].as_u64() >= Some(1), "{seen}");
    assert_eq!(seen["refused_tokens"].as_u64(), Some(0), "a token was sent after it expired");

    // The authorization server revokes every token: the refresh is refused, and the user is
    // told to authorize again.
    reqwest13::Client::new().post(format!("{}/revoke-all", peer.base)).send().await.unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let err = manager.call("remote", "echo", &echo("three"), &cancel).await.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, McpError::Unauthorized { .. }), "{err:?}");
    assert!(text.contains("authorize again"), "{text}");
    assert!(!text.contains("rmcp::") && !text.contains("AuthError"), "{text}");
    match state(&manager) {
        ServerState::NeedsAuthorization(why) => assert!(why.contains("authorize again"), "{why}"),
        other => panic!("{other:?}"),
    }
    // A new authorization brings it back.
    authorize(&manager, "remote").await;
    manager.connect("remote", false).await.unwrap();
    assert_eq!(
        manager.call("remote", "echo", &echo("four"), &cancel).await.unwrap().text,
        "echo: four"
    );
    manager.shutdown().await;
}

#[tokio::test]
#[ignore = "needs the SDK of scripts/mcp-peers (scripts/mcp-peers/install.sh)"]
async fn a_forged_redirect_is_refused_and_the_server_still_needs_authorization() {
    let peer = peer(&[]).await;
    let vault = Arc::new(MemoryVault::default());
    let manager = manager("remote", &peer, &vault);
    let _ = manager.connect("remote", true).await;
    let url = manager.authorize("remote").await.unwrap();
    let redirect = param(&url, "redirect_uri").unwrap();
    // Another page (or program) sends a code of its own to Skald's listener.
    let forged = format!("{redirect}?code=attacker-code&state=forged");
    let response = reqwest13::get(&forged).await.unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let err = manager.wait_authorized("remote").await.unwrap_err().to_string();
    assert!(err.contains("does not match") && err.contains("authorize again"), "{err}");
    match state(&manager) {
        ServerState::NeedsAuthorization(why) => assert!(why.contains("authorization failed")),
        other => panic!("{other:?}"),
    }
    assert!(vault.get(&vault_key("remote")).unwrap().is_none());
    assert_eq!(stats(&peer).await["code_grants"].as_u64(), Some(0), "the forged code was used");
    // The real consent arriving later finds no listener.
    assert!(reqwest13::get(&url).await.is_err(), "the listener outlived a refused answer");
    manager.shutdown().await;
}

#[tokio::test]
#[ignore = "needs the SDK of scripts/mcp-peers (scripts/mcp-peers/install.sh)"]
async fn metadata_naming_another_resource_is_refused_before_any_consent() {
    let peer = peer(&[("PRM_RESOURCE", "https://elsewhere.example/mcp")]).await;
    let vault = Arc::new(MemoryVault::default());
    let manager = manager("remote", &peer, &vault);
    let _ = manager.connect("remote", true).await;
    let err = manager.authorize("remote").await.unwrap_err().to_string();
    assert!(err.contains("authorization"), "{err}");
    assert!(!err.contains("rmcp::") && !err.contains("AuthError"), "{err}");
    let seen = stats(&peer).await;
    assert_eq!(seen["registrations"].as_u64(), Some(0), "{seen}");
    assert_eq!(seen["authorizations"].as_array().map(Vec::len), Some(0), "{seen}");
    manager.shutdown().await;
}

#[tokio::test]
#[ignore = "needs the SDK of scripts/mcp-peers (scripts/mcp-peers/install.sh)"]
async fn a_token_endpoint_elsewhere_in_plain_http_is_refused_before_any_consent() {
    // The code and the PKCE verifier would travel in the clear to a host the server chose.
    let peer = peer(&[("TOKEN_ENDPOINT", "http://collector.example/token")]).await;
    let vault = Arc::new(MemoryVault::default());
    let manager = manager("remote", &peer, &vault);
    let _ = manager.connect("remote", true).await;
    let err = manager.authorize("remote").await.unwrap_err().to_string();
    assert!(err.contains("token endpoint `http://collector.example/token` is refused"), "{err}");
    let seen = stats(&peer).await;
    assert_eq!(seen["registrations"].as_u64(), Some(0), "{seen}");
    assert_eq!(seen["authorizations"].as_array().map(Vec::len), Some(0), "{seen}");
    manager.shutdown().await;
}
