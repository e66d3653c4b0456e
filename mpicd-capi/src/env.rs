//! The MPI environment: init and finalize (which fill and empty the handle tables), abort,
//! thread levels, versions, processor name, timers and MPI_Pcontrol; and who uses the runtime.
//!
//! The world model (`MPI_Init` .. `MPI_Finalize`, once per process) and the sessions of the
//! sessions model (`sessions.rs`, any number, before, during or after the world model) share
//! one runtime: the first of them to start starts it, and the last to end finalizes it (and
//! empties the handle tables). A session started after that starts a new runtime
//! ([`mpicd::restart`]), which every process of the job must then do too. `MPI_Initialized`
//! and `MPI_Finalized` tell of the world model only; the other calls work while any user is
//! live.

use crate::abi::*;
use crate::comms::{self, CommEntry};
use crate::errors::{fail, run, write_c_string, CResult, Errh};
use std::ffi::{c_char, c_double, c_int};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::ThreadId;
use std::time::Instant;

/// The world model's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum World {
    NotStarted,
    Live,
    Ended,
}

/// The runtime and its users.
struct Env {
    rt: Option<mpicd::Runtime>,
    world: World,
    sessions: usize,
    /// A runtime was started and finalized: the next one is a restart.
    restart: bool,
}

static ENV: Mutex<Env> = Mutex::new(Env {
    rt: None,
    world: World::NotStarted,
    sessions: 0,
    restart: false,
});
/// Whether some user (the world model or a session) is live: [`check_live`] reads it without
/// a lock.
static LIVE: AtomicBool = AtomicBool::new(false);
static WORLD_STARTED: AtomicBool = AtomicBool::new(false);
static WORLD_ENDED: AtomicBool = AtomicBool::new(false);
/// This process's world rank in the live runtime.
static WORLD_RANK: AtomicU32 = AtomicU32::new(0);
static WORLD_SIZE: AtomicU32 = AtomicU32::new(0);
static THREAD_LEVEL: AtomicI32 = AtomicI32::new(MPI_THREAD_SINGLE);
static MAIN_THREAD: OnceLock<ThreadId> = OnceLock::new();
static EPOCH: OnceLock<Instant> = OnceLock::new();

fn env() -> MutexGuard<'static, Env> {
    ENV.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether the runtime is live (what [`check_live`] checks, without the error).
#[inline(always)]
pub(crate) fn is_live() -> bool {
    LIVE.load(Ordering::Acquire)
}

/// Fails unless the runtime is live (MPI initialized and not finalized, or a session live).
pub(crate) fn check_live() -> CResult<()> {
    if LIVE.load(Ordering::Acquire) {
        Ok(())
    } else if WORLD_ENDED.load(Ordering::Acquire) {
        Err(fail(MPI_ERR_OTHER, "MPI was finalized"))
    } else {
        Err(fail(
            MPI_ERR_OTHER,
            "MPI is not initialized (call MPI_Init or MPI_Session_init first)",
        ))
    }
}

/// This process's world rank (its rank in `mpi://WORLD` and MPI_COMM_WORLD).
pub(crate) fn world_rank() -> CResult<u32> {
    check_live()?;
    Ok(WORLD_RANK.load(Ordering::Acquire))
}

/// The number of processes of the job (of `mpi://WORLD` and MPI_COMM_WORLD).
pub(crate) fn world_size() -> CResult<u32> {
    check_live()?;
    Ok(WORLD_SIZE.load(Ordering::Acquire))
}

/// Starts the runtime of `env` if none runs.
fn ensure_runtime(env: &mut Env) -> CResult<()> {
    if env.rt.is_none() {
        let rt = match env.restart {
            true => mpicd::restart()?,
            false => mpicd::init()?,
        };
        WORLD_RANK.store(rt.session().rank(), Ordering::Release);
        WORLD_SIZE.store(rt.session().size(), Ordering::Release);
        EPOCH.get_or_init(Instant::now);
        env.rt = Some(rt);
    }
    Ok(())
}

/// A handle on the live runtime for the sessions model.
pub(crate) fn core_session() -> CResult<mpicd::Session> {
    check_live()?;
    env()
        .rt
        .as_ref()
        .map(mpicd::Runtime::session)
        .ok_or_else(|| fail(MPI_ERR_OTHER, "MPI is not initialized"))
}

/// Counts a new session as a user of the runtime, starting one if none runs.
pub(crate) fn start_session() -> CResult<mpicd::Session> {
    let mut env = env();
    ensure_runtime(&mut env)?;
    env.sessions += 1;
    LIVE.store(true, Ordering::Release);
    Ok(env
        .rt
        .as_ref()
        .map(mpicd::Runtime::session)
        .expect("just started"))
}

/// A session ended: the last user finalizes the runtime.
pub(crate) fn end_session() -> CResult<()> {
    let last = {
        let mut env = env();
        env.sessions = env.sessions.saturating_sub(1);
        env.sessions == 0 && env.world != World::Live
    };
    match last {
        true => teardown(),
        false => Ok(()),
    }
}

/// Frees every handle and finalizes the runtime, whose last user ended. Attributes first
/// (attrs/comm.rs: as if MPI_COMM_SELF, then MPI_COMM_WORLD, were freed), while MPI still
/// works for their callbacks; no lock is held meanwhile. Nothing is torn down if a new user
/// came meanwhile.
fn teardown() -> CResult<()> {
    let attrs_deleted = crate::attrs::comm::finalize();
    let rt = {
        let mut env = env();
        if env.sessions > 0 || env.world == World::Live {
            return attrs_deleted;
        }
        LIVE.store(false, Ordering::Release);
        env.restart = true;
        env.rt.take()
    };
    crate::bsend::finish();
    crate::requests::complete_detached(std::time::Duration::from_secs(10));
    crate::requests::free_all();
    crate::probe::discard_all();
    crate::comm_dup::forget_pending();
    drop(comms::COMMS.drain());
    comms::refresh_default_errh();
    crate::file::free_all();
    crate::win::free_all();
    crate::types::free_all();
    crate::userops::free_all();
    crate::groups::free_all();
    crate::sessions::forget_all();
    let finalized = match rt {
        Some(rt) => rt.finalize().map_err(Into::into),
        None => Err(fail(MPI_ERR_OTHER, "MPI is not initialized")),
    };
    crate::requests::release_detached();
    finalized.and(attrs_deleted)
}

/// What the launcher says of this job (application number, universe size), for the
/// attributes MPI_APPNUM and MPI_UNIVERSE_SIZE.
pub(crate) fn launch_facts() -> CResult<(Option<u32>, Option<u32>)> {
    match env().rt.as_ref() {
        Some(rt) => Ok(rt.launch_facts()?),
        None => Err(fail(MPI_ERR_OTHER, "MPI is not initialized")),
    }
}

/// Ends every process of the job with `code` (or this one, without a runtime).
pub(crate) fn abort_job(code: c_int, message: &str) -> ! {
    // A fatal error raised while the environment is locked (in a teardown) ends this process.
    if let Ok(env) = ENV.try_lock() {
        if let Some(rt) = env.rt.as_ref() {
            let _ = rt.abort(code, message);
        }
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
    let mut env = env();
    match env.world {
        World::NotStarted => {}
        World::Live => return Err(fail(MPI_ERR_OTHER, "MPI is already initialized")),
        World::Ended => {
            return Err(fail(
                MPI_ERR_OTHER,
                "MPI was finalized (the world model starts once per process)",
            ))
        }
    }
    ensure_runtime(&mut env)?;
    let rt = env.rt.as_ref().expect("started above");
    let _ = MAIN_THREAD.set(std::thread::current().id());
    comms::COMMS.insert_at(
        MPI_COMM_WORLD as usize,
        CommEntry::new(Arc::new(rt.world()), Errh::Fatal),
    );
    comms::COMMS.insert_at(
        MPI_COMM_SELF as usize,
        CommEntry::new(Arc::new(rt.self_comm()), Errh::Fatal),
    );
    comms::refresh_default_errh();
    env.world = World::Live;
    WORLD_STARTED.store(true, Ordering::Release);
    LIVE.store(true, Ordering::Release);
    // The engine serializes every call behind one lock, so every level is safe.
    THREAD_LEVEL.store(required, Ordering::Release);
    if required == MPI_THREAD_MULTIPLE {
        crate::pinned::allow_concurrent_calls();
    }
    // A process MPI_Comm_spawn started connects to its parents now.
    drop(env);
    if let Some(world) = comms::COMMS.with(MPI_COMM_WORLD as usize, |e| Arc::clone(&e.comm)) {
        crate::dynamic::connect_parent(&world)?;
    }
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
        out(flag, WORLD_STARTED.load(Ordering::Acquire) as c_int)
    })
}

/// Sets `*flag` to whether `MPI_Finalize` has been called.
#[no_mangle]
pub unsafe extern "C" fn MPI_Finalized(flag: *mut c_int) -> c_int {
    run("Finalized", Errh::Return, |_| {
        out(flag, WORLD_ENDED.load(Ordering::Acquire) as c_int)
    })
}

/// Shuts MPI down (the world model). Requests never completed are cancelled and reported as
/// MPI_ERR_PENDING. While sessions are live, only MPI_COMM_WORLD and MPI_COMM_SELF end (their
/// attributes deleted, SELF's first); the runtime and every other handle live on until the
/// last session is finalized.
#[no_mangle]
pub unsafe extern "C" fn MPI_Finalize() -> c_int {
    run("Finalize", comms::default_errh(), |_| {
        let sessions_live = {
            let mut env = env();
            if env.world != World::Live {
                return Err(check_live().err().unwrap_or_else(|| {
                    fail(
                        MPI_ERR_OTHER,
                        "MPI is not initialized (MPI_Init was not called)",
                    )
                }));
            }
            env.world = World::Ended;
            env.sessions > 0
        };
        // MPI_Finalized says true once the attributes are deleted (their callbacks see false).
        if !sessions_live {
            let done = teardown();
            WORLD_ENDED.store(true, Ordering::Release);
            return done;
        }
        let self_done = crate::attrs::comm::release(MPI_COMM_SELF);
        let world_done = crate::attrs::comm::release(MPI_COMM_WORLD);
        WORLD_ENDED.store(true, Ordering::Release);
        for h in [MPI_COMM_SELF, MPI_COMM_WORLD] {
            if let Some(entry) = comms::COMMS.remove(h as usize) {
                crate::errhandlers::release(entry.errh);
            }
        }
        self_done.and(world_done)
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

/// The version of the MPI standard ABI this library follows (1.0, MPI-5.0's). Callable at any
/// time, from any thread.
#[no_mangle]
pub unsafe extern "C" fn MPI_Abi_get_version(
    abi_major: *mut c_int,
    abi_minor: *mut c_int,
) -> c_int {
    run("Abi_get_version", Errh::Return, |_| {
        out(abi_major, MPI_ABI_VERSION)?;
        out(abi_minor, MPI_ABI_SUBVERSION)
    })
}

/// "mpicd", its version, and the MPI version and ABI it implements.
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

/// A non-null out-argument for a new communicator, set to MPI_COMM_NULL at once: a call that
/// fails after this leaves the null handle there, as MPICH does, never a stale value.
pub(crate) fn new_comm_out(ptr: *mut MPI_Comm, what: &str) -> CResult<()> {
    require(ptr, what)?;
    // SAFETY: non-null; MPI requires an out-argument to point to writable storage.
    unsafe { ptr.write(MPI_COMM_NULL) };
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
