//! Launch bootstrap: this process's rank, the job size, and the exchange of small blobs (such as
//! UCX worker addresses) between the processes of a job. Under a launcher (`mpirun`,
//! `srun --mpi=pmix`, `prterun`) it talks to the launcher's PMIx server; started alone, the
//! process is a singleton (rank 0 of 1) and blobs stay in a local map. All of mpicd's PMIx
//! `unsafe` lives in this file and in [`dynamic`] (spawn and the name service).

mod dynamic;
pub(crate) use dynamic::LaunchApp;

use crate::{Error, Result};
use mpicd_pmix_sys as sys;
use std::collections::HashMap;
use std::ffi::{c_void, CStr, CString};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;

/// The key under which the launcher publishes the number of processes of the job.
const JOB_SIZE: &CStr = pmix_const_key(sys::PMIX_JOB_SIZE);
const LOCAL_SIZE: &CStr = pmix_const_key(sys::PMIX_LOCAL_SIZE);
/// The number of this process's application in an MPMD launch.
const APPNUM: &CStr = pmix_const_key(sys::PMIX_APPNUM);
/// How many processes the launcher's allocation can hold.
const UNIV_SIZE: &CStr = pmix_const_key(sys::PMIX_UNIV_SIZE);
/// The fence attribute asking the server to hand every process the data all others put.
const COLLECT_DATA: &CStr = pmix_const_key(sys::PMIX_COLLECT_DATA);

/// The connection to the launcher, or the singleton stand-in for it.
pub(crate) struct Bootstrap {
    kind: Kind,
}

// One per process: the 260-byte pmix_proc_t is not worth a Box.
#[allow(clippy::large_enum_variant)]
enum Kind {
    /// PMIx_Init succeeded: `me` is this process's namespace and rank.
    Pmix { me: sys::pmix_proc_t, size: u32 },
    /// No launcher: rank 0 of 1; what was put, by key.
    Singleton(HashMap<String, Vec<u8>>),
}

// Bootstrap lives inside a Mutex/Arc; the PMIx client library is thread-safe.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Bootstrap>();
};

impl Bootstrap {
    /// Connects to the PMIx server of the launcher. When the environment advertises no PMIx
    /// server (no `PMIX_NAMESPACE`, no `PMIX_SERVER_URI*`), PMIx_Init is not tried (it could only
    /// fail with UNREACHABLE) and the process is a singleton. When a launcher is advertised but
    /// PMIx_Init fails (for example a stale environment), the error names the PMIx status.
    pub(crate) fn init() -> Result<Bootstrap> {
        if !launcher_in_env() {
            return Ok(Bootstrap {
                kind: Kind::Singleton(HashMap::new()),
            });
        }
        let mut me = sys::pmix_proc_t::default();
        // SAFETY: `me` is a writable pmix_proc_t; a null info array with ninfo = 0 is allowed.
        let rc = unsafe { sys::PMIx_Init(&mut me, ptr::null_mut(), 0) };
        check(rc, "PMIx_Init (the environment advertises a PMIx launcher)")?;
        crate::launch_events::register(&me);
        // From here on, dropping `boot` finalizes PMIx, also on the error path below.
        let mut boot = Bootstrap {
            kind: Kind::Pmix { me, size: 0 },
        };
        let job = with_rank(&me, sys::PMIX_RANK_WILDCARD);
        let size = get_value(&job, JOB_SIZE)?
            .as_u32()
            .ok_or_else(|| Error::Launch("PMIX_JOB_SIZE is not a uint32".into()))?;
        if me.rank >= size {
            return Err(Error::Launch(format!(
                "PMIx gave rank {} in a job of size {size}",
                me.rank
            )));
        }
        boot.kind = Kind::Pmix { me, size };
        Ok(boot)
    }

    pub(crate) fn rank(&self) -> u32 {
        match &self.kind {
            Kind::Pmix { me, .. } => me.rank,
            Kind::Singleton(_) => 0,
        }
    }

    pub(crate) fn size(&self) -> u32 {
        match &self.kind {
            Kind::Pmix { size, .. } => *size,
            Kind::Singleton(_) => 1,
        }
    }

    /// How many processes of the job run on this node, if the launcher says.
    pub(crate) fn local_size(&self) -> Option<u32> {
        match &self.kind {
            Kind::Pmix { me, .. } => {
                let job = with_rank(me, sys::PMIX_RANK_WILDCARD);
                get_value(&job, LOCAL_SIZE).ok()?.as_u32()
            }
            Kind::Singleton(_) => Some(1),
        }
    }

    /// The number of this process's application (`mpirun -n 2 a : -n 2 b` gives 0 and 1), if
    /// the launcher says; a singleton is application 0.
    pub(crate) fn appnum(&self) -> Option<u32> {
        match &self.kind {
            Kind::Pmix { me, .. } => get_value(me, APPNUM).ok()?.as_u32(),
            Kind::Singleton(_) => Some(0),
        }
    }

    /// How many processes the launcher's allocation can hold, if it says; a singleton's is 1.
    pub(crate) fn universe_size(&self) -> Option<u32> {
        match &self.kind {
            Kind::Pmix { me, .. } => {
                let job = with_rank(me, sys::PMIX_RANK_WILDCARD);
                get_value(&job, UNIV_SIZE).ok()?.as_u32()
            }
            Kind::Singleton(_) => Some(1),
        }
    }

    pub(crate) fn is_singleton(&self) -> bool {
        matches!(self.kind, Kind::Singleton(_))
    }

    /// Publishes `value` under `key` to every process (PMIx_Put with global scope, then
    /// PMIx_Commit). Others see it after the next [`fence`](Self::fence).
    pub(crate) fn put(&mut self, key: &str, value: &[u8]) -> Result<()> {
        let ckey = pmix_key(key)?;
        match &mut self.kind {
            Kind::Singleton(store) => {
                store.insert(key.to_owned(), value.to_vec());
                Ok(())
            }
            Kind::Pmix { .. } => {
                // SAFETY: `ckey` is NUL-terminated and `value` is `value.len()` readable bytes,
                // which PMIx_Put copies before it returns.
                let rc = unsafe {
                    sys::mpicd_pmix_put_bytes(
                        sys::PMIX_GLOBAL as sys::pmix_scope_t,
                        ckey.as_ptr(),
                        value.as_ptr().cast(),
                        value.len(),
                    )
                };
                check(rc, "PMIx_Put")?;
                // SAFETY: PMIx is initialized; PMIx_Commit takes no arguments.
                check(unsafe { sys::PMIx_Commit() }, "PMIx_Commit")
            }
        }
    }

    /// Waits for every process of the job, and brings everyone's put data here
    /// (PMIX_COLLECT_DATA), so that the following gets are local.
    pub(crate) fn fence(&self) -> Result<()> {
        let Kind::Pmix { me, .. } = &self.kind else {
            return Ok(());
        };
        let all = with_rank(me, sys::PMIX_RANK_WILDCARD);
        let mut info = sys::pmix_info_t::default();
        // SAFETY: `info` is a writable pmix_info_t and the key NUL-terminated; a boolean value
        // allocates nothing, so `info` needs no destructor.
        unsafe { sys::mpicd_pmix_info_load_bool(&mut info, COLLECT_DATA.as_ptr(), true) };
        // SAFETY: one initialized proc and one initialized info, both alive for the call.
        check(unsafe { sys::PMIx_Fence(&all, 1, &info, 1) }, "PMIx_Fence")
    }

    /// Waits for the processes `ranks` of the job (all of them: `None`) without collecting
    /// data, unless `give_up` says (it is asked every few milliseconds) that waiting is
    /// pointless: a process is known dead and the launcher may never complete the fence.
    /// `Ok(false)` when given up.
    pub(crate) fn fence_unless(
        &self,
        ranks: Option<&[u32]>,
        mut give_up: impl FnMut() -> bool,
    ) -> Result<bool> {
        let Kind::Pmix { me, .. } = &self.kind else {
            return Ok(true);
        };
        let procs = match ranks {
            None => vec![with_rank(me, sys::PMIX_RANK_WILDCARD)],
            Some(ranks) => ranks.iter().map(|&r| with_rank(me, r)).collect(),
        };
        let wait = Arc::new(FenceWait {
            done: AtomicBool::new(false),
            status: AtomicI32::new(sys::PMIX_SUCCESS),
            procs,
        });
        let cbdata = Arc::into_raw(Arc::clone(&wait)) as *mut c_void;
        // SAFETY: the procs live in the FenceWait, which the reference handed to PMIx keeps
        // alive until `fence_done` runs (even if this wait gives up first); no info.
        let rc = unsafe {
            sys::PMIx_Fence_nb(
                wait.procs.as_ptr(),
                wait.procs.len(),
                ptr::null(),
                0,
                Some(fence_done),
                cbdata,
            )
        };
        if rc != sys::PMIX_SUCCESS {
            // SAFETY: PMIx refused the call, so it will not call back: the reference is ours.
            drop(unsafe { Arc::from_raw(cbdata as *const FenceWait) });
            return check(rc, "PMIx_Fence_nb").map(|()| true);
        }
        while !wait.done.load(Ordering::Acquire) {
            if give_up() {
                return Ok(false);
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        check(wait.status.load(Ordering::Acquire), "PMIx_Fence_nb").map(|()| true)
    }

    /// The blob that `rank` put under `key` (call after the fence that follows the put).
    pub(crate) fn get(&self, rank: u32, key: &str) -> Result<Vec<u8>> {
        let ckey = pmix_key(key)?;
        if rank >= self.size() {
            return Err(Error::InvalidRank {
                rank: i32::try_from(rank).unwrap_or(i32::MAX),
                size: i32::try_from(self.size()).unwrap_or(i32::MAX),
            });
        }
        match &self.kind {
            Kind::Singleton(store) => store
                .get(key)
                .cloned()
                .ok_or_else(|| Error::Launch(format!("nothing was put under key '{key}'"))),
            Kind::Pmix { me, .. } => get_value(&with_rank(me, rank), &ckey)?
                .as_bytes()
                .ok_or_else(|| Error::Launch(format!("key '{key}' of rank {rank} is not a blob"))),
        }
    }

    /// Ends the whole job: prints `msg` on stderr (Open MPI's mpirun does not show the PMIx_Abort
    /// message), then under a launcher PMIx_Abort kills every process of the job. Exits with
    /// `code` in case PMIx_Abort returns, and as a singleton.
    pub(crate) fn abort(&self, code: i32, msg: &str) -> ! {
        eprintln!("{msg}");
        if let Kind::Pmix { .. } = self.kind {
            let cmsg = CString::new(msg.replace('\0', " ")).unwrap_or_default();
            // SAFETY: `cmsg` is NUL-terminated; null procs with nprocs = 0 means the whole
            // namespace. On failure there is nothing better to do than exiting below.
            unsafe { sys::PMIx_Abort(code, cmsg.as_ptr(), ptr::null_mut(), 0) };
        }
        std::process::exit(code)
    }
}

/// The launcher connection of a finalized runtime, kept for the next one ([`Bootstrap::park`]).
static PARKED: std::sync::Mutex<Option<Bootstrap>> = std::sync::Mutex::new(None);

fn parked() -> std::sync::MutexGuard<'static, Option<Bootstrap>> {
    PARKED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Ends the parked launcher connection at process exit.
extern "C" fn finalize_parked() {
    drop(parked().take());
}

impl Bootstrap {
    /// The launcher connection: the one a finalized runtime of this process parked, or a new
    /// one ([`Bootstrap::init`]).
    pub(crate) fn acquire() -> Result<Bootstrap> {
        match parked().take() {
            Some(boot) => Ok(boot),
            None => Bootstrap::init(),
        }
    }

    /// Keeps this connection for a runtime started later (MPI's sessions may initialize again)
    /// instead of finalizing PMIx now: a process that finalized PMIx and initialized it again
    /// could meet the others' fences while the server still counts it as gone. PMIx is
    /// finalized at process exit.
    pub(crate) fn park(self) {
        static HOOK: std::sync::Once = std::sync::Once::new();
        // SAFETY: `finalize_parked` is an `extern "C" fn()` that lives as long as the process.
        HOOK.call_once(|| unsafe {
            libc::atexit(finalize_parked);
        });
        *parked() = Some(self);
    }

    /// A stand-in with no launcher connection (what is left where one was taken out).
    pub(crate) fn detached() -> Bootstrap {
        Bootstrap {
            kind: Kind::Singleton(HashMap::new()),
        }
    }
}

impl Drop for Bootstrap {
    fn drop(&mut self) {
        if let Kind::Pmix { .. } = self.kind {
            // SAFETY: PMIx_Init succeeded for this Bootstrap, which is not Clone, so this is
            // the one matching PMIx_Finalize. Its status is of no use while dropping.
            unsafe { sys::PMIx_Finalize(ptr::null(), 0) };
        }
    }
}

/// A non-blocking fence in flight: what PMIx reads until it calls back, and the outcome.
struct FenceWait {
    done: AtomicBool,
    status: AtomicI32,
    procs: Vec<sys::pmix_proc_t>,
}

/// PMIx's completion callback of [`Bootstrap::fence_unless`].
unsafe extern "C" fn fence_done(status: sys::pmix_status_t, cbdata: *mut c_void) {
    // SAFETY: `cbdata` is the reference made by `Arc::into_raw` for this fence, given back
    // once, here.
    let wait = unsafe { Arc::from_raw(cbdata as *const FenceWait) };
    wait.status.store(status, Ordering::Release);
    wait.done.store(true, Ordering::Release);
}

/// A value returned by PMIx_Get, released when dropped.
struct Value(*mut sys::pmix_value_t);

impl Value {
    fn as_u32(&self) -> Option<u32> {
        let mut out = 0;
        // SAFETY: self.0 is a live value from PMIx_Get and `out` a writable u32.
        (unsafe { sys::mpicd_pmix_value_get_u32(self.0, &mut out) } == 0).then_some(out)
    }

    fn as_bytes(&self) -> Option<Vec<u8>> {
        let (mut data, mut len) = (ptr::null(), 0);
        // SAFETY: self.0 is a live value from PMIx_Get; the out-pointers are writable.
        if unsafe { sys::mpicd_pmix_value_get_bytes(self.0, &mut data, &mut len) } != 0 {
            return None;
        }
        if len == 0 {
            return Some(Vec::new());
        }
        // SAFETY: a byte object holds `len` readable bytes at `data` while the value lives.
        Some(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }.to_vec())
    }
}

impl Drop for Value {
    fn drop(&mut self) {
        // SAFETY: self.0 came from PMIx_Get and is released exactly once, here.
        unsafe { sys::mpicd_pmix_value_release(self.0) };
    }
}

/// PMIx_Get of `key` for `proc`, with the status turned into an error naming key and rank.
fn get_value(proc: &sys::pmix_proc_t, key: &CStr) -> Result<Value> {
    let mut value = ptr::null_mut();
    // SAFETY: `proc` and `key` are valid for the call, no info is passed, and `value` is a
    // writable out-pointer.
    let rc = unsafe { sys::PMIx_Get(proc, key.as_ptr(), ptr::null(), 0, &mut value) };
    let what = format!("PMIx_Get({}) of rank {}", key.to_string_lossy(), proc.rank);
    check(rc, &what)?;
    if value.is_null() {
        return Err(Error::Launch(format!("{what} returned no value")));
    }
    Ok(Value(value))
}

/// `me` with another rank: the same namespace.
fn with_rank(me: &sys::pmix_proc_t, rank: u32) -> sys::pmix_proc_t {
    sys::pmix_proc_t { rank, ..*me }
}

/// Turns a PMIx status into `Ok` or an `Error::Launch` with PMIx's own words.
fn check(rc: sys::pmix_status_t, what: &str) -> Result<()> {
    if rc == sys::PMIX_SUCCESS {
        return Ok(());
    }
    // SAFETY: PMIx_Error_string accepts any status and returns a static string (or null).
    let text = unsafe { sys::PMIx_Error_string(rc) };
    let why = if text.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-null, NUL-terminated and static, as checked just above.
        unsafe { CStr::from_ptr(text) }.to_string_lossy()
    };
    Err(Error::Launch(format!("{what} failed: {why} ({rc})")))
}

/// A user key as PMIx takes it: non-empty, no NUL, at most PMIX_MAX_KEYLEN bytes.
fn pmix_key(key: &str) -> Result<CString> {
    if key.is_empty() || key.len() > sys::PMIX_MAX_KEYLEN as usize {
        return Err(Error::InvalidArgument(format!(
            "PMIx key '{key}' must have 1 to {} bytes",
            sys::PMIX_MAX_KEYLEN
        )));
    }
    CString::new(key)
        .map_err(|_| Error::InvalidArgument(format!("PMIx key {key:?} contains a NUL byte")))
}

/// A key macro of `pmix_common.h` (bindgen makes them NUL-terminated byte strings).
const fn pmix_const_key(bytes: &'static [u8]) -> &'static CStr {
    match CStr::from_bytes_with_nul(bytes) {
        Ok(key) => key,
        Err(_) => panic!("PMIx key constants are NUL-terminated"),
    }
}

/// Whether the environment advertises a PMIx server (set by every PMIx launcher).
fn launcher_in_env() -> bool {
    std::env::vars_os().any(|(name, _)| {
        name.to_str()
            .is_some_and(|n| n == "PMIX_NAMESPACE" || n.starts_with("PMIX_SERVER_URI"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Alone this is the singleton round trip; run the test binary under
    /// `mpirun -n 3 <test binary> bootstrap::` and it checks the real exchange.
    #[test]
    fn every_rank_gets_every_blob() {
        let mut boot = Bootstrap::init().expect("bootstrap init");
        if boot.is_singleton() {
            assert_eq!((boot.rank(), boot.size()), (0, 1));
        }
        assert!(boot.rank() < boot.size());
        let blob = |rank: u32| format!("address of rank {rank}").into_bytes();
        boot.put("mpicd.test.blob", &blob(boot.rank())).unwrap();
        boot.put("mpicd.test.empty", &[]).unwrap();
        boot.fence().unwrap();
        for rank in 0..boot.size() {
            assert_eq!(boot.get(rank, "mpicd.test.blob").unwrap(), blob(rank));
            assert_eq!(boot.get(rank, "mpicd.test.empty").unwrap(), b"");
        }
        assert!(matches!(
            boot.get(boot.size(), "mpicd.test.blob"),
            Err(Error::InvalidRank { .. })
        ));
    }

    #[test]
    fn rejects_keys_pmix_cannot_take() {
        assert!(pmix_key("mpicd.ucx.addr").is_ok());
        assert!(matches!(pmix_key(""), Err(Error::InvalidArgument(_))));
        assert!(matches!(pmix_key("a\0b"), Err(Error::InvalidArgument(_))));
        let long = "k".repeat(sys::PMIX_MAX_KEYLEN as usize + 1);
        assert!(matches!(pmix_key(&long), Err(Error::InvalidArgument(_))));
    }

    #[test]
    fn singleton_reports_a_missing_key() {
        let boot = Bootstrap {
            kind: Kind::Singleton(HashMap::new()),
        };
        assert!(matches!(boot.get(0, "never.put"), Err(Error::Launch(_))));
    }
}
