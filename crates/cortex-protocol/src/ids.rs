//! Identifiers. Plain strings on the wire so any client can mint or compare
//! them; the newtypes keep a session id from being passed where a call id is
//! expected.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// The id as it is on the wire.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self(value)
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                Self(value.to_owned())
            }
        }
    };
}

id_type!(
    /// A session: one repository, its mode, model, history and timeline.
    SessionId
);
id_type!(
    /// One turn inside a session.
    TurnId
);
id_type!(
    /// One tool call, as named by the model (or minted by the harness when the
    /// model gave none). A tool never runs twice for one call id.
    CallId
);
