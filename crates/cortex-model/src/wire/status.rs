//! Error statuses and error objects as messages a user can act on.

use crate::ModelError;

/// What the messages need to know about the request.
#[derive(Debug, Clone)]
pub(crate) struct ErrorContext {
    /// `provider:model`.
    pub(crate) describe: String,
    /// The variable the key was read from, named when it is rejected.
    pub(crate) key_env: String,
}

/// The error for an HTTP status and the (start of the) body.
pub(crate) fn classify(status: u16, body: &str, ctx: &ErrorContext) -> ModelError {
    let message = error_message(body);
    match status {
        401 | 403 => ModelError::Auth(format!(
            "{} rejected the API key ({status}: {message}); check {}",
            ctx.describe, ctx.key_env
        )),
        404 => ModelError::NoSuchModel(format!(
            "{}: no such model, or the base URL is wrong (404: {message})",
            ctx.describe
        )),
        400 | 413 if is_context_overflow(&message) => ModelError::ContextTooLong(message),
        _ => ModelError::Http {
            status,
            body: message,
        },
    }
}

/// An error object's `message` (`{"error":{"message":…}}` or
/// `{"message":…}`), else the body itself.
pub(crate) fn error_message(body: &str) -> String {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(body) else {
        return body.trim().to_owned();
    };
    let error = value.get("error").unwrap_or(&value);
    error
        .get("message")
        .and_then(|m| m.as_str())
        .or_else(|| error.as_str())
        .map_or_else(|| body.trim().to_owned(), str::to_owned)
}

/// The phrasings OpenAI, Anthropic and the common local servers use.
pub(crate) fn is_context_overflow(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "context_length_exceeded",
        "maximum context length",
        "context window",
        "prompt is too long",
        "too many tokens",
        "exceeds the context",
        "input is too long",
    ]
    .iter()
    .any(|needle| m.contains(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> ErrorContext {
        ErrorContext {
            describe: "anthropic:claude-x".into(),
            key_env: "ANTHROPIC_API_KEY".into(),
        }
    }

    #[test]
    fn statuses_become_clear_errors() {
        let auth = classify(
            401,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
            &ctx(),
        );
        assert!(
            matches!(&auth, ModelError::Auth(m) if m.contains("ANTHROPIC_API_KEY") && m.contains("invalid x-api-key"))
        );
        assert!(matches!(
            classify(404, "{\"error\":{\"message\":\"model: claude-x\"}}", &ctx()),
            ModelError::NoSuchModel(m) if m.contains("no such model")
        ));
        assert!(matches!(
            classify(
                400,
                r#"{"error":{"message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
                &ctx()
            ),
            ModelError::ContextTooLong(_)
        ));
        assert_eq!(
            classify(400, r#"{"error":{"message":"bad field"}}"#, &ctx()),
            ModelError::Http {
                status: 400,
                body: "bad field".into()
            }
        );
        let overloaded = classify(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            &ctx(),
        );
        assert!(overloaded.is_retryable());
        assert!(!auth.is_retryable());
    }

    #[test]
    fn messages_from_bodies() {
        assert_eq!(error_message("plain text "), "plain text");
        assert_eq!(error_message(r#"{"message":"m"}"#), "m");
        assert_eq!(error_message(r#"{"error":"e"}"#), "e");
        assert_eq!(error_message(r#"{"x":1}"#), r#"{"x":1}"#);
    }
}
