//! What the launcher reports while the job runs: processes of the job that terminated (PMIx
//! events), and the loss of the launcher itself. The PMIx event handler runs on PMIx's own
//! thread; it records dead ranks here, and the engine takes them when it looks at its peers
//! ([`take_terminated`]), so that a death is known across nodes without waiting for UCX. When
//! the connection to the launcher is lost (mpirun killed, the job cancelled), the process has no
//! job any more: it says so on stderr and exits at once rather than run on as an orphan.

use mpicd_pmix_sys as sys;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The event codes that mean a process of the job is gone.
const TERMINATION_CODES: [i32; 9] = [
    sys::PMIX_ERR_PROC_ABORTED,
    sys::PMIX_ERR_PROC_ABORTING,
    sys::PMIX_PROC_TERMINATED,
    sys::PMIX_EVENT_PROC_TERMINATED,
    sys::PMIX_ERR_PROC_TERM_WO_SYNC,
    sys::PMIX_ERR_PROC_KILLED_BY_CMD,
    sys::PMIX_ERR_PROC_ABORTED_BY_SIG,
    sys::PMIX_ERR_EXIT_NONZERO_TERM,
    sys::PMIX_ERR_PROC_REQUESTED_ABORT,
];
/// The event codes that mean this process lost its launcher.
const LOST_LAUNCHER_CODES: [i32; 3] = [
    sys::PMIX_ERR_LOST_CONNECTION,
    sys::PMIX_ERR_LOST_CONNECTION_TO_SERVER,
    sys::PMIX_ERR_UNREACH,
];
/// At most this many affected ranks are read from one event.
const MAX_AFFECTED: usize = 64;

/// This process as PMIx names it (its namespace is the job's).
static ME: OnceLock<sys::pmix_proc_t> = OnceLock::new();
/// Ranks reported terminated and not yet taken.
static TERMINATED: Mutex<Vec<u32>> = Mutex::new(Vec::new());
/// Set when `TERMINATED` may be non-empty, so the common case takes no lock.
static PENDING: AtomicBool = AtomicBool::new(false);
/// Terminations reported since the process started (see [`terminations`]).
static COUNT: AtomicU64 = AtomicU64::new(0);

/// Registers the handler, once per process, after PMIx_Init gave `me`. A launcher that refuses
/// leaves detection to UCX and the local pid check; that is not an error.
pub(crate) fn register(me: &sys::pmix_proc_t) {
    if ME.set(*me).is_err() {
        return;
    }
    let mut codes: Vec<i32> = TERMINATION_CODES
        .iter()
        .chain(&LOST_LAUNCHER_CODES)
        .copied()
        .collect();
    // SAFETY: `codes` holds `codes.len()` statuses, read during the call; no info; the handler
    // is a plain function that lives as long as the process; no registration callback (the
    // call is then blocking).
    unsafe {
        sys::PMIx_Register_event_handler(
            codes.as_mut_ptr(),
            codes.len(),
            ptr::null_mut(),
            0,
            Some(on_event),
            None,
            ptr::null_mut(),
        )
    };
}

/// Takes the ranks of the job reported terminated since the last call.
pub(crate) fn take_terminated() -> Vec<u32> {
    if !PENDING.load(Ordering::Acquire) || !PENDING.swap(false, Ordering::AcqRel) {
        return Vec::new();
    }
    std::mem::take(&mut *TERMINATED.lock().unwrap_or_else(|e| e.into_inner()))
}

/// How many terminations the launcher has reported so far (a wait can give up when it grows).
pub(crate) fn terminations() -> u64 {
    COUNT.load(Ordering::Acquire)
}

fn record(rank: u32) {
    TERMINATED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(rank);
    PENDING.store(true, Ordering::Release);
    COUNT.fetch_add(1, Ordering::AcqRel);
}

/// PMIx's event handler.
unsafe extern "C" fn on_event(
    _registration: usize,
    status: sys::pmix_status_t,
    source: *const sys::pmix_proc_t,
    info: *mut sys::pmix_info_t,
    ninfo: usize,
    _results: *mut sys::pmix_info_t,
    _nresults: usize,
    cbfunc: sys::pmix_event_notification_cbfunc_fn_t,
    cbdata: *mut c_void,
) {
    if let Some(me) = ME.get() {
        if LOST_LAUNCHER_CODES.contains(&status) {
            lost_launcher(me.rank);
        }
        if TERMINATION_CODES.contains(&status) {
            let mut ranks = [0u32; MAX_AFFECTED];
            // SAFETY: PMIx hands `ninfo` infos (or null) valid during the handler; the
            // namespace is NUL-terminated; `ranks` has room for MAX_AFFECTED.
            let found = unsafe {
                sys::mpicd_pmix_event_affected_ranks(
                    info,
                    ninfo,
                    me.nspace.as_ptr(),
                    ranks.as_mut_ptr(),
                    MAX_AFFECTED,
                )
            };
            let mut named = &ranks[..found.min(MAX_AFFECTED)];
            let from_source;
            if named.is_empty() && !source.is_null() {
                // SAFETY: non-null, PMIx's proc of the event, valid during the handler.
                let src = unsafe { &*source };
                if src.nspace == me.nspace {
                    from_source = [src.rank];
                    named = &from_source;
                }
            }
            for &r in named.iter().filter(|&&r| r != me.rank) {
                record(r);
            }
        }
    }
    if let Some(done) = cbfunc {
        // SAFETY: PMIx's completion callback of this event, called once with its cbdata.
        unsafe {
            done(
                sys::PMIX_EVENT_ACTION_COMPLETE,
                ptr::null_mut(),
                0,
                None,
                ptr::null_mut(),
                cbdata,
            )
        };
    }
}

/// The launcher is gone: this process's job no longer exists.
fn lost_launcher(rank: u32) -> ! {
    use std::io::Write;
    // Written without panicking: the launcher that forwarded stderr may be gone too.
    let _ = writeln!(
        std::io::stderr(),
        "mpicd: rank {rank} lost the connection to its launcher (mpirun); exiting"
    );
    // SAFETY: _exit ends the process at once, running no handler of a job that is gone.
    unsafe { libc::_exit(1) }
}
