//! rmcp's errors in words a person can act on: without the Rust type names its transport errors
//! carry (`Transport [rmcp::transport::worker::WorkerTransport<…>] error: …`), with the cause
//! underneath (a refused connection, an HTTP status) kept.

use std::error::Error;

use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::transport::DynamicTransportError;

use crate::oauth::{AuthNeed, auth_need};

/// A request's failure that is the server asking for (more) authorization.
pub(crate) fn service_need(e: &ServiceError) -> Option<AuthNeed> {
    match e {
        ServiceError::TransportSend(t) => auth_need(t.error.as_ref()),
        _ => None,
    }
}

/// An `initialize` that failed because the server wants authorization.
pub(crate) fn init_need(e: &ClientInitializeError) -> Option<AuthNeed> {
    match e {
        ClientInitializeError::TransportError { error, .. } => auth_need(error.error.as_ref()),
        _ => None,
    }
}

/// `e` and its causes, one after the other, each said once.
fn chain(e: &(dyn Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

fn transport(e: &DynamicTransportError) -> String {
    let text = chain(e.error.as_ref());
    if text.contains("Auth required") || text.contains("401") {
        return format!("the server requires authorization ({text}); check its API key");
    }
    if text.contains("Insufficient scope") || text.contains("403") {
        return format!("the server refused access ({text})");
    }
    text
}

/// A failed request.
pub fn describe(e: &ServiceError) -> String {
    match e {
        ServiceError::TransportSend(t) => format!("could not reach the server: {}", transport(t)),
        ServiceError::TransportClosed => "the connection to the server closed".into(),
        ServiceError::McpError(data) => data.message.to_string(),
        other => other.to_string(),
    }
}

/// A failed `initialize`.
pub fn describe_init(e: &ClientInitializeError) -> String {
    match e {
        ClientInitializeError::TransportError { error, context } => {
            format!("could not reach the server ({context}): {}", transport(error))
        }
        ClientInitializeError::JsonRpcError(data) => {
            format!("the server refused to initialize: {}", data.message)
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::service::ServiceError;
    use rmcp::transport::DynamicTransportError;

    use super::describe;

    #[derive(Debug, thiserror::Error)]
    #[error("error sending request")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn a_transport_error_names_its_cause_and_no_rust_type() {
        let inner =
            Outer(std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused"));
        let e = ServiceError::TransportSend(DynamicTransportError::from_parts(
            "rmcp::transport::worker::WorkerTransport<X>",
            std::any::TypeId::of::<u8>(),
            Box::new(inner),
        ));
        let text = describe(&e);
        assert_eq!(text, "could not reach the server: error sending request: connection refused");
        assert!(!e.to_string().is_empty() && !text.contains("rmcp::"), "{text}");
    }
}
