//! OAuth 2.1 for streamable HTTP servers, on rmcp's `auth`: a 401's `WWW-Authenticate` leads to
//! the protected-resource metadata (RFC 9728) and the authorization server's (RFC 8414, OIDC
//! fallbacks); the client is pre-registered (config), a client ID metadata document, or
//! registered dynamically; the user consents in a browser (PKCE S256, `state`, `resource`) and
//! the code comes back to a loopback listener. Tokens live in a [`TokenVault`] (the keychain)
//! and are refreshed before they expire and when the server refuses them.

mod redirect;
mod vault;

use std::error::Error;
use std::future::Future;
use std::sync::Arc;

use rmcp::transport::AuthClient;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, JwtSigningAlgorithm, OAuthClientConfig,
};
use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};

pub use redirect::AUTHORIZE_TIMEOUT;
pub(crate) use redirect::Redirect;
use vault::VaultStore;
pub use vault::{MemoryVault, TokenVault, vault_key};

/// How Skald identifies itself to a server's authorization server (`oauth:` of a server in
/// config.yml). Empty: the client registers itself dynamically.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OAuthSettings {
    /// A client registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// Its secret (read from the environment variable the config names).
    pub client_secret: Option<String>,
    /// Scopes to ask for instead of those the server names.
    pub scopes: Vec<String>,
    /// An HTTPS URL where Skald's client metadata document is published, used as the client
    /// id where the authorization server accepts such documents.
    pub client_metadata_url: Option<String>,
    /// No person involved: `client_id` and `client_secret` (or a JWT signed with
    /// `private_key_pem`) are exchanged for a token directly (the client credentials grant),
    /// for servers acting for a machine rather than a user.
    pub client_credentials: bool,
    /// A PEM private key that signs the client's assertion (`private_key_jwt`, RFC 7523).
    pub private_key_pem: Option<String>,
    /// Its algorithm: RS256, RS384, RS512, ES256 (the default) or ES384.
    pub signing_algorithm: Option<String>,
}

/// The JWT algorithm named `name`.
fn signing_algorithm(name: Option<&str>) -> Result<JwtSigningAlgorithm, String> {
    Ok(match name.unwrap_or("ES256").to_ascii_uppercase().as_str() {
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        "ES256" => JwtSigningAlgorithm::ES256,
        "ES384" => JwtSigningAlgorithm::ES384,
        other => {
            return Err(format!(
                "`{other}` is not a signing algorithm Skald knows (RS256, RS384, RS512, ES256, ES384)"
            ));
        }
    })
}

/// The redirect URI given when refreshing (a refresh sends none; rmcp wants one configured).
const REFRESH_REDIRECT: &str = "http://127.0.0.1/callback";
/// The client name sent at dynamic registration.
const CLIENT_NAME: &str = "Skald";

/// The HTTP client of an HTTP server's transport.
pub(crate) type AuthorizedClient = AuthClient<reqwest13::Client>;

/// What a server wants before it answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AuthNeed {
    /// A 401, with its `WWW-Authenticate` header (empty when it sent none).
    Authorize(String),
    /// A 403 `insufficient_scope`: authorize again for more (the header names the scopes).
    MoreScope(String),
    /// The stored tokens no longer work and cannot be refreshed (a revoked refresh token), with
    /// the server's header when it sent one.
    Again(String),
}

impl AuthNeed {
    /// The challenge to start the next authorization from.
    pub(crate) fn challenge(&self) -> Option<&str> {
        match self {
            Self::Authorize(h) | Self::MoreScope(h) | Self::Again(h) if !h.is_empty() => Some(h),
            _ => None,
        }
    }

    /// A 401 to a request that carried a token (which the client could not refresh) is an
    /// authorization that expired or was revoked, not a first one.
    pub(crate) fn with_tokens(self, had_tokens: bool) -> Self {
        match self {
            Self::Authorize(h) if had_tokens => Self::Again(h),
            other => other,
        }
    }

    /// In words, with what to do.
    pub(crate) fn describe(&self, server: &str) -> String {
        let what = match self {
            Self::Authorize(_) => "the server requires authorization: authorize Skald",
            Self::MoreScope(_) => {
                "the server needs more permissions than were granted: authorize again"
            }
            Self::Again(_) => "the server's authorization expired or was revoked: authorize again",
        };
        format!("{what} (`skald mcp login {server}`, or Authorize in Settings → MCP)")
    }
}

/// Whether `e` (or a cause of it) is a server's demand for authorization.
pub(crate) fn auth_need(e: &(dyn Error + 'static)) -> Option<AuthNeed> {
    let mut next = Some(e);
    while let Some(e) = next {
        if let Some(r) = e.downcast_ref::<AuthRequiredError>() {
            return Some(AuthNeed::Authorize(r.www_authenticate_header.clone()));
        }
        if let Some(r) = e.downcast_ref::<InsufficientScopeError>() {
            return Some(AuthNeed::MoreScope(r.www_authenticate_header.clone()));
        }
        if let Some(
            AuthError::AuthorizationRequired
            | AuthError::TokenRefreshRejected(_)
            | AuthError::TokenExpired,
        ) = e.downcast_ref::<AuthError>()
        {
            return Some(AuthNeed::Again(String::new()));
        }
        next = e.source();
    }
    None
}

/// rmcp's auth errors in words a person can act on (no Rust type names, nothing secret).
pub(crate) fn describe(e: &AuthError) -> String {
    match e {
        AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_) => {
            "the authorization was refused or revoked; authorize again".into()
        }
        AuthError::HttpError(e) => format!("cannot reach the authorization server: {e}"),
        AuthError::DiscoveryRequestFailed { url, source } => {
            format!("cannot read the authorization metadata at {url}: {source}")
        }
        AuthError::NoAuthorizationSupport => {
            "the server names no authorization server (no OAuth metadata found)".into()
        }
        AuthError::PkceUnsupported => {
            "the authorization server does not support PKCE with S256, which Skald requires".into()
        }
        other => {
            // rmcp's messages are plain text; a first word that is not an acronym ("OAuth")
            // starts in lower case, like ours.
            let text = other.to_string();
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(first), Some(second)) if second.is_lowercase() => {
                    first.to_lowercase().chain(text.chars().skip(1)).collect()
                }
                _ => text,
            }
        }
    }
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// The authorization server's endpoints are ones a code, a verifier or a secret may go to:
/// HTTPS (OAuth 2.1 §1.5), or plain HTTP only on this machine and only when the authorization
/// server (or, for metadata made up from the 2025-03-26 defaults, the MCP server at
/// `server_url`) is itself on this machine — a remote server's metadata cannot point Skald's
/// token request at a local service. Endpoints on another origin than the issuer are allowed over
/// HTTPS, as RFC 8414 allows them (the issuer itself is checked against where the metadata
/// came from by rmcp).
pub(crate) fn check_endpoints(
    metadata: &AuthorizationMetadata,
    server_url: &str,
) -> Result<(), String> {
    let local =
        |u: Option<&str>| u.and_then(|u| url::Url::parse(u).ok()).is_some_and(|u| is_loopback(&u));
    let issuer_local = match metadata.issuer.as_deref() {
        Some(issuer) => local(Some(issuer)),
        None => local(Some(server_url)),
    };
    let endpoints = [
        ("authorization", Some(&metadata.authorization_endpoint)),
        ("token", Some(&metadata.token_endpoint)),
        ("registration", metadata.registration_endpoint.as_ref()),
    ];
    for (what, endpoint) in endpoints {
        let Some(endpoint) = endpoint else { continue };
        let url = url::Url::parse(endpoint)
            .map_err(|_| format!("the {what} endpoint `{endpoint}` is not a URL"))?;
        let ok = match url.scheme() {
            "https" => !is_loopback(&url) || issuer_local,
            "http" => is_loopback(&url) && issuer_local,
            _ => false,
        };
        if !ok {
            return Err(format!(
                "the authorization server's {what} endpoint `{endpoint}` is refused: endpoints \
                 must use HTTPS, and only an authorization server on this machine may use one \
                 on this machine"
            ));
        }
    }
    Ok(())
}

/// The reqwest client a server's requests go through: no redirects followed, so a request
/// carrying a token never leaves the server's URL.
pub(crate) fn http_client() -> reqwest13::Client {
    reqwest13::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(reqwest13::redirect::Policy::none())
        .build()
        .unwrap_or_default()
}

/// The transport client of `server` at `url`: with its stored tokens when it has any (refreshed
/// as they near expiry and when the server refuses them), without when it has none — then the
/// server's 401 says it needs authorizing. With `client_credentials`, a token is obtained here.
/// Also says whether it holds a token.
pub(crate) async fn client(
    server: &str,
    url: &str,
    settings: &OAuthSettings,
    vault: Arc<dyn TokenVault>,
) -> Result<(AuthorizedClient, bool), String> {
    let mut manager = AuthorizationManager::new(url).await.map_err(|e| describe(&e))?;
    let store = VaultStore::new(vault, server, url);
    manager.set_credential_store(store.clone());
    if settings.client_credentials {
        // A new token at each start: the grant has no refresh token to keep.
        manager = client_credentials(manager, url, settings).await?;
    } else if store.has_tokens().await {
        store.load_client_secret().await;
        match manager.initialize_from_store().await {
            Ok(true) => {
                if let Ok((client_id, _)) = manager.get_credentials().await {
                    let secret = match (&settings.client_id, &settings.client_secret) {
                        (Some(id), Some(s)) if *id == client_id => Some(s.clone()),
                        _ => store.client_secret(),
                    };
                    if let Some(secret) = secret {
                        let config = OAuthClientConfig::new(client_id, REFRESH_REDIRECT)
                            .with_client_secret(secret);
                        manager.configure_client(config).map_err(|e| describe(&e))?;
                    }
                }
            }
            Ok(false) => {}
            Err(e) => return Err(describe(&e)),
        }
    }
    let has_token = manager.get_credentials().await.is_ok_and(|(_, t)| t.is_some());
    Ok((AuthClient::new(http_client(), manager), has_token))
}

/// The client credentials grant: `client_id` and `client_secret` for a token, no browser.
async fn client_credentials(
    mut manager: AuthorizationManager,
    url: &str,
    settings: &OAuthSettings,
) -> Result<AuthorizationManager, String> {
    let config = match (&settings.client_id, &settings.client_secret, &settings.private_key_pem) {
        (Some(client_id), _, Some(pem)) => ClientCredentialsConfig::PrivateKeyJwt {
            client_id: client_id.clone(),
            signing_key: pem.as_bytes().to_vec(),
            signing_algorithm: signing_algorithm(settings.signing_algorithm.as_deref())?,
            token_endpoint_audience: None,
            scopes: settings.scopes.clone(),
            resource: Some(url.to_string()),
        },
        (Some(client_id), Some(client_secret), None) => ClientCredentialsConfig::ClientSecret {
            client_id: client_id.clone(),
            client_secret: client_secret.clone(),
            scopes: settings.scopes.clone(),
            resource: Some(url.to_string()),
        },
        _ => {
            return Err("the client credentials grant needs `oauth.client_id` and \
                        `oauth.client_secret_env` (or `oauth.private_key_env`) in the server's \
                        config"
                .into());
        }
    };
    let resolution = manager.resolve_metadata().await.map_err(|e| describe(&e))?;
    check_endpoints(&resolution.metadata, url)?;
    manager.set_metadata(resolution.metadata);
    manager.validate_client_credentials_metadata(&config).map_err(|e| describe(&e))?;
    manager.configure_client_credentials(&config).map_err(|e| describe(&e))?;
    // rmcp's exchange cannot move between threads (it holds a form serializer across an
    // await), so it runs on a thread of its own rather than on the engine's runtime.
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let exchanged = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
            .and_then(|rt| {
                rt.block_on(manager.exchange_client_credentials(&config)).map_err(|e| describe(&e))
            });
        let _ = tx.send(exchanged.map(|_| manager));
    });
    rx.await.map_err(|_| "the token request stopped".to_string())?
}

/// An authorization waiting for the user: open `url` in a browser; `done` finishes it when the
/// browser comes back (the tokens are then in the vault).
pub(crate) struct Started {
    pub url: String,
    pub done: std::pin::Pin<Box<dyn Future<Output = Result<(), String>> + Send>>,
}

/// Starts authorizing `server` at `url`: discovery (from `challenge`, the server's last
/// `WWW-Authenticate`, when there is one), the client (configured, a metadata document, or
/// registered now), and the authorization URL with PKCE, `state` and `resource`.
pub(crate) async fn start(
    server: &str,
    url: &str,
    settings: &OAuthSettings,
    vault: Arc<dyn TokenVault>,
    challenge: Option<&str>,
) -> Result<Started, String> {
    let redirect = Redirect::bind().await?;
    let mut manager = AuthorizationManager::new(url).await.map_err(|e| describe(&e))?;
    let store = VaultStore::new(vault, server, url);
    manager.set_credential_store(store.clone());
    let resolution =
        manager.resolve_metadata_from_challenge(challenge).await.map_err(|e| describe(&e))?;
    check_endpoints(&resolution.metadata, url)?;
    let supports_cimd = resolution
        .metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    manager.set_metadata(resolution.metadata);
    let mut request = AuthorizationRequest::new(redirect.uri()).with_client_name(CLIENT_NAME);
    if !settings.scopes.is_empty() {
        request = request.with_scopes(settings.scopes.clone());
    }
    if let Some(client_id) = &settings.client_id {
        request = request.with_preregistered_client(client_id.clone());
        if let Some(secret) = &settings.client_secret {
            request = request.with_client_secret(secret.clone());
        }
    } else if let Some(document) = settings.client_metadata_url.as_ref().filter(|_| supports_cimd) {
        request = request.with_client_metadata_url(document.clone());
    } else {
        // Registered here rather than inside rmcp's session so its secret (if it gets one) is
        // kept with the tokens for refreshing after a restart.
        let scopes = if settings.scopes.is_empty() {
            manager.select_scopes(None, &[])
        } else {
            settings.scopes.clone()
        };
        let scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let registered = manager
            .register_client(CLIENT_NAME, redirect.uri(), &scopes)
            .await
            .map_err(|e| describe(&e))?;
        request = request.with_preregistered_client(registered.client_id.clone());
        if let Some(secret) = &registered.client_secret {
            request = request.with_client_secret(secret.clone());
        }
        store.set_client_secret(registered.client_secret);
    }
    let session =
        AuthorizationSession::new(manager, request).await.map_err(|(_, e)| describe(&e))?;
    let auth_url = session.get_authorization_url().to_string();
    let state = url::Url::parse(&auth_url)
        .ok()
        .and_then(|u| u.query_pairs().find(|(k, _)| k == "state").map(|(_, v)| v.into_owned()))
        .ok_or("the authorization URL carries no `state`")?;
    let done = async move {
        let callback = redirect.wait(&state, AUTHORIZE_TIMEOUT).await?;
        session
            .handle_callback_with_issuer(
                &callback.code,
                &callback.state,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(|e| describe(&e))?;
        Ok(())
    };
    Ok(Started { url: auth_url, done: Box::pin(done) })
}

/// Drops `server`'s stored tokens.
pub(crate) async fn forget(
    server: &str,
    url: &str,
    vault: Arc<dyn TokenVault>,
) -> Result<(), String> {
    VaultStore::new(vault, server, url).forget().await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rmcp::transport::auth::AuthorizationMetadata;

    use super::check_endpoints;

    fn metadata(issuer: &str, authorize: &str, token: &str) -> AuthorizationMetadata {
        let mut m = AuthorizationMetadata::default();
        m.issuer = Some(issuer.into());
        m.authorization_endpoint = authorize.into();
        m.token_endpoint = token.into();
        m
    }

    #[test]
    fn auth_errors_read_as_sentences_without_type_names() {
        use rmcp::transport::auth::AuthError;
        let exchange = AuthError::TokenExchangeFailed("invalid_grant".into());
        assert_eq!(super::describe(&exchange), "OAuth token exchange failed: invalid_grant");
        let registration = AuthError::RegistrationFailed("HTTP 400".into());
        assert_eq!(super::describe(&registration), "registration failed: HTTP 400");
        let revoked = AuthError::TokenRefreshRejected("invalid_grant".into());
        assert!(super::describe(&revoked).contains("authorize again"));
        for e in [exchange, registration, revoked] {
            let text = super::describe(&e);
            assert!(!text.contains("AuthError") && !text.contains("::"), "{text}");
        }
    }

    #[test]
    fn endpoints_must_be_https_or_on_this_machine_for_a_local_server() {
        let ok = metadata("https://as.example", "https://as.example/a", "https://as.example/t");
        let server = "https://mcp.example/mcp";
        assert_eq!(check_endpoints(&ok, server), Ok(()));
        // Another origin over HTTPS: RFC 8414 allows it.
        let other = metadata("https://as.example", "https://as.example/a", "https://tok.example/t");
        assert_eq!(check_endpoints(&other, server), Ok(()));
        let local = metadata("http://127.0.0.1:9", "http://127.0.0.1:9/a", "http://localhost:9/t");
        assert_eq!(check_endpoints(&local, server), Ok(()));
        // Plain HTTP to another host: the code and verifier would travel in the clear.
        let plain = metadata("https://as.example", "https://as.example/a", "http://evil.example/t");
        let err = check_endpoints(&plain, server).unwrap_err();
        assert!(err.contains("token endpoint `http://evil.example/t` is refused"), "{err}");
        // A remote authorization server pointing the token request at this machine.
        let ssrf = metadata("https://as.example", "https://as.example/a", "https://127.0.0.1/t");
        assert!(check_endpoints(&ssrf, server).is_err());
        // Endpoints made up from a remote server's URL (no issuer) are held to the same rule.
        let mut made_up = metadata("", "http://127.0.0.1/authorize", "http://127.0.0.1/token");
        made_up.issuer = None;
        assert!(check_endpoints(&made_up, server).is_err());
        assert_eq!(check_endpoints(&made_up, "http://localhost:8/mcp"), Ok(()));
        let scheme = metadata("https://as.example", "javascript:alert(1)", "https://as.example/t");
        assert!(check_endpoints(&scheme, server).is_err());
    }
}
