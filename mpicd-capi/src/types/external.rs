//! The `external32` data representation: MPI_Pack_external, MPI_Unpack_external and
//! MPI_Pack_external_size, with their `_c` variants. Every basic element of the type map (pair
//! types are structs, so they decompose) is converted on its own, in type-map order, by
//! `TypedBuf::for_each_basic`.
//!
//! external32 (MPI-4.1 section 13.5.2, "External Data Representation: external32", and its
//! table 13.2 of sizes, unchanged since MPI-2.2): integers are two's complement big-endian;
//! floating point values big-endian IEEE binary32 / binary64 / binary128 (C `long double`),
//! complex numbers a pair of them; every item byte aligned. Sizes in bytes: MPI_PACKED,
//! MPI_BYTE, MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_C_BOOL, MPI_CXX_BOOL,
//! MPI_INT8_T, MPI_UINT8_T 1; MPI_WCHAR, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT16_T,
//! MPI_UINT16_T 2; MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_INT32_T,
//! MPI_UINT32_T, MPI_FLOAT 4; MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_INT64_T, MPI_UINT64_T,
//! MPI_AINT, MPI_COUNT, MPI_OFFSET, MPI_DOUBLE 8; MPI_LONG_DOUBLE 16; the complex types 2 x
//! their part; the Fortran types their gfortran sizes (CHARACTER 1, default INTEGER, REAL and
//! LOGICAL 4, DOUBLE PRECISION 8, the size-specific ones their size). So MPI_LONG and
//! MPI_UNSIGNED_LONG are 4 bytes although C `long` has 8 here: a value outside 32 bits keeps
//! its low 32 bits (as Open MPI and MPICH do), and MPI_WCHAR keeps the low 16 bits of a
//! `wchar_t`.
//!
//! `long double` is the x87 80-bit format on x86 and x86-64, converted to and from binary128
//! (the 64-bit significand fits the 112-bit fraction exactly; back, the fraction is cut to 63
//! bits); elsewhere it is taken to be binary128 already.

use super::datatype;
use super::pack::{check_base, packable, packed_len, window};
use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{out, read_arg, require};
use crate::errors::{fail, run, CResult};
use mpicd::{Datatype, TypedBuf};
use std::ffi::{c_char, c_int, c_void, CStr};

/// How a basic element is written in external32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rep {
    /// The bytes as they are.
    Same,
    /// A two's complement integer, resized to its external32 size.
    Int { signed: bool },
    /// IEEE floating point values of `part` bytes (two for a complex number).
    Float { part: usize },
    /// C `long double` values (two for a complex number), binary128 in external32.
    LongDouble,
}

/// A basic element's native size, external32 size and representation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct External {
    native: usize,
    ext: usize,
    rep: Rep,
}

/// The external32 form of the predefined type whose handle value is `id`.
fn external(id: usize) -> Option<External> {
    use Rep::*;
    let h = id as MPI_Datatype;
    let native = super::basic(h)?.size;
    let is = |list: &[MPI_Datatype]| list.contains(&h);
    let (ext, rep) = if native == 1 {
        (1, Same)
    } else if is(&[
        MPI_SHORT,
        MPI_INT16_T,
        MPI_INT,
        MPI_INT32_T,
        MPI_LONG_LONG,
        MPI_INT64_T,
    ]) || is(&[MPI_AINT, MPI_COUNT, MPI_OFFSET])
    {
        (native, Int { signed: true })
    } else if is(&[MPI_UNSIGNED_SHORT, MPI_UINT16_T, MPI_UNSIGNED, MPI_UINT32_T])
        || is(&[MPI_UNSIGNED_LONG_LONG, MPI_UINT64_T])
    {
        (native, Int { signed: false })
    } else if h == MPI_LONG {
        (4, Int { signed: true })
    } else if h == MPI_UNSIGNED_LONG {
        (4, Int { signed: false })
    } else if h == MPI_WCHAR {
        (2, Int { signed: false })
    } else if is(&[MPI_FLOAT, MPI_DOUBLE]) {
        (native, Float { part: native })
    } else if is(&[MPI_C_FLOAT_COMPLEX, MPI_CXX_FLOAT_COMPLEX]) {
        (native, Float { part: 4 })
    } else if is(&[MPI_C_DOUBLE_COMPLEX, MPI_CXX_DOUBLE_COMPLEX]) {
        (native, Float { part: 8 })
    } else if is(&[
        MPI_LONG_DOUBLE,
        MPI_C_LONG_DOUBLE_COMPLEX,
        MPI_CXX_LONG_DOUBLE_COMPLEX,
    ]) {
        (native, LongDouble)
    } else if let Some(part) = fortran_part(h) {
        // Fortran types: big-endian parts of their native sizes (external32 has the sizes of
        // the size-specific types and 4 bytes for default INTEGER, REAL and LOGICAL, as here).
        (native, Float { part })
    } else {
        return None;
    };
    Some(External { native, ext, rep })
}

/// The size of the big-endian parts of a Fortran type of more than one byte: the whole value,
/// or half of a complex one.
fn fortran_part(h: MPI_Datatype) -> Option<usize> {
    let complex = [
        MPI_COMPLEX,
        MPI_DOUBLE_COMPLEX,
        MPI_COMPLEX4,
        MPI_COMPLEX8,
        MPI_COMPLEX16,
        MPI_COMPLEX32,
    ];
    super::fortran::name_of(h)?;
    let size = super::basic(h)?.size;
    Some(if complex.contains(&h) { size / 2 } else { size })
}

fn unknown(id: usize) -> crate::errors::Fail {
    fail(
        MPI_ERR_TYPE,
        format!("no external32 form for datatype {id:#x}"),
    )
}

/// The low `n` bytes of `v`'s native representation, as stored in memory.
fn low_bytes(v: u64, n: usize) -> Vec<u8> {
    let b = v.to_ne_bytes();
    if cfg!(target_endian = "little") {
        b[..n].to_vec()
    } else {
        b[8 - n..].to_vec()
    }
}

/// An integer of `n` bytes in native order, sign- or zero-extended to 64 bits.
fn read_native(src: &[u8], signed: bool) -> u64 {
    let n = src.len();
    let mut b = [0u8; 8];
    if cfg!(target_endian = "little") {
        b[..n].copy_from_slice(src);
    } else {
        b[8 - n..].copy_from_slice(src);
    }
    extend(u64::from_ne_bytes(b), n, signed)
}

fn extend(v: u64, n: usize, signed: bool) -> u64 {
    if n >= 8 {
        return v;
    }
    let bits = 8 * n as u32;
    if signed {
        ((v << (64 - bits)) as i64 >> (64 - bits)) as u64
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// x87 extended precision (little-endian, 16 bytes with padding) to binary128 big-endian.
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
fn long_double_out(src: &[u8], dst: &mut [u8]) {
    let mut low = [0u8; 8];
    low.copy_from_slice(&src[..8]);
    let m = u64::from_le_bytes(low);
    let sign_exp = u16::from_le_bytes([src[8], src[9]]) as u128;
    let fraction = ((m & !(1u64 << 63)) as u128) << 49;
    dst.copy_from_slice(&(sign_exp << 112 | fraction).to_be_bytes());
}

/// binary128 big-endian to x87 extended precision.
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
fn long_double_in(src: &[u8], dst: &mut [u8]) {
    let mut all = [0u8; 16];
    all.copy_from_slice(&src[..16]);
    let v = u128::from_be_bytes(all);
    let sign_exp = (v >> 112) as u16;
    let integer = if sign_exp & 0x7fff != 0 {
        1u64 << 63
    } else {
        0
    };
    let m = ((v >> 49) as u64 & !(1u64 << 63)) | integer;
    dst[..8].copy_from_slice(&m.to_le_bytes());
    dst[8..10].copy_from_slice(&sign_exp.to_le_bytes());
    dst[10..].fill(0);
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
fn long_double_out(src: &[u8], dst: &mut [u8]) {
    swap_parts(src, dst, 16);
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
fn long_double_in(src: &[u8], dst: &mut [u8]) {
    swap_parts(src, dst, 16);
}

/// Copies `src` to `dst` with each `part`-byte value turned between native and big-endian.
fn swap_parts(src: &[u8], dst: &mut [u8], part: usize) {
    dst.copy_from_slice(src);
    if cfg!(target_endian = "little") {
        dst.chunks_mut(part).for_each(|c| c.reverse());
    }
}

impl External {
    /// One element from memory (`native` bytes) to external32 (`ext` bytes).
    fn write(self, src: &[u8], dst: &mut [u8]) {
        match self.rep {
            Rep::Same => dst.copy_from_slice(src),
            Rep::Int { signed } => {
                let v = read_native(src, signed);
                dst.copy_from_slice(&v.to_be_bytes()[8 - self.ext..]);
            }
            Rep::Float { part } => swap_parts(src, dst, part),
            Rep::LongDouble => {
                for (s, d) in src.chunks(16).zip(dst.chunks_mut(16)) {
                    long_double_out(s, d);
                }
            }
        }
    }

    /// One element from external32 (`ext` bytes) to memory (`native` bytes).
    fn read(self, src: &[u8], dst: &mut [u8]) {
        match self.rep {
            Rep::Same => dst.copy_from_slice(src),
            Rep::Int { signed } => {
                let mut b = [0u8; 8];
                b[8 - self.ext..].copy_from_slice(src);
                let v = extend(u64::from_be_bytes(b), self.ext, signed);
                dst.copy_from_slice(&low_bytes(v, self.native));
            }
            Rep::Float { part } => swap_parts(src, dst, part),
            Rep::LongDouble => {
                for (s, d) in src.chunks(16).zip(dst.chunks_mut(16)) {
                    long_double_in(s, d);
                }
            }
        }
    }
}

/// The conversion of the packed bytes of a datatype to and from external32 when every basic
/// element of it is as large in external32 as in memory (all but MPI_LONG, MPI_UNSIGNED_LONG
/// and MPI_WCHAR here): a file view in external32 then lays the data out as in memory, and the
/// bytes are converted in place, instance by instance.
pub(crate) struct SameSize {
    /// The basic elements of one instance in type-map order: (element, how many).
    plan: Vec<(External, u64)>,
}

impl SameSize {
    /// The conversion of `ty`, or `None` if an element changes size (or has no external32
    /// form).
    pub(crate) fn of(ty: &Datatype) -> Option<SameSize> {
        let mut plan: Vec<(External, u64)> = Vec::new();
        let mut fits = true;
        // No memory is touched: the walk only computes addresses (from 0).
        TypedBuf::new(std::ptr::null(), 1, ty).for_each_basic(|_, n, b| match external(b.id) {
            Some(e) if e.ext == e.native => match plan.last_mut() {
                Some((last, k)) if *last == e => *k += n,
                _ => plan.push((e, n)),
            },
            _ => fits = false,
        });
        fits.then_some(SameSize { plan })
    }

    /// The external32 size of the predefined type `h`, if it has one.
    pub(crate) fn size_of(h: MPI_Datatype) -> Option<usize> {
        external(h as usize).map(|e| e.ext)
    }
}

impl SameSize {
    /// Converts the elements of the packed instances in `bytes`, in place: to external32
    /// (`out`) or back.
    fn convert(&self, bytes: &mut [u8], out: bool) {
        let mut tmp = [0u8; 32];
        let mut at = 0usize;
        while at < bytes.len() && !self.plan.is_empty() {
            for &(e, n) in &self.plan {
                for _ in 0..n {
                    let Some(el) = bytes.get_mut(at..at + e.native) else {
                        return;
                    };
                    let t = &mut tmp[..e.native];
                    match out {
                        true => e.write(el, t),
                        false => e.read(el, t),
                    }
                    el.copy_from_slice(t);
                    at += e.native;
                }
            }
        }
    }
}

impl mpicd::file::Convert for SameSize {
    unsafe fn make_file_bytes(
        &self,
        buf: &TypedBuf,
        at: u64,
        chunk: &mut [u8],
    ) -> mpicd::Result<()> {
        // SAFETY: the caller's promise (readable).
        unsafe { buf.pack(at, chunk) };
        self.convert(chunk, true);
        Ok(())
    }

    unsafe fn store_file_bytes(
        &self,
        buf: &TypedBuf,
        at: u64,
        chunk: &mut [u8],
    ) -> mpicd::Result<()> {
        self.convert(chunk, false);
        // SAFETY: the caller's promise (writable, not overlapping).
        unsafe { buf.unpack(at, chunk) };
        Ok(())
    }
}

/// external32 bytes of one element of `ty`.
fn external_size(ty: &Datatype) -> CResult<u64> {
    if let Some(b) = ty.homogeneous() {
        let e = external(b.id).ok_or_else(|| unknown(b.id))?;
        return Ok(ty.size() / b.size as u64 * e.ext as u64);
    }
    let (mut total, mut bad) = (0u64, None);
    // No memory is touched: the walk only computes addresses (from 0).
    TypedBuf::new(std::ptr::null(), 1, ty).for_each_basic(|_, n, b| match external(b.id) {
        Some(e) => total = total.saturating_add(n.saturating_mul(e.ext as u64)),
        None => bad = Some(b.id),
    });
    match bad {
        Some(id) => Err(unknown(id)),
        None => Ok(total),
    }
}

/// external32 bytes of `count` elements of `ty`.
fn external_len(count: i64, ty: &Datatype) -> CResult<u64> {
    packed_len(count, ty)?;
    external_size(ty)?
        .checked_mul(count as u64)
        .filter(|&b| b <= i64::MAX as u64)
        .ok_or_else(|| fail(MPI_ERR_COUNT, format!("{count} elements overflow")))
}

/// Fails unless `datarep` is "external32".
fn check_datarep(datarep: *const c_char) -> CResult<()> {
    require(datarep, "datarep")?;
    // SAFETY: non-null; MPI requires a NUL-terminated string.
    let rep = unsafe { CStr::from_ptr(datarep) };
    if rep.to_bytes() != b"external32" {
        return Err(fail(
            MPI_ERR_ARG,
            format!(
                "data representation {:?}: only \"external32\" is supported",
                rep
            ),
        ));
    }
    Ok(())
}

/// Packs `count` elements of `dt` at `inbuf` in external32 into `outbuf` at `position`; the new
/// position.
///
/// # Safety
/// The type map must be readable at `inbuf` and `outbuf` writable for `outsize` bytes.
unsafe fn pack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    count: i64,
    dt: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: i64,
    position: i64,
) -> CResult<i64> {
    check_datarep(datarep)?;
    let ty = packable(dt)?;
    let len = external_len(count, &ty)?;
    let at = window(outsize, position, len, "output")?;
    check_base(inbuf, &ty, len)?;
    if len == 0 {
        return Ok(position);
    }
    require(outbuf, "outbuf")?;
    // SAFETY: `at + len <= outsize` bytes of `outbuf`.
    let dst = unsafe { std::slice::from_raw_parts_mut((outbuf as *mut u8).add(at), len as usize) };
    let mut cur = 0usize;
    TypedBuf::new(inbuf as *const u8, count as u64, &ty).for_each_basic(|p, n, b| {
        // Every basic element was checked to have an external32 form when sizing.
        let Some(e) = external(b.id) else { return };
        for i in 0..n as usize {
            // SAFETY: the caller's promise: each element of the type map is readable.
            let src = unsafe { std::slice::from_raw_parts(p.add(i * b.size), e.native) };
            e.write(src, &mut dst[cur..cur + e.ext]);
            cur += e.ext;
        }
    });
    Ok(position + len as i64)
}

/// Unpacks `count` elements of `dt` into `outbuf` from external32 at `inbuf` + `position`; the
/// new position.
///
/// # Safety
/// `inbuf` must be readable for `insize` bytes and the type map writable at `outbuf`.
unsafe fn unpack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: i64,
    position: i64,
    outbuf: *mut c_void,
    count: i64,
    dt: MPI_Datatype,
) -> CResult<i64> {
    check_datarep(datarep)?;
    let ty = packable(dt)?;
    let len = external_len(count, &ty)?;
    let at = window(insize, position, len, "input")?;
    check_base(outbuf, &ty, len)?;
    if len == 0 {
        return Ok(position);
    }
    require(inbuf, "inbuf")?;
    // SAFETY: `at + len <= insize` bytes of `inbuf`.
    let src = unsafe { std::slice::from_raw_parts((inbuf as *const u8).add(at), len as usize) };
    let mut cur = 0usize;
    TypedBuf::new(outbuf as *const u8, count as u64, &ty).for_each_basic(|p, n, b| {
        // Every basic element was checked to have an external32 form when sizing.
        let Some(e) = external(b.id) else { return };
        for i in 0..n as usize {
            // SAFETY: the caller's promise: each element of the type map is writable.
            let dst = unsafe { std::slice::from_raw_parts_mut(p.add(i * b.size), e.native) };
            e.read(&src[cur..cur + e.ext], dst);
            cur += e.ext;
        }
    });
    Ok(position + len as i64)
}

/// Packs `incount` elements of `datatype` in the `datarep` representation ("external32").
#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    incount: c_int,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: MPI_Aint,
    position: *mut MPI_Aint,
) -> c_int {
    run("Pack_external", default_errh(), |_| {
        let at = read_arg(position, "position")? as i64;
        let (n, size) = (incount as i64, outsize as i64);
        // SAFETY: the caller gives the buffers MPI_Pack_external requires.
        let to = unsafe { pack_external(datarep, inbuf, n, datatype, outbuf, size, at) }?;
        out(position, to as MPI_Aint)
    })
}

/// [`MPI_Pack_external`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_external_c(
    datarep: *const c_char,
    inbuf: *const c_void,
    incount: MPI_Count,
    datatype: MPI_Datatype,
    outbuf: *mut c_void,
    outsize: MPI_Count,
    position: *mut MPI_Count,
) -> c_int {
    run("Pack_external_c", default_errh(), |_| {
        let at = read_arg(position, "position")?;
        // SAFETY: the caller gives the buffers MPI_Pack_external requires.
        let to = unsafe { pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, at) }?;
        out(position, to)
    })
}

/// Unpacks `outcount` elements of `datatype` from the `datarep` representation ("external32").
#[no_mangle]
pub unsafe extern "C" fn MPI_Unpack_external(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: MPI_Aint,
    position: *mut MPI_Aint,
    outbuf: *mut c_void,
    outcount: c_int,
    datatype: MPI_Datatype,
) -> c_int {
    run("Unpack_external", default_errh(), |_| {
        let at = read_arg(position, "position")? as i64;
        let (size, n) = (insize as i64, outcount as i64);
        // SAFETY: the caller gives the buffers MPI_Unpack_external requires.
        let to = unsafe { unpack_external(datarep, inbuf, size, at, outbuf, n, datatype) }?;
        out(position, to as MPI_Aint)
    })
}

/// [`MPI_Unpack_external`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Unpack_external_c(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: MPI_Count,
    position: *mut MPI_Count,
    outbuf: *mut c_void,
    outcount: MPI_Count,
    datatype: MPI_Datatype,
) -> c_int {
    run("Unpack_external_c", default_errh(), |_| {
        let at = read_arg(position, "position")?;
        // SAFETY: the caller gives the buffers MPI_Unpack_external requires.
        let to =
            unsafe { unpack_external(datarep, inbuf, insize, at, outbuf, outcount, datatype) }?;
        out(position, to)
    })
}

/// Bytes of `incount` elements of `datatype` in the `datarep` representation ("external32").
#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_external_size(
    datarep: *const c_char,
    incount: c_int,
    datatype: MPI_Datatype,
    size: *mut MPI_Aint,
) -> c_int {
    run("Pack_external_size", default_errh(), |_| {
        check_datarep(datarep)?;
        let n = external_len(incount as i64, &self::datatype(datatype)?)?;
        out(size, n as MPI_Aint)
    })
}

/// [`MPI_Pack_external_size`] with MPI_Counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_external_size_c(
    datarep: *const c_char,
    incount: MPI_Count,
    datatype: MPI_Datatype,
    size: *mut MPI_Count,
) -> c_int {
    run("Pack_external_size_c", default_errh(), |_| {
        check_datarep(datarep)?;
        let n = external_len(incount, &self::datatype(datatype)?)?;
        out(size, n as MPI_Count)
    })
}

#[cfg(test)]
mod tests;
