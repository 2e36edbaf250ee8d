//! Lenient, allocation-light JSON field types for the wire-format parsers.
//!
//! Owns: `LStr` (a string, or nothing when the field holds any other type), `Lenient<T>`
//! (an object parsed as `T`, or nothing), `Snippet` (the first few hundred characters of a
//! string or of the text inside nested blocks) and `LBool`. Invariants: a field of an
//! unexpected type never fails the line (the line's other fields still count); values we
//! do not need are skipped without allocating (serde's `IgnoredAny`); a borrowed string is
//! not copied.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::model::clip;

/// How much of a tool result or error text a parser keeps.
pub const SNIPPET_CHARS: usize = 600;

fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// A string field; `None` when absent, null or of another type.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LStr<'a>(pub Option<Cow<'a, str>>);

impl<'a> LStr<'a> {
    pub fn as_deref(&self) -> Option<&str> {
        self.0.as_deref()
    }
    pub fn is(&self, s: &str) -> bool {
        self.0.as_deref() == Some(s)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for LStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = LStr<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(LStr(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(LStr(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(LStr(Some(Cow::Owned(v))))
            }
            // Ids are sometimes numbers: keep them as text.
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(LStr(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(LStr(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(LStr(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(LStr(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(LStr(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(LStr(None))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                LStr::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                drain_seq(seq)?;
                Ok(LStr(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                drain_map(map)?;
                Ok(LStr(None))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A boolean field; false unless it is `true`.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct LBool(pub bool);

impl<'de> Deserialize<'de> for LBool {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = IgnoredOr::<bool>::deserialize(d)?;
        Ok(LBool(v.0 == Some(true)))
    }
}

/// A scalar of type T, or nothing.
struct IgnoredOr<T>(Option<T>);

impl<'de> Deserialize<'de> for IgnoredOr<bool> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IgnoredOr<bool>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(IgnoredOr(Some(v)))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(IgnoredOr(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(IgnoredOr(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(IgnoredOr(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(IgnoredOr(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(IgnoredOr(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(IgnoredOr(None))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                IgnoredOr::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                drain_seq(seq)?;
                Ok(IgnoredOr(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                drain_map(map)?;
                Ok(IgnoredOr(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A number field (ids and times arrive as numbers or numeric strings); `None` otherwise.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct LNum(pub Option<f64>);

impl<'de> Deserialize<'de> for LNum {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LNum;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(LNum(Some(v as f64)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(LNum(Some(v as f64)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(LNum(Some(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(LNum(v.trim().parse().ok()))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(LNum(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(LNum(None))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                LNum::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                drain_seq(seq)?;
                Ok(LNum(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                drain_map(map)?;
                Ok(LNum(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// An object parsed as `T`; `None` when the field holds anything else.
#[derive(Debug)]
pub struct Lenient<T>(pub Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Lenient<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(|t| Lenient(Some(t)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                drain_seq(seq)?;
                Ok(Lenient(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                Lenient::deserialize(d)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A list of `T` where elements of another shape are skipped.
#[derive(Debug)]
pub struct LList<T>(pub Vec<T>);

impl<T> Default for LList<T> {
    fn default() -> Self {
        LList(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for LList<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = LList<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some(Lenient(x)) = seq.next_element::<Lenient<T>>()? {
                    v.extend(x);
                }
                Ok(LList(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                drain_map(map)?;
                Ok(LList(Vec::new()))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(LList(Vec::new()))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(LList(Vec::new()))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(LList(Vec::new()))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(LList(Vec::new()))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(LList(Vec::new()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(LList(Vec::new()))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                LList::deserialize(d)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// The first `SNIPPET_CHARS` characters of a string, or of the `text` fields found in a
/// list of blocks (`[{"type":"text","text":...}]`), however deeply nested.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Snippet(pub String);

impl Snippet {
    fn add(&mut self, s: &str) {
        if self.0.chars().count() >= SNIPPET_CHARS {
            return;
        }
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        let room = SNIPPET_CHARS.saturating_sub(self.0.chars().count());
        self.0.push_str(&clip(s, room));
    }
}

impl<'de> Deserialize<'de> for Snippet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Snippet;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                let mut s = Snippet::default();
                s.add(v);
                Ok(s)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut s = Snippet::default();
                while let Some(part) = seq.next_element::<Snippet>()? {
                    if !part.0.is_empty() {
                        s.add(&part.0);
                    }
                }
                Ok(s)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut s = Snippet::default();
                while let Some(k) = map.next_key::<LStr>()? {
                    if matches!(k.as_deref(), Some("text" | "content" | "output")) {
                        let part: Snippet = map.next_value()?;
                        if !part.0.is_empty() {
                            s.add(&part.0);
                        }
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(s)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Snippet::default())
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Snippet(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Snippet(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Snippet::default())
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Snippet::default())
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                Snippet::deserialize(d)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct T<'a> {
        #[serde(borrow, default)]
        a: LStr<'a>,
        #[serde(default)]
        b: LBool,
        #[serde(default)]
        c: Snippet,
        #[serde(default)]
        d: Lenient<Inner>,
        #[serde(default)]
        e: LList<Inner>,
    }

    #[derive(Deserialize)]
    struct Inner {
        x: u32,
    }

    #[test]
    fn wrong_types_are_nothing_not_errors() {
        let t: T = serde_json::from_str(
            r#"{"a":[1,{"z":2}],"b":"yes","c":{"q":1},"d":"str","e":[{"x":1},"no",7,{"x":3}]}"#,
        )
        .unwrap();
        assert_eq!(t.a.0, None);
        assert!(!t.b.0);
        assert_eq!(t.c.0, "");
        assert!(t.d.0.is_none());
        assert_eq!(t.e.0.iter().map(|i| i.x).collect::<Vec<_>>(), vec![1, 3]);
        let t: T = serde_json::from_str(
            r#"{"a":"hi","b":true,"c":[{"type":"text","text":"one"},{"text":"two"}],"d":{"x":7,"y":[]}}"#,
        )
        .unwrap();
        assert_eq!(t.a.as_deref(), Some("hi"));
        assert!(t.b.0);
        assert_eq!(t.c.0, "one two");
        assert_eq!(t.d.0.unwrap().x, 7);
    }
}
