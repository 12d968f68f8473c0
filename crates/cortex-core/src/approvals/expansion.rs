//! What bash does with a word's expansions beyond substituting a value:
//! which parameter expansions only read a variable, and which words it
//! rewrites by globbing or brace expansion.

use super::analysis::Analysis;
use brush_parser::word::{Parameter, ParameterExpr, WordPiece, WordPieceWithSource};

/// A parameter expansion: only plain reads of a variable (with a
/// default, an alternative, a length or a pattern removal) are read;
/// the rest evaluates or assigns (`${a[i]}` and `${x:off}` evaluate
/// arithmetic, `${!x}` a name, `${x@P}` a prompt, `${x:=v}` assigns).
/// Returns the nested word (a default, a pattern) for the caller to read.
pub(super) fn parameter<'a>(expr: &'a ParameterExpr, out: &mut Analysis) -> Option<&'a str> {
    use ParameterExpr as P;
    let (parameter, indirect, nested) = match expr {
        P::Parameter {
            parameter,
            indirect,
        }
        | P::ParameterLength {
            parameter,
            indirect,
        } => (parameter, *indirect, None),
        P::UseDefaultValues {
            parameter,
            indirect,
            default_value: nested,
            ..
        }
        | P::IndicateErrorIfNullOrUnset {
            parameter,
            indirect,
            error_message: nested,
            ..
        }
        | P::UseAlternativeValue {
            parameter,
            indirect,
            alternative_value: nested,
            ..
        }
        | P::RemoveSmallestSuffixPattern {
            parameter,
            indirect,
            pattern: nested,
        }
        | P::RemoveLargestSuffixPattern {
            parameter,
            indirect,
            pattern: nested,
        }
        | P::RemoveSmallestPrefixPattern {
            parameter,
            indirect,
            pattern: nested,
        }
        | P::RemoveLargestPrefixPattern {
            parameter,
            indirect,
            pattern: nested,
        } => (parameter, *indirect, nested.as_ref()),
        _ => {
            out.opaque(
                "a parameter expansion that assigns, transforms or evaluates cannot be read",
            );
            return None;
        }
    };
    if indirect {
        out.opaque("an indirect expansion (`${!x}`) evaluates a name only known when it runs");
    }
    if matches!(parameter, Parameter::NamedWithIndex { .. }) {
        out.opaque("an array subscript is evaluated as arithmetic");
    }
    nested.map(String::as_str)
}

/// Whether bash expands the word's unquoted text into something else: a
/// glob (`*`, `?`, `[…]`) or a brace expansion (`{a,b}`, `{1..3}`).
pub(super) fn expands(pieces: &[WordPieceWithSource]) -> bool {
    let unquoted: String = pieces
        .iter()
        .filter_map(|p| match &p.piece {
            WordPiece::Text(s) => Some(s.as_str()),
            _ => None,
        })
        .collect();
    let glob = unquoted.contains('*')
        || unquoted.contains('?')
        || unquoted
            .find('[')
            .is_some_and(|open| unquoted[open..].contains(']'));
    let brace = unquoted
        .find('{')
        .is_some_and(|open| unquoted[open..].contains('}'))
        && (unquoted.contains(',') || unquoted.contains(".."));
    glob || brace
}
