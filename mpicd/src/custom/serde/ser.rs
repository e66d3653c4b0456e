//! The bridge's encoder: a `serde::Serializer` that writes the encoding of [`super::format`],
//! postcard's serializer doing every scalar, string and header.
//!
//! A sequence (or tuple) of at least [`RAW_MIN`] elements starts as undecided: while each element
//! serializes as one number of the same kind, the encoder appends the number's bytes to a raw
//! array (the element's own `serialize_*` call gives the value, so a type whose `Serialize`
//! transforms its value travels transformed). The first element that is anything else turns the
//! sequence into an encoded one: the numbers so far are rewritten in postcard's encoding. A
//! collection's elements (`collect_seq`) are written by [`raw_run`], a loop specialised for the
//! element size in which the kind test does not depend on the element once `serialize` is
//! inlined: for a `Vec` of numbers the compiler hoists it and vectorises the copy. The encoder
//! calls its `progress` hook every [`PROGRESS_EVERY`] bytes of output (between runs).

use super::format::{number_methods, FormatError, FormatResult, Kind, ENCODED, RAW_MIN, VERSION};
use super::pool;
use super::probe::NumberProbe;
use postcard::ser_flavors::Flavor;
use serde::ser::{self, Serialize, Serializer as _};

/// postcard's output: a vector the encoder can also write to and patch.
pub(super) struct Out(pub(super) Vec<u8>);

impl Flavor for Out {
    type Output = Vec<u8>;

    #[inline]
    fn try_extend(&mut self, data: &[u8]) -> postcard::Result<()> {
        self.0.extend_from_slice(data);
        Ok(())
    }

    #[inline]
    fn try_push(&mut self, data: u8) -> postcard::Result<()> {
        self.0.push(data);
        Ok(())
    }

    fn finalize(self) -> postcard::Result<Vec<u8>> {
        Ok(self.0)
    }
}

/// Encodes a value; see the module doc.
pub(super) struct Encoder<'p> {
    pg: postcard::Serializer<Out>,
    /// Called every [`PROGRESS_EVERY`] bytes of output, if given.
    progress: Option<&'p mut dyn FnMut()>,
    /// The output length at which `progress` is called next.
    progress_at: usize,
}

/// Encodes `value` into a new packed part (with its version byte); `progress`, if given, is
/// called every [`PROGRESS_EVERY`] bytes of output.
pub(super) fn to_bytes<T: Serialize + ?Sized>(
    value: &T,
    progress: Option<&mut dyn FnMut()>,
) -> FormatResult<Vec<u8>> {
    let mut out = pool::take_for_encoding();
    out.push(VERSION);
    let mut enc = Encoder {
        pg: postcard::Serializer { output: Out(out) },
        progress,
        progress_at: PROGRESS_EVERY,
    };
    let done = value.serialize(&mut enc);
    let out = enc.pg.output.0;
    match done {
        Ok(()) => {
            pool::encoded(out.len());
            Ok(out)
        }
        Err(e) => {
            pool::give(out);
            Err(e)
        }
    }
}

/// Bytes of output between two calls of the encoder's `progress`: the transfers of the
/// messages sent before go on while a large value is encoded (the receiver decodes them
/// meanwhile instead of waiting for the encoding to end).
pub(super) const PROGRESS_EVERY: usize = 256 << 10;

impl<'p> Encoder<'p> {
    fn out(&mut self) -> &mut Vec<u8> {
        &mut self.pg.output.0
    }

    /// Calls `progress` if the output has grown by [`PROGRESS_EVERY`] bytes since the last call.
    #[inline]
    fn maybe_progress(&mut self) {
        if self.pg.output.0.len() >= self.progress_at {
            self.progress_at = self.pg.output.0.len() + PROGRESS_EVERY;
            if let Some(progress) = self.progress.as_mut() {
                progress();
            }
        }
    }

    /// Writes a number in postcard's encoding.
    fn write_number(&mut self, kind: Kind, bits: u64) -> FormatResult<()> {
        let pg = &mut self.pg;
        match kind {
            Kind::U8 => pg.serialize_u8(bits as u8),
            Kind::I8 => pg.serialize_i8(bits as u8 as i8),
            Kind::U16 => pg.serialize_u16(bits as u16),
            Kind::I16 => pg.serialize_i16(bits as u16 as i16),
            Kind::U32 => pg.serialize_u32(bits as u32),
            Kind::I32 => pg.serialize_i32(bits as u32 as i32),
            Kind::U64 => pg.serialize_u64(bits),
            Kind::I64 => pg.serialize_i64(bits as i64),
            Kind::F32 => pg.serialize_f32(f32::from_bits(bits as u32)),
            Kind::F64 => pg.serialize_f64(f64::from_bits(bits)),
        }
        .map_err(FormatError::from)
    }

    /// postcard's serializer, for everything but sequences, tuples and what contains values.
    #[inline]
    fn other(&mut self) -> &mut postcard::Serializer<Out> {
        &mut self.pg
    }

    fn seq(&mut self, len: usize) -> Elements<'_, 'p> {
        self.maybe_progress();
        let layout = if len >= RAW_MIN {
            let at = self.out().len();
            self.out().push(ENCODED); // patched once the first element is known
            Some(Layout {
                at,
                mode: Mode::Undecided,
            })
        } else {
            None
        };
        Elements {
            enc: self,
            len,
            done: 0,
            layout,
        }
    }
}

macro_rules! numbers {
    ($($method:ident($t:ty) => $kind:ident, $bits:expr;)*) => {$(
        #[inline]
        fn $method(self, v: $t) -> FormatResult<()> {
            #[allow(clippy::redundant_closure_call)]
            self.write_number(Kind::$kind, ($bits)(v))
        }
    )*};
}

macro_rules! others {
    ($($method:ident($t:ty);)*) => {$(
        fn $method(self, v: $t) -> FormatResult<()> {
            self.other().$method(v).map_err(FormatError::from)
        }
    )*};
}

impl<'a, 'p> ser::Serializer for &'a mut Encoder<'p> {
    type Ok = ();
    type Error = FormatError;
    type SerializeSeq = Elements<'a, 'p>;
    type SerializeTuple = Elements<'a, 'p>;
    type SerializeTupleStruct = Elements<'a, 'p>;
    type SerializeTupleVariant = Elements<'a, 'p>;
    type SerializeMap = &'a mut Encoder<'p>;
    type SerializeStruct = &'a mut Encoder<'p>;
    type SerializeStructVariant = &'a mut Encoder<'p>;

    fn is_human_readable(&self) -> bool {
        false
    }

    number_methods!(numbers);

    others! {
        serialize_bool(bool);
        serialize_i128(i128);
        serialize_u128(u128);
        serialize_char(char);
        serialize_str(&str);
        serialize_bytes(&[u8]);
    }

    fn serialize_none(self) -> FormatResult<()> {
        self.other().serialize_none().map_err(FormatError::from)
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> FormatResult<()> {
        self.other().serialize_u8(1)?;
        value.serialize(self)
    }

    fn serialize_unit(self) -> FormatResult<()> {
        self.other();
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> FormatResult<()> {
        self.other();
        Ok(())
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
    ) -> FormatResult<()> {
        self.other().serialize_u32(index).map_err(FormatError::from)
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        value: &T,
    ) -> FormatResult<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        value: &T,
    ) -> FormatResult<()> {
        self.other().serialize_u32(index)?;
        value.serialize(self)
    }

    fn serialize_seq(self, len: Option<usize>) -> FormatResult<Elements<'a, 'p>> {
        let len = len.ok_or_else(|| FormatError("a sequence of unknown length".into()))?;
        self.other().serialize_u64(len as u64)?;
        Ok(self.seq(len))
    }

    fn serialize_tuple(self, len: usize) -> FormatResult<Elements<'a, 'p>> {
        self.other();
        Ok(self.seq(len))
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> FormatResult<Elements<'a, 'p>> {
        self.other();
        Ok(self.seq(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        len: usize,
    ) -> FormatResult<Elements<'a, 'p>> {
        self.other().serialize_u32(index)?;
        Ok(self.seq(len))
    }

    fn serialize_map(self, len: Option<usize>) -> FormatResult<Self> {
        let len = len.ok_or_else(|| FormatError("a map of unknown length".into()))?;
        self.other().serialize_u64(len as u64)?;
        Ok(self)
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> FormatResult<Self> {
        self.other();
        Ok(self)
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> FormatResult<Self> {
        self.other().serialize_u32(index)?;
        Ok(self)
    }

    fn collect_str<T: ?Sized + std::fmt::Display>(self, value: &T) -> FormatResult<()> {
        self.other().collect_str(value).map_err(FormatError::from)
    }

    /// What `Vec`, slices and the other collections call: [`serialize_seq`](serde::Serializer::serialize_seq) and its
    /// elements, with the elements of a raw array written by a loop of its own ([`raw_run`]).
    fn collect_seq<I>(self, iter: I) -> FormatResult<()>
    where
        I: IntoIterator,
        I::Item: Serialize,
    {
        let mut iter = iter.into_iter();
        let len = match iter.size_hint() {
            (lo, Some(hi)) if lo == hi => Some(lo),
            _ => None,
        };
        let mut seq = self.serialize_seq(len)?;
        loop {
            let Some(Layout {
                mode: Mode::Raw(k), ..
            }) = seq.layout
            else {
                match iter.next() {
                    Some(item) => seq.element(&item)?,
                    None => break,
                }
                continue;
            };
            // Numbers go straight into the output's reserved room, in a loop specialised for
            // the element size (one store per number).
            let room = seq
                .len
                .saturating_sub(seq.done)
                .min(RAW_RUN_BYTES / k.size());
            let (count, other) = match k.size() {
                1 => raw_run::<1, _>(seq.enc.out(), k, &mut iter, room),
                2 => raw_run::<2, _>(seq.enc.out(), k, &mut iter, room),
                4 => raw_run::<4, _>(seq.enc.out(), k, &mut iter, room),
                _ => raw_run::<8, _>(seq.enc.out(), k, &mut iter, room),
            };
            seq.done += count;
            seq.enc.maybe_progress();
            match other {
                // It changes the layout: the general path, without probing it again (a
                // `Region` adds itself to the message each time it is serialized).
                Some((item, number)) => {
                    seq.done += 1;
                    seq.probed(Mode::Raw(k), number, &item)?
                }
                None if count == room && seq.done < seq.len => {} // the next run
                None if seq.done == seq.len => {
                    if let Some(item) = iter.next() {
                        seq.element(&item)?; // one too many: an error
                    }
                    break;
                }
                None => break,
            }
        }
        seq.finish()
    }
}

/// The most bytes of numbers [`raw_run`] writes at once: a sequence's announced length is not
/// trusted with a reservation of its full size, and progress is made between runs.
pub(super) const RAW_RUN_BYTES: usize = PROGRESS_EVERY;

/// An element that is not the next number of a raw array, and its probe.
type Other<T> = Option<(T, Option<(Kind, u64)>)>;

/// Appends up to `room` numbers of kind `k` (of `N` bytes each) from `iter` to `out` as a raw
/// array; stops at the first element that is not one: returns how many were appended and that
/// element, if any, with its probe.
#[inline]
fn raw_run<const N: usize, I>(
    out: &mut Vec<u8>,
    k: Kind,
    iter: &mut I,
    room: usize,
) -> (usize, Other<I::Item>)
where
    I: Iterator,
    I::Item: Serialize,
{
    out.reserve(room * N);
    let start = out.len();
    let mut count = 0;
    let mut other = None;
    let slots = out.spare_capacity_mut()[..room * N].chunks_exact_mut(N);
    // `take(room)` ends when the slots do, so the zip never drops an element.
    for (item, slot) in iter.by_ref().take(room).zip(slots) {
        match item.serialize(NumberProbe).ok() {
            // `n` is a constant once the element's `serialize` is inlined, and `k` does not
            // change in the loop: the test leaves the loop.
            Some((n, bits)) if n == k => {
                for (d, b) in slot.iter_mut().zip(bits.to_le_bytes()) {
                    d.write(b);
                }
                count += 1;
            }
            number => {
                other = Some((item, number));
                break;
            }
        }
    }
    // SAFETY: the first `count * N` bytes of the spare capacity were written above, and
    // `reserve` made room for them.
    unsafe { out.set_len(start + count * N) };
    (count, other)
}

/// How a sequence with a layout byte is being written.
#[derive(Clone, Copy)]
enum Mode {
    /// No element yet.
    Undecided,
    /// Every element so far was a number of this kind: a raw array.
    Raw(Kind),
    /// Elements in postcard's encoding.
    Encoded,
}

#[derive(Clone, Copy)]
struct Layout {
    /// Where the layout byte is.
    at: usize,
    mode: Mode,
}

/// Writes the elements of a sequence, tuple, tuple struct or tuple variant.
pub(super) struct Elements<'a, 'p> {
    enc: &'a mut Encoder<'p>,
    len: usize,
    done: usize,
    /// `None` below [`RAW_MIN`] elements: no layout byte, every element encoded.
    layout: Option<Layout>,
}

impl Elements<'_, '_> {
    #[inline]
    fn element<T: ?Sized + Serialize>(&mut self, value: &T) -> FormatResult<()> {
        self.done += 1;
        let mode = match self.layout {
            Some(l) if self.done <= self.len => l.mode,
            _ => Mode::Encoded,
        };
        if let Mode::Encoded = mode {
            return value.serialize(&mut *self.enc);
        }
        let number = value.serialize(NumberProbe).ok();
        self.probed(mode, number, value)
    }

    /// An element of an undecided or raw sequence, once probed.
    #[inline]
    fn probed<T: ?Sized + Serialize>(
        &mut self,
        mode: Mode,
        number: Option<(Kind, u64)>,
        value: &T,
    ) -> FormatResult<()> {
        match (mode, number) {
            (Mode::Raw(k), Some((n, bits))) if k == n => {
                // The usual case; `n` is a constant once the element's `serialize` is inlined.
                push_le(self.enc.out(), n, bits);
                Ok(())
            }
            _ => self.element_changes(mode, number, value),
        }
    }

    /// An element that decides or changes the sequence's layout.
    #[cold]
    fn element_changes<T: ?Sized + Serialize>(
        &mut self,
        mode: Mode,
        number: Option<(Kind, u64)>,
        value: &T,
    ) -> FormatResult<()> {
        let (Some(layout), enc) = (self.layout.as_mut(), &mut *self.enc) else {
            return value.serialize(&mut *self.enc);
        };
        match (mode, number) {
            (Mode::Undecided, Some((n, bits))) => {
                layout.mode = Mode::Raw(n);
                let left = ((self.len - self.done + 1) * n.size()).min(RAW_RUN_BYTES);
                let out = enc.out();
                out[layout.at] = n as u8;
                out.reserve(left);
                push_le(out, n, bits);
                Ok(())
            }
            (Mode::Raw(k), Some((n, bits))) => {
                layout.mode = Mode::Encoded;
                to_encoded(enc, layout.at, k)?;
                enc.write_number(n, bits)
            }
            (Mode::Raw(k), None) => {
                layout.mode = Mode::Encoded;
                to_encoded(enc, layout.at, k)?;
                value.serialize(enc)
            }
            (Mode::Undecided | Mode::Encoded, None) => {
                // The layout byte already says ENCODED.
                layout.mode = Mode::Encoded;
                value.serialize(enc)
            }
            (Mode::Encoded, Some((n, bits))) => enc.write_number(n, bits),
        }
    }

    fn finish(self) -> FormatResult<()> {
        if self.done != self.len {
            return Err(FormatError(format!(
                "a sequence announced {} elements and has {}",
                self.len, self.done
            )));
        }
        Ok(())
    }
}

/// Appends a number's little-endian bytes.
#[inline(always)]
fn push_le(out: &mut Vec<u8>, kind: Kind, bits: u64) {
    match kind.size() {
        1 => out.push(bits as u8),
        2 => out.extend_from_slice(&(bits as u16).to_le_bytes()),
        4 => out.extend_from_slice(&(bits as u32).to_le_bytes()),
        _ => out.extend_from_slice(&bits.to_le_bytes()),
    }
}

/// Rewrites the raw array after the layout byte at `at` in postcard's encoding and marks the
/// sequence encoded.
fn to_encoded(enc: &mut Encoder<'_>, at: usize, kind: Kind) -> FormatResult<()> {
    let raw = enc.out().split_off(at + 1);
    enc.out()[at] = ENCODED;
    for number in raw.chunks_exact(kind.size()) {
        let mut le = [0u8; 8];
        le[..number.len()].copy_from_slice(number);
        enc.write_number(kind, u64::from_le_bytes(le))?;
    }
    Ok(())
}

macro_rules! element_traits {
    ($($trait:ident :: $method:ident;)*) => {$(
        impl ser::$trait for Elements<'_, '_> {
            type Ok = ();
            type Error = FormatError;
            fn $method<T: ?Sized + Serialize>(&mut self, value: &T) -> FormatResult<()> {
                self.element(value)
            }
            fn end(self) -> FormatResult<()> {
                self.finish()
            }
        }
    )*};
}

element_traits! {
    SerializeSeq::serialize_element;
    SerializeTuple::serialize_element;
    SerializeTupleStruct::serialize_field;
    SerializeTupleVariant::serialize_field;
}

impl ser::SerializeMap for &mut Encoder<'_> {
    type Ok = ();
    type Error = FormatError;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> FormatResult<()> {
        key.serialize(&mut **self)
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> FormatResult<()> {
        value.serialize(&mut **self)
    }
    fn end(self) -> FormatResult<()> {
        Ok(())
    }
}

macro_rules! field_traits {
    ($($trait:ident;)*) => {$(
        impl ser::$trait for &mut Encoder<'_> {
            type Ok = ();
            type Error = FormatError;
            fn serialize_field<T: ?Sized + Serialize>(
                &mut self,
                _key: &'static str,
                value: &T,
            ) -> FormatResult<()> {
                value.serialize(&mut **self)
            }
            fn end(self) -> FormatResult<()> {
                Ok(())
            }
        }
    )*};
}

field_traits! {
    SerializeStruct;
    SerializeStructVariant;
}
