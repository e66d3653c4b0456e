//! The C binding of the tool information interface (MPI_T): initialization, categories and
//! enumerations here, control variables in `tool_cvar.rs`, performance variables in
//! `tool_pvar.rs`, events and sources in `tool_event.rs`. What the variables are and how they
//! behave is `mpicd::tool`'s business; this module translates arguments, handles and faults.
//!
//! Every MPI_T call returns its error code (`MPI_T_ERR_*`) and never invokes an error handler.
//! Out-arguments may be NULL when the caller does not want them. Strings follow the standard's
//! rule: `*len` is the buffer's size on entry (a NULL buffer or 0 asks for the length only),
//! the string's length plus one on return; a NULL `len` ignores the string.

use crate::abi::*;
use crate::abi_tool::*;
use crate::errors::{fail, run, write_c_string, CResult, Errh, Fail};
use mpicd::tool::{self, Fault, FaultKind, Verbosity};
use std::ffi::{c_char, c_int, CStr};

impl From<Fault> for Fail {
    fn from(f: Fault) -> Fail {
        let code = match f.kind {
            FaultKind::NotInitialized => MPI_T_ERR_NOT_INITIALIZED,
            FaultKind::InvalidIndex => MPI_T_ERR_INVALID_INDEX,
            FaultKind::InvalidHandle => MPI_T_ERR_INVALID_HANDLE,
            FaultKind::InvalidSession => MPI_T_ERR_INVALID_SESSION,
            FaultKind::InvalidName => MPI_T_ERR_INVALID_NAME,
            FaultKind::CvarSetNever => MPI_T_ERR_CVAR_SET_NEVER,
            FaultKind::CvarSetNotNow => MPI_T_ERR_CVAR_SET_NOT_NOW,
            FaultKind::PvarNoWrite => MPI_T_ERR_PVAR_NO_WRITE,
            FaultKind::PvarNoStartStop => MPI_T_ERR_PVAR_NO_STARTSTOP,
            FaultKind::PvarNoAtomic => MPI_T_ERR_PVAR_NO_ATOMIC,
            FaultKind::Invalid => MPI_T_ERR_INVALID,
        };
        fail(code, f.detail)
    }
}

/// The name and meaning of an MPI_T error class.
pub(crate) fn error_class_name(code: c_int) -> Option<&'static str> {
    Some(match code {
        MPI_T_ERR_CANNOT_INIT => "MPI_T_ERR_CANNOT_INIT: the tool interface cannot be initialized",
        MPI_T_ERR_NOT_ACCESSIBLE => "MPI_T_ERR_NOT_ACCESSIBLE: not accessible now",
        MPI_T_ERR_NOT_INITIALIZED => {
            "MPI_T_ERR_NOT_INITIALIZED: the tool interface is not initialized"
        }
        MPI_T_ERR_NOT_SUPPORTED => "MPI_T_ERR_NOT_SUPPORTED: not supported",
        MPI_T_ERR_MEMORY => "MPI_T_ERR_MEMORY: out of memory",
        MPI_T_ERR_INVALID => "MPI_T_ERR_INVALID: invalid argument",
        MPI_T_ERR_INVALID_INDEX => "MPI_T_ERR_INVALID_INDEX: invalid index",
        MPI_T_ERR_INVALID_ITEM => "MPI_T_ERR_INVALID_ITEM: invalid item index",
        MPI_T_ERR_INVALID_SESSION => "MPI_T_ERR_INVALID_SESSION: invalid session",
        MPI_T_ERR_INVALID_HANDLE => "MPI_T_ERR_INVALID_HANDLE: invalid handle",
        MPI_T_ERR_INVALID_NAME => "MPI_T_ERR_INVALID_NAME: no variable or category of that name",
        MPI_T_ERR_OUT_OF_HANDLES => "MPI_T_ERR_OUT_OF_HANDLES: no more handles",
        MPI_T_ERR_OUT_OF_SESSIONS => "MPI_T_ERR_OUT_OF_SESSIONS: no more sessions",
        MPI_T_ERR_CVAR_SET_NOT_NOW => "MPI_T_ERR_CVAR_SET_NOT_NOW: the variable cannot be set now",
        MPI_T_ERR_CVAR_SET_NEVER => "MPI_T_ERR_CVAR_SET_NEVER: the variable cannot be set",
        MPI_T_ERR_PVAR_NO_WRITE => {
            "MPI_T_ERR_PVAR_NO_WRITE: the variable cannot be written or reset"
        }
        MPI_T_ERR_PVAR_NO_STARTSTOP => {
            "MPI_T_ERR_PVAR_NO_STARTSTOP: the variable cannot be started or stopped"
        }
        MPI_T_ERR_PVAR_NO_ATOMIC => {
            "MPI_T_ERR_PVAR_NO_ATOMIC: the variable cannot be read and reset at once"
        }
        _ => return None,
    })
}

/// Runs the body of `MPI_T_<name>`: its failure is returned, never handed to a handler.
pub(crate) fn run_t(name: &'static str, body: impl FnOnce() -> CResult<()>) -> c_int {
    run(name, Errh::Return, |_| body())
}

/// A bad argument (`MPI_T_ERR_INVALID`).
pub(crate) fn invalid(what: impl Into<String>) -> Fail {
    fail(MPI_T_ERR_INVALID, what)
}

/// Writes `value` to `ptr` unless it is NULL (the caller does not want it).
pub(crate) fn put<T>(ptr: *mut T, value: T) {
    if !ptr.is_null() {
        // SAFETY: non-null; MPI requires out-arguments to point to writable memory.
        unsafe { ptr.write(value) };
    }
}

/// Writes `value` to `ptr`, which the caller must give.
pub(crate) fn put_required<T>(ptr: *mut T, value: T, what: &str) -> CResult<()> {
    if ptr.is_null() {
        return Err(invalid(format!("null {what}")));
    }
    put(ptr, value);
    Ok(())
}

/// Writes `value` to a buffer the caller gives (`void *`: its alignment is not assumed).
pub(crate) fn put_unaligned<T>(ptr: *mut T, value: T, what: &str) -> CResult<()> {
    if ptr.is_null() {
        return Err(invalid(format!("null {what}")));
    }
    // SAFETY: non-null; the caller gives room for one value at `ptr`.
    unsafe { ptr.write_unaligned(value) };
    Ok(())
}

/// Returns a string by the standard's rule (see the module's doc).
pub(crate) fn put_string(buf: *mut c_char, len: *mut c_int, text: &str) -> CResult<()> {
    if len.is_null() {
        return Ok(());
    }
    // SAFETY: non-null; an IN/OUT argument points to valid memory.
    let size = unsafe { len.read() };
    let size = usize::try_from(size).map_err(|_| invalid(format!("negative length {size}")))?;
    if !buf.is_null() && size > 0 {
        // SAFETY: the caller gives `size` writable bytes at `buf`.
        unsafe { write_c_string(buf, size, text) };
    }
    let needed = c_int::try_from(text.len() + 1).map_err(|_| invalid("string over 2 GiB"))?;
    put(len, needed);
    Ok(())
}

/// An index argument.
pub(crate) fn index(i: c_int, what: &str) -> CResult<usize> {
    usize::try_from(i).map_err(|_| fail(MPI_T_ERR_INVALID_INDEX, format!("{what} index {i}")))
}

/// A name argument.
pub(crate) fn name_arg<'a>(name: *const c_char) -> CResult<&'a str> {
    if name.is_null() {
        return Err(invalid("null name"));
    }
    // SAFETY: non-null; MPI names are NUL-terminated strings.
    let name = unsafe { CStr::from_ptr(name) };
    name.to_str()
        .map_err(|_| fail(MPI_T_ERR_INVALID_NAME, "a name that is not UTF-8"))
}

/// The C value of a verbosity.
pub(crate) fn verbosity(v: Verbosity) -> c_int {
    match v {
        Verbosity::UserBasic => MPI_T_VERBOSITY_USER_BASIC,
        Verbosity::UserDetail => MPI_T_VERBOSITY_USER_DETAIL,
        Verbosity::TunerBasic => MPI_T_VERBOSITY_TUNER_BASIC,
        Verbosity::TunerDetail => MPI_T_VERBOSITY_TUNER_DETAIL,
        Verbosity::MpidevBasic => MPI_T_VERBOSITY_MPIDEV_BASIC,
        Verbosity::MpidevAll => MPI_T_VERBOSITY_MPIDEV_ALL,
    }
}

/// A count of items as a C int.
pub(crate) fn c_count(n: usize) -> CResult<c_int> {
    c_int::try_from(n).map_err(|_| invalid("more than INT_MAX items"))
}

/// Starts (once more) the tool interface: callable before `MPI_Init` and after
/// `MPI_Finalize`, as often as wanted; each call needs its `MPI_T_finalize`. Every thread
/// level is provided (the interface takes its own lock).
#[no_mangle]
pub unsafe extern "C" fn MPI_T_init_thread(required: c_int, provided: *mut c_int) -> c_int {
    run_t("T_init_thread", || {
        let known = [
            MPI_THREAD_SINGLE,
            MPI_THREAD_FUNNELED,
            MPI_THREAD_SERIALIZED,
            MPI_THREAD_MULTIPLE,
        ];
        if !known.contains(&required) {
            return Err(invalid(format!("unknown thread level {required}")));
        }
        if provided.is_null() {
            return Err(invalid("null provided"));
        }
        tool::init();
        put(provided, required);
        Ok(())
    })
}

/// Ends one `MPI_T_init_thread`; the last one frees every handle, session and registration.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_finalize() -> c_int {
    run_t("T_finalize", || Ok(tool::finalize()?))
}

/// The number of categories.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_category_get_num(num_cat: *mut c_int) -> c_int {
    run_t("T_category_get_num", || {
        tool::check_initialized()?;
        put_required(num_cat, c_count(tool::categories().len())?, "num_cat")
    })
}

/// A category's name, description and numbers of control variables, performance variables
/// and subcategories (mpicd's categories have none).
#[no_mangle]
pub unsafe extern "C" fn MPI_T_category_get_info(
    cat_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    desc: *mut c_char,
    desc_len: *mut c_int,
    num_cvars: *mut c_int,
    num_pvars: *mut c_int,
    num_categories: *mut c_int,
) -> c_int {
    run_t("T_category_get_info", || {
        tool::check_initialized()?;
        let c = tool::category(index(cat_index, "category")?)?;
        put_string(name, name_len, &c.name)?;
        put_string(desc, desc_len, c.desc)?;
        put(num_cvars, c_count(c.cvars.len())?);
        put(num_pvars, c_count(c.pvars.len())?);
        put(num_categories, 0);
        Ok(())
    })
}

/// The index of the category named `name`.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_category_get_index(
    name: *const c_char,
    cat_index: *mut c_int,
) -> c_int {
    run_t("T_category_get_index", || {
        tool::check_initialized()?;
        let i = tool::category_index(name_arg(name)?)?;
        put_required(cat_index, c_count(i)?, "cat_index")
    })
}

/// The number of event types in a category.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_category_get_num_events(
    cat_index: c_int,
    num_events: *mut c_int,
) -> c_int {
    run_t("T_category_get_num_events", || {
        tool::check_initialized()?;
        let c = tool::category(index(cat_index, "category")?)?;
        put_required(num_events, c_count(c.events.len())?, "num_events")
    })
}

/// Copies at most `len` of `members` into `indices`.
fn members(members: &[usize], len: c_int, indices: *mut c_int) -> CResult<()> {
    let len = usize::try_from(len).map_err(|_| invalid(format!("negative len {len}")))?;
    let n = members.len().min(len);
    if n > 0 && indices.is_null() {
        return Err(invalid("null indices"));
    }
    for (k, &m) in members.iter().take(n).enumerate() {
        // SAFETY: the caller gives `len` >= n ints at `indices` (non-null, checked).
        unsafe { indices.add(k).write(c_count(m)?) };
    }
    Ok(())
}

/// The indices of a category's control variables (at most `len`).
#[no_mangle]
pub unsafe extern "C" fn MPI_T_category_get_cvars(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    run_t("T_category_get_cvars", || {
        tool::check_initialized()?;
        members(
            &tool::category(index(cat_index, "category")?)?.cvars,
            len,
            indices,
        )
    })
}

/// The indices of a category's performance variables (at most `len`).
#[no_mangle]
pub unsafe extern "C" fn MPI_T_category_get_pvars(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    run_t("T_category_get_pvars", || {
        tool::check_initialized()?;
        members(
            &tool::category(index(cat_index, "category")?)?.pvars,
            len,
            indices,
        )
    })
}

/// The indices of a category's event types (at most `len`).
#[no_mangle]
pub unsafe extern "C" fn MPI_T_category_get_events(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    run_t("T_category_get_events", || {
        tool::check_initialized()?;
        members(
            &tool::category(index(cat_index, "category")?)?.events,
            len,
            indices,
        )
    })
}

/// The indices of a category's subcategories: mpicd's categories have none.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_category_get_categories(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    run_t("T_category_get_categories", || {
        tool::check_initialized()?;
        tool::category(index(cat_index, "category")?)?;
        members(&[], len, indices)
    })
}

/// The update number of the categories: 0, they never change.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_category_changed(update_number: *mut c_int) -> c_int {
    run_t("T_category_changed", || {
        tool::check_initialized()?;
        put_required(update_number, 0, "update_number")
    })
}

/// The handle value of an enumeration: its index plus one (0 is `MPI_T_ENUM_NULL`), above
/// the predefined constants.
const ENUM_BASE: usize = 0x7000_0000;

/// The C handle of `e`.
pub(crate) fn enum_handle(e: &'static tool::cvar::Enumeration) -> MPI_T_enum {
    let i = tool::cvar::ENUMS
        .iter()
        .position(|&x| std::ptr::eq(x, e))
        .unwrap_or(0);
    (ENUM_BASE + i + 1) as MPI_T_enum
}

/// The enumeration of a C handle.
fn enumeration(h: MPI_T_enum) -> CResult<&'static tool::cvar::Enumeration> {
    (h as usize)
        .checked_sub(ENUM_BASE + 1)
        .and_then(|i| tool::cvar::ENUMS.get(i).copied())
        .ok_or_else(|| fail(MPI_T_ERR_INVALID_HANDLE, "not an enumeration"))
}

/// An enumeration's number of items and name.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_enum_get_info(
    enumtype: MPI_T_enum,
    num: *mut c_int,
    name: *mut c_char,
    name_len: *mut c_int,
) -> c_int {
    run_t("T_enum_get_info", || {
        tool::check_initialized()?;
        let e = enumeration(enumtype)?;
        put(num, c_count(e.items.len())?);
        put_string(name, name_len, e.name)
    })
}

/// Item `indx` of an enumeration: its value and name.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_enum_get_item(
    enumtype: MPI_T_enum,
    indx: c_int,
    value: *mut c_int,
    name: *mut c_char,
    name_len: *mut c_int,
) -> c_int {
    run_t("T_enum_get_item", || {
        tool::check_initialized()?;
        let e = enumeration(enumtype)?;
        let &(v, item) = usize::try_from(indx)
            .ok()
            .and_then(|i| e.items.get(i))
            .ok_or_else(|| fail(MPI_T_ERR_INVALID_INDEX, format!("no item {indx}")))?;
        put(value, v);
        put_string(name, name_len, item)
    })
}
