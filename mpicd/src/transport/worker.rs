//! The UCP context and its one worker: the UCX settings mpicd applies (from the configuration
//! table, [`crate::config::UCX_SETTINGS`]), creation and
//! destruction, the worker's address, progress, the parameters every request is posted with,
//! the spare receive sinks and lead buffers, and UCX status codes as errors. The generic
//! datatypes are created here from the operation tables of [`super::collect`] and
//! [`super::stream`]; what they do is theirs. Knows nothing of what the messages carry.

use super::collect::{RecvTarget, Sink, COLLECT_OPS, SINK_OPS};
use super::failures::FailureLog;
use super::notices;
use super::stream::STREAM_OPS;
use crate::config::{Apply, UCX_SETTINGS};
use crate::error::{Error, Result};
use mpicd_ucx_sys as ucx;
use std::cell::{Cell, RefCell};
use std::ffi::{c_void, CStr, CString};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Finished sinks kept for reuse (more receives in flight just allocate).
const MAX_SPARE_SINKS: usize = 64;
/// Lead buffers kept for reuse (more messages in flight just allocate).
const MAX_SPARE_LEADS: usize = 64;

/// What the layer above tells the transport when it starts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WorkerSettings {
    /// Endpoints to peers that ask for it report failures (UCX peer error handling, with
    /// keepalive).
    pub peer_errors: bool,
    /// Waits may sleep on the worker's event file descriptor ([`Worker::arm`]); without it
    /// the context has no wakeup feature, which costs nothing.
    pub wakeup: bool,
    /// Bytes of a lead buffer ([`Worker::lead_buffer`]); a user's contiguous receive at least
    /// this large is received into directly, a smaller one through a sink.
    pub lead_capacity: usize,
    /// Bytes kept aside from the start of every message a user's contiguous receive takes
    /// through a sink, whatever the receive's size ([`super::RecvTarget::lead_header`]); at
    /// most `lead_capacity`.
    pub header_keep: usize,
}

/// A UCP context and one worker on it, with the generic datatypes mpicd uses.
pub(crate) struct Worker {
    pub(super) context: ucx::ucp_context_h,
    pub(super) worker: ucx::ucp_worker_h,
    pub(super) collect_dt: ucx::ucp_datatype_t,
    pub(super) sink_dt: ucx::ucp_datatype_t,
    pub(super) stream_dt: ucx::ucp_datatype_t,
    pub(super) settings: WorkerSettings,
    pub(crate) failures: Arc<FailureLog>,
    /// Set when a contiguous receive took a custom-typed message (see
    /// [`Worker::take_custom_alert`]).
    pub(super) custom_alert: Arc<AtomicBool>,
    /// Sinks of finished small contiguous receives, for reuse (boxed: a sink in use is handed
    /// to UCX, so it lives in a box that a receive's target owns, and the box is what is reused).
    #[allow(clippy::vec_box)]
    pub(super) spare_sinks: RefCell<Vec<Box<Sink>>>,
    /// Buffers of `lead_capacity` bytes that custom-typed leads were sent from or received
    /// into, for reuse (a window of messages would otherwise allocate and free one per message).
    pub(super) spare_leads: RefCell<Vec<Vec<u8>>>,
    /// The token of the custom operation whose requests are being posted (see
    /// [`Worker::mark_requests`]).
    notify: Cell<Option<usize>>,
    /// Memory handles of the regions registered and not yet unmapped (see
    /// [`super::rma::MemRegion`]); what is left is unmapped when the worker is destroyed.
    pub(super) mapped: RefCell<Vec<ucx::ucp_mem_h>>,
    /// UCX may use shared memory between processes of a node (see [`shared_memory_allowed`]).
    shared_memory: bool,
    /// The worker's event file descriptor, if this UCX build and its transports offer one.
    event_fd: Option<std::os::raw::c_int>,
}

/// What [`Worker::arm`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Armed {
    /// The event file descriptor becomes readable when the worker has something to do.
    Fd(std::os::raw::c_int),
    /// Events are already pending: progress again instead of sleeping.
    Busy,
    /// The worker cannot signal events (no descriptor, or a transport without them).
    Unavailable,
}

// SAFETY: the worker is created in UCS_THREAD_MODE_SERIALIZED and every use goes through the
// engine's mutex, so UCX never sees two threads at once.
unsafe impl Send for Worker {}

impl Worker {
    /// Creates the UCP context (tag, RMA and atomic features) and a serialized worker.
    pub(crate) fn new(settings: WorkerSettings) -> Result<Worker> {
        // The UCX settings of the configuration table, unless the user set them.
        let unset = UCX_SETTINGS
            .iter()
            .filter(|s| std::env::var_os(s.name).is_none());
        // A variable of a transport UCX_TLS leaves out would only make UCX warn that it is
        // unused.
        let tls = std::env::var("UCX_TLS").ok();
        let in_use = |name: &str| {
            ["TCP", "POSIX", "SYSV", "CMA"]
                .iter()
                .find(|t| name.starts_with(&format!("UCX_{t}_")))
                .map_or(true, |t| {
                    transport_allowed(tls.as_deref(), &t.to_ascii_lowercase())
                })
        };
        for s in unset
            .clone()
            .filter(|s| s.apply == Apply::Environment && in_use(s.name))
        {
            // Before any UCX thread exists; like every MPI library, init is expected before
            // the application starts threads that read the environment.
            std::env::set_var(s.name, s.value);
        }
        super::failures::install_log_filter();
        let mut config: *mut ucx::ucp_config_t = ptr::null_mut();
        // SAFETY: null prefix/filename mean "UCX_ prefix, no file"; config is an out pointer.
        check(
            unsafe { ucx::ucp_config_read(ptr::null(), ptr::null(), &mut config) },
            "ucp_config_read",
        )?;
        if settings.peer_errors {
            for s in unset.filter(|s| s.apply == Apply::ContextWithPeerErrors) {
                let (n, v) = (
                    CString::new(s.context_name()).unwrap_or_default(),
                    CString::new(s.value).unwrap_or_default(),
                );
                // SAFETY: config is valid; n and v are NUL-terminated. A knob this UCX build
                // does not know is ignored.
                let _ = unsafe { ucx::ucp_config_modify(config, n.as_ptr(), v.as_ptr()) };
            }
        }
        // SAFETY: all-zero is a valid ucp_params_t with no fields selected.
        let mut params: ucx::ucp_params_t = unsafe { std::mem::zeroed() };
        params.field_mask =
            (ucx::UCP_PARAM_FIELD_FEATURES | ucx::UCP_PARAM_FIELD_MT_WORKERS_SHARED) as u64;
        // RMA and 32/64-bit atomics serve one-sided communication (crate::window).
        params.features = (ucx::UCP_FEATURE_TAG
            | ucx::UCP_FEATURE_RMA
            | ucx::UCP_FEATURE_AMO32
            | ucx::UCP_FEATURE_AMO64) as u64;
        if settings.wakeup {
            params.features |= ucx::UCP_FEATURE_WAKEUP as u64;
        }
        params.mt_workers_shared = 0;
        let mut context: ucx::ucp_context_h = ptr::null_mut();
        // SAFETY: params and config are valid; context is an out pointer.
        let status = unsafe {
            ucx::ucp_init_version(
                ucx::UCP_API_MAJOR,
                ucx::UCP_API_MINOR,
                &params,
                config,
                &mut context,
            )
        };
        // SAFETY: config came from ucp_config_read and is released once.
        unsafe { ucx::ucp_config_release(config) };
        check(status, "ucp_init")?;

        // SAFETY: all-zero is a valid ucp_worker_params_t.
        let mut wparams: ucx::ucp_worker_params_t = unsafe { std::mem::zeroed() };
        wparams.field_mask = ucx::UCP_WORKER_PARAM_FIELD_THREAD_MODE as u64;
        wparams.thread_mode = ucx::UCS_THREAD_MODE_SERIALIZED;
        let mut worker: ucx::ucp_worker_h = ptr::null_mut();
        // SAFETY: context is a live context; worker is an out pointer.
        let status = unsafe { ucx::ucp_worker_create(context, &wparams, &mut worker) };
        if let Err(e) = check(status, "ucp_worker_create") {
            // SAFETY: context is live and not used after this.
            unsafe { ucx::ucp_cleanup(context) };
            return Err(e);
        }
        let mut me = Worker {
            context,
            worker,
            collect_dt: 0,
            sink_dt: 0,
            stream_dt: 0,
            settings,
            failures: Arc::default(),
            custom_alert: Arc::default(),
            spare_sinks: RefCell::default(),
            spare_leads: RefCell::default(),
            notify: Cell::default(),
            mapped: RefCell::default(),
            shared_memory: shared_memory_allowed(std::env::var("UCX_TLS").ok().as_deref()),
            event_fd: None,
        };
        let mut fd: std::os::raw::c_int = -1;
        // SAFETY: worker is live; fd is an out pointer. With transports that cannot signal,
        // this fails and waits do without sleeping.
        if settings.wakeup
            && unsafe { ucx::ucp_worker_get_efd(worker, &mut fd) } == ucx::UCS_OK
            && fd >= 0
        {
            me.event_fd = Some(fd);
        }
        let mut collect_dt: ucx::ucp_datatype_t = 0;
        // SAFETY: COLLECT_OPS is a static table of valid callbacks; the context pointer is unused.
        let status =
            unsafe { ucx::ucp_dt_create_generic(&COLLECT_OPS, ptr::null_mut(), &mut collect_dt) };
        check(status, "ucp_dt_create_generic")?;
        me.collect_dt = collect_dt;
        let mut sink_dt: ucx::ucp_datatype_t = 0;
        // SAFETY: as above, with SINK_OPS.
        let status =
            unsafe { ucx::ucp_dt_create_generic(&SINK_OPS, ptr::null_mut(), &mut sink_dt) };
        check(status, "ucp_dt_create_generic")?;
        me.sink_dt = sink_dt;
        let mut stream_dt: ucx::ucp_datatype_t = 0;
        // SAFETY: STREAM_OPS is a static with valid callbacks; stream_dt is an out pointer.
        let status =
            unsafe { ucx::ucp_dt_create_generic(&STREAM_OPS, ptr::null_mut(), &mut stream_dt) };
        check(status, "ucp_dt_create_generic")?;
        me.stream_dt = stream_dt;
        Ok(me)
    }

    /// This worker's address, to be published through the launcher.
    pub(crate) fn address(&self) -> Result<Vec<u8>> {
        let mut addr: *mut ucx::ucp_address_t = ptr::null_mut();
        let mut len: usize = 0;
        // SAFETY: worker is live; addr/len are out pointers.
        check(
            unsafe { ucx::ucp_worker_get_address(self.worker, &mut addr, &mut len) },
            "ucp_worker_get_address",
        )?;
        // SAFETY: UCX returned `len` readable bytes at `addr`; we copy them before releasing.
        let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) }.to_vec();
        // SAFETY: addr came from ucp_worker_get_address on this worker.
        unsafe { ucx::ucp_worker_release_address(self.worker, addr) };
        Ok(bytes)
    }

    /// True when processes of this node may talk through shared memory. Endpoints to them
    /// then cannot have peer error handling: UCX 1.13's shared-memory transports lack it, and
    /// asking for it moves the endpoint to tcp over loopback (25 times the latency).
    pub(crate) fn uses_shared_memory(&self) -> bool {
        self.shared_memory
    }

    /// Progresses the worker once; true if something happened.
    pub(crate) fn progress(&self) -> bool {
        // SAFETY: worker is live and used from one thread at a time.
        unsafe { ucx::ucp_worker_progress(self.worker) != 0 }
    }

    /// Prepares the worker to signal its event file descriptor on the next event; call it only
    /// after a progress call that found nothing to do. The descriptor belongs to the worker:
    /// poll it, never close it.
    pub(crate) fn arm(&self) -> Armed {
        let Some(fd) = self.event_fd else {
            return Armed::Unavailable;
        };
        // SAFETY: worker is live and used from one thread at a time.
        match unsafe { ucx::ucp_worker_arm(self.worker) } {
            ucx::UCS_OK => Armed::Fd(fd),
            ucx::UCS_ERR_BUSY => Armed::Busy,
            _ => Armed::Unavailable,
        }
    }

    /// Request parameters with `flags` set and nothing else.
    pub(super) fn request_params(flags: u32) -> ucx::ucp_request_param_t {
        // SAFETY: all-zero is a valid ucp_request_param_t with no fields selected.
        let mut p: ucx::ucp_request_param_t = unsafe { std::mem::zeroed() };
        p.op_attr_mask = flags;
        p
    }

    /// Parameters of a send: with [`notices::send_done`] as its callback when it is posted for
    /// a custom operation (see [`Worker::mark_requests`]).
    pub(super) fn send_params(&self, flags: u32) -> ucx::ucp_request_param_t {
        let mut p = Self::request_params(flags);
        if let Some(token) = self.notify.get() {
            p.op_attr_mask |= ucx::UCP_OP_ATTR_FIELD_CALLBACK | ucx::UCP_OP_ATTR_FIELD_USER_DATA;
            p.cb.send = Some(notices::send_done);
            p.user_data = token as *mut c_void;
        }
        p
    }

    /// Parameters of a receive: with [`notices::recv_done`] as its callback when it is posted
    /// for a custom operation.
    pub(super) fn recv_params(&self, flags: u32) -> ucx::ucp_request_param_t {
        let mut p = Self::request_params(flags);
        if let Some(token) = self.notify.get() {
            p.op_attr_mask |= ucx::UCP_OP_ATTR_FIELD_CALLBACK | ucx::UCP_OP_ATTR_FIELD_USER_DATA;
            p.cb.recv = Some(notices::recv_done);
            p.user_data = token as *mut c_void;
        }
        p
    }

    /// Marks the requests posted from now on as those of the custom operation `token` (or of
    /// none): their completions are filed in [`notices`] for the engine to poll that
    /// operation. Returns the previous mark.
    pub(crate) fn mark_requests(&self, token: Option<usize>) -> Option<usize> {
        self.notify.replace(token)
    }

    /// Takes the custom alert: true if some contiguous receive took a custom-typed lead since
    /// the last call.
    pub(crate) fn take_custom_alert(&self) -> bool {
        self.custom_alert.load(Ordering::Acquire) && self.custom_alert.swap(false, Ordering::AcqRel)
    }

    /// A sink for a small contiguous receive, reused if one is spare.
    pub(super) fn spare_sink(&self) -> Box<Sink> {
        self.spare_sinks
            .borrow_mut()
            .pop()
            .unwrap_or_else(|| Box::new(Sink::new(self.settings.header_keep)))
    }

    /// Gives a finished receive's sink back for reuse.
    pub(crate) fn recycle(&self, target: &mut RecvTarget) {
        if let Some(sink) = target.take_sink() {
            let mut spare = self.spare_sinks.borrow_mut();
            if spare.len() < MAX_SPARE_SINKS {
                spare.push(sink);
            }
        }
    }

    /// An empty buffer with room for a whole lead ([`WorkerSettings::lead_capacity`] bytes),
    /// reused if one is spare.
    pub(crate) fn lead_buffer(&self) -> Vec<u8> {
        self.spare_leads
            .borrow_mut()
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(self.settings.lead_capacity))
    }

    /// Keeps a lead buffer for reuse (at most [`MAX_SPARE_LEADS`] of them).
    pub(crate) fn recycle_lead(&self, mut buffer: Vec<u8>) {
        let mut spare = self.spare_leads.borrow_mut();
        if buffer.capacity() >= self.settings.lead_capacity && spare.len() < MAX_SPARE_LEADS {
            buffer.clear();
            spare.push(buffer);
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // SAFETY: the datatype, worker and context were created in `new` and are destroyed once,
        // in reverse order; no request or endpoint outlives the engine that owns this worker.
        unsafe {
            if self.collect_dt != 0 {
                ucx::ucp_dt_destroy(self.collect_dt);
            }
            if self.stream_dt != 0 {
                ucx::ucp_dt_destroy(self.stream_dt);
            }
            if self.sink_dt != 0 {
                ucx::ucp_dt_destroy(self.sink_dt);
            }
            ucx::ucp_worker_destroy(self.worker);
            for memh in self.mapped.get_mut().drain(..) {
                // Regions whose windows were forgotten: the context must not outlive them.
                let _ = ucx::ucp_mem_unmap(self.context, memh);
            }
            ucx::ucp_cleanup(self.context);
        }
    }
}

/// Turns a UCX status code into an mpicd error.
pub(super) fn status_error(status: ucx::ucs_status_t) -> Error {
    if status == ucx::UCS_ERR_MESSAGE_TRUNCATED {
        // The caller knows the sizes and replaces this with a precise `Truncated`.
        return Error::truncated(0, 0);
    }
    if status == ucx::UCS_ERR_CANCELED {
        return Error::Cancelled;
    }
    if is_peer_loss(status) {
        // The transport does not know the peer's rank: the engine, which does, names it.
        return Error::ProcFailed { rank: -1 };
    }
    // SAFETY: ucs_status_string returns a pointer to a static, NUL-terminated string.
    let text = unsafe { CStr::from_ptr(ucx::ucs_status_string(status)) };
    Error::Transport(text.to_string_lossy().into_owned())
}

/// Whether UCX may use a shared-memory transport between processes under `UCX_TLS` (its
/// value, if set).
pub(crate) fn shared_memory_allowed(tls: Option<&str>) -> bool {
    ["posix", "sysv", "cma"]
        .iter()
        .any(|t| transport_allowed(tls, t))
}

/// Whether `UCX_TLS` (its value, if set) lets UCX use `transport`: a list of transports and
/// aliases (`all`; `sm` and `shm` for shared memory; `mm` for posix and sysv), or a
/// `^`-prefixed list of those excluded.
pub(crate) fn transport_allowed(tls: Option<&str>, transport: &str) -> bool {
    let aliases: &[&str] = match transport {
        "posix" | "sysv" => &["sm", "shm", "mm"],
        "cma" | "knem" | "xpmem" => &["sm", "shm"],
        _ => &[],
    };
    let Some(tls) = tls.map(str::trim).filter(|t| !t.is_empty()) else {
        return true;
    };
    let names =
        |list: &str| -> Vec<String> { list.split(',').map(|t| t.trim().to_string()).collect() };
    let named = |list: &[String]| {
        list.iter()
            .any(|t| t == transport || aliases.contains(&t.as_str()))
    };
    match tls.strip_prefix('^') {
        Some(excluded) => !named(&names(excluded)),
        None => {
            let listed = names(tls);
            listed.iter().any(|t| t == "all") || named(&listed)
        }
    }
}

/// True for the statuses with which UCX reports that the peer of an endpoint is gone: it
/// closed the connection, stopped answering, or its memory (shared memory, CMA) went away.
fn is_peer_loss(status: ucx::ucs_status_t) -> bool {
    [
        ucx::UCS_ERR_ENDPOINT_TIMEOUT,
        ucx::UCS_ERR_CONNECTION_RESET,
        ucx::UCS_ERR_UNREACHABLE,
        ucx::UCS_ERR_NOT_CONNECTED,
        ucx::UCS_ERR_REJECTED,
        ucx::UCS_ERR_SHMEM_SEGMENT,
        ucx::UCS_ERR_IO_ERROR,
    ]
    .contains(&status)
}

/// `Ok` for `UCS_OK`, else a transport error naming the call `what`.
pub(super) fn check(status: ucx::ucs_status_t, what: &str) -> Result<()> {
    if status == ucx::UCS_OK {
        Ok(())
    } else {
        // SAFETY: ucs_status_string returns a pointer to a static, NUL-terminated string.
        let text = unsafe { CStr::from_ptr(ucx::ucs_status_string(status)) };
        Err(Error::Transport(format!(
            "{what}: {}",
            text.to_string_lossy()
        )))
    }
}

#[cfg(test)]
mod shared_memory_tests {
    use super::shared_memory_allowed as allowed;

    #[test]
    fn ucx_tls_decides_whether_shared_memory_is_used() {
        assert!(allowed(None));
        assert!(allowed(Some("")));
        assert!(allowed(Some("all")));
        assert!(allowed(Some("sm,self")));
        assert!(allowed(Some("tcp,posix,self")));
        assert!(allowed(Some("mm,self")));
        assert!(allowed(Some("^tcp")));
        assert!(allowed(Some("^cma")));
        assert!(!allowed(Some("tcp,self")));
        assert!(!allowed(Some("tcp")));
        assert!(!allowed(Some("^sm")));
        assert!(!allowed(Some("^posix,sysv,cma")));
    }
}
