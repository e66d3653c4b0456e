//! The MPI environment: init and finalize (which fill and empty the handle tables), abort,
//! thread levels, versions, processor name, timers and MPI_Pcontrol.

use crate::abi::*;
use crate::comms::{self, CommEntry};
use crate::errors::{fail, run, write_c_string, CResult, Errh};
use std::ffi::{c_char, c_double, c_int};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::ThreadId;
use std::time::Instant;

/// The runtime of this process, between `MPI_Init` and `MPI_Finalize`.
static RUNTIME: Mutex<Option<mpicd::Runtime>> = Mutex::new(None);
static THREAD_LEVEL: AtomicI32 = AtomicI32::new(MPI_THREAD_SINGLE);
static MAIN_THREAD: OnceLock<ThreadId> = OnceLock::new();
static EPOCH: OnceLock<Instant> = OnceLock::new();

fn runtime() -> MutexGuard<'static, Option<mpicd::Runtime>> {
    RUNTIME.lock().unwrap_or_else(|p| p.into_inner())
}

/// Fails unless MPI is initialized and not finalized.
pub(crate) fn check_live() -> CResult<()> {
    if mpicd::is_finalized() {
        Err(fail(MPI_ERR_OTHER, "MPI was finalized"))
    } else if !mpicd::is_initialized() {
        Err(fail(
            MPI_ERR_OTHER,
            "MPI is not initialized (call MPI_Init first)",
        ))
    } else {
        Ok(())
    }
}

/// What the launcher says of this job (application number, universe size), for the
/// attributes MPI_APPNUM and MPI_UNIVERSE_SIZE.
pub(crate) fn launch_facts() -> CResult<(Option<u32>, Option<u32>)> {
    match runtime().as_ref() {
        Some(rt) => Ok(rt.launch_facts()?),
        None => Err(fail(MPI_ERR_OTHER, "MPI is not initialized")),
    }
}

/// Ends every process of the job with `code` (or this one, without a runtime).
pub(crate) fn abort_job(code: c_int, message: &str) -> ! {
    if let Some(rt) = runtime().as_ref() {
        let _ = rt.abort(code, message);
    }
    std::process::exit(if code == 0 { 1 } else { code })
}

fn init(required: c_int) -> CResult<c_int> {
    if ![
        MPI_THREAD_SINGLE,
        MPI_THREAD_FUNNELED,
        MPI_THREAD_SERIALIZED,
        MPI_THREAD_MULTIPLE,
    ]
    .contains(&required)
    {
        return Err(fail(
            MPI_ERR_ARG,
            format!("unknown thread level {required}"),
        ));
    }
    let rt = mpicd::init()?;
    EPOCH.get_or_init(Instant::now);
    let _ = MAIN_THREAD.set(std::thread::current().id());
    comms::COMMS.insert_at(
        MPI_COMM_WORLD as usize,
        CommEntry::new(Arc::new(rt.world()), Errh::Fatal),
    );
    comms::COMMS.insert_at(
        MPI_COMM_SELF as usize,
        CommEntry::new(Arc::new(rt.self_comm()), Errh::Fatal),
    );
    *runtime() = Some(rt);
    // The engine serializes every call behind one lock, so every level is safe.
    THREAD_LEVEL.store(required, Ordering::Release);
    Ok(required)
}

/// Starts MPI (a singleton without a launcher).
#[no_mangle]
pub unsafe extern "C" fn MPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
    run("Init", Errh::Fatal, |_| init(MPI_THREAD_SINGLE).map(drop))
}

/// Starts MPI with a thread level; every level is provided.
#[no_mangle]
pub unsafe extern "C" fn MPI_Init_thread(
    _argc: *mut c_int,
    _argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    run("Init_thread", Errh::Fatal, |_| {
        if provided.is_null() {
            return Err(fail(MPI_ERR_ARG, "null provided"));
        }
        let level = init(required)?;
        // SAFETY: checked non-null.
        unsafe { *provided = level };
        Ok(())
    })
}

/// Sets `*flag` to whether `MPI_Init` has been called.
#[no_mangle]
pub unsafe extern "C" fn MPI_Initialized(flag: *mut c_int) -> c_int {
    run("Initialized", Errh::Return, |_| {
        out(flag, mpicd::is_initialized() as c_int)
    })
}

/// Sets `*flag` to whether `MPI_Finalize` has been called.
#[no_mangle]
pub unsafe extern "C" fn MPI_Finalized(flag: *mut c_int) -> c_int {
    run("Finalized", Errh::Return, |_| {
        out(flag, mpicd::is_finalized() as c_int)
    })
}

/// Shuts MPI down. Requests never completed are cancelled and reported as MPI_ERR_PENDING.
#[no_mangle]
pub unsafe extern "C" fn MPI_Finalize() -> c_int {
    run("Finalize", comms::default_errh(), |_| {
        check_live()?;
        // Attributes first (attrs/comm.rs): as if MPI_COMM_SELF, then MPI_COMM_WORLD, were freed.
        let attrs_deleted = crate::attrs::comm::finalize();
        crate::bsend::finish();
        crate::requests::complete_detached(std::time::Duration::from_secs(10));
        crate::requests::free_all();
        crate::probe::discard_all();
        drop(comms::COMMS.drain());
        crate::types::free_all();
        crate::userops::free_all();
        crate::groups::free_all();
        let rt = runtime().take();
        let finalized = match rt {
            Some(rt) => rt.finalize().map_err(Into::into),
            None => Err(fail(MPI_ERR_OTHER, "MPI is not initialized")),
        };
        crate::requests::release_detached();
        finalized.and(attrs_deleted)
    })
}

/// Ends every process of the job with `errorcode`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Abort(comm: MPI_Comm, errorcode: c_int) -> c_int {
    run("Abort", Errh::Return, |_| {
        let _ = comm;
        abort_job(
            errorcode,
            &format!("MPI_Abort called with code {errorcode}"),
        )
    })
}

/// The thread level given at init.
#[no_mangle]
pub unsafe extern "C" fn MPI_Query_thread(provided: *mut c_int) -> c_int {
    run("Query_thread", Errh::Return, |_| {
        out(provided, THREAD_LEVEL.load(Ordering::Acquire))
    })
}

/// Whether the caller is the thread that called init.
#[no_mangle]
pub unsafe extern "C" fn MPI_Is_thread_main(flag: *mut c_int) -> c_int {
    run("Is_thread_main", Errh::Return, |_| {
        let main = MAIN_THREAD.get() == Some(&std::thread::current().id());
        out(flag, main as c_int)
    })
}

/// The MPI version this library's header follows.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_version(version: *mut c_int, subversion: *mut c_int) -> c_int {
    run("Get_version", Errh::Return, |_| {
        out(version, MPI_VERSION)?;
        out(subversion, MPI_SUBVERSION)
    })
}

/// "mpicd <version> ...".
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_library_version(
    version: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    run("Get_library_version", Errh::Return, |_| {
        if version.is_null() {
            return Err(fail(MPI_ERR_ARG, "null version"));
        }
        let text = format!(
            "mpicd {} (MPI {}.{} standard ABI subset, custom datatypes, over UCX)",
            env!("CARGO_PKG_VERSION"),
            MPI_VERSION,
            MPI_SUBVERSION
        );
        // SAFETY: MPI requires MPI_MAX_LIBRARY_VERSION_STRING bytes.
        let n = unsafe { write_c_string(version, MPI_MAX_LIBRARY_VERSION_STRING as usize, &text) };
        out(resultlen, n as c_int)
    })
}

/// The host name.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_processor_name(name: *mut c_char, resultlen: *mut c_int) -> c_int {
    run("Get_processor_name", Errh::Return, |_| {
        if name.is_null() {
            return Err(fail(MPI_ERR_ARG, "null name"));
        }
        let host = ["/proc/sys/kernel/hostname", "/etc/hostname"]
            .iter()
            .find_map(|p| std::fs::read_to_string(p).ok())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "localhost".to_string());
        // SAFETY: MPI requires MPI_MAX_PROCESSOR_NAME bytes.
        let n = unsafe { write_c_string(name, MPI_MAX_PROCESSOR_NAME as usize, &host) };
        out(resultlen, n as c_int)
    })
}

/// Profiling control (`int MPI_Pcontrol(const int level, ...)` in `mpi.h`): mpicd has no
/// profiling library of its own, so any level is accepted and nothing changes; a profiler that
/// intercepts the call sees the level and the further arguments.
///
/// Stable Rust cannot define a C-variadic function, so this takes the level alone; the
/// header declares it variadic (a trailer in `cbindgen.toml`). On the supported ABIs (x86-64
/// System V, AArch64 Linux) a call through the variadic prototype passes the level where this
/// function reads it, and the further arguments are never read.
#[no_mangle]
pub extern "C" fn MPI_Pcontrol(level: c_int) -> c_int {
    let _ = level;
    MPI_SUCCESS
}

/// Seconds since an arbitrary point in the past (monotonic, not synchronized between
/// processes).
#[no_mangle]
pub extern "C" fn MPI_Wtime() -> c_double {
    EPOCH.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// Resolution of [`MPI_Wtime`].
#[no_mangle]
pub extern "C" fn MPI_Wtick() -> c_double {
    1e-9
}

/// Fails with MPI_ERR_ARG ("null `what`") if `ptr` is null.
pub(crate) fn require<T>(ptr: *const T, what: &str) -> CResult<()> {
    if ptr.is_null() {
        return Err(fail(MPI_ERR_ARG, format!("null {what}")));
    }
    Ok(())
}

/// Reads a non-null in-argument (a handle passed by pointer).
pub(crate) fn read_arg<T: Copy>(ptr: *const T, what: &str) -> CResult<T> {
    require(ptr, what)?;
    // SAFETY: non-null; MPI requires such arguments to point to a readable value.
    Ok(unsafe { ptr.read() })
}

/// Writes `value` to a non-null out-parameter.
pub(crate) fn out<T>(ptr: *mut T, value: T) -> CResult<()> {
    if ptr.is_null() {
        return Err(fail(MPI_ERR_ARG, "null output argument"));
    }
    // SAFETY: non-null; MPI requires out-arguments to point to writable memory.
    unsafe { ptr.write(value) };
    Ok(())
}
