//! The C binding of the control variables (`MPI_T_cvar_*`): mpicd's configuration table as
//! `mpicd::tool::cvar` presents it. Numbers are `unsigned long long`, switches and `MPICD_WAIT`
//! `int` (the latter with an enumeration), text `char` strings; `MPICD_COLL_ALGORITHMS` alone
//! can be written (while MPI runs).

use crate::abi::*;
use crate::abi_tool::*;
use crate::errors::{fail, CResult};
use crate::tool::{
    c_count, enum_handle, index, invalid, name_arg, put, put_required, put_string, put_unaligned,
    run_t, verbosity,
};
use mpicd::tool::{self, cvar};
use std::ffi::{c_char, c_int, c_void};

/// The number of control variables.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_cvar_get_num(num_cvar: *mut c_int) -> c_int {
    run_t("T_cvar_get_num", || {
        tool::check_initialized()?;
        put_required(num_cvar, c_count(cvar::cvars().len())?, "num_cvar")
    })
}

/// A control variable's name, verbosity, datatype, enumeration (`MPI_T_ENUM_NULL` but for
/// `MPICD_WAIT`), description, binding (none) and scope (constant, or read-only when the
/// runtime reads it at init).
#[no_mangle]
pub unsafe extern "C" fn MPI_T_cvar_get_info(
    cvar_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity_out: *mut c_int,
    datatype: *mut MPI_Datatype,
    enumtype: *mut MPI_T_enum,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
    scope: *mut c_int,
) -> c_int {
    run_t("T_cvar_get_info", || {
        tool::check_initialized()?;
        let c = cvar::cvar(index(cvar_index, "control variable")?)?;
        put_string(name, name_len, c.name)?;
        put(verbosity_out, verbosity(c.verbosity));
        let (ty, e) = match c.ty {
            cvar::CvarType::Int => (MPI_INT, MPI_T_ENUM_NULL),
            cvar::CvarType::Choice(e) => (MPI_INT, enum_handle(e)),
            cvar::CvarType::UnsignedLongLong => (MPI_UNSIGNED_LONG_LONG, MPI_T_ENUM_NULL),
            cvar::CvarType::Text => (MPI_CHAR, MPI_T_ENUM_NULL),
        };
        put(datatype, ty);
        put(enumtype, e);
        put_string(desc, desc_len, c.desc)?;
        put(bind, MPI_T_BIND_NO_OBJECT);
        put(
            scope,
            match c.scope {
                cvar::CvarScope::Constant => MPI_T_SCOPE_CONSTANT,
                cvar::CvarScope::Readonly => MPI_T_SCOPE_READONLY,
                cvar::CvarScope::AllEq => MPI_T_SCOPE_ALL_EQ,
            },
        );
        Ok(())
    })
}

/// The index of the control variable named `name` (the environment variable's name).
#[no_mangle]
pub unsafe extern "C" fn MPI_T_cvar_get_index(
    name: *const c_char,
    cvar_index: *mut c_int,
) -> c_int {
    run_t("T_cvar_get_index", || {
        tool::check_initialized()?;
        let i = cvar::index_of(name_arg(name)?)?;
        put_required(cvar_index, c_count(i)?, "cvar_index")
    })
}

/// A handle on a control variable (bound to no object: `obj_handle` is ignored) and its
/// number of elements (a string's: its length plus one).
#[no_mangle]
pub unsafe extern "C" fn MPI_T_cvar_handle_alloc(
    cvar_index: c_int,
    _obj_handle: *mut c_void,
    handle: *mut MPI_T_cvar_handle,
    count: *mut c_int,
) -> c_int {
    run_t("T_cvar_handle_alloc", || {
        tool::check_initialized()?;
        let i = index(cvar_index, "control variable")?;
        cvar::cvar(i)?;
        if handle.is_null() || count.is_null() {
            return Err(invalid("null handle or count"));
        }
        let (h, n) = cvar::handle_alloc(i)?;
        put(handle, h as MPI_T_cvar_handle);
        put(count, c_count(n)?);
        Ok(())
    })
}

/// Frees a control variable handle; `*handle` becomes `MPI_T_CVAR_HANDLE_NULL`.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_cvar_handle_free(handle: *mut MPI_T_cvar_handle) -> c_int {
    run_t("T_cvar_handle_free", || {
        tool::check_initialized()?;
        if handle.is_null() {
            return Err(invalid("null handle"));
        }
        // SAFETY: non-null; an IN/OUT argument points to valid memory.
        cvar::handle_free(unsafe { handle.read() } as usize)?;
        put(handle, MPI_T_CVAR_HANDLE_NULL);
        Ok(())
    })
}

/// Reads the value in effect into `buf`: one `int` or `unsigned long long`, or a string of at
/// most the handle's count of `char`s, NUL included.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_cvar_read(handle: MPI_T_cvar_handle, buf: *mut c_void) -> c_int {
    run_t("T_cvar_read", || {
        tool::check_initialized()?;
        let i = cvar::handle_index(handle as usize)?;
        if buf.is_null() {
            return Err(invalid("null buf"));
        }
        match cvar::value(i)? {
            cvar::CvarValue::Int(v) => put_unaligned(buf as *mut c_int, v, "buf")?,
            cvar::CvarValue::UnsignedLongLong(v) => put_unaligned(buf as *mut u64, v, "buf")?,
            cvar::CvarValue::Text(t) => {
                // The handle's count: the length of the value when it was allocated (it
                // may have changed since: a runtime started in between).
                let room = cvar::handle_count(handle as usize)?;
                // SAFETY: the caller gives the handle's count of chars at `buf`.
                unsafe { crate::errors::write_c_string(buf as *mut c_char, room, &t) };
            }
        }
        Ok(())
    })
}

/// Writes a control variable. Only `MPICD_COLL_ALGORITHMS` (scope `MPI_T_SCOPE_ALL_EQ`: every
/// process writes the same value between the same collectives) can be written, while MPI runs
/// (else `MPI_T_ERR_CVAR_SET_NOT_NOW`), with a string the collectives accept (else
/// `MPI_T_ERR_INVALID`); it takes effect at the next collective. The others are read once,
/// when the runtime starts (`MPI_T_ERR_CVAR_SET_NEVER`): set them in the environment.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_cvar_write(handle: MPI_T_cvar_handle, buf: *const c_void) -> c_int {
    run_t("T_cvar_write", || {
        tool::check_initialized()?;
        let i = cvar::handle_index(handle as usize)?;
        if buf.is_null() {
            return Err(fail(MPI_T_ERR_INVALID, "null buf"));
        }
        let text = match cvar::cvars()[i].ty {
            cvar::CvarType::Text => {
                let room = cvar::handle_count(handle as usize)?;
                // SAFETY: the caller gives a string of at most the handle's count of chars at
                // `buf` (non-null, checked), NUL-terminated within them or not at all.
                unsafe { bounded_string(buf as *const u8, room) }?
            }
            _ => String::new(),
        };
        Ok(cvar::write(handle as usize, &text)?)
    })
}

/// The string at `at`: its bytes up to the first NUL or `room` bytes, which must be UTF-8.
///
/// # Safety
/// `at` must point to readable bytes up to its first NUL or `room` bytes, whichever comes
/// first.
unsafe fn bounded_string(at: *const u8, room: usize) -> CResult<String> {
    let mut bytes = Vec::new();
    for k in 0..room {
        // SAFETY: k < room and no NUL came before: within what the caller gives.
        let b = unsafe { at.add(k).read() };
        if b == 0 {
            break;
        }
        bytes.push(b);
    }
    String::from_utf8(bytes).map_err(|_| invalid("a value that is not UTF-8"))
}
