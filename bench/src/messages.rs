//! The benchmark datatypes on mpicd, each in the forms the methods need:
//! - `custom`: [`CustomSend`]/[`CustomRecv`], with the scalars packed by a pack callback and the
//!   arrays exposed as regions (double-vec: every sub-vector a region; struct-vec: a, b, c, d
//!   packed, `data` a region; struct-simple: all packed; struct-simple-no-gap: no gap, so the
//!   whole array is one region);
//! - `packed`: manual packing into a byte buffer ([`BenchMessage::pack`]/[`BenchMessage::unpack`]);
//! - `serde`: `Serialize`/`Deserialize` (the bridge encodes with postcard);
//! - `serde-region` (double-vec only): the serde form with each sub-vector a
//!   [`Region`](mpicd::custom::serde::Region), the bridge's way of keeping arrays out of the
//!   encoding.

use crate::shared::{double_vec_shape, Pattern};
use mpicd::custom::serde::Region;
use mpicd::datatype::{bytes_of, bytes_of_mut};
use mpicd::{CustomRecv, CustomSend, Error, RecvParts, Result, SendParts, Shape};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

crate::define_structs!(
    types: [#[derive(Serialize, Deserialize)]],
    array: [#[serde(with = "big_array")]]
);

/// A benchmark message: every form the methods send it in.
pub trait BenchMessage:
    CustomSend + CustomRecv + Serialize + DeserializeOwned + PartialEq + Send + Sync + 'static
{
    /// The `serde-region` form (double-vec only).
    type Alt: Serialize + DeserializeOwned + PartialEq + Send + Sync;

    /// A receive object of the same shape, zeroed.
    fn blank(&self) -> Self;
    /// Bytes [`BenchMessage::pack`] produces.
    fn packed_len(&self) -> usize;
    /// Manual packing: makes `out` exactly [`BenchMessage::packed_len`] bytes long and fills it.
    fn pack(&self, out: &mut Vec<u8>);
    /// Manual unpacking into an object of the right shape (a double-vec resizes). False when
    /// `src` does not fit.
    fn unpack(&mut self, src: &[u8]) -> bool;
    /// The `serde-region` form of this message, if the type has one.
    fn alt(&self) -> Option<Self::Alt>;
}

// ----- double-vec -----------------------------------------------------------------------------

/// `Vec<Vec<i32>>`: mpicd's own `CustomSend`/`CustomRecv` implementations (every sub-vector a
/// region; the receiver resizes to the sender's shape).
pub type DoubleVec = Vec<Vec<i32>>;

/// A double-vec message of `size` bytes with sub-vectors of `subvec` bytes.
pub fn double_vec(size: usize, subvec: usize) -> DoubleVec {
    crate::shared::double_vec_pattern(&double_vec_shape(size, subvec))
}

impl BenchMessage for DoubleVec {
    type Alt = Vec<Region<i32>>;

    fn blank(&self) -> Self {
        self.iter().map(|v| vec![0; v.len()]).collect()
    }

    /// Sub-vector count (u64), each length (u32), then the data: what a receiver that does not
    /// know the shape needs.
    fn packed_len(&self) -> usize {
        8 + 4 * self.len() + self.iter().map(|v| 4 * v.len()).sum::<usize>()
    }

    fn pack(&self, out: &mut Vec<u8>) {
        out.clear();
        out.reserve(self.packed_len());
        out.extend_from_slice(&(self.len() as u64).to_ne_bytes());
        for v in self {
            out.extend_from_slice(&(v.len() as u32).to_ne_bytes());
        }
        for v in self {
            out.extend_from_slice(bytes_of(&v[..]));
        }
    }

    fn unpack(&mut self, src: &[u8]) -> bool {
        let Some(n) = src
            .get(..8)
            .map(|b| u64::from_ne_bytes(b.try_into().unwrap()) as usize)
        else {
            return false;
        };
        let Some(lens) = src.get(8..8 + 4 * n) else {
            return false;
        };
        self.resize_with(n, Vec::new);
        let mut at = 8 + 4 * n;
        for (v, len) in self.iter_mut().zip(lens.chunks_exact(4)) {
            let len = u32::from_ne_bytes(len.try_into().unwrap()) as usize;
            v.resize(len, 0);
            let Some(data) = src.get(at..at + 4 * len) else {
                return false;
            };
            bytes_of_mut(&mut v[..]).copy_from_slice(data);
            at += 4 * len;
        }
        at == src.len()
    }

    fn alt(&self) -> Option<Self::Alt> {
        Some(self.iter().map(|v| Region::new(v.clone())).collect())
    }
}

// ----- the structs ------------------------------------------------------------------------------

/// A vector of one of the struct types (a newtype: mpicd's traits cannot be implemented for
/// `Vec<T>` here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Structs<T>(pub Vec<T>);

/// A struct type of the benchmark: its packed record (the fields without the gap).
pub trait Record: Pattern + Copy + PartialEq + Send + Sync + 'static {
    /// Bytes of the packed record.
    const PACKED: usize;
    /// Writes the packed record (`PACKED` bytes).
    fn image(&self, out: &mut [u8]);
    /// Reads the packed record.
    fn set_from(&mut self, img: &[u8]);
}

impl Record for StructSimple {
    const PACKED: usize = 20;
    #[inline(always)]
    fn image(&self, out: &mut [u8]) {
        scalars_image(self.a, self.b, self.c, self.d, out)
    }
    #[inline(always)]
    fn set_from(&mut self, img: &[u8]) {
        (self.a, self.b, self.c, self.d) = scalars_from(img);
    }
}

impl Record for StructSimpleNoGap {
    const PACKED: usize = 16;
    #[inline(always)]
    fn image(&self, out: &mut [u8]) {
        out[0..4].copy_from_slice(&self.a.to_ne_bytes());
        out[4..8].copy_from_slice(&self.b.to_ne_bytes());
        out[8..16].copy_from_slice(&self.c.to_ne_bytes());
    }
    #[inline(always)]
    fn set_from(&mut self, img: &[u8]) {
        self.a = i32::from_ne_bytes(img[0..4].try_into().unwrap());
        self.b = i32::from_ne_bytes(img[4..8].try_into().unwrap());
        self.c = f64::from_ne_bytes(img[8..16].try_into().unwrap());
    }
}

/// struct-vec's record for manual packing: the scalars, then the array.
impl Record for StructVec {
    const PACKED: usize = 20 + 4 * crate::shared::STRUCT_VEC_LEN;
    #[inline(always)]
    fn image(&self, out: &mut [u8]) {
        scalars_image(self.a, self.b, self.c, self.d, &mut out[..20]);
        out[20..].copy_from_slice(bytes_of(&self.data[..]));
    }
    #[inline(always)]
    fn set_from(&mut self, img: &[u8]) {
        (self.a, self.b, self.c, self.d) = scalars_from(&img[..20]);
        bytes_of_mut(&mut self.data[..]).copy_from_slice(&img[20..]);
    }
}

#[inline(always)]
fn scalars_image(a: i32, b: i32, c: i32, d: f64, out: &mut [u8]) {
    out[0..4].copy_from_slice(&a.to_ne_bytes());
    out[4..8].copy_from_slice(&b.to_ne_bytes());
    out[8..12].copy_from_slice(&c.to_ne_bytes());
    out[12..20].copy_from_slice(&d.to_ne_bytes());
}

#[inline(always)]
fn scalars_from(img: &[u8]) -> (i32, i32, i32, f64) {
    (
        i32::from_ne_bytes(img[0..4].try_into().unwrap()),
        i32::from_ne_bytes(img[4..8].try_into().unwrap()),
        i32::from_ne_bytes(img[8..12].try_into().unwrap()),
        f64::from_ne_bytes(img[12..20].try_into().unwrap()),
    )
}

impl<T: Record> Structs<T> {
    /// `count` elements of the test pattern.
    pub fn pattern(count: usize) -> Self {
        Structs((0..count).map(T::pattern).collect())
    }
}

impl<T: Record + Serialize + DeserializeOwned> BenchMessage for Structs<T>
where
    Structs<T>: CustomSend + CustomRecv,
{
    type Alt = ();

    fn blank(&self) -> Self {
        Structs(vec![T::ZERO; self.0.len()])
    }

    fn packed_len(&self) -> usize {
        self.0.len() * T::PACKED
    }

    fn pack(&self, out: &mut Vec<u8>) {
        if out.len() != self.packed_len() {
            out.resize(self.packed_len(), 0);
        }
        for (s, rec) in self.0.iter().zip(out.chunks_exact_mut(T::PACKED)) {
            s.image(rec);
        }
    }

    fn unpack(&mut self, src: &[u8]) -> bool {
        if src.len() != self.packed_len() {
            return false;
        }
        for (s, rec) in self.0.iter_mut().zip(src.chunks_exact(T::PACKED)) {
            s.set_from(rec);
        }
        true
    }

    fn alt(&self) -> Option<()> {
        None
    }
}

/// The pack callback of a vector of records, from any virtual offset: whole records while they
/// fit, else the part of one record that fits (a short write, which the engine allows).
fn pack_records<T>(
    items: &[T],
    rec: usize,
    image: impl Fn(&T, &mut [u8]),
    offset: u64,
    dst: &mut [u8],
) -> Result<usize> {
    let offset = offset as usize;
    let (first, within) = (offset / rec, offset % rec);
    if first >= items.len() {
        return Err(Error::InvalidArgument("pack past the end".into()));
    }
    if within == 0 {
        let whole = (dst.len() / rec).min(items.len() - first);
        if whole > 0 {
            for (out, item) in dst[..whole * rec]
                .chunks_exact_mut(rec)
                .zip(&items[first..first + whole])
            {
                image(item, out);
            }
            return Ok(whole * rec);
        }
    }
    // A record split by a fragment boundary.
    let mut img = [0u8; 32];
    image(&items[first], &mut img[..rec]);
    let n = (rec - within).min(dst.len());
    dst[..n].copy_from_slice(&img[within..within + n]);
    Ok(n)
}

/// The unpack callback of a vector of records, from any virtual offset.
fn unpack_records<T>(
    items: &mut [T],
    rec: usize,
    image: impl Fn(&T, &mut [u8]),
    set_from: impl Fn(&mut T, &[u8]),
    offset: u64,
    mut src: &[u8],
) -> Result<()> {
    let mut at = offset as usize;
    while !src.is_empty() {
        let (e, within) = (at / rec, at % rec);
        if e >= items.len() {
            return Err(Error::InvalidArgument("unpack past the end".into()));
        }
        let n = if within == 0 && src.len() >= rec {
            let whole = (src.len() / rec).min(items.len() - e);
            for (item, img) in items[e..e + whole]
                .iter_mut()
                .zip(src[..whole * rec].chunks_exact(rec))
            {
                set_from(item, img);
            }
            whole * rec
        } else {
            let mut img = [0u8; 32];
            image(&items[e], &mut img[..rec]);
            let n = (rec - within).min(src.len());
            img[within..within + n].copy_from_slice(&src[..n]);
            set_from(&mut items[e], &img[..rec]);
            n
        };
        at += n;
        src = &src[n..];
    }
    Ok(())
}

/// struct-simple: everything packed (20 bytes a record, the gap left out).
impl CustomSend for Structs<StructSimple> {
    fn parts(&self) -> Result<SendParts<'_>> {
        let items = &self.0[..];
        Ok(
            SendParts::new().packed(items.len() * 20, move |offset, dst| {
                pack_records(items, 20, StructSimple::image, offset, dst)
            }),
        )
    }
}

impl CustomRecv for Structs<StructSimple> {
    fn resize(&mut self, shape: &Shape) -> Result<()> {
        self.0
            .resize(shape.packed_bytes as usize / 20, StructSimple::default());
        Ok(())
    }
    fn parts(&mut self) -> Result<RecvParts<'_>> {
        let bytes = self.0.len() * 20;
        let items = &mut self.0[..];
        Ok(RecvParts::new().packed(bytes, move |offset, src| {
            unpack_records(
                items,
                20,
                StructSimple::image,
                StructSimple::set_from,
                offset,
                src,
            )
        }))
    }
}

/// struct-vec: a, b, c, d packed (20 bytes a record), each `data` array a region.
impl CustomSend for Structs<StructVec> {
    fn parts(&self) -> Result<SendParts<'_>> {
        let items = &self.0[..];
        Ok(SendParts::new()
            .packed(items.len() * 20, move |offset, dst| {
                pack_records(
                    items,
                    20,
                    |s: &StructVec, out| scalars_image(s.a, s.b, s.c, s.d, out),
                    offset,
                    dst,
                )
            })
            .regions(items.iter().map(|s| &s.data[..])))
    }
}

/// The scalars of one struct-vec element, borrowed apart from its array.
type Scalars<'a> = (&'a mut i32, &'a mut i32, &'a mut i32, &'a mut f64);

impl CustomRecv for Structs<StructVec> {
    fn resize(&mut self, shape: &Shape) -> Result<()> {
        self.0
            .resize(shape.packed_bytes as usize / 20, StructVec::ZERO);
        Ok(())
    }
    fn parts(&mut self) -> Result<RecvParts<'_>> {
        let bytes = self.0.len() * 20;
        let mut scalars: Vec<Scalars<'_>> = Vec::with_capacity(self.0.len());
        let mut arrays: Vec<&mut [i32]> = Vec::with_capacity(self.0.len());
        for StructVec { a, b, c, d, data } in self.0.iter_mut() {
            scalars.push((a, b, c, d));
            arrays.push(&mut data[..]);
        }
        let image = |s: &Scalars<'_>, out: &mut [u8]| scalars_image(*s.0, *s.1, *s.2, *s.3, out);
        let set_from = |s: &mut Scalars<'_>, img: &[u8]| {
            (*s.0, *s.1, *s.2, *s.3) = scalars_from(img);
        };
        Ok(RecvParts::new()
            .packed(bytes, move |offset, src| {
                unpack_records(&mut scalars, 20, image, set_from, offset, src)
            })
            .regions(arrays))
    }
}

/// The bytes of a slice of gap-free structs.
fn no_gap_bytes(items: &[StructSimpleNoGap]) -> &[u8] {
    // SAFETY: StructSimpleNoGap is #[repr(C)] with no padding (4 + 4 + 8 bytes, 8-aligned), so
    // every byte of the slice is initialised.
    unsafe { std::slice::from_raw_parts(items.as_ptr().cast(), std::mem::size_of_val(items)) }
}

/// struct-simple-no-gap: nothing to pack; the whole array is one region.
impl CustomSend for Structs<StructSimpleNoGap> {
    fn parts(&self) -> Result<SendParts<'_>> {
        Ok(SendParts::new().region(no_gap_bytes(&self.0)))
    }
}

impl CustomRecv for Structs<StructSimpleNoGap> {
    fn resize(&mut self, shape: &Shape) -> Result<()> {
        self.0.resize(
            shape.total_bytes() as usize / 16,
            StructSimpleNoGap::default(),
        );
        Ok(())
    }
    fn parts(&mut self) -> Result<RecvParts<'_>> {
        let n = std::mem::size_of_val(&self.0[..]);
        // SAFETY: no padding (see no_gap_bytes), and every bit pattern is a valid i32 or f64.
        let bytes = unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast(), n) };
        Ok(RecvParts::new().region::<u8>(bytes))
    }
}

/// serde for `[i32; N]` with N > 32 (serde's own impls stop at 32): a tuple of N values.
mod big_array {
    use serde::de::{Error, SeqAccess, Visitor};
    use serde::ser::SerializeTuple;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer, const N: usize>(a: &[i32; N], s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(N)?;
        for x in a {
            t.serialize_element(x)?;
        }
        t.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>, const N: usize>(
        d: D,
    ) -> Result<[i32; N], D::Error> {
        struct Array<const N: usize>;
        impl<'de, const N: usize> Visitor<'de> for Array<N> {
            type Value = [i32; N];
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "an array of {N} i32")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<[i32; N], A::Error> {
                let mut out = [0i32; N];
                for (i, x) in out.iter_mut().enumerate() {
                    *x = seq
                        .next_element()?
                        .ok_or_else(|| A::Error::invalid_length(i, &self))?;
                }
                Ok(out)
            }
        }
        d.deserialize_tuple(N, Array::<N>)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_packing_round_trips() {
        let d = double_vec(8192, 1024);
        let mut buf = Vec::new();
        d.pack(&mut buf);
        assert_eq!(buf.len(), d.packed_len());
        let mut r = d.blank();
        assert!(r.unpack(&buf));
        assert_eq!(r, d);

        let s = Structs::<StructSimple>::pattern(100);
        s.pack(&mut buf);
        let mut r = s.blank();
        assert!(r.unpack(&buf));
        assert_eq!(r, s);
    }

    #[test]
    fn record_callbacks_survive_any_fragmentation() {
        let items: Vec<StructSimple> = (0..50).map(StructSimple::pattern).collect();
        let mut stream = vec![0u8; 50 * 20];
        let mut at = 0;
        for cap in [7usize, 20, 33, 1, 64].iter().cycle() {
            if at == stream.len() {
                break;
            }
            let end = (at + cap).min(stream.len());
            let n = pack_records(
                &items,
                20,
                StructSimple::image,
                at as u64,
                &mut stream[at..end],
            )
            .unwrap();
            assert!(n > 0 && n <= end - at);
            at += n;
        }
        let mut back = vec![StructSimple::default(); 50];
        let mut at = 0;
        for cap in [13usize, 40, 3, 20].iter().cycle() {
            if at == stream.len() {
                break;
            }
            let end = (at + cap).min(stream.len());
            unpack_records(
                &mut back,
                20,
                StructSimple::image,
                StructSimple::set_from,
                at as u64,
                &stream[at..end],
            )
            .unwrap();
            at = end;
        }
        assert_eq!(back, items);
    }
}
