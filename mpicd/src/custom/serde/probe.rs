//! Probing an element of a sequence: does it serialize as exactly one number, and which?

use super::format::{number_methods, Kind};
use serde::ser::{self, Serialize};

/// Serializes an element only to learn whether it is one number: its kind and bits
/// (zero-extended). Anything else fails at its first call, and the element is then serialized
/// again by the encoder (so a `Serialize` impl runs twice for the elements that decide or change
/// a sequence's layout: the first, and one where the layout changes).
pub(super) struct NumberProbe;

/// The element is not one number.
#[derive(Debug)]
pub(super) struct NotNumber;

impl std::fmt::Display for NotNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a number")
    }
}

impl std::error::Error for NotNumber {}

impl ser::Error for NotNumber {
    fn custom<T: std::fmt::Display>(_msg: T) -> Self {
        NotNumber
    }
}

type Probed = std::result::Result<(Kind, u64), NotNumber>;
type NoCompound = ser::Impossible<(Kind, u64), NotNumber>;

macro_rules! probe_numbers {
    ($($method:ident($t:ty) => $kind:ident, $bits:expr;)*) => {$(
        #[inline(always)]
        fn $method(self, v: $t) -> Probed {
            #[allow(clippy::redundant_closure_call)]
            Ok((Kind::$kind, ($bits)(v)))
        }
    )*};
}

macro_rules! probe_others {
    ($($method:ident($($t:ty),*);)*) => {$(
        #[inline]
        fn $method(self, $(_: $t),*) -> Probed {
            Err(NotNumber)
        }
    )*};
}

impl ser::Serializer for NumberProbe {
    type Ok = (Kind, u64);
    type Error = NotNumber;
    type SerializeSeq = NoCompound;
    type SerializeTuple = NoCompound;
    type SerializeTupleStruct = NoCompound;
    type SerializeTupleVariant = NoCompound;
    type SerializeMap = NoCompound;
    type SerializeStruct = NoCompound;
    type SerializeStructVariant = NoCompound;

    fn is_human_readable(&self) -> bool {
        false
    }

    number_methods!(probe_numbers);

    probe_others! {
        serialize_bool(bool);
        serialize_i128(i128);
        serialize_u128(u128);
        serialize_char(char);
        serialize_str(&str);
        serialize_bytes(&[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _value: &T) -> Probed {
        Err(NotNumber)
    }

    /// A newtype of a number is that number.
    #[inline(always)]
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Probed {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Probed {
        Err(NotNumber)
    }

    fn serialize_seq(self, _len: Option<usize>) -> std::result::Result<NoCompound, NotNumber> {
        Err(NotNumber)
    }

    fn serialize_tuple(self, _len: usize) -> std::result::Result<NoCompound, NotNumber> {
        Err(NotNumber)
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> std::result::Result<NoCompound, NotNumber> {
        Err(NotNumber)
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> std::result::Result<NoCompound, NotNumber> {
        Err(NotNumber)
    }

    fn serialize_map(self, _len: Option<usize>) -> std::result::Result<NoCompound, NotNumber> {
        Err(NotNumber)
    }

    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> std::result::Result<NoCompound, NotNumber> {
        Err(NotNumber)
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> std::result::Result<NoCompound, NotNumber> {
        Err(NotNumber)
    }

    fn collect_str<T: ?Sized + std::fmt::Display>(self, _value: &T) -> Probed {
        Err(NotNumber)
    }
}
