//! A collective's or a local reduction's datatype ([`Elem`]: a predefined type read and written
//! in place, or a derived type packed and unpacked through its plan) and byte slices over C
//! pointers (MPI_IN_PLACE refused where it cannot be). The collectives' plans name buffers
//! through it (`coll::plans`).

use crate::abi::*;
use crate::errors::{fail, CResult};
use crate::p2p::count_of;
use crate::types::{self, byte_len, Basic, Dtype};
use mpicd::{Datatype, TypedBuf};
use std::borrow::Cow;
use std::ffi::c_void;

pub(crate) fn in_place(p: *const c_void) -> bool {
    std::ptr::eq(p, MPI_IN_PLACE)
}

/// A readable byte slice of `len` bytes at `p` (empty for len 0).
///
/// # Safety
/// `p` must be readable for `len` bytes while the slice lives.
pub(crate) unsafe fn bytes<'a>(p: *const c_void, len: usize) -> CResult<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() || in_place(p) {
        return Err(fail(MPI_ERR_BUFFER, "null or MPI_IN_PLACE buffer here"));
    }
    // SAFETY: forwarded from the caller.
    Ok(unsafe { std::slice::from_raw_parts(p as *const u8, len) })
}

/// A writable byte slice of `len` bytes at `p`.
///
/// # Safety
/// `p` must be writable for `len` bytes and not otherwise accessed while the slice lives.
pub(crate) unsafe fn bytes_mut<'a>(p: *mut c_void, len: usize) -> CResult<&'a mut [u8]> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() || in_place(p) {
        return Err(fail(MPI_ERR_BUFFER, "null or MPI_IN_PLACE buffer here"));
    }
    // SAFETY: forwarded from the caller.
    Ok(unsafe { std::slice::from_raw_parts_mut(p as *mut u8, len) })
}

/// A collective's datatype.
#[derive(Clone)]
pub(crate) enum Elem {
    Basic(Basic),
    Derived(Datatype),
}

impl Elem {
    /// The datatype of a handle (custom types are refused).
    pub(crate) fn of(h: MPI_Datatype) -> CResult<Elem> {
        match types::get(h)? {
            Dtype::Basic(b) => Ok(Elem::Basic(b)),
            Dtype::Derived(t) => Ok(Elem::Derived(t)),
            Dtype::Custom(_) => Err(fail(
                MPI_ERR_TYPE,
                "custom datatypes are only supported in point-to-point calls",
            )),
        }
    }

    /// Bytes of data in `count` elements.
    pub(crate) fn packed(&self, count: i64) -> CResult<usize> {
        let count = count_of(count)?;
        match self {
            Elem::Basic(b) => byte_len(count, *b),
            Elem::Derived(t) => (count as u64)
                .checked_mul(t.size())
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| fail(MPI_ERR_COUNT, format!("count {count} overflows"))),
        }
    }

    /// The distance between consecutive elements in memory.
    pub(crate) fn stride(&self) -> i64 {
        match self {
            Elem::Basic(b) => b.size as i64,
            Elem::Derived(t) => t.extent(),
        }
    }

    /// The predefined type a reduction works on: the type itself, or the one basic type a
    /// derived type is made of.
    pub(crate) fn reduction_basic(&self) -> CResult<Basic> {
        let one = match self {
            Elem::Basic(b) => return Ok(*b),
            Elem::Derived(t) => t
                .homogeneous()
                .and_then(|b| types::basic(b.id as MPI_Datatype)),
        };
        one.ok_or_else(|| {
            fail(
                MPI_ERR_OP,
                "reductions on derived types need one predefined element type throughout",
            )
        })
    }

    /// The data of `count` elements at `p`: in place for a predefined type, packed for a
    /// derived one.
    ///
    /// # Safety
    /// `p` must hold `count` elements while the result lives.
    pub(crate) unsafe fn read<'a>(&self, p: *const c_void, count: i64) -> CResult<Cow<'a, [u8]>> {
        let len = self.packed(count)?;
        match self {
            // SAFETY: forwarded from the caller.
            Elem::Basic(_) => Ok(Cow::Borrowed(unsafe { bytes(p, len) }?)),
            Elem::Derived(t) => {
                if in_place(p) {
                    return Err(fail(MPI_ERR_BUFFER, "MPI_IN_PLACE buffer here"));
                }
                let mut v = vec![0u8; len];
                // SAFETY: forwarded from the caller: the type map is readable.
                unsafe { TypedBuf::new(p as *const u8, count as u64, t).pack(0, &mut v) };
                Ok(Cow::Owned(v))
            }
        }
    }

    /// Writes `data` (at most `count` elements' data) into the elements at `p`.
    ///
    /// # Safety
    /// `p` must hold `count` writable elements.
    pub(crate) unsafe fn write(&self, p: *mut c_void, count: i64, data: &[u8]) -> CResult<()> {
        let len = self.packed(count)?;
        if data.len() > len {
            return Err(fail(
                MPI_ERR_TRUNCATE,
                format!("{} bytes arrived for a {len}-byte buffer", data.len()),
            ));
        }
        match self {
            // SAFETY: forwarded from the caller.
            Elem::Basic(_) => unsafe { bytes_mut(p, data.len()) }?.copy_from_slice(data),
            Elem::Derived(t) => {
                if in_place(p) {
                    return Err(fail(MPI_ERR_BUFFER, "MPI_IN_PLACE buffer here"));
                }
                // SAFETY: forwarded from the caller: the type map is writable.
                unsafe { TypedBuf::new(p as *const u8, count as u64, t).unpack(0, data) };
            }
        }
        Ok(())
    }

    /// Runs `f` on the data of `count` elements at `p` as contiguous bytes (in place for a
    /// predefined type; packed before, with `load`, and unpacked after for a derived one).
    ///
    /// # Safety
    /// `p` must hold `count` writable elements.
    pub(crate) unsafe fn staged<R>(
        &self,
        p: *mut c_void,
        count: i64,
        load: bool,
        f: impl FnOnce(&mut [u8]) -> CResult<R>,
    ) -> CResult<R> {
        let len = self.packed(count)?;
        match self {
            // SAFETY: forwarded from the caller.
            Elem::Basic(_) => f(unsafe { bytes_mut(p, len) }?),
            Elem::Derived(_) => {
                let mut v = if load {
                    // SAFETY: forwarded from the caller.
                    unsafe { self.read(p, count) }?.into_owned()
                } else {
                    vec![0u8; len]
                };
                let r = f(&mut v)?;
                // SAFETY: forwarded from the caller.
                unsafe { self.write(p, count, &v) }?;
                Ok(r)
            }
        }
    }
}
