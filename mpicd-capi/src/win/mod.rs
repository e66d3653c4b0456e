//! Window handles (MPI 4.1 chapter 12): the table, each window's error handler, name, info
//! hints and predefined attribute values, and the calls that make, free and describe windows
//! (`MPI_Win_create`, `_allocate`, `_allocate_shared`, `_create_dynamic`, `_attach`,
//! `_detach`, `_shared_query`, `_free`, `_get_group`, names, info, error handlers, and their
//! `_c` forms). What a window does is [`mpicd::Window`]'s; the communication calls are in
//! [`rma`] and [`accumulate`], the synchronization calls in [`sync`], window attributes in
//! [`crate::attrs::win`].

pub mod accumulate;
mod hot;
pub mod rma;
pub mod sync;

use crate::abi::*;
use crate::comms::{default_errh, run_on};
use crate::env::{check_live, out, require};
use crate::errhandlers::{create, release, resolve_for, retain, ObjKind, UserFn};
use crate::errors::{fail, run, write_c_string, CResult, Errh};
use crate::handles::{Table, WIN_BASE};
use crate::pinned::Pinned;
use mpicd::{Communicator, Flavor, Info, Window};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Arc;

/// The values the predefined window attributes point to (boxed: their addresses are handed
/// out by `MPI_Win_get_attr` and must not move).
pub(crate) struct Predefined {
    pub base: *mut c_void,
    pub size: MPI_Aint,
    pub disp_unit: c_int,
    pub flavor: c_int,
    pub model: c_int,
}

/// A live window, its error handler, name and info hints.
pub(crate) struct WinEntry {
    pub win: Arc<Window>,
    pub errh: Errh,
    pub name: Option<String>,
    pub info: Info,
    pub predefined: Box<Predefined>,
}

// SAFETY: the base address is the window's memory, only handed back to the application.
unsafe impl Send for WinEntry {}

pub(crate) static WINS: Table<WinEntry> = Table::new(WIN_BASE);

/// The windows of [`WINS`] again, for the lock-free calls ([`hot`]).
pub(crate) static HOT: Pinned<Window> = Pinned::new(WIN_BASE);

/// The window of a handle.
pub(crate) fn get(h: MPI_Win) -> CResult<Arc<Window>> {
    check_live()?;
    if h == MPI_WIN_NULL || h.is_null() {
        return Err(fail(MPI_ERR_WIN, "MPI_WIN_NULL is not a window"));
    }
    WINS.with(h as usize, |e| Arc::clone(&e.win))
        .ok_or_else(|| fail(MPI_ERR_WIN, "unknown or freed window"))
}

/// The error handler of `h`, or the default one for an invalid handle.
pub(crate) fn errh(h: MPI_Win) -> Errh {
    WINS.with(h as usize, |e| e.errh.bound_to(h as usize))
        .unwrap_or_else(default_errh)
}

/// Runs a call on window `win` under its error handler. Out of line: the calls that try a
/// lock-free path first ([`hot`]) keep only that path inline.
#[inline(never)]
pub(crate) fn run_on_win(
    name: &'static str,
    win: MPI_Win,
    body: impl FnOnce(Arc<Window>) -> CResult<()>,
) -> c_int {
    // The usual case in one lookup: a live window's handler and object.
    let live = check_live().ok().and_then(|()| {
        WINS.with(win as usize, |e| {
            (e.errh.bound_to(win as usize), Arc::clone(&e.win))
        })
    });
    match live {
        Some((errh, w)) => run(name, errh, |_| body(w)),
        None => run(name, errh(win), |_| body(get(win)?)),
    }
}

/// The hints of an info argument (MPI_INFO_NULL: none).
fn hints(info: MPI_Info) -> CResult<Info> {
    match info == MPI_INFO_NULL {
        true => Ok(Info::new()),
        false => crate::info::with(info, Info::clone),
    }
}

fn flavor_code(f: Flavor) -> c_int {
    match f {
        Flavor::Create => MPI_WIN_FLAVOR_CREATE,
        Flavor::Allocate => MPI_WIN_FLAVOR_ALLOCATE,
        Flavor::Dynamic => MPI_WIN_FLAVOR_DYNAMIC,
        Flavor::Shared => MPI_WIN_FLAVOR_SHARED,
    }
}

/// Puts a new window in the table (error handler MPI_ERRORS_ARE_FATAL, as MPI says).
fn insert(win: Window, info: Info) -> MPI_Win {
    let predefined = Box::new(Predefined {
        base: win.base() as *mut c_void,
        size: win.size() as MPI_Aint,
        disp_unit: win.disp_unit() as c_int,
        flavor: flavor_code(win.flavor()),
        model: MPI_WIN_UNIFIED,
    });
    let win = Arc::new(win);
    let h = WINS.insert(WinEntry {
        win: Arc::clone(&win),
        errh: Errh::Fatal,
        name: None,
        info,
        predefined,
    });
    HOT.publish(h, win);
    h as MPI_Win
}

/// Checks a window's size and displacement unit.
fn check_shape(size: MPI_Aint, disp_unit: MPI_Aint) -> CResult<(usize, u32)> {
    let size = usize::try_from(size)
        .map_err(|_| fail(MPI_ERR_SIZE, format!("negative window size {size}")))?;
    let unit = u32::try_from(disp_unit)
        .ok()
        .filter(|&u| u > 0)
        .ok_or_else(|| {
            fail(
                MPI_ERR_DISP,
                format!("invalid displacement unit {disp_unit}"),
            )
        })?;
    Ok((size, unit))
}

/// The body of the create calls.
unsafe fn create_win(
    name: &'static str,
    base: *mut c_void,
    size: MPI_Aint,
    disp_unit: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
) -> c_int {
    run_on(name, comm, |c: Arc<Communicator>| {
        require(win, "win")?;
        let (size, unit) = check_shape(size, disp_unit)?;
        if size > 0 && base.is_null() {
            return Err(fail(MPI_ERR_BUFFER, "a null base with a non-zero size"));
        }
        let info = hints(info)?;
        // SAFETY: MPI requires the memory to stay valid until the window is freed.
        let w = unsafe { Window::create(&c, base as *mut u8, size, unit) }?;
        out(win, insert(w, info))
    })
}

/// The body of the allocate calls (`shared`: MPI_Win_allocate_shared).
#[allow(clippy::too_many_arguments)]
unsafe fn allocate_win(
    name: &'static str,
    size: MPI_Aint,
    disp_unit: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
    shared: bool,
) -> c_int {
    run_on(name, comm, |c: Arc<Communicator>| {
        require(win, "win")?;
        require(baseptr, "baseptr")?;
        let (size, unit) = check_shape(size, disp_unit)?;
        let info = hints(info)?;
        let w = match shared {
            true => Window::allocate_shared(&c, size, unit)?,
            false => Window::allocate(&c, size, unit)?,
        };
        out(baseptr as *mut *mut c_void, w.base() as *mut c_void)?;
        out(win, insert(w, info))
    })
}

/// Creates a window over `size` bytes at `base` of every member of `comm`; `disp_unit` scales
/// target displacements. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create(
    base: *mut c_void,
    size: MPI_Aint,
    disp_unit: c_int,
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
) -> c_int {
    // SAFETY: MPI's rules for the window memory.
    unsafe {
        create_win(
            "Win_create",
            base,
            size,
            disp_unit as MPI_Aint,
            info,
            comm,
            win,
        )
    }
}

/// [`MPI_Win_create`] with an MPI_Aint displacement unit.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create_c(
    base: *mut c_void,
    size: MPI_Aint,
    disp_unit: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
) -> c_int {
    // SAFETY: MPI's rules for the window memory.
    unsafe { create_win("Win_create_c", base, size, disp_unit, info, comm, win) }
}

/// Allocates `size` bytes (zeroed, 64-byte aligned) on every member and makes a window over
/// them; `*(void **)baseptr` is this process's memory. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_allocate(
    size: MPI_Aint,
    disp_unit: c_int,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
) -> c_int {
    // SAFETY: baseptr is checked and written as a `void *`.
    unsafe {
        allocate_win(
            "Win_allocate",
            size,
            disp_unit as MPI_Aint,
            info,
            comm,
            baseptr,
            win,
            false,
        )
    }
}

/// [`MPI_Win_allocate`] with an MPI_Aint displacement unit.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_allocate_c(
    size: MPI_Aint,
    disp_unit: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
) -> c_int {
    // SAFETY: as above.
    unsafe {
        allocate_win(
            "Win_allocate_c",
            size,
            disp_unit,
            info,
            comm,
            baseptr,
            win,
            false,
        )
    }
}

/// Allocates every member's `size` bytes in one shared memory segment of the node (the
/// members must share a node), contiguous in rank order, and makes a window over them:
/// load/store access to the others' memory through `MPI_Win_shared_query`. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_allocate_shared(
    size: MPI_Aint,
    disp_unit: c_int,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
) -> c_int {
    // SAFETY: as above.
    unsafe {
        allocate_win(
            "Win_allocate_shared",
            size,
            disp_unit as MPI_Aint,
            info,
            comm,
            baseptr,
            win,
            true,
        )
    }
}

/// [`MPI_Win_allocate_shared`] with an MPI_Aint displacement unit.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_allocate_shared_c(
    size: MPI_Aint,
    disp_unit: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
) -> c_int {
    // SAFETY: as above.
    unsafe {
        allocate_win(
            "Win_allocate_shared_c",
            size,
            disp_unit,
            info,
            comm,
            baseptr,
            win,
            true,
        )
    }
}

/// The body of the shared-query calls.
fn shared_query(
    name: &'static str,
    win: MPI_Win,
    rank: c_int,
    size: *mut MPI_Aint,
    disp_unit: impl FnOnce(u32) -> CResult<()>,
    baseptr: *mut c_void,
) -> c_int {
    run_on_win(name, win, |w| {
        require(size, "size")?;
        require(baseptr, "baseptr")?;
        let which = (rank != MPI_PROC_NULL).then_some(rank);
        let (p, n, unit) = w.shared_query(which)?;
        out(size, n as MPI_Aint)?;
        disp_unit(unit)?;
        out(baseptr as *mut *mut c_void, p as *mut c_void)
    })
}

/// Where member `rank`'s memory of a shared window is mapped in this process, its size and
/// displacement unit (`MPI_PROC_NULL`: the first member with a non-empty piece).
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_shared_query(
    win: MPI_Win,
    rank: c_int,
    size: *mut MPI_Aint,
    disp_unit: *mut c_int,
    baseptr: *mut c_void,
) -> c_int {
    shared_query(
        "Win_shared_query",
        win,
        rank,
        size,
        |u| {
            require(disp_unit, "disp_unit")?;
            out(disp_unit, u as c_int)
        },
        baseptr,
    )
}

/// [`MPI_Win_shared_query`] with an MPI_Aint displacement unit.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_shared_query_c(
    win: MPI_Win,
    rank: c_int,
    size: *mut MPI_Aint,
    disp_unit: *mut MPI_Aint,
    baseptr: *mut c_void,
) -> c_int {
    shared_query(
        "Win_shared_query_c",
        win,
        rank,
        size,
        |u| {
            require(disp_unit, "disp_unit")?;
            out(disp_unit, u as MPI_Aint)
        },
        baseptr,
    )
}

/// Makes a window with no memory; members expose memory with `MPI_Win_attach`, and target
/// displacements are addresses (`MPI_Get_address`). Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create_dynamic(
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
) -> c_int {
    run_on("Win_create_dynamic", comm, |c| {
        require(win, "win")?;
        let info = hints(info)?;
        out(win, insert(Window::create_dynamic(&c)?, info))
    })
}

/// Exposes `size` bytes at `base` through a dynamic window (at most 64 regions at a time).
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_attach(win: MPI_Win, base: *mut c_void, size: MPI_Aint) -> c_int {
    run_on_win("Win_attach", win, |w| {
        let size = usize::try_from(size)
            .map_err(|_| fail(MPI_ERR_SIZE, format!("negative size {size}")))?;
        if size > 0 && base.is_null() {
            return Err(fail(MPI_ERR_BUFFER, "a null base with a non-zero size"));
        }
        // SAFETY: MPI requires the memory to stay valid until it is detached.
        unsafe { w.attach(base as *mut u8, size) }.map_err(Into::into)
    })
}

/// Stops exposing the region attached at `base`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_detach(win: MPI_Win, base: *const c_void) -> c_int {
    run_on_win("Win_detach", win, |w| {
        w.detach(base as *const u8).map_err(Into::into)
    })
}

/// Frees a window once every member has finished its epochs on it; deletes its attributes
/// (their delete callbacks run) and sets the handle to MPI_WIN_NULL. Collective.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_free(win: *mut MPI_Win) -> c_int {
    let h = if win.is_null() {
        MPI_WIN_NULL
    } else {
        unsafe { *win }
    };
    run("Win_free", errh(h), |_| {
        require(win, "win")?;
        get(h)?.check_closed()?;
        crate::attrs::delete_all(crate::attrs::Object::win(h))?;
        let entry = WINS
            .remove(h as usize)
            .ok_or_else(|| fail(MPI_ERR_WIN, "unknown or freed window"))?;
        // No lock-free call uses the window once this returns.
        drop(HOT.unpublish(h as usize));
        release(entry.errh);
        out(win, MPI_WIN_NULL)?;
        match Arc::try_unwrap(entry.win) {
            Ok(w) => w.free().map_err(Into::into),
            // Another thread is inside a call on it: that call finishes with it.
            Err(_) => Err(fail(MPI_ERR_WIN, "the window is in use by another thread")),
        }
    })
}

/// The group of the window's members (a new group handle).
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_group(win: MPI_Win, group: *mut MPI_Group) -> c_int {
    run_on_win("Win_get_group", win, |w| {
        require(group, "group")?;
        out(group, crate::groups::insert(w.group(), None))
    })
}

/// Names a window (for debuggers and error messages).
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_set_name(win: MPI_Win, win_name: *const c_char) -> c_int {
    run_on_win("Win_set_name", win, |_| {
        require(win_name, "win_name")?;
        // SAFETY: non-null; MPI requires a NUL-terminated string.
        let name = unsafe { CStr::from_ptr(win_name) }
            .to_string_lossy()
            .into_owned();
        WINS.with(win as usize, |e| e.name = Some(name))
            .ok_or_else(|| fail(MPI_ERR_WIN, "unknown or freed window"))
    })
}

/// The name MPI_Win_set_name gave the window (the empty string if none; "MPI_WIN_NULL" for
/// MPI_WIN_NULL). `win_name` needs MPI_MAX_OBJECT_NAME bytes.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_name(
    win: MPI_Win,
    win_name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    run("Win_get_name", errh(win), |_| {
        check_live()?;
        require(win_name, "win_name")?;
        require(resultlen, "resultlen")?;
        let name = match win {
            MPI_WIN_NULL => "MPI_WIN_NULL".to_string(),
            _ => WINS
                .with(win as usize, |e| e.name.clone().unwrap_or_default())
                .ok_or_else(|| fail(MPI_ERR_WIN, "unknown or freed window"))?,
        };
        // SAFETY: MPI requires MPI_MAX_OBJECT_NAME writable bytes at `win_name`.
        let n = unsafe { write_c_string(win_name, MPI_MAX_OBJECT_NAME as usize, &name) };
        out(resultlen, n as c_int)
    })
}

/// Replaces the window's info hints (mpicd keeps them and acts on none).
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_set_info(win: MPI_Win, info: MPI_Info) -> c_int {
    run_on_win("Win_set_info", win, |_| {
        let hints = hints(info)?;
        WINS.with(win as usize, |e| e.info = hints)
            .ok_or_else(|| fail(MPI_ERR_WIN, "unknown or freed window"))
    })
}

/// A new info object with the window's hints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_info(win: MPI_Win, info_used: *mut MPI_Info) -> c_int {
    run_on_win("Win_get_info", win, |_| {
        require(info_used, "info_used")?;
        let hints = WINS
            .with(win as usize, |e| e.info.clone())
            .ok_or_else(|| fail(MPI_ERR_WIN, "unknown or freed window"))?;
        out(info_used, crate::info::insert(hints))
    })
}

/// A new error handler for windows calling `win_errhandler_fn(&win, &code)`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create_errhandler(
    win_errhandler_fn: MPI_Win_errhandler_function,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    run("Win_create_errhandler", default_errh(), |_| {
        check_live()?;
        let f = win_errhandler_fn.ok_or_else(|| fail(MPI_ERR_ARG, "null function"))?;
        require(errhandler, "errhandler")?;
        out(errhandler, create(UserFn::Win(f)))
    })
}

/// Attaches an error handler (predefined or made by `MPI_Win_create_errhandler`) to `win`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_set_errhandler(win: MPI_Win, errhandler: MPI_Errhandler) -> c_int {
    run_on_win("Win_set_errhandler", win, |_| {
        let new = resolve_for(errhandler, ObjKind::Win)?;
        retain(new);
        let old = WINS.with(win as usize, |e| std::mem::replace(&mut e.errh, new));
        match old {
            Some(old) => {
                release(old);
                Ok(())
            }
            None => {
                release(new);
                Err(fail(MPI_ERR_WIN, "unknown or freed window"))
            }
        }
    })
}

/// The error handler of `win` (a new reference: free it with MPI_Errhandler_free).
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_errhandler(
    win: MPI_Win,
    errhandler: *mut MPI_Errhandler,
) -> c_int {
    run_on_win("Win_get_errhandler", win, |_| {
        require(errhandler, "errhandler")?;
        let e = WINS
            .with(win as usize, |e| e.errh)
            .ok_or_else(|| fail(MPI_ERR_WIN, "unknown or freed window"))?;
        retain(e);
        out(errhandler, e.handle())
    })
}

/// Invokes the window's error handler with `errorcode`; returns MPI_SUCCESS when the handler
/// returns.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_call_errhandler(win: MPI_Win, errorcode: c_int) -> c_int {
    run_on_win("Win_call_errhandler", win, |_| {
        let what = fail(errorcode, "raised by MPI_Win_call_errhandler");
        crate::errors::raise("Win_call_errhandler", errh(win), what);
        Ok(())
    })
}

/// Frees every window left at finalize (their memory is released; no synchronization).
pub(crate) fn free_all() {
    HOT.clear();
    for e in WINS.drain() {
        drop(e);
    }
}
