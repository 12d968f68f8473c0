//! How long a request may wait at each stage. There is no overall limit: a
//! response streams for as long as the model writes.

use std::time::Duration;

/// Per-attempt time limits of an HTTP provider. Each one that runs out fails
/// the attempt with a retryable error: connect and first byte before any
/// event (so the provider retries), idle as a cut stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Establishing the TCP (and TLS) connection.
    pub connect: Duration,
    /// From sending the request to the response's status and headers.
    pub first_byte: Duration,
    /// The longest silence allowed between two pieces of a streamed body.
    /// Reasoning models may think for minutes between events on wire formats
    /// without keep-alives (Chat Completions), hence the generous default.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_secs(120),
            idle: Duration::from_secs(300),
        }
    }
}
