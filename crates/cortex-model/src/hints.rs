//! Hints: typed values a harness hands to the providers that understand
//! them, beside the provider-neutral request.
//!
//! A map keyed by type, as `http::Extensions` is: the harness inserts what
//! it knows ([`QuotableFiles`], [`RefusedCalls`]), a provider looks up the
//! types it reads (the embedded model's grammar and sampler) and the
//! others never see them. Two requests with the same hints are equal, so
//! a resumed session can be checked to send the same next request.

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A value that can be a hint: compared and shown like any request field.
trait Hint: Any + Send + Sync + std::fmt::Debug {
    fn eq_hint(&self, other: &dyn Hint) -> bool;
    fn as_any(&self) -> &dyn Any;
}

impl<T: Any + Send + Sync + std::fmt::Debug + PartialEq> Hint for T {
    fn eq_hint(&self, other: &dyn Hint) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The hints of one request, at most one value per type.
#[derive(Clone, Default)]
pub struct Hints(BTreeMap<TypeId, Arc<dyn Hint>>);

impl Hints {
    /// Adds `value`, replacing a value of its type.
    pub fn insert<T: Any + Send + Sync + std::fmt::Debug + PartialEq>(&mut self, value: T) {
        self.0.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The value of type `T`, if the harness gave one.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0
            .get(&TypeId::of::<T>())
            .and_then(|v| v.as_any().downcast_ref())
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl PartialEq for Hints {
    fn eq(&self, other: &Hints) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .all(|(k, v)| other.0.get(k).is_some_and(|o| v.eq_hint(o.as_ref())))
    }
}

impl std::fmt::Debug for Hints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.values()).finish()
    }
}

/// The files an `edit_file` call may name, each with its text when the
/// model was shown it whole (the `quoted` edit format). A provider that
/// can constrain generation (the embedded model's grammar) allows an
/// `edit_file` only on these paths and, for a file with its text, only an
/// `old_string` made of whole consecutive lines of that text. A file that
/// has changed since is the harness's to catch (read before write).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QuotableFiles(pub Vec<QuotableFile>);

/// Calls the harness refused and will refuse again if the reply makes
/// them unchanged (a repeat the stop rule bars, a refusal that holds while
/// its call comes back as it was). A provider that draws the reply itself
/// (the embedded model, greedy by default) draws it again with some
/// randomness when the reply is one of them: drawn greedily from the same
/// prompt, it is the same call every time.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RefusedCalls(pub Vec<RefusedCall>);

/// A call the harness will refuse ([`RefusedCalls`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedCall {
    /// The tool's name.
    pub name: String,
    /// The arguments as the model wrote them (JSON text).
    pub arguments: String,
    /// The arguments (JSON text) of the call the refusal handed over in
    /// its place, when it did. A provider that draws the reply again
    /// departs from the refused call where it first differs from this one
    /// rather than at random: the 1.5B drew its refused call unchanged at
    /// temperature 0.8.
    pub instead: Option<String>,
}

impl RefusedCall {
    /// Whether a call to `name` with `arguments` is this one: the same
    /// tool and [`same_arguments`] (a model writes `"replace_all": null` one
    /// time and nothing the next).
    pub fn matches(&self, name: &str, arguments: &str) -> bool {
        self.name == name && same_arguments(&self.arguments, arguments)
    }
}

/// Whether two calls' arguments (JSON text as models write it) are the
/// same: equal once parsed, a member given as `null` counting as left out;
/// as text when either does not parse.
pub fn same_arguments(a: &str, b: &str) -> bool {
    match (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        (Ok(a), Ok(b)) => without_nulls(a) == without_nulls(b),
        _ => a.trim() == b.trim(),
    }
}

/// `value` with every object member whose value is `null` left out.
fn without_nulls(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => map
            .into_iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k, without_nulls(v)))
            .collect(),
        serde_json::Value::Array(items) => items.into_iter().map(without_nulls).collect(),
        other => other,
    }
}

/// A file an edit may name, and the text it may quote ([`QuotableFiles`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotableFile {
    /// The path as the model names it (relative to the workspace).
    pub path: String,
    /// The file's text as the model was shown it, without line numbers;
    /// `None` when the model has not seen it whole (any `old_string` then).
    pub text: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_are_found_by_type_and_compared_by_value() {
        let mut a = Hints::default();
        assert!(a.is_empty() && a.get::<RefusedCalls>().is_none());
        let call = RefusedCall {
            name: "read_file".into(),
            arguments: "{}".into(),
            instead: None,
        };
        a.insert(RefusedCalls(vec![call.clone()]));
        assert_eq!(a.get::<RefusedCalls>().map(|r| r.0.len()), Some(1));
        assert!(a.get::<QuotableFiles>().is_none());
        let mut b = Hints::default();
        assert_ne!(a, b);
        b.insert(RefusedCalls(vec![call]));
        assert_eq!(a, b);
        b.insert(RefusedCalls(Vec::new()));
        assert_ne!(a, b);
    }
}
