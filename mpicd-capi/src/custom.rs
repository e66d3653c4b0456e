//! `MPI_Type_create_custom` (the paper's Listings 2-5) and the adapter that drives its C
//! callbacks as the core's [`PackState`] / [`UnpackState`]: the state callback runs when an
//! operation starts, the state free callback once when it completes (the adapter is dropped),
//! and any callback returning other than MPI_SUCCESS fails the operation with that code.
//!
//! Region lengths (`reg_lens[]`) count elements of the region's datatype (`reg_types[]`, a
//! predefined type). The extension `MPIX_Type_custom_set_resize` adds a callback that a
//! receive calls with the sender's shape before any other, so a dynamic object can grow.

use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{out, require};
use crate::errors::run;
use crate::types;
use mpicd::custom::{PackState, RawRegion, RawRegionMut, Shape, UnpackState};
use mpicd::{Error, Result};
use smallvec::{smallvec, SmallVec};
use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex};

/// Regions a callback's arrays hold without a heap allocation.
const FEW: usize = 8;

/// Creates the per-operation state from the buffer and count given to MPI.
pub type MPI_Type_custom_state_function = Option<
    unsafe extern "C" fn(
        context: *mut c_void,
        src: *const c_void,
        src_count: MPI_Count,
        state: *mut *mut c_void,
    ) -> c_int,
>;
/// Frees the state, once, when the operation completes.
pub type MPI_Type_custom_state_free_function =
    Option<unsafe extern "C" fn(state: *mut c_void) -> c_int>;
/// The packed size of the buffer (sender), or the largest packed size accepted (receiver).
pub type MPI_Type_custom_query_function = Option<
    unsafe extern "C" fn(
        state: *mut c_void,
        buf: *const c_void,
        count: MPI_Count,
        packed_size: *mut MPI_Count,
    ) -> c_int,
>;
/// Packs from virtual offset `offset` into `dst` (at most `dst_size` bytes); sets `*used`.
pub type MPI_Type_custom_pack_function = Option<
    unsafe extern "C" fn(
        state: *mut c_void,
        buf: *const c_void,
        count: MPI_Count,
        offset: MPI_Count,
        dst: *mut c_void,
        dst_size: MPI_Count,
        used: *mut MPI_Count,
    ) -> c_int,
>;
/// Unpacks `src_size` bytes that belong at virtual offset `offset` (in order).
pub type MPI_Type_custom_unpack_function = Option<
    unsafe extern "C" fn(
        state: *mut c_void,
        buf: *mut c_void,
        count: MPI_Count,
        offset: MPI_Count,
        src: *const c_void,
        src_size: MPI_Count,
    ) -> c_int,
>;
/// The number of memory regions sent or received without packing.
pub type MPI_Type_custom_region_count_function = Option<
    unsafe extern "C" fn(
        state: *mut c_void,
        buf: *mut c_void,
        count: MPI_Count,
        region_count: *mut MPI_Count,
    ) -> c_int,
>;
/// Fills the start, length (in elements of the region's type) and type of each region.
pub type MPI_Type_custom_region_function = Option<
    unsafe extern "C" fn(
        state: *mut c_void,
        buf: *mut c_void,
        count: MPI_Count,
        region_count: MPI_Count,
        reg_bases: *mut *mut c_void,
        reg_lens: *mut MPI_Count,
        reg_types: *mut MPI_Datatype,
    ) -> c_int,
>;
/// mpicd extension: called on a receive with the sender's shape (packed size, region lengths
/// in elements of `reg_types`), before the query and region callbacks, so that the receiver
/// can size its object. A region's type arrives as its fixed-size equivalent (`MPI_INT32_T`
/// for a sender's `MPI_INT`, `MPI_DOUBLE` for `MPI_DOUBLE`).
pub type MPIX_Type_custom_resize_function = Option<
    unsafe extern "C" fn(
        state: *mut c_void,
        buf: *mut c_void,
        count: MPI_Count,
        packed_size: MPI_Count,
        region_count: MPI_Count,
        reg_lens: *const MPI_Count,
        reg_types: *const MPI_Datatype,
    ) -> c_int,
>;

/// A custom datatype: the callbacks and context given at creation.
pub(crate) struct CustomType {
    statefn: MPI_Type_custom_state_function,
    freefn: MPI_Type_custom_state_free_function,
    queryfn: MPI_Type_custom_query_function,
    packfn: MPI_Type_custom_pack_function,
    unpackfn: MPI_Type_custom_unpack_function,
    region_countfn: MPI_Type_custom_region_count_function,
    regionfn: MPI_Type_custom_region_function,
    resizefn: Mutex<MPIX_Type_custom_resize_function>,
    context: *mut c_void,
    /// Lower bound and extent (0 and 1 unless MPI_Type_create_resized set them): where a
    /// collective finds consecutive objects of an array.
    pub bounds: (i64, i64),
}

// SAFETY: the callbacks and context belong to the application, which MPI requires to make
// them usable from whichever thread drives the operation.
unsafe impl Send for CustomType {}
// SAFETY: as above; the mutable parts are atomics and a mutex.
unsafe impl Sync for CustomType {}

impl CustomType {
    fn resizefn(&self) -> MPIX_Type_custom_resize_function {
        *self.resizefn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The same callbacks with other bounds (MPI_Type_create_resized of a custom type).
    pub(crate) fn resized(&self, lb: i64, extent: i64) -> CustomType {
        CustomType {
            statefn: self.statefn,
            freefn: self.freefn,
            queryfn: self.queryfn,
            packfn: self.packfn,
            unpackfn: self.unpackfn,
            region_countfn: self.region_countfn,
            regionfn: self.regionfn,
            resizefn: Mutex::new(self.resizefn()),
            context: self.context,
            bounds: (lb, extent),
        }
    }
}

fn check(callback: &'static str, code: c_int) -> Result<()> {
    if code == MPI_SUCCESS {
        Ok(())
    } else {
        Err(Error::Callback { callback, code })
    }
}

/// One operation on a custom-typed buffer: its state, freed once on drop.
pub(crate) struct Operation {
    ty: Arc<CustomType>,
    buf: *mut c_void,
    count: MPI_Count,
    state: *mut c_void,
    started: bool,
}

// SAFETY: the buffer and state belong to the application for the duration of the operation
// (MPI's rule for buffers of pending operations); the engine uses the adapter from one
// thread at a time.
unsafe impl Send for Operation {}

impl Operation {
    /// Starts an operation: runs the state callback.
    pub(crate) fn start(ty: Arc<CustomType>, buf: *mut c_void, count: MPI_Count) -> Result<Self> {
        let mut op = Operation {
            ty,
            buf,
            count,
            state: std::ptr::null_mut(),
            started: false,
        };
        if let Some(f) = op.ty.statefn {
            // SAFETY: an application callback called as its typedef says.
            check("state", unsafe {
                f(op.ty.context, buf as *const c_void, count, &mut op.state)
            })?;
        }
        op.started = true;
        Ok(op)
    }

    fn query(&mut self) -> Result<u64> {
        let Some(f) = self.ty.queryfn else {
            return Ok(0);
        };
        let mut size: MPI_Count = 0;
        // SAFETY: application callback.
        check("query", unsafe {
            f(self.state, self.buf, self.count, &mut size)
        })?;
        u64::try_from(size)
            .map_err(|_| Error::InvalidDatatype(format!("query callback gave size {size}")))
    }

    /// The regions, each made by `region` from its base, length in bytes and element type.
    fn regions_as<R>(
        &mut self,
        region: impl Fn(*mut u8, usize, mpicd::ElementType) -> R,
    ) -> Result<Vec<R>> {
        let Some(count_fn) = self.ty.region_countfn else {
            return Ok(Vec::new());
        };
        let mut n: MPI_Count = 0;
        // SAFETY: application callback.
        check("region_count", unsafe {
            count_fn(self.state, self.buf, self.count, &mut n)
        })?;
        let len = usize::try_from(n)
            .map_err(|_| Error::InvalidDatatype(format!("region count callback gave {n}")))?;
        if len == 0 {
            return Ok(Vec::new());
        }
        let region_fn = self.ty.regionfn.ok_or_else(|| {
            Error::InvalidDatatype("regions announced but no region callback".into())
        })?;
        // The callback's arrays: on the stack for the usual few regions.
        let mut bases: SmallVec<[*mut c_void; FEW]> = smallvec![std::ptr::null_mut(); len];
        let mut lens: SmallVec<[MPI_Count; FEW]> = smallvec![0; len];
        let mut dtypes: SmallVec<[MPI_Datatype; FEW]> = smallvec![MPI_DATATYPE_NULL; len];
        // SAFETY: application callback; each array has `n` entries.
        check("region", unsafe {
            region_fn(
                self.state,
                self.buf,
                self.count,
                n,
                bases.as_mut_ptr(),
                lens.as_mut_ptr(),
                dtypes.as_mut_ptr(),
            )
        })?;
        let mut out = Vec::with_capacity(len);
        for i in 0..len {
            let bad_len = || Error::InvalidDatatype(format!("region {i} has length {}", lens[i]));
            let count = u64::try_from(lens[i]).map_err(|_| bad_len())?;
            match types::get(dtypes[i]) {
                Ok(types::Dtype::Basic(basic)) => {
                    let bytes = usize::try_from(count)
                        .ok()
                        .and_then(|l| l.checked_mul(basic.size))
                        .ok_or_else(bad_len)?;
                    if bases[i].is_null() && bytes > 0 {
                        return Err(Error::NullBuffer);
                    }
                    out.push(region(bases[i] as *mut u8, bytes, basic.elem));
                }
                // A derived region type: each of its runs is a region of its own.
                Ok(types::Dtype::Derived(ty)) => {
                    let elem = ty
                        .homogeneous()
                        .and_then(|b| types::basic(b.id as MPI_Datatype))
                        .map_or(mpicd::ElementType::Byte, |b| b.elem);
                    if bases[i].is_null() && count > 0 && ty.size() > 0 {
                        return Err(Error::NullBuffer);
                    }
                    let typed = mpicd::TypedBuf::new(bases[i] as *const u8, count, &ty);
                    typed.for_each_run(|p, l| out.push(region(p, l, elem)));
                }
                _ => {
                    return Err(Error::InvalidDatatype(format!(
                        "region {i} has neither a predefined nor a committed derived datatype"
                    )))
                }
            }
        }
        Ok(out)
    }
}

impl Drop for Operation {
    fn drop(&mut self) {
        if let (true, Some(f)) = (self.started, self.ty.freefn) {
            // SAFETY: application callback, called once. Its code cannot be reported here:
            // the operation already completed.
            let _ = unsafe { f(self.state) };
        }
    }
}

// SAFETY: the regions are the application's memory, which MPI forbids it to change or free
// while the operation is pending; the adapter is dropped when the operation completes.
unsafe impl PackState for Operation {
    fn packed_size(&mut self) -> Result<u64> {
        self.query()
    }

    fn pack(&mut self, offset: u64, dst: &mut [u8]) -> Result<usize> {
        let f = self.ty.packfn.ok_or_else(|| {
            Error::InvalidDatatype("packed bytes announced but no pack callback".into())
        })?;
        let mut used: MPI_Count = 0;
        // SAFETY: application callback; `dst` is writable for its length.
        check("pack", unsafe {
            f(
                self.state,
                self.buf,
                self.count,
                offset as MPI_Count,
                dst.as_mut_ptr() as *mut c_void,
                dst.len() as MPI_Count,
                &mut used,
            )
        })?;
        usize::try_from(used)
            .ok()
            .filter(|&u| u <= dst.len())
            .ok_or_else(|| {
                Error::InvalidDatatype(format!(
                    "pack callback used {used} bytes of a {}-byte fragment",
                    dst.len()
                ))
            })
    }

    fn regions(&mut self) -> Result<Vec<RawRegion>> {
        self.regions_as(|ptr, bytes, elem| RawRegion {
            ptr: ptr as *const u8,
            bytes,
            elem,
        })
    }
}

// SAFETY: as for the send side; the application guarantees the regions are writable and
// disjoint (MPI's rule for receive buffers).
unsafe impl UnpackState for Operation {
    fn resize(&mut self, shape: &Shape) -> Result<()> {
        let Some(f) = self.ty.resizefn() else {
            return Ok(());
        };
        let n = shape.region_count();
        let mut lens: SmallVec<[MPI_Count; FEW]> = SmallVec::new();
        let mut dtypes: SmallVec<[MPI_Datatype; FEW]> = SmallVec::new();
        lens.try_reserve_exact(n).map_err(|_| Error::NoMemory)?;
        dtypes.try_reserve_exact(n).map_err(|_| Error::NoMemory)?;
        for r in shape.regions() {
            lens.push(r.len() as MPI_Count);
            dtypes.push(types::handle_of(r.elem));
        }
        // SAFETY: application callback; both arrays have region_count entries.
        check("resize", unsafe {
            f(
                self.state,
                self.buf,
                self.count,
                shape.packed_bytes as MPI_Count,
                lens.len() as MPI_Count,
                lens.as_ptr(),
                dtypes.as_ptr(),
            )
        })
    }

    fn packed_capacity(&mut self) -> Result<u64> {
        self.query()
    }

    fn unpack(&mut self, offset: u64, src: &[u8]) -> Result<()> {
        let f = self.ty.unpackfn.ok_or_else(|| {
            Error::InvalidDatatype("packed bytes arrived but no unpack callback".into())
        })?;
        // SAFETY: application callback; `src` is readable for its length.
        check("unpack", unsafe {
            f(
                self.state,
                self.buf,
                self.count,
                offset as MPI_Count,
                src.as_ptr() as *const c_void,
                src.len() as MPI_Count,
            )
        })
    }

    fn regions(&mut self) -> Result<Vec<RawRegionMut>> {
        self.regions_as(|ptr, bytes, elem| RawRegionMut { ptr, bytes, elem })
    }
}

/// Creates a custom datatype from application callbacks (any may be NULL: no state, no packed
/// part, no regions). It is usable at once, as the paper's programs use it; `MPI_Type_commit`
/// on it is allowed and does nothing more. `inorder` is accepted; mpicd always delivers packed
/// fragments in order.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn MPI_Type_create_custom(
    statefn: MPI_Type_custom_state_function,
    freefn: MPI_Type_custom_state_free_function,
    queryfn: MPI_Type_custom_query_function,
    packfn: MPI_Type_custom_pack_function,
    unpackfn: MPI_Type_custom_unpack_function,
    region_countfn: MPI_Type_custom_region_count_function,
    regionfn: MPI_Type_custom_region_function,
    context: *mut c_void,
    inorder: c_int,
    r#type: *mut MPI_Datatype,
) -> c_int {
    run("Type_create_custom", default_errh(), |_| {
        crate::env::check_live()?;
        require(r#type, "type")?;
        let _ = inorder;
        let ty = CustomType {
            statefn,
            freefn,
            queryfn,
            packfn,
            unpackfn,
            region_countfn,
            regionfn,
            resizefn: Mutex::new(None),
            context,
            bounds: (0, 1),
        };
        out(r#type, types::insert_custom(ty))
    })
}

/// mpicd extension: sets the callback a receive of `type` calls with the sender's shape before
/// any other (see `MPIX_Type_custom_resize_function`).
#[no_mangle]
pub unsafe extern "C" fn MPIX_Type_custom_set_resize(
    r#type: MPI_Datatype,
    resizefn: MPIX_Type_custom_resize_function,
) -> c_int {
    run("MPIX_Type_custom_set_resize", default_errh(), |_| {
        let ty = types::custom(r#type)?;
        *ty.resizefn.lock().unwrap_or_else(|p| p.into_inner()) = resizefn;
        Ok(())
    })
}
