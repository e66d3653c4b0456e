//! The C binding of the performance variables (`MPI_T_pvar_*`): sessions, handles and the
//! counters `mpicd::tool::pvar` keeps. Every variable is one `unsigned long long` bound to no
//! object.

use crate::abi::*;
use crate::abi_tool::*;
use crate::errors::{fail, CResult};
use crate::tool::{
    c_count, index, invalid, name_arg, put, put_required, put_string, put_unaligned, run_t,
};
use mpicd::tool::pvar::{self, PvarClass, Target};
use mpicd::tool::{self, Handle};
use std::ffi::{c_char, c_int, c_void};

/// The C value of a class.
fn class_value(c: PvarClass) -> c_int {
    match c {
        PvarClass::Level => MPI_T_PVAR_CLASS_LEVEL,
        PvarClass::HighWatermark => MPI_T_PVAR_CLASS_HIGHWATERMARK,
        PvarClass::Counter => MPI_T_PVAR_CLASS_COUNTER,
    }
}

/// A session argument.
fn session(s: MPI_T_pvar_session) -> Handle {
    s as Handle
}

/// A handle argument that must name one handle.
fn one(h: MPI_T_pvar_handle) -> CResult<Handle> {
    match h {
        MPI_T_PVAR_ALL_HANDLES => Err(fail(
            MPI_T_ERR_INVALID_HANDLE,
            "MPI_T_PVAR_ALL_HANDLES is not allowed here",
        )),
        h => Ok(h as Handle),
    }
}

/// A handle argument that may be `MPI_T_PVAR_ALL_HANDLES`.
fn target(h: MPI_T_pvar_handle) -> Target {
    match h {
        MPI_T_PVAR_ALL_HANDLES => Target::All,
        h => Target::One(h as Handle),
    }
}

/// The number of performance variables.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_pvar_get_num(num_pvar: *mut c_int) -> c_int {
    run_t("T_pvar_get_num", || {
        tool::check_initialized()?;
        put_required(num_pvar, c_count(pvar::PVARS.len())?, "num_pvar")
    })
}

/// A performance variable's name, verbosity, class, datatype (`MPI_UNSIGNED_LONG_LONG`),
/// enumeration (none), description, binding (none), and whether it is read-only, continuous
/// and can be read and reset atomically.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_pvar_get_info(
    pvar_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    var_class: *mut c_int,
    datatype: *mut MPI_Datatype,
    enumtype: *mut MPI_T_enum,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
    readonly: *mut c_int,
    continuous: *mut c_int,
    atomic: *mut c_int,
) -> c_int {
    run_t("T_pvar_get_info", || {
        tool::check_initialized()?;
        let p = pvar::pvar(index(pvar_index, "performance variable")?)?;
        put_string(name, name_len, p.name)?;
        put(verbosity, crate::tool::verbosity(p.verbosity));
        put(var_class, class_value(p.class));
        put(datatype, MPI_UNSIGNED_LONG_LONG);
        put(enumtype, MPI_T_ENUM_NULL);
        put_string(desc, desc_len, p.desc)?;
        put(bind, MPI_T_BIND_NO_OBJECT);
        put(readonly, c_int::from(p.readonly()));
        put(continuous, c_int::from(p.continuous()));
        put(atomic, c_int::from(p.atomic()));
        Ok(())
    })
}

/// The index of the performance variable of class `var_class` named `name`.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_pvar_get_index(
    name: *const c_char,
    var_class: c_int,
    pvar_index: *mut c_int,
) -> c_int {
    run_t("T_pvar_get_index", || {
        tool::check_initialized()?;
        let name = name_arg(name)?;
        if !(MPI_T_PVAR_CLASS_STATE..=MPI_T_PVAR_CLASS_GENERIC).contains(&var_class) {
            return Err(invalid(format!("unknown class {var_class}")));
        }
        let class = [
            PvarClass::Level,
            PvarClass::HighWatermark,
            PvarClass::Counter,
        ]
        .into_iter()
        .find(|&c| class_value(c) == var_class);
        let i = match class {
            Some(c) => pvar::index_of(name, c)?,
            None => {
                return Err(fail(
                    MPI_T_ERR_INVALID_NAME,
                    format!("no performance variable {name} of class {var_class}"),
                ))
            }
        };
        put_required(pvar_index, c_count(i)?, "pvar_index")
    })
}

/// A new session.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_pvar_session_create(session_out: *mut MPI_T_pvar_session) -> c_int {
    run_t("T_pvar_session_create", || {
        tool::check_initialized()?;
        if session_out.is_null() {
            return Err(invalid("null session"));
        }
        put(session_out, pvar::session_create()? as MPI_T_pvar_session);
        Ok(())
    })
}

/// Frees a session and its handles; `*session` becomes `MPI_T_PVAR_SESSION_NULL`.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_pvar_session_free(session_io: *mut MPI_T_pvar_session) -> c_int {
    run_t("T_pvar_session_free", || {
        tool::check_initialized()?;
        if session_io.is_null() {
            return Err(invalid("null session"));
        }
        // SAFETY: non-null; an IN/OUT argument points to valid memory.
        pvar::session_free(session(unsafe { session_io.read() }))?;
        put(session_io, MPI_T_PVAR_SESSION_NULL);
        Ok(())
    })
}

/// A handle on a performance variable in `session` (bound to no object: `obj_handle` is
/// ignored) and its number of elements (1). A counter's handle starts stopped.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_pvar_handle_alloc(
    session_in: MPI_T_pvar_session,
    pvar_index: c_int,
    _obj_handle: *mut c_void,
    handle: *mut MPI_T_pvar_handle,
    count: *mut c_int,
) -> c_int {
    run_t("T_pvar_handle_alloc", || {
        tool::check_initialized()?;
        let i = index(pvar_index, "performance variable")?;
        pvar::pvar(i)?;
        if handle.is_null() || count.is_null() {
            return Err(invalid("null handle or count"));
        }
        let (h, n) = pvar::handle_alloc(session(session_in), i)?;
        put(handle, h as MPI_T_pvar_handle);
        put(count, c_count(n)?);
        Ok(())
    })
}

/// Frees a handle of `session`; `*handle` becomes `MPI_T_PVAR_HANDLE_NULL`.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_pvar_handle_free(
    session_in: MPI_T_pvar_session,
    handle: *mut MPI_T_pvar_handle,
) -> c_int {
    run_t("T_pvar_handle_free", || {
        tool::check_initialized()?;
        if handle.is_null() {
            return Err(invalid("null handle"));
        }
        // SAFETY: non-null; an IN/OUT argument points to valid memory.
        let h = one(unsafe { handle.read() })?;
        pvar::handle_free(session(session_in), h)?;
        put(handle, MPI_T_PVAR_HANDLE_NULL);
        Ok(())
    })
}

/// Starts a handle (`MPI_T_PVAR_ALL_HANDLES`: every handle of the session that is not
/// continuous); a continuous variable cannot be started (`MPI_T_ERR_PVAR_NO_STARTSTOP`).
#[no_mangle]
pub unsafe extern "C" fn MPI_T_pvar_start(
    session_in: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
) -> c_int {
    run_t("T_pvar_start", || {
        tool::check_initialized()?;
        Ok(pvar::start(session(session_in), target(handle))?)
    })
}

/// Stops a handle (`MPI_T_PVAR_ALL_HANDLES`: every handle of the session that is not
/// continuous), keeping what it counted.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_pvar_stop(
    session_in: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
) -> c_int {
    run_t("T_pvar_stop", || {
        tool::check_initialized()?;
        Ok(pvar::stop(session(session_in), target(handle))?)
    })
}

/// Reads a handle's value (one `unsigned long long`) into `buf`.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_pvar_read(
    session_in: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *mut c_void,
) -> c_int {
    run_t("T_pvar_read", || {
        tool::check_initialized()?;
        let v = pvar::read(session(session_in), one(handle)?)?;
        put_unaligned(buf as *mut u64, v, "buf")
    })
}

/// Reads a handle's value into `buf` and resets it to 0 in the same step (counters only).
#[no_mangle]
pub unsafe extern "C" fn MPI_T_pvar_readreset(
    session_in: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *mut c_void,
) -> c_int {
    run_t("T_pvar_readreset", || {
        tool::check_initialized()?;
        let (s, h) = (session(session_in), one(handle)?);
        pvar::handle_pvar(s, h)?;
        if buf.is_null() {
            return Err(invalid("null buf"));
        }
        put_unaligned(buf as *mut u64, pvar::readreset(s, h)?, "buf")?;
        Ok(())
    })
}

/// Resets a handle to 0 (`MPI_T_PVAR_ALL_HANDLES`: every handle of the session that is not
/// read-only); a read-only variable cannot be reset (`MPI_T_ERR_PVAR_NO_WRITE`).
#[no_mangle]
pub unsafe extern "C" fn MPI_T_pvar_reset(
    session_in: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
) -> c_int {
    run_t("T_pvar_reset", || {
        tool::check_initialized()?;
        Ok(pvar::reset(session(session_in), target(handle))?)
    })
}

/// Sets a handle's value (one `unsigned long long` at `buf`), from which it counts on.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_pvar_write(
    session_in: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *const c_void,
) -> c_int {
    run_t("T_pvar_write", || {
        tool::check_initialized()?;
        let (s, h) = (session(session_in), one(handle)?);
        pvar::handle_pvar(s, h)?;
        if buf.is_null() {
            return Err(invalid("null buf"));
        }
        // SAFETY: non-null; the caller gives one unsigned long long (alignment not assumed).
        let v = unsafe { (buf as *const u64).read_unaligned() };
        Ok(pvar::write(s, h, v)?)
    })
}
