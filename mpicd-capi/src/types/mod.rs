//! Datatype handles: the table of created types (custom, and derived from the type
//! constructors), what a handle stands for in communication ([`Dtype`]), and MPI_Type_size /
//! get_extent / commit / free. The predefined types are in [`predefined`] (the Fortran ones
//! and their queries in [`fortran`]); the type constructors in [`ctors`], [`indexed`] and
//! [`arrays`], their decoding (envelope, contents) in [`contents`], the other queries
//! (extents, names, addresses) in [`query`], MPI_Pack and MPI_Unpack in [`pack`] and the
//! external32 representation in [`external`].

pub mod arrays;
pub mod contents;
pub mod ctors;
pub mod external;
pub mod fortran;
pub mod indexed;
pub mod pack;
mod predefined;
pub mod query;

pub(crate) use predefined::{
    basic, core_type, handle_of, is_predefined, pair, pair_index, predefined_handle, Basic, Kind,
    PAIRS,
};

use crate::abi::*;
use crate::comms::default_errh;
use crate::custom::CustomType;
use crate::env::{out, read_arg};
use crate::errors::{fail, run, CResult};
use crate::handles::{Table, DATATYPE_BASE};
use mpicd::Datatype;
use std::ffi::c_int;
use std::sync::Arc;

/// A created datatype.
pub(crate) enum Created {
    /// From `MPI_Type_create_custom`: usable at once (the paper's programs never commit).
    Custom(Arc<CustomType>),
    /// From a type constructor: usable in communication once committed.
    Derived { ty: Datatype, committed: bool },
}

/// A created datatype and its name (`MPI_Type_set_name`).
pub(crate) struct Entry {
    pub created: Created,
    pub name: String,
    /// Made by a large-count (`_c`) constructor: `MPI_Type_get_contents_c` returns its counts
    /// as large counts, and `MPI_Type_get_contents` refuses it.
    pub large: bool,
}

pub(crate) static TYPES: Table<Entry> = Table::new(DATATYPE_BASE);

/// What a datatype handle stands for in communication.
#[derive(Clone)]
pub(crate) enum Dtype {
    /// A predefined element type: contiguous bytes.
    Basic(Basic),
    Custom(Arc<CustomType>),
    /// A derived type, or a predefined pair type (a struct).
    Derived(Datatype),
}

/// Stores a new derived type (uncommitted); its handle.
pub(crate) fn insert_derived(ty: Datatype) -> MPI_Datatype {
    insert_derived_as(ty, false, false)
}

/// Stores a derived type, committed or not, made by a large-count constructor or not.
pub(crate) fn insert_derived_as(ty: Datatype, committed: bool, large: bool) -> MPI_Datatype {
    TYPES.insert(Entry {
        created: Created::Derived { ty, committed },
        name: String::new(),
        large,
    }) as MPI_Datatype
}

/// Stores a new custom type; its handle.
pub(crate) fn insert_custom(ty: CustomType) -> MPI_Datatype {
    TYPES.insert(Entry {
        created: Created::Custom(Arc::new(ty)),
        name: String::new(),
        large: false,
    }) as MPI_Datatype
}

fn null_type() -> crate::errors::Fail {
    fail(MPI_ERR_TYPE, "MPI_DATATYPE_NULL is not a datatype")
}

fn unknown_type() -> crate::errors::Fail {
    fail(MPI_ERR_TYPE, "unknown or freed datatype")
}

/// Runs `f` on the created type of `h`.
pub(crate) fn with_created<R>(h: MPI_Datatype, f: impl FnOnce(&mut Entry) -> R) -> CResult<R> {
    if h == MPI_DATATYPE_NULL || h.is_null() {
        return Err(null_type());
    }
    TYPES.with(h as usize, f).ok_or_else(unknown_type)
}

/// The datatype of a handle, for use in communication (a derived type must be committed).
pub(crate) fn get(h: MPI_Datatype) -> CResult<Dtype> {
    if let Some(basic) = basic(h) {
        return Ok(Dtype::Basic(basic));
    }
    if let Some(pair) = core_type(h) {
        return Ok(Dtype::Derived(pair));
    }
    with_created(h, |e| match &e.created {
        Created::Custom(c) => Ok(Dtype::Custom(Arc::clone(c))),
        Created::Derived {
            ty,
            committed: true,
        } => Ok(Dtype::Derived(ty.clone())),
        Created::Derived { .. } => Err(fail(
            MPI_ERR_TYPE,
            "the derived datatype was not committed (MPI_Type_commit)",
        )),
    })?
}

/// The core datatype of a predefined or derived handle, committed or not (what the type
/// constructors and queries take). A custom type has none: `MPI_ERR_TYPE`.
pub(crate) fn datatype(h: MPI_Datatype) -> CResult<Datatype> {
    if let Some(t) = core_type(h) {
        return Ok(t);
    }
    with_created(h, |e| match &e.created {
        Created::Derived { ty, .. } => Ok(ty.clone()),
        Created::Custom(_) => Err(fail(
            MPI_ERR_TYPE,
            "a custom datatype cannot be used here (only in point-to-point calls and the \
             collectives that move data)",
        )),
    })?
}

/// The custom type of a handle.
pub(crate) fn custom(h: MPI_Datatype) -> CResult<Arc<CustomType>> {
    with_created(h, |e| match &e.created {
        Created::Custom(c) => Ok(Arc::clone(c)),
        Created::Derived { .. } => Err(fail(MPI_ERR_TYPE, "not a custom datatype")),
    })?
}

/// `count` elements of `basic` in bytes.
pub(crate) fn byte_len(count: i64, basic: Basic) -> CResult<usize> {
    if count < 0 {
        return Err(fail(MPI_ERR_COUNT, format!("negative count {count}")));
    }
    (count as usize)
        .checked_mul(basic.size)
        .ok_or_else(|| fail(MPI_ERR_COUNT, format!("count {count} overflows")))
}

/// Drops every created type (finalize).
pub(crate) fn free_all() {
    drop(TYPES.drain());
}

/// Size in bytes of one element's data; MPI_UNDEFINED for a custom type.
pub(crate) fn size_of(h: MPI_Datatype) -> CResult<i64> {
    // A basic type's size is in its table row: no datatype to look up (test harnesses such as
    // MPICH's DTPools ask once per element they check).
    if let Some(b) = predefined::basic(h) {
        return Ok(b.size as i64);
    }
    match datatype(h) {
        Ok(t) => Ok(t.size() as i64),
        Err(e) => custom(h).map(|_| MPI_UNDEFINED as i64).map_err(|_| e),
    }
}

/// Size in bytes of the data of one element; MPI_UNDEFINED for a custom type.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size(datatype: MPI_Datatype, size: *mut c_int) -> c_int {
    // A basic type's size straight from its table row, without the general path's frame:
    // test harnesses (MPICH's DTPools) ask once per element they check, and spent half their
    // time here.
    if let (Some(b), false) = (basic(datatype), size.is_null()) {
        // SAFETY: non-null; the caller passes a writable int.
        unsafe { *size = b.size as c_int };
        return MPI_SUCCESS;
    }
    run("Type_size", default_errh(), |_| {
        let n = size_of(datatype)?;
        out(size, c_int::try_from(n).unwrap_or(MPI_UNDEFINED))
    })
}

/// [`MPI_Type_size`] with an MPI_Count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size_c(datatype: MPI_Datatype, size: *mut MPI_Count) -> c_int {
    run("Type_size_c", default_errh(), |_| {
        out(size, size_of(datatype)?)
    })
}

/// Lower bound and extent; a custom type reports lower bound 0 and extent 1 (its callbacks,
/// not MPI, walk arrays of it).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_extent(
    datatype: MPI_Datatype,
    lb: *mut MPI_Aint,
    extent: *mut MPI_Aint,
) -> c_int {
    run("Type_get_extent", default_errh(), |_| {
        let (l, e) = query::extent_of(datatype)?;
        out(lb, l as MPI_Aint)?;
        out(extent, e as MPI_Aint)
    })
}

/// Commits a datatype: a derived type becomes usable in communication (its plan was compiled
/// when it was made); predefined and custom types are always usable.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_commit(datatype: *mut MPI_Datatype) -> c_int {
    run("Type_commit", default_errh(), |_| {
        let h = read_arg(datatype, "datatype pointer")?;
        if is_predefined(h) {
            return Ok(());
        }
        with_created(h, |e| {
            if let Created::Derived { committed, .. } = &mut e.created {
                *committed = true;
            }
        })
    })
}

/// Frees a created datatype and sets the handle to MPI_DATATYPE_NULL. Operations still using
/// it, and types built on it, keep it alive as long as they need it. Its attributes are
/// deleted first, the last set first (if a delete callback fails, so does the free).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_free(datatype: *mut MPI_Datatype) -> c_int {
    run("Type_free", default_errh(), |_| {
        let h = read_arg(datatype, "datatype pointer")?;
        if is_predefined(h) || fortran::is_f90(h) {
            return Err(fail(MPI_ERR_TYPE, "predefined datatypes cannot be freed"));
        }
        with_created(h, |_| ())?;
        // Attributes (attrs/types.rs): the delete callbacks run while `h` is still valid.
        crate::attrs::types::release(h)?;
        TYPES.remove(h as usize);
        out(datatype, MPI_DATATYPE_NULL)
    })
}
