//! What the operations' request types share (each type lives beside its operation, as
//! `capture::Ask`; the CLI flattens it, the MCP tool deserializes it).
//!
//! Invariant: a field that the CLI may leave out (it reads the value elsewhere: a file,
//! stdin, a positional) but the MCP tool publishes as required is an `Option` read
//! through [`required`], so a call without it is refused as a missing field.

use serde::{Deserialize, Deserializer};

/// A field the MCP tool requires (serde reports it missing: no `default` goes with it)
/// that the CLI holds as an `Option`.
pub fn required<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}
