//! The bridge's decoder: a `serde::Deserializer` over the encoding of [`super::format`],
//! postcard's deserializer reading every scalar, string and header from the same input.
//!
//! A raw array is handed to the sequence's visitor element by element straight from the
//! received bytes (no varint decoding, a bounds check per element), through a sequence access
//! whose type carries the number's kind and size: in the visitor's loop, an element is a
//! length test, a load and the visitor's store.

use super::format::{FormatError, FormatResult, Kind, ENCODED, RAW_MIN, VERSION};
use postcard::de_flavors::Flavor;
use serde::de::DeserializeOwned;
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde::Deserialize;
use std::cell::Cell;

/// The packed part being decoded, shared by the decoder and postcard's deserializer.
pub(super) struct Input<'de> {
    bytes: &'de [u8],
    pos: Cell<usize>,
}

impl<'de> Input<'de> {
    fn take(&self, n: usize) -> FormatResult<&'de [u8]> {
        let start = self.pos.get();
        let bytes = start
            .checked_add(n)
            .and_then(|end| self.bytes.get(start..end))
            .ok_or_else(|| FormatError("the encoding ends early".into()))?;
        self.pos.set(start + n);
        Ok(bytes)
    }

    fn byte(&self) -> FormatResult<u8> {
        self.take(1).map(|b| b[0])
    }
}

/// postcard's view of the input.
struct Src<'de>(&'de Input<'de>);

impl<'de> Flavor<'de> for Src<'de> {
    type Remainder = ();
    type Source = ();

    #[inline]
    fn pop(&mut self) -> postcard::Result<u8> {
        self.0
            .byte()
            .map_err(|_| postcard::Error::DeserializeUnexpectedEnd)
    }

    #[inline]
    fn try_take_n(&mut self, ct: usize) -> postcard::Result<&'de [u8]> {
        self.0
            .take(ct)
            .map_err(|_| postcard::Error::DeserializeUnexpectedEnd)
    }

    fn finalize(self) -> postcard::Result<()> {
        Ok(())
    }
}

/// Decodes a value; see the module doc.
pub(super) struct Decoder<'de> {
    pg: postcard::Deserializer<'de, Src<'de>>,
    input: &'de Input<'de>,
}

/// Decodes a `T` from a packed part (with its version byte); the bytes must all be used.
pub(super) fn from_bytes<T: DeserializeOwned>(bytes: &[u8]) -> FormatResult<T> {
    with_decoder(bytes, |de| T::deserialize(de))
}

/// Decodes a `T` into `place` (serde's `deserialize_in_place`, which reuses what it can).
pub(super) fn from_bytes_in_place<T: DeserializeOwned>(
    bytes: &[u8],
    place: &mut T,
) -> FormatResult<()> {
    with_decoder(bytes, |de| T::deserialize_in_place(de, place))
}

/// Runs `decode` on a decoder over `bytes`, past the version byte; the bytes must all be used.
fn with_decoder<R>(
    bytes: &[u8],
    decode: impl for<'de> FnOnce(&mut Decoder<'de>) -> FormatResult<R>,
) -> FormatResult<R> {
    let input = Input {
        bytes,
        pos: Cell::new(0),
    };
    let value = decode_input(&input, decode)?;
    let rest = bytes.len() - input.pos.get();
    if rest != 0 {
        return Err(FormatError(format!(
            "{rest} bytes left over: the message holds another type"
        )));
    }
    Ok(value)
}

fn decode_input<'de, R>(
    input: &'de Input<'de>,
    decode: impl FnOnce(&mut Decoder<'de>) -> FormatResult<R>,
) -> FormatResult<R> {
    match input.byte() {
        Ok(VERSION) => {}
        Ok(v) => {
            return Err(FormatError(format!(
                "encoding version {v}, this build reads version {VERSION}"
            )))
        }
        Err(_) => return Err(FormatError("an empty packed part".into())),
    }
    let mut de = Decoder {
        pg: postcard::Deserializer::from_flavor(Src(input)),
        input,
    };
    decode(&mut de)
}

impl<'de> Decoder<'de> {
    fn len(&mut self) -> FormatResult<usize> {
        let n = u64::deserialize(&mut self.pg)?;
        usize::try_from(n).map_err(|_| FormatError(format!("a length of {n}")))
    }

    /// The elements of a sequence or tuple of `len`, after its length.
    fn elements<V: Visitor<'de>>(&mut self, len: usize, visitor: V) -> FormatResult<V::Value> {
        if len < RAW_MIN {
            return visitor.visit_seq(Elements {
                de: self,
                left: len,
            });
        }
        match self.input.byte()? {
            ENCODED => visitor.visit_seq(Elements {
                de: self,
                left: len,
            }),
            b => {
                let kind = Kind::from_byte(b)
                    .ok_or_else(|| FormatError(format!("unknown sequence layout {b}")))?;
                let bytes = len
                    .checked_mul(kind.size())
                    .ok_or_else(|| FormatError(format!("a sequence of {len} elements")))?;
                let bytes = self.input.take(bytes)?;
                // The kind in the type: the visitor's loop then reads a number of a known size
                // and kind, its state in registers.
                use Kind::*;
                match kind {
                    U8 => visitor.visit_seq(Numbers::<{ U8 as u8 }, 1>(bytes)),
                    I8 => visitor.visit_seq(Numbers::<{ I8 as u8 }, 1>(bytes)),
                    U16 => visitor.visit_seq(Numbers::<{ U16 as u8 }, 2>(bytes)),
                    I16 => visitor.visit_seq(Numbers::<{ I16 as u8 }, 2>(bytes)),
                    U32 => visitor.visit_seq(Numbers::<{ U32 as u8 }, 4>(bytes)),
                    I32 => visitor.visit_seq(Numbers::<{ I32 as u8 }, 4>(bytes)),
                    U64 => visitor.visit_seq(Numbers::<{ U64 as u8 }, 8>(bytes)),
                    I64 => visitor.visit_seq(Numbers::<{ I64 as u8 }, 8>(bytes)),
                    F32 => visitor.visit_seq(Numbers::<{ F32 as u8 }, 4>(bytes)),
                    F64 => visitor.visit_seq(Numbers::<{ F64 as u8 }, 8>(bytes)),
                }
            }
        }
    }
}

macro_rules! delegate {
    ($($method:ident)*) => {$(
        #[inline]
        fn $method<V: Visitor<'de>>(self, visitor: V) -> FormatResult<V::Value> {
            (&mut self.pg).$method(visitor).map_err(FormatError::from)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for &mut Decoder<'de> {
    type Error = FormatError;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> FormatResult<V::Value> {
        Err(FormatError(
            "the encoding is not self-describing: deserialize_any (untagged enums, flatten, \
             serde_json::Value) is not supported"
                .into(),
        ))
    }

    delegate! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
        deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char deserialize_str
        deserialize_string deserialize_bytes deserialize_byte_buf deserialize_unit
        deserialize_identifier deserialize_ignored_any
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> FormatResult<V::Value> {
        match self.input.byte()? {
            0 => visitor.visit_none(),
            1 => visitor.visit_some(self),
            b => Err(FormatError(format!("an option tagged {b}"))),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> FormatResult<V::Value> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> FormatResult<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> FormatResult<V::Value> {
        let len = self.len()?;
        self.elements(len, visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> FormatResult<V::Value> {
        self.elements(len, visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> FormatResult<V::Value> {
        self.elements(len, visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> FormatResult<V::Value> {
        let left = self.len()?;
        visitor.visit_map(Entries { de: self, left })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> FormatResult<V::Value> {
        visitor.visit_seq(Elements {
            de: self,
            left: fields.len(),
        })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> FormatResult<V::Value> {
        visitor.visit_enum(self)
    }
}

impl<'de> de::EnumAccess<'de> for &mut Decoder<'de> {
    type Error = FormatError;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> FormatResult<(S::Value, Self)> {
        let index = u32::deserialize(&mut self.pg)?;
        let index: de::value::U32Deserializer<FormatError> = index.into_deserializer();
        let value = seed.deserialize(index)?;
        Ok((value, self))
    }
}

impl<'de> de::VariantAccess<'de> for &mut Decoder<'de> {
    type Error = FormatError;

    fn unit_variant(self) -> FormatResult<()> {
        Ok(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> FormatResult<S::Value> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> FormatResult<V::Value> {
        self.elements(len, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> FormatResult<V::Value> {
        visitor.visit_seq(Elements {
            de: self,
            left: fields.len(),
        })
    }
}

/// Elements encoded one by one (a struct's fields, a short or encoded sequence).
struct Elements<'a, 'de> {
    de: &'a mut Decoder<'de>,
    left: usize,
}

impl<'de> de::SeqAccess<'de> for Elements<'_, 'de> {
    type Error = FormatError;

    #[inline]
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> FormatResult<Option<S::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.de).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// A map's entries.
struct Entries<'a, 'de> {
    de: &'a mut Decoder<'de>,
    left: usize,
}

impl<'de> de::MapAccess<'de> for Entries<'_, 'de> {
    type Error = FormatError;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> FormatResult<Option<S::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.de).map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> FormatResult<S::Value> {
        seed.deserialize(&mut *self.de)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// The elements of a raw array of numbers of kind `K` (a [`Kind`]'s byte), `N` bytes each.
struct Numbers<'de, const K: u8, const N: usize>(&'de [u8]);

impl<'de, const K: u8, const N: usize> de::SeqAccess<'de> for Numbers<'de, K, N> {
    type Error = FormatError;

    #[inline]
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> FormatResult<Option<S::Value>> {
        let Some((one, rest)) = self.0.split_first_chunk::<N>() else {
            return Ok(None);
        };
        self.0 = rest;
        let mut le = [0u8; 8];
        le[..N].copy_from_slice(one);
        seed.deserialize(Number::<K>(u64::from_le_bytes(le)))
            .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len() / N)
    }
}

/// One number of a raw array (its bits, zero-extended): it deserializes as whatever number
/// type asks for it (serde's visitors convert, range-checked), as the newtype around one, and
/// as nothing else.
struct Number<const K: u8>(u64);

/// The number methods: a direct read when the array holds the type asked for (the usual case,
/// one predictable branch per element), the conversions of `deserialize_any` otherwise.
macro_rules! numbers {
    ($($method:ident $visit:ident $value:expr => $kind:ident;)*) => {$(
        #[inline]
        fn $method<V: Visitor<'de>>(self, visitor: V) -> FormatResult<V::Value> {
            if K == Kind::$kind as u8 {
                #[allow(clippy::redundant_closure_call)]
                visitor.$visit(($value)(self.0))
            } else {
                self.deserialize_any(visitor)
            }
        }
    )*};
}

impl<'de, const K: u8> de::Deserializer<'de> for Number<K> {
    type Error = FormatError;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> FormatResult<V::Value> {
        let bits = self.0;
        match Kind::from_byte(K) {
            Some(Kind::U8) => visitor.visit_u8(bits as u8),
            Some(Kind::I8) => visitor.visit_i8(bits as u8 as i8),
            Some(Kind::U16) => visitor.visit_u16(bits as u16),
            Some(Kind::I16) => visitor.visit_i16(bits as u16 as i16),
            Some(Kind::U32) => visitor.visit_u32(bits as u32),
            Some(Kind::I32) => visitor.visit_i32(bits as u32 as i32),
            Some(Kind::U64) => visitor.visit_u64(bits),
            Some(Kind::I64) => visitor.visit_i64(bits as i64),
            Some(Kind::F32) => visitor.visit_f32(f32::from_bits(bits as u32)),
            Some(Kind::F64) => visitor.visit_f64(f64::from_bits(bits)),
            None => Err(FormatError(format!("unknown number kind {K}"))),
        }
    }

    numbers! {
        deserialize_u8 visit_u8 |b: u64| b as u8 => U8;
        deserialize_i8 visit_i8 |b: u64| b as u8 as i8 => I8;
        deserialize_u16 visit_u16 |b: u64| b as u16 => U16;
        deserialize_i16 visit_i16 |b: u64| b as u16 as i16 => I16;
        deserialize_u32 visit_u32 |b: u64| b as u32 => U32;
        deserialize_i32 visit_i32 |b: u64| b as u32 as i32 => I32;
        deserialize_u64 visit_u64 |b: u64| b => U64;
        deserialize_i64 visit_i64 |b: u64| b as i64 => I64;
        deserialize_f32 visit_f32 |b: u64| f32::from_bits(b as u32) => F32;
        deserialize_f64 visit_f64 f64::from_bits => F64;
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> FormatResult<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i128 u128 char str string bytes byte_buf option unit unit_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}
