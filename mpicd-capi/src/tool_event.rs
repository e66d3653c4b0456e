//! The C binding of events and their sources (`MPI_T_event_*`, `MPI_T_source_*`): the event
//! types, registrations and timestamp source of `mpicd::tool::event`, with the C callbacks
//! wrapped as closures. No info key is understood: the info objects given are checked, and
//! those asked for are new and empty.

use crate::abi::*;
use crate::abi_tool::*;
use crate::errors::{fail, CResult};
use crate::tool::{c_count, index, invalid, name_arg, put, put_required, put_string, run_t};
use mpicd::tool::event::{self, Element, Instance, Safety};
use mpicd::tool::{self, Handle};
use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

/// The safety level of a C value.
fn safety(v: MPI_T_cb_safety) -> CResult<Safety> {
    Ok(match v {
        MPI_T_CB_REQUIRE_NONE => Safety::None,
        MPI_T_CB_REQUIRE_MPI_RESTRICTED => Safety::MpiRestricted,
        MPI_T_CB_REQUIRE_THREAD_SAFE => Safety::ThreadSafe,
        MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE => Safety::AsyncSignalSafe,
        other => return Err(invalid(format!("unknown callback safety {other}"))),
    })
}

/// The C value of a safety level.
fn safety_value(s: Safety) -> MPI_T_cb_safety {
    match s {
        Safety::None => MPI_T_CB_REQUIRE_NONE,
        Safety::MpiRestricted => MPI_T_CB_REQUIRE_MPI_RESTRICTED,
        Safety::ThreadSafe => MPI_T_CB_REQUIRE_THREAD_SAFE,
        Safety::AsyncSignalSafe => MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE,
    }
}

/// Checks an info argument (`MPI_INFO_NULL` allowed: no hints).
fn check_info(info: MPI_Info) -> CResult<()> {
    match info {
        MPI_INFO_NULL => Ok(()),
        i => crate::info::with(i, |_| ()),
    }
}

/// Returns a new empty info object in `*out` (none of mpicd's hints applies).
fn new_info(out: *mut MPI_Info) -> CResult<()> {
    put_required(out, crate::info::insert(mpicd::Info::new()), "info")
}

/// Runs `f` on the instance `h`, which must be one a running callback of this thread got.
fn with_instance<R>(h: MPI_T_event_instance, f: impl FnOnce(&Instance) -> R) -> CResult<R> {
    Ok(event::with_instance(h as usize, f)?)
}

/// The number of timestamp sources (1).
#[no_mangle]
pub unsafe extern "C" fn MPI_T_source_get_num(num_sources: *mut c_int) -> c_int {
    run_t("T_source_get_num", || {
        tool::check_initialized()?;
        put_required(num_sources, c_count(event::SOURCES.len())?, "num_sources")
    })
}

/// A source's name, description, ordering (ordered), ticks per second, largest tick count,
/// and a new empty info object.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_source_get_info(
    source_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    desc: *mut c_char,
    desc_len: *mut c_int,
    ordering: *mut MPI_T_source_order,
    ticks_per_second: *mut MPI_Count,
    max_ticks: *mut MPI_Count,
    info: *mut MPI_Info,
) -> c_int {
    run_t("T_source_get_info", || {
        tool::check_initialized()?;
        let s = event::source(index(source_index, "source")?)?;
        put_string(name, name_len, s.name)?;
        put_string(desc, desc_len, s.desc)?;
        put(ordering, MPI_T_SOURCE_ORDERED);
        put(ticks_per_second, s.ticks_per_second);
        put(max_ticks, s.max_ticks);
        if !info.is_null() {
            new_info(info)?;
        }
        Ok(())
    })
}

/// The current time of a source, in its ticks.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_source_get_timestamp(
    source_index: c_int,
    timestamp: *mut MPI_Count,
) -> c_int {
    run_t("T_source_get_timestamp", || {
        tool::check_initialized()?;
        let t = event::timestamp(index(source_index, "source")?)?;
        put_required(timestamp, t, "timestamp")
    })
}

/// The number of event types.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_event_get_num(num_events: *mut c_int) -> c_int {
    run_t("T_event_get_num", || {
        tool::check_initialized()?;
        put_required(num_events, c_count(event::EVENTS.len())?, "num_events")
    })
}

/// An event type's name, verbosity, elements (datatypes and displacements: at most
/// `*num_elements` of them on entry; their number on return), enumeration (none), a new
/// empty info object, description and binding (none).
#[no_mangle]
pub unsafe extern "C" fn MPI_T_event_get_info(
    event_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    array_of_datatypes: *mut MPI_Datatype,
    array_of_displacements: *mut MPI_Aint,
    num_elements: *mut c_int,
    enumtype: *mut MPI_T_enum,
    info: *mut MPI_Info,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
) -> c_int {
    run_t("T_event_get_info", || {
        tool::check_initialized()?;
        let e = event::event_type(index(event_index, "event type")?)?;
        put_string(name, name_len, e.name)?;
        put(verbosity, crate::tool::verbosity(e.verbosity));
        if !num_elements.is_null() {
            // SAFETY: non-null; an IN/OUT argument points to valid memory.
            let room = usize::try_from(unsafe { num_elements.read() }).unwrap_or(0);
            let displacements = e.displacements();
            for (k, (el, &at)) in e.elements.iter().zip(&displacements).enumerate() {
                if k >= room {
                    break;
                }
                let ty = match el {
                    Element::Int => MPI_INT,
                };
                if !array_of_datatypes.is_null() {
                    // SAFETY: the caller gives `room` > k entries.
                    unsafe { array_of_datatypes.add(k).write(ty) };
                }
                if !array_of_displacements.is_null() {
                    // SAFETY: as above.
                    unsafe { array_of_displacements.add(k).write(at as MPI_Aint) };
                }
            }
            put(num_elements, c_count(e.elements.len())?);
        }
        put(enumtype, MPI_T_ENUM_NULL);
        if !info.is_null() {
            new_info(info)?;
        }
        put_string(desc, desc_len, e.desc)?;
        put(bind, MPI_T_BIND_NO_OBJECT);
        Ok(())
    })
}

/// The index of the event type named `name`.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_event_get_index(
    name: *const c_char,
    event_index: *mut c_int,
) -> c_int {
    run_t("T_event_get_index", || {
        tool::check_initialized()?;
        let i = event::index_of(name_arg(name)?)?;
        put_required(event_index, c_count(i)?, "event_index")
    })
}

/// A registration for an event type (bound to no object: `obj_handle` is ignored); no
/// callback is called until one is registered.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_event_handle_alloc(
    event_index: c_int,
    _obj_handle: *mut c_void,
    info: MPI_Info,
    event_registration: *mut MPI_T_event_registration,
) -> c_int {
    run_t("T_event_handle_alloc", || {
        tool::check_initialized()?;
        let i = index(event_index, "event type")?;
        event::event_type(i)?;
        check_info(info)?;
        if event_registration.is_null() {
            return Err(invalid("null event_registration"));
        }
        put(
            event_registration,
            event::handle_alloc(i)? as MPI_T_event_registration,
        );
        Ok(())
    })
}

/// Sets a registration's hints: none is understood; the info object is checked.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_event_handle_set_info(
    event_registration: MPI_T_event_registration,
    info: MPI_Info,
) -> c_int {
    run_t("T_event_handle_set_info", || {
        tool::check_initialized()?;
        event::check_registration(event_registration as Handle)?;
        check_info(info)
    })
}

/// The hints in use for a registration: a new empty info object.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_event_handle_get_info(
    event_registration: MPI_T_event_registration,
    info_used: *mut MPI_Info,
) -> c_int {
    run_t("T_event_handle_get_info", || {
        tool::check_initialized()?;
        event::check_registration(event_registration as Handle)?;
        new_info(info_used)
    })
}

/// Sets the callback of safety level `cb_safety` of a registration (a NULL function removes
/// it). An event is delivered to the callback of the least level that meets what the place
/// where it happens requires (mpicd's events: `MPI_T_CB_REQUIRE_MPI_RESTRICTED`).
#[no_mangle]
pub unsafe extern "C" fn MPI_T_event_register_callback(
    event_registration: MPI_T_event_registration,
    cb_safety: MPI_T_cb_safety,
    info: MPI_Info,
    user_data: *mut c_void,
    event_cb_function: MPI_T_event_cb_function,
) -> c_int {
    run_t("T_event_register_callback", || {
        tool::check_initialized()?;
        let reg = event_registration as Handle;
        event::check_registration(reg)?;
        let level = safety(cb_safety)?;
        check_info(info)?;
        let data = user_data as usize;
        let cb = event_cb_function.map(|f| {
            let cb: event::Callback = Arc::new(move |i: &Instance, h: Handle, s: Safety| {
                let at = i as *const Instance as MPI_T_event_instance;
                // SAFETY: the tool's callback, with the arguments the standard gives it.
                unsafe {
                    f(
                        at,
                        h as MPI_T_event_registration,
                        safety_value(s),
                        data as *mut c_void,
                    )
                }
            });
            cb
        });
        Ok(event::set_callback(reg, level, cb, data)?)
    })
}

/// Sets the hints of one callback of a registration: none is understood; checked.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_event_callback_set_info(
    event_registration: MPI_T_event_registration,
    cb_safety: MPI_T_cb_safety,
    info: MPI_Info,
) -> c_int {
    run_t("T_event_callback_set_info", || {
        tool::check_initialized()?;
        event::check_registration(event_registration as Handle)?;
        safety(cb_safety)?;
        check_info(info)
    })
}

/// The hints in use for one callback of a registration: a new empty info object.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_event_callback_get_info(
    event_registration: MPI_T_event_registration,
    cb_safety: MPI_T_cb_safety,
    info_used: *mut MPI_Info,
) -> c_int {
    run_t("T_event_callback_get_info", || {
        tool::check_initialized()?;
        event::check_registration(event_registration as Handle)?;
        safety(cb_safety)?;
        new_info(info_used)
    })
}

/// Sets the handler told how many events a registration lost (a NULL function removes it).
/// mpicd calls it when an event finds no callback of the registration that may run where it
/// happens, with `MPI_T_CB_REQUIRE_MPI_RESTRICTED` and the last callback's user data.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_event_set_dropped_handler(
    event_registration: MPI_T_event_registration,
    dropped_cb_function: MPI_T_event_dropped_cb_function,
) -> c_int {
    run_t("T_event_set_dropped_handler", || {
        tool::check_initialized()?;
        let reg = event_registration as Handle;
        let d = dropped_cb_function.map(|f| {
            let d: event::Dropped = Arc::new(move |n, h, source, s, data| {
                // SAFETY: the tool's handler, with the arguments the standard gives it.
                unsafe {
                    f(
                        i64::try_from(n).unwrap_or(i64::MAX),
                        h as MPI_T_event_registration,
                        c_int::try_from(source).unwrap_or(c_int::MAX),
                        safety_value(s),
                        data as *mut c_void,
                    )
                }
            });
            d
        });
        Ok(event::set_dropped(reg, d)?)
    })
}

/// Frees a registration: none of its callbacks is called afterwards; then `free_cb_function`
/// (if not NULL) is called with it and `user_data`.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_event_handle_free(
    event_registration: MPI_T_event_registration,
    user_data: *mut c_void,
    free_cb_function: MPI_T_event_free_cb_function,
) -> c_int {
    run_t("T_event_handle_free", || {
        tool::check_initialized()?;
        event::handle_free(event_registration as Handle)?;
        if let Some(f) = free_cb_function {
            // SAFETY: the tool's function, called where any MPI call is allowed.
            unsafe { f(event_registration, MPI_T_CB_REQUIRE_NONE, user_data) };
        }
        Ok(())
    })
}

/// Copies element `element_index` of an event instance's data into `buffer`.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_event_read(
    event_instance: MPI_T_event_instance,
    element_index: c_int,
    buffer: *mut c_void,
) -> c_int {
    run_t("T_event_read", || {
        tool::check_initialized()?;
        let bytes = with_instance(event_instance, |i| -> CResult<Vec<u8>> {
            let ty = event::event_type(i.event)?;
            let k = usize::try_from(element_index)
                .ok()
                .filter(|&k| k < ty.elements.len())
                .ok_or_else(|| {
                    fail(
                        MPI_T_ERR_INVALID_INDEX,
                        format!("no element {element_index}"),
                    )
                })?;
            let at = ty.displacements()[k];
            Ok(i.data[at..at + ty.elements[k].size()].to_vec())
        })??;
        copy_out(buffer, &bytes)
    })
}

/// Copies an event instance's whole data (its elements at their displacements) into
/// `buffer`.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_event_copy(
    event_instance: MPI_T_event_instance,
    buffer: *mut c_void,
) -> c_int {
    run_t("T_event_copy", || {
        tool::check_initialized()?;
        let bytes = with_instance(event_instance, |i| i.data.clone())?;
        copy_out(buffer, &bytes)
    })
}

fn copy_out(buffer: *mut c_void, bytes: &[u8]) -> CResult<()> {
    if buffer.is_null() {
        return Err(invalid("null buffer"));
    }
    // SAFETY: the caller gives room for the data at `buffer` (non-null, checked).
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer as *mut u8, bytes.len()) };
    Ok(())
}

/// When an event instance happened, in the ticks of its source.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_event_get_timestamp(
    event_instance: MPI_T_event_instance,
    event_timestamp: *mut MPI_Count,
) -> c_int {
    run_t("T_event_get_timestamp", || {
        tool::check_initialized()?;
        let t = with_instance(event_instance, |i| i.timestamp)?;
        put_required(event_timestamp, t, "event_timestamp")
    })
}

/// The index of the source whose timestamp an event instance carries.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_event_get_source(
    event_instance: MPI_T_event_instance,
    source_index: *mut c_int,
) -> c_int {
    run_t("T_event_get_source", || {
        tool::check_initialized()?;
        let s = with_instance(event_instance, |i| i.source)?;
        put_required(source_index, c_count(s)?, "source_index")
    })
}
