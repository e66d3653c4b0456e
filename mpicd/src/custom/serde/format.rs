//! The bridge's encoding, shared by its encoder ([`super::ser`]) and decoder ([`super::de`]).
//!
//! The packed part of a serde message is a version byte ([`VERSION`]) followed by the value in
//! postcard's encoding (specified and stable across postcard 1.x) with one change: a sequence or
//! tuple of at least [`RAW_MIN`] elements carries a layout byte after its length (a tuple's
//! length is not encoded, the type gives it), which says how its elements follow:
//!
//! - [`ENCODED`]: each element in the bridge's encoding, as postcard would write it;
//! - a [`Kind`]'s byte: every element is one number of that kind (each serialized exactly one
//!   `serialize_u8`, `_i32`, `_f64`, ...), written as a raw little-endian array: what a
//!   `Vec<f64>`, `Vec<u8>`, `[i32; 64]` or the inner vectors of a `Vec<Vec<f32>>` become. It is
//!   copied in one piece and read back without varint decoding, at the price of wider integers
//!   than postcard's variable-length ones for small values.
//!
//! Shorter sequences and tuples, structs, maps, enums, options, strings and scalars are postcard's
//! encoding unchanged. A [`Region`](super::Region) is encoded as its length (a `u64`) and travels
//! as the next region of the message.

use std::fmt;

/// The first byte of every packed part: this encoding. Another value is refused by the receiver.
pub(super) const VERSION: u8 = 2;

/// Sequences and tuples of at least this many elements carry a layout byte: below it the byte
/// would cost more than a raw array saves.
pub(super) const RAW_MIN: usize = 16;

/// The layout byte of a sequence whose elements are encoded one by one.
pub(super) const ENCODED: u8 = 0;

/// The kind of number a raw array holds (its layout byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Kind {
    U8 = 1,
    I8 = 2,
    U16 = 3,
    I16 = 4,
    U32 = 5,
    I32 = 6,
    U64 = 7,
    I64 = 8,
    F32 = 9,
    F64 = 10,
}

/// The serializer methods of the numbers the format writes raw, with each one's type, [`Kind`]
/// and how its value becomes the 64 bits stored: `number_methods!(m)` hands this one table to
/// the macro `m`, which makes a serializer's methods from it (the encoder's and the probe's).
macro_rules! number_methods {
    ($m:ident) => {
        $m! {
            serialize_u8(u8) => U8, |v: u8| v as u64;
            serialize_i8(i8) => I8, |v: i8| v as u8 as u64;
            serialize_u16(u16) => U16, |v: u16| v as u64;
            serialize_i16(i16) => I16, |v: i16| v as u16 as u64;
            serialize_u32(u32) => U32, |v: u32| v as u64;
            serialize_i32(i32) => I32, |v: i32| v as u32 as u64;
            serialize_u64(u64) => U64, |v: u64| v;
            serialize_i64(i64) => I64, |v: i64| v as u64;
            serialize_f32(f32) => F32, |v: f32| v.to_bits() as u64;
            serialize_f64(f64) => F64, |v: f64| v.to_bits();
        }
    };
}
pub(super) use number_methods;

impl Kind {
    /// The kind a layout byte names, `None` for [`ENCODED`] or an unknown byte.
    pub(super) fn from_byte(b: u8) -> Option<Kind> {
        use Kind::*;
        Some(match b {
            1 => U8,
            2 => I8,
            3 => U16,
            4 => I16,
            5 => U32,
            6 => I32,
            7 => U64,
            8 => I64,
            9 => F32,
            10 => F64,
            _ => return None,
        })
    }

    /// Bytes of one element.
    pub(super) const fn size(self) -> usize {
        use Kind::*;
        match self {
            U8 | I8 => 1,
            U16 | I16 => 2,
            U32 | I32 | F32 => 4,
            U64 | I64 | F64 => 8,
        }
    }
}

/// An encoding or decoding failure, with the reason.
#[derive(Debug)]
pub(super) struct FormatError(pub(super) String);

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FormatError {}

impl serde::ser::Error for FormatError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        FormatError(msg.to_string())
    }
}

impl serde::de::Error for FormatError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        FormatError(msg.to_string())
    }
}

impl From<postcard::Error> for FormatError {
    fn from(e: postcard::Error) -> Self {
        FormatError(e.to_string())
    }
}

/// A result of the bridge's encoder or decoder.
pub(super) type FormatResult<T> = std::result::Result<T, FormatError>;
