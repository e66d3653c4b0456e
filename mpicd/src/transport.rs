//! The UCX transport: context, worker, endpoints and tag requests (UCP), kept in that order of
//! ownership. This is the only module that calls into `mpicd-ucx-sys`; every `unsafe` block here
//! says why it is sound. Everything above it speaks in [`Worker`], [`Endpoint`] and
//! [`UcxRequest`], never in raw UCX pointers.
//!
//! Requests are polled: a pending operation is a [`UcxRequest`] that the engine tests after
//! progressing the worker. That keeps Rust closures out of UCX and lets the engine own the order
//! in which completions are observed. The one completion callback, a plain function on user
//! contiguous receives, only raises a flag when such a receive took a custom-typed lead (the
//! engine then turns it into a drain without waiting for its test).

use crate::error::{Error, Result};
use crate::notices;
use crate::wire::{HEADER_BYTES, LEAD_MAX};
use mpicd_ucx_sys as ucx;
use std::cell::{Cell, RefCell};
use std::ffi::{c_void, CStr, CString};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;

/// A 64-bit UCX tag and the mask that selects which of its bits must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TagMatch {
    pub tag: u64,
    pub mask: u64,
}

/// What a completed or probed receive tells about the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RecvInfo {
    pub sender_tag: u64,
    pub length: usize,
}

/// Turns a UCX status code into an mpicd error.
fn status_error(status: ucx::ucs_status_t) -> Error {
    if status == ucx::UCS_ERR_MESSAGE_TRUNCATED {
        // The caller knows the sizes and replaces this with a precise `Truncated`.
        return Error::Truncated {
            message_bytes: 0,
            buffer_bytes: 0,
        };
    }
    if status == ucx::UCS_ERR_CANCELED {
        return Error::Cancelled;
    }
    // SAFETY: ucs_status_string returns a pointer to a static, NUL-terminated string.
    let text = unsafe { CStr::from_ptr(ucx::ucs_status_string(status)) };
    Error::Transport(text.to_string_lossy().into_owned())
}

fn check(status: ucx::ucs_status_t, what: &str) -> Result<()> {
    if status == ucx::UCS_OK {
        Ok(())
    } else {
        Err(Error::Transport(format!(
            "{what}: {}",
            status_error(status)
        )))
    }
}

/// Peers whose endpoint reported an error, filled by the UCX error callback during progress.
#[derive(Default)]
pub(crate) struct FailureLog {
    failed: Mutex<Vec<u32>>,
    /// Set when `failed` may be non-empty, so the common case takes no lock.
    pending: AtomicBool,
}

impl FailureLog {
    /// Records that `rank` failed (for detectors outside UCX).
    pub(crate) fn report(&self, rank: u32) {
        self.failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(rank);
        self.pending.store(true, Ordering::Release);
    }

    /// Takes the ranks reported since the last call.
    pub(crate) fn take(&self) -> Vec<u32> {
        if !self.pending.load(Ordering::Acquire) || !self.pending.swap(false, Ordering::AcqRel) {
            return Vec::new();
        }
        std::mem::take(&mut *self.failed.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The argument UCX hands back to [`endpoint_error`]: which rank, and where to record it.
struct ErrorContext {
    rank: u32,
    log: Arc<FailureLog>,
}

unsafe extern "C" fn endpoint_error(
    arg: *mut c_void,
    _ep: ucx::ucp_ep_h,
    _status: ucx::ucs_status_t,
) {
    // SAFETY: `arg` is the `ErrorContext` boxed in `Worker::connect`, alive until the endpoint
    // is closed (the box is owned by the `Endpoint`).
    let ctx = unsafe { &*(arg as *const ErrorContext) };
    ctx.log
        .failed
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(ctx.rank);
}

/// Called by UCX when a contiguous receive completes: raises the worker's alert when the message
/// it took is a custom-typed lead, so that progress turns that receive into a drain even if
/// nobody tests it (see `Engine::progress`).
unsafe extern "C" fn contiguous_recv_done(
    _request: *mut c_void,
    status: ucx::ucs_status_t,
    info: *const ucx::ucp_tag_recv_info_t,
    user_data: *mut c_void,
) {
    // SAFETY: UCX passes the receive's tag information, valid for the duration of the call
    // (checked for null all the same).
    let custom = status == ucx::UCS_OK
        && !info.is_null()
        && crate::tag::is_custom_lead(unsafe { (*info).sender_tag });
    if custom {
        // SAFETY: user_data is the worker's `custom_alert`, which lives as long as the worker
        // (UCX calls this only during progress of that worker, or while destroying it).
        let alert = unsafe { &*(user_data as *const AtomicBool) };
        alert.store(true, Ordering::Release);
    }
}

/// A UCP context and one worker on it, with the generic datatypes mpicd uses.
pub(crate) struct Worker {
    context: ucx::ucp_context_h,
    worker: ucx::ucp_worker_h,
    collect_dt: ucx::ucp_datatype_t,
    sink_dt: ucx::ucp_datatype_t,
    stream_dt: ucx::ucp_datatype_t,
    pub(crate) failures: Arc<FailureLog>,
    /// Set when a contiguous receive took a custom-typed message (see [`contiguous_recv_done`]).
    custom_alert: Arc<AtomicBool>,
    /// Sinks of finished small contiguous receives, for reuse (boxed: a sink in use is handed
    /// to UCX, so it lives in a box that a receive's target owns, and the box is what is reused).
    #[allow(clippy::vec_box)]
    spare_sinks: RefCell<Vec<Box<Sink>>>,
    /// Buffers of [`LEAD_MAX`] bytes that custom-typed leads were sent from or received into,
    /// for reuse (a window of messages would otherwise allocate and free one per message).
    spare_leads: RefCell<Vec<Vec<u8>>>,
    peer_errors: bool,
    /// The token of the custom operation whose requests are being posted (see
    /// [`Worker::mark_requests`]).
    notify: Cell<Option<usize>>,
}

// SAFETY: the worker is created in UCS_THREAD_MODE_SERIALIZED and every use goes through the
// engine's mutex, so UCX never sees two threads at once.
unsafe impl Send for Worker {}

/// Settings applied to the UCX configuration unless the user set them in the environment.
const UCX_DEFAULTS: &[(&str, &str)] = &[
    // Dead peers are noticed within seconds instead of the default 20 s.
    ("KEEPALIVE_INTERVAL", "1s"),
];

/// Transport settings, which UCX reads from the environment only (when it opens a transport;
/// `ucp_config_modify` does not reach them): set in this process's environment before UCX
/// starts, unless the user set them.
const TRANSPORT_DEFAULTS: &[(&str, &str)] = &[
    // tcp sends a custom-typed message's body (a generic datatype, packed into UCX's send
    // buffers) in segments of this size: 8 KiB (UCX's default) caps it at 2.3 GB/s on
    // loopback, 64 KiB reaches 5.3-5.6 GB/s, past the contiguous path (bench/wire-options.sh).
    ("UCX_TCP_TX_SEG_SIZE", "64K"),
    // Messages up to 64 KiB go eagerly (UCX's default switches to rendezvous at 8 KiB, one
    // more round trip before any data moves): DDTBench's geometric mean against Open MPI's
    // derived datatypes went from 1.14 to 1.21, struct-vec of 8-16 KiB from 3.7-5.8 to
    // 4.7-6.7 GB/s. A receiver holds at most 64 KiB of an unexpected message's data.
    ("UCX_RNDV_THRESH", "65536"),
    // Shared memory moves a message in FIFO segments of this size (8 KiB by default): a
    // custom-typed body (packed straight into them) then costs a quarter of the per-segment
    // work. double-vec of 1-4 MiB 5.3-5.5 -> 5.9-6.2 GB/s, struct-vec of 128 KiB-1 MiB
    // latency -5-15%; contiguous eager messages of 16-32 KiB lose 1-4% of latency (one fewer
    // segment to overlap). UCX's receive pool grows by 512 segments at a time (8 MiB instead of
    // 4 MiB); segments over 64 KiB are not an option (a custom body then hangs in UCX 1.13).
    ("UCX_POSIX_SEG_SIZE", "16448"),
    ("UCX_SYSV_SEG_SIZE", "16448"),
];

impl Worker {
    /// Creates the UCP context (tag feature) and a serialized worker.
    pub(crate) fn new(peer_errors: bool) -> Result<Worker> {
        for (name, value) in TRANSPORT_DEFAULTS {
            if std::env::var_os(name).is_none() {
                // Before any UCX thread exists; like every MPI library, init is expected
                // before the application starts threads that read the environment.
                std::env::set_var(name, value);
            }
        }
        let mut config: *mut ucx::ucp_config_t = ptr::null_mut();
        // SAFETY: null prefix/filename mean "UCX_ prefix, no file"; config is an out pointer.
        check(
            unsafe { ucx::ucp_config_read(ptr::null(), ptr::null(), &mut config) },
            "ucp_config_read",
        )?;
        if peer_errors {
            for (name, value) in UCX_DEFAULTS {
                if std::env::var_os(format!("UCX_{name}")).is_none() {
                    let (n, v) = (
                        CString::new(*name).unwrap_or_default(),
                        CString::new(*value).unwrap_or_default(),
                    );
                    // SAFETY: config is valid; n and v are NUL-terminated. A knob this UCX
                    // build does not know is ignored.
                    let _ = unsafe { ucx::ucp_config_modify(config, n.as_ptr(), v.as_ptr()) };
                }
            }
        }
        // SAFETY: all-zero is a valid ucp_params_t with no fields selected.
        let mut params: ucx::ucp_params_t = unsafe { std::mem::zeroed() };
        params.field_mask =
            (ucx::UCP_PARAM_FIELD_FEATURES | ucx::UCP_PARAM_FIELD_MT_WORKERS_SHARED) as u64;
        params.features = ucx::UCP_FEATURE_TAG as u64;
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
            failures: Arc::default(),
            custom_alert: Arc::default(),
            spare_sinks: RefCell::default(),
            spare_leads: RefCell::default(),
            peer_errors,
            notify: Cell::default(),
        };
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

    /// Connects to a peer worker. With `detect_failure` (and peer errors enabled), UCX reports
    /// `rank` through [`Worker::failures`] if it dies.
    pub(crate) fn connect(
        &self,
        address: &[u8],
        rank: u32,
        detect_failure: bool,
    ) -> Result<Endpoint> {
        let error_ctx = Box::new(ErrorContext {
            rank,
            log: Arc::clone(&self.failures),
        });
        // SAFETY: all-zero is a valid ucp_ep_params_t.
        let mut params: ucx::ucp_ep_params_t = unsafe { std::mem::zeroed() };
        params.field_mask = ucx::UCP_EP_PARAM_FIELD_REMOTE_ADDRESS as u64;
        params.address = address.as_ptr() as *const ucx::ucp_address_t;
        if self.peer_errors && detect_failure {
            params.field_mask |= (ucx::UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                | ucx::UCP_EP_PARAM_FIELD_ERR_HANDLER) as u64;
            params.err_mode = ucx::UCP_ERR_HANDLING_MODE_PEER;
            params.err_handler.cb = Some(endpoint_error);
            params.err_handler.arg = &*error_ctx as *const ErrorContext as *mut c_void;
        }
        let mut ep: ucx::ucp_ep_h = ptr::null_mut();
        // SAFETY: worker is live, address points to a worker address blob that UCX copies during
        // the call, the error context outlives the endpoint (owned by it).
        check(
            unsafe { ucx::ucp_ep_create(self.worker, &params, &mut ep) },
            "ucp_ep_create",
        )?;
        Ok(Endpoint {
            ep,
            _error_ctx: error_ctx,
        })
    }

    /// Progresses the worker once; true if something happened.
    pub(crate) fn progress(&self) -> bool {
        // SAFETY: worker is live and used from one thread at a time.
        unsafe { ucx::ucp_worker_progress(self.worker) != 0 }
    }

    fn request_params(flags: u32) -> ucx::ucp_request_param_t {
        // SAFETY: all-zero is a valid ucp_request_param_t with no fields selected.
        let mut p: ucx::ucp_request_param_t = unsafe { std::mem::zeroed() };
        p.op_attr_mask = flags;
        p
    }

    /// Parameters of a send: with [`notices::send_done`] as its callback when it is posted for
    /// a custom operation (see [`Worker::mark_requests`]).
    fn send_params(&self, flags: u32) -> ucx::ucp_request_param_t {
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
    fn recv_params(&self, flags: u32) -> ucx::ucp_request_param_t {
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

    /// Starts a tag send of `len` bytes at `buf`. `Ok(None)` means it completed at once.
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and unchanged until the returned request completes.
    pub(crate) unsafe fn tag_send(
        &self,
        ep: &Endpoint,
        buf: *const u8,
        len: usize,
        tag: u64,
        synchronous: bool,
    ) -> Result<Option<UcxRequest>> {
        let params = self.send_params(0);
        // SAFETY: the caller keeps the buffer alive; ep belongs to this worker.
        let ptr = unsafe {
            if synchronous {
                ucx::ucp_tag_send_sync_nbx(ep.ep, buf as *const c_void, len, tag, &params)
            } else {
                ucx::ucp_tag_send_nbx(ep.ep, buf as *const c_void, len, tag, &params)
            }
        };
        UcxRequest::from_status_ptr(ptr)
    }

    /// Posts a tag receive of at most `len` bytes into `buf`, always returning a request.
    /// (Immediate completion with `UCP_OP_ATTR_FIELD_RECV_INFO` was tried: UCX 1.13 then
    /// reported an empty sender tag, so every receive is polled.)
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and otherwise untouched until the request completes.
    pub(crate) unsafe fn tag_recv(
        &self,
        buf: *mut u8,
        len: usize,
        m: TagMatch,
    ) -> Result<UcxRequest> {
        let params = self.recv_params(ucx::UCP_OP_ATTR_FLAG_NO_IMM_CMPL);
        // SAFETY: the caller keeps the buffer alive and exclusive.
        let ptr = unsafe {
            ucx::ucp_tag_recv_nbx(self.worker, buf as *mut c_void, len, m.tag, m.mask, &params)
        };
        UcxRequest::from_status_ptr(ptr)?
            .ok_or_else(|| Error::Transport("receive completed without a request".into()))
    }

    /// Posts a user's contiguous receive of at most `len` bytes into `buf`, matching both
    /// kinds of user message, and returns the request with the [`RecvTarget`] that must be kept
    /// (unmoved or boxed, as it is) until the request completes.
    ///
    /// A buffer of at least [`LEAD_MAX`] bytes is received into directly (UCX's zero-copy
    /// rendezvous stays possible); a custom-typed lead always fits in it whole. A shorter buffer
    /// is received through a sink (a generic datatype, which costs no extra copy) that accepts a
    /// message of any length: the first `len` bytes land in the buffer, the rest are counted
    /// and dropped, and the first [`HEADER_BYTES`] are also kept aside. Either way, when the
    /// message turns out to be a custom-typed lead, [`RecvTarget::lead_header`] has its
    /// header, which tells which private messages must be drained for its sender to complete.
    /// (UCX itself would report a truncation and nothing else: the header would be lost.)
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and otherwise untouched until the request completes.
    pub(crate) unsafe fn tag_recv_contiguous(
        &self,
        buf: *mut u8,
        len: usize,
        m: TagMatch,
    ) -> Result<(UcxRequest, RecvTarget)> {
        let mut params = Self::request_params(
            ucx::UCP_OP_ATTR_FLAG_NO_IMM_CMPL
                | ucx::UCP_OP_ATTR_FIELD_CALLBACK
                | ucx::UCP_OP_ATTR_FIELD_USER_DATA,
        );
        params.cb.recv = Some(contiguous_recv_done);
        params.user_data = Arc::as_ptr(&self.custom_alert) as *mut c_void;
        let mut target = RecvTarget {
            buf,
            len,
            sink: None,
        };
        let ptr = if len >= LEAD_MAX {
            // SAFETY: the caller keeps the buffer alive and exclusive.
            unsafe {
                ucx::ucp_tag_recv_nbx(self.worker, buf as *mut c_void, len, m.tag, m.mask, &params)
            }
        } else {
            let mut sink = self.spare_sinks.borrow_mut().pop().unwrap_or_default();
            *sink = Sink {
                buf,
                capacity: len,
                ..Sink::default()
            };
            params.op_attr_mask |= ucx::UCP_OP_ATTR_FIELD_DATATYPE;
            params.datatype = self.sink_dt;
            let at: *mut Sink = &mut *sink;
            target.sink = Some(sink);
            // SAFETY: for a generic datatype the buffer is handed to start_unpack, which treats
            // it as the Sink; the sink is boxed in the target, which the caller keeps until the
            // request completes, and it writes only within the caller's buffer.
            unsafe {
                ucx::ucp_tag_recv_nbx(self.worker, at as *mut c_void, 1, m.tag, m.mask, &params)
            }
        };
        let req = UcxRequest::from_status_ptr(ptr)?
            .ok_or_else(|| Error::Transport("receive completed without a request".into()))?;
        Ok((req, target))
    }

    /// A target for a receive that is not posted through [`Worker::tag_recv_contiguous`] (a
    /// matched contiguous message, received straight into `buf`).
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid until the receive that writes there is reported
    /// complete ([`RecvTarget::lead_header`] may read it after UCX finished).
    pub(crate) unsafe fn direct_target(buf: *mut u8, len: usize) -> RecvTarget {
        RecvTarget {
            buf,
            len,
            sink: None,
        }
    }

    /// Takes the custom alert: true if some contiguous receive took a custom-typed lead since
    /// the last call.
    pub(crate) fn take_custom_alert(&self) -> bool {
        self.custom_alert.load(Ordering::Acquire) && self.custom_alert.swap(false, Ordering::AcqRel)
    }

    /// Gives a finished receive's sink back for reuse.
    pub(crate) fn recycle(&self, target: &mut RecvTarget) {
        if let Some(sink) = target.sink.take() {
            let mut spare = self.spare_sinks.borrow_mut();
            if spare.len() < MAX_SPARE_SINKS {
                spare.push(sink);
            }
        }
    }

    /// An empty buffer with room for a whole lead ([`LEAD_MAX`] bytes), reused if one is spare.
    pub(crate) fn lead_buffer(&self) -> Vec<u8> {
        self.spare_leads
            .borrow_mut()
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(LEAD_MAX))
    }

    /// Keeps a lead buffer for reuse (at most [`MAX_SPARE_LEADS`] of them).
    pub(crate) fn recycle_lead(&self, mut buffer: Vec<u8>) {
        let mut spare = self.spare_leads.borrow_mut();
        if buffer.capacity() >= LEAD_MAX && spare.len() < MAX_SPARE_LEADS {
            buffer.clear();
            spare.push(buffer);
        }
    }

    /// Starts a tag send of a message whose bytes `port`'s end produces as UCX asks for them
    /// (a generic datatype: UCX calls [`StreamEnd::pack`] for each of its fragments, in order,
    /// straight into its transport buffers). `Ok(None)` means it completed at once.
    ///
    /// # Safety
    /// `port` and the end it points to must stay valid, and not otherwise borrowed while UCX
    /// runs, until the request completes.
    pub(crate) unsafe fn tag_send_stream(
        &self,
        ep: &Endpoint,
        port: *mut StreamPort,
        tag: u64,
    ) -> Result<Option<UcxRequest>> {
        let mut params = self.send_params(ucx::UCP_OP_ATTR_FIELD_DATATYPE);
        params.datatype = self.stream_dt;
        // SAFETY: for a generic datatype the buffer is handed to start_pack, which treats it
        // as the StreamPort the caller keeps alive.
        let ptr = unsafe { ucx::ucp_tag_send_nbx(ep.ep, port as *const c_void, 1, tag, &params) };
        UcxRequest::from_status_ptr(ptr)
    }

    /// Posts a tag receive of a message whose bytes go to `port`'s end as they arrive
    /// ([`StreamEnd::unpack`], in order on one UCX lane); a message longer than the end's
    /// length fails as truncated. Always returns a request.
    ///
    /// # Safety
    /// As for [`Worker::tag_send_stream`].
    pub(crate) unsafe fn tag_recv_stream(
        &self,
        port: *mut StreamPort,
        m: TagMatch,
    ) -> Result<UcxRequest> {
        // SAFETY: the stream datatype's start_unpack treats the buffer as the StreamPort the
        // caller keeps alive.
        unsafe { self.tag_recv_generic(port as *mut c_void, self.stream_dt, m) }
    }

    /// Posts a tag receive whose bytes are appended to `sink` as they arrive, whatever their
    /// number (up to `limit`): used for the lead message of a custom-typed message and, with a
    /// limit of zero bytes kept, to drain messages nobody wants.
    ///
    /// # Safety
    /// `sink` must stay valid and untouched until the request completes.
    pub(crate) unsafe fn tag_recv_collect(
        &self,
        sink: *mut Collector,
        m: TagMatch,
    ) -> Result<UcxRequest> {
        // SAFETY: the collect datatype's start_unpack treats the buffer as the Collector the
        // caller keeps alive.
        unsafe { self.tag_recv_generic(sink as *mut c_void, self.collect_dt, m) }
    }

    /// Posts a tag receive through one of our generic datatypes, whose callbacks get `buffer`.
    /// Always returns a request.
    ///
    /// # Safety
    /// `buffer` must be what `datatype`'s callbacks expect, valid until the request completes.
    unsafe fn tag_recv_generic(
        &self,
        buffer: *mut c_void,
        datatype: ucx::ucp_datatype_t,
        m: TagMatch,
    ) -> Result<UcxRequest> {
        let mut params =
            self.recv_params(ucx::UCP_OP_ATTR_FLAG_NO_IMM_CMPL | ucx::UCP_OP_ATTR_FIELD_DATATYPE);
        params.datatype = datatype;
        // SAFETY: for a generic datatype the buffer is handed to its start_unpack (the caller's
        // promise); the worker is live.
        let ptr = unsafe { ucx::ucp_tag_recv_nbx(self.worker, buffer, 1, m.tag, m.mask, &params) };
        UcxRequest::from_status_ptr(ptr)?
            .ok_or_else(|| Error::Transport("receive completed without a request".into()))
    }

    /// Looks for an unexpected message; with `remove`, takes it out of the matching queue and
    /// returns its handle for [`Worker::msg_recv`].
    pub(crate) fn probe(
        &self,
        m: TagMatch,
        remove: bool,
    ) -> Option<(RecvInfo, Option<MessageHandle>)> {
        // SAFETY: all-zero is a valid info out-structure.
        let mut info: ucx::ucp_tag_recv_info_t = unsafe { std::mem::zeroed() };
        // SAFETY: worker is live; info is an out pointer.
        let msg =
            unsafe { ucx::ucp_tag_probe_nb(self.worker, m.tag, m.mask, remove as i32, &mut info) };
        if msg.is_null() {
            return None;
        }
        let info = RecvInfo {
            sender_tag: info.sender_tag,
            length: info.length,
        };
        Some((info, remove.then_some(MessageHandle(msg))))
    }

    /// Receives a message taken by [`Worker::probe`] into `buf`.
    ///
    /// # Safety
    /// As for [`Worker::tag_recv`].
    pub(crate) unsafe fn msg_recv(
        &self,
        buf: *mut u8,
        len: usize,
        msg: MessageHandle,
    ) -> Result<UcxRequest> {
        let params = self.recv_params(ucx::UCP_OP_ATTR_FLAG_NO_IMM_CMPL);
        // SAFETY: msg came from a removing probe on this worker and is consumed here once.
        let ptr = unsafe {
            ucx::ucp_tag_msg_recv_nbx(self.worker, buf as *mut c_void, len, msg.0, &params)
        };
        UcxRequest::from_status_ptr(ptr)?
            .ok_or_else(|| Error::Transport("receive completed without a request".into()))
    }

    /// Receives a probed message through a [`Collector`].
    ///
    /// # Safety
    /// As for [`Worker::tag_recv_collect`].
    pub(crate) unsafe fn msg_recv_collect(
        &self,
        sink: *mut Collector,
        msg: MessageHandle,
    ) -> Result<UcxRequest> {
        let mut params =
            self.recv_params(ucx::UCP_OP_ATTR_FLAG_NO_IMM_CMPL | ucx::UCP_OP_ATTR_FIELD_DATATYPE);
        params.datatype = self.collect_dt;
        // SAFETY: as in tag_recv_collect; msg is consumed here once.
        let ptr = unsafe {
            ucx::ucp_tag_msg_recv_nbx(self.worker, sink as *mut c_void, 1, msg.0, &params)
        };
        UcxRequest::from_status_ptr(ptr)?
            .ok_or_else(|| Error::Transport("receive completed without a request".into()))
    }

    /// True while a request is in flight (a cheap check that releases nothing).
    pub(crate) fn is_pending(&self, req: &UcxRequest) -> bool {
        // SAFETY: req is a live request of this worker.
        unsafe { ucx::ucp_request_check_status(req.0.as_ptr()) == ucx::UCS_INPROGRESS }
    }

    /// Tests a send request: pending, or its outcome. The request is released on completion.
    pub(crate) fn poll_send(&self, req: &mut Option<UcxRequest>) -> Poll<Result<()>> {
        let Some(r) = req else {
            return Poll::Ready(Ok(()));
        };
        // SAFETY: r is a live request of this worker.
        let status = unsafe { ucx::ucp_request_check_status(r.0.as_ptr()) };
        if status == ucx::UCS_INPROGRESS {
            return Poll::Pending;
        }
        *req = None; // releases the request
        Poll::Ready(if status == ucx::UCS_OK {
            Ok(())
        } else {
            Err(status_error(status))
        })
    }

    /// Tests a receive request: pending, or what arrived. The request is released on completion.
    pub(crate) fn poll_recv(&self, req: &mut Option<UcxRequest>) -> Poll<Result<RecvInfo>> {
        let Some(r) = req else {
            return Poll::Ready(Err(Error::InvalidRequest));
        };
        // SAFETY: all-zero is a valid info out-structure; r is a live receive request.
        let mut info: ucx::ucp_tag_recv_info_t = unsafe { std::mem::zeroed() };
        let status = unsafe { ucx::ucp_tag_recv_request_test(r.0.as_ptr(), &mut info) };
        if status == ucx::UCS_INPROGRESS {
            return Poll::Pending;
        }
        *req = None;
        Poll::Ready(if status == ucx::UCS_OK {
            Ok(RecvInfo {
                sender_tag: info.sender_tag,
                length: info.length,
            })
        } else {
            Err(status_error(status))
        })
    }

    /// Asks UCX to cancel a pending request; it then completes with `Cancelled` (or normally, if
    /// it had already matched).
    pub(crate) fn cancel(&self, req: &UcxRequest) {
        // SAFETY: req is a live request of this worker.
        unsafe { ucx::ucp_request_cancel(self.worker, req.0.as_ptr()) }
    }

    /// Closes an endpoint, flushing what is in flight; gives up (forcing the close) after
    /// `timeout`.
    pub(crate) fn close(&self, ep: Endpoint, timeout: std::time::Duration) {
        let params = Self::request_params(0);
        // SAFETY: ep is a live endpoint of this worker, consumed here.
        let ptr = unsafe { ucx::ucp_ep_close_nbx(ep.ep, &params) };
        let Ok(Some(req)) = UcxRequest::from_status_ptr(ptr) else {
            return;
        };
        let deadline = std::time::Instant::now() + timeout;
        let mut req = Some(req);
        while self.poll_send(&mut req).is_pending() {
            if std::time::Instant::now() > deadline {
                if let Some(r) = &req {
                    self.cancel(r);
                }
                break;
            }
            self.progress();
        }
        drop(ep);
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
            ucx::ucp_cleanup(self.context);
        }
    }
}

/// A connection to one peer worker.
pub(crate) struct Endpoint {
    ep: ucx::ucp_ep_h,
    _error_ctx: Box<ErrorContext>,
}

// SAFETY: used only under the engine's mutex, like the worker.
unsafe impl Send for Endpoint {}

/// A message taken out of UCX's matching queue by a removing probe, waiting to be received.
#[derive(Debug)]
pub(crate) struct MessageHandle(ucx::ucp_tag_message_h);

// SAFETY: used only under the engine's mutex.
unsafe impl Send for MessageHandle {}

/// A UCX request still in flight. Released (`ucp_request_free`) when dropped; the engine only
/// drops it after completion, or after cancelling it and seeing it complete.
#[derive(Debug)]
pub(crate) struct UcxRequest(NonNull<c_void>);

// SAFETY: used only under the engine's mutex.
unsafe impl Send for UcxRequest {}

impl UcxRequest {
    fn from_status_ptr(ptr: ucx::ucs_status_ptr_t) -> Result<Option<UcxRequest>> {
        // SAFETY: the shim functions only inspect the pointer value.
        unsafe {
            if ucx::mpicd_ucs_ptr_is_err(ptr) != 0 {
                return Err(status_error(ucx::mpicd_ucs_ptr_status(ptr)));
            }
        }
        Ok(NonNull::new(ptr).map(UcxRequest))
    }
}

impl Drop for UcxRequest {
    fn drop(&mut self) {
        // SAFETY: the request came from a UCX nbx call and is released exactly once.
        unsafe { ucx::ucp_request_free(self.0.as_ptr()) }
    }
}

/// Where a generic-datatype receive puts its bytes: appended to `bytes` (up to `keep` bytes;
/// anything beyond is counted but dropped, which is how unwanted messages are drained).
#[derive(Debug, Default)]
pub(crate) struct Collector {
    pub bytes: Vec<u8>,
    pub keep: usize,
    pub received: usize,
}

unsafe extern "C" fn collect_start_pack(
    _ctx: *mut c_void,
    _buf: *const c_void,
    _count: usize,
) -> *mut c_void {
    // The collector type is receive-only; UCX never packs with it.
    ptr::null_mut()
}

unsafe extern "C" fn collect_start_unpack(
    _ctx: *mut c_void,
    buf: *mut c_void,
    _count: usize,
) -> *mut c_void {
    buf
}

unsafe extern "C" fn collect_packed_size(_state: *mut c_void) -> usize {
    // A receive through the collector accepts a message of any size.
    usize::MAX / 2
}

unsafe extern "C" fn collect_pack(_s: *mut c_void, _o: usize, _d: *mut c_void, _m: usize) -> usize {
    0
}

unsafe extern "C" fn collect_unpack(
    state: *mut c_void,
    offset: usize,
    src: *const c_void,
    len: usize,
) -> ucx::ucs_status_t {
    // SAFETY: state is the Collector passed as the receive buffer, alive and exclusive until the
    // request completes; src holds `len` readable bytes for the duration of the call.
    let c = unsafe { &mut *(state as *mut Collector) };
    c.received = c.received.max(offset + len);
    let end = (offset + len).min(c.keep);
    if offset < end {
        if c.bytes.len() < end {
            c.bytes.resize(end, 0);
        }
        let src = unsafe { std::slice::from_raw_parts(src as *const u8, end - offset) };
        c.bytes[offset..end].copy_from_slice(src);
    }
    ucx::UCS_OK
}

unsafe extern "C" fn collect_finish(_state: *mut c_void) {}

static COLLECT_OPS: ucx::ucp_generic_dt_ops_t = ucx::ucp_generic_dt_ops_t {
    start_pack: Some(collect_start_pack),
    start_unpack: Some(collect_start_unpack),
    packed_size: Some(collect_packed_size),
    pack: Some(collect_pack),
    unpack: Some(collect_unpack),
    finish: Some(collect_finish),
};

/// Finished sinks kept for reuse (more receives in flight just allocate).
const MAX_SPARE_SINKS: usize = 64;
/// Lead buffers kept for reuse (512 KiB at most; more messages in flight just allocate).
const MAX_SPARE_LEADS: usize = 64;

/// The memory a user's contiguous receive writes to (see [`Worker::tag_recv_contiguous`]).
pub(crate) struct RecvTarget {
    buf: *mut u8,
    len: usize,
    sink: Option<Box<Sink>>,
}

// SAFETY: used only under the engine's mutex; the buffer belongs to the receive's caller, who
// keeps it valid until the receive completes.
unsafe impl Send for RecvTarget {}

impl RecvTarget {
    /// The header of the custom-typed lead that a completed receive took, if it holds one
    /// (`length` is the message length the completion reported).
    pub(crate) fn lead_header(&self, length: usize) -> Option<[u8; HEADER_BYTES]> {
        if length < HEADER_BYTES {
            return None;
        }
        if let Some(sink) = &self.sink {
            return Some(sink.head);
        }
        if self.len < HEADER_BYTES || self.buf.is_null() {
            return None;
        }
        let mut head = [0u8; HEADER_BYTES];
        // SAFETY: the receive completed successfully with `length >= HEADER_BYTES` bytes, so
        // UCX wrote at least that many into the buffer, which its caller keeps valid until the
        // receive is reported complete (which has not happened yet); `len >= HEADER_BYTES`.
        let src = unsafe { std::slice::from_raw_parts(self.buf as *const u8, HEADER_BYTES) };
        head.copy_from_slice(src);
        Some(head)
    }
}

/// The receive buffer of a small contiguous receive, as a generic datatype sees it.
struct Sink {
    buf: *mut u8,
    capacity: usize,
    /// The first bytes of the message, whatever the buffer's size.
    head: [u8; HEADER_BYTES],
}

impl Default for Sink {
    fn default() -> Self {
        Sink {
            buf: ptr::null_mut(),
            capacity: 0,
            head: [0; HEADER_BYTES],
        }
    }
}

unsafe extern "C" fn sink_start_unpack(
    _ctx: *mut c_void,
    buf: *mut c_void,
    _count: usize,
) -> *mut c_void {
    buf
}

unsafe extern "C" fn sink_unpack(
    state: *mut c_void,
    offset: usize,
    src: *const c_void,
    len: usize,
) -> ucx::ucs_status_t {
    // SAFETY: state is the Sink passed as the receive buffer, alive and exclusive until the
    // request completes; src holds `len` readable bytes for the duration of the call.
    let sink = unsafe { &mut *(state as *mut Sink) };
    let src = unsafe { std::slice::from_raw_parts(src as *const u8, len) };
    let end = offset.saturating_add(len);
    if offset < HEADER_BYTES {
        let n = end.min(HEADER_BYTES) - offset;
        sink.head[offset..offset + n].copy_from_slice(&src[..n]);
    }
    if offset < sink.capacity {
        let n = end.min(sink.capacity) - offset;
        // SAFETY: offset + n <= capacity, and the buffer holds `capacity` writable bytes that
        // the receive's caller keeps valid and untouched until the request completes.
        unsafe { ptr::copy_nonoverlapping(src.as_ptr(), sink.buf.add(offset), n) };
    }
    ucx::UCS_OK
}

static SINK_OPS: ucx::ucp_generic_dt_ops_t = ucx::ucp_generic_dt_ops_t {
    start_pack: Some(collect_start_pack),
    start_unpack: Some(sink_start_unpack),
    // A receive through the sink accepts a message of any size: UCX never truncates it.
    packed_size: Some(collect_packed_size),
    pack: Some(collect_pack),
    unpack: Some(sink_unpack),
    finish: Some(collect_finish),
};

/// One end of a message that UCX packs or unpacks through callbacks (see
/// [`Worker::tag_send_stream`]). The callbacks cannot fail towards UCX: an end records its own
/// errors (and a panic in it is caught and reported through [`StreamEnd::poisoned`]).
pub(crate) trait StreamEnd {
    /// Bytes of the message.
    fn length(&self) -> usize;
    /// Writes the message's bytes from `offset` into all of `dst` (send side).
    fn pack(&mut self, offset: usize, dst: &mut [u8]);
    /// Takes the message's bytes from `offset` (receive side).
    fn unpack(&mut self, offset: usize, src: &[u8]);
    /// A callback of this end panicked.
    fn poisoned(&mut self);
}

/// What UCX holds of a stream end: a thin pointer to this struct, which points to the end.
/// Boxed by its owner, which keeps both until the request completes.
pub(crate) struct StreamPort(pub *mut dyn StreamEnd);

// SAFETY: used only under the engine's mutex, like the worker.
unsafe impl Send for StreamPort {}

impl StreamPort {
    /// Points a port at an end that packs zeros and drops what it unpacks, so that a request
    /// whose real end is gone (stranded with a dead peer) can never reach freed memory.
    pub(crate) fn detach(mut port: Box<StreamPort>, length: usize) -> DetachedPort {
        let mut end = Box::new(NullEnd(length));
        port.0 = &mut *end as *mut NullEnd as *mut dyn StreamEnd;
        DetachedPort {
            _port: port,
            _end: end,
        }
    }
}

/// A port and the [`NullEnd`] it points to, kept together (see [`StreamPort::detach`]).
pub(crate) struct DetachedPort {
    _port: Box<StreamPort>,
    _end: Box<NullEnd>,
}

/// An end without data: zeros out, nothing in.
pub(crate) struct NullEnd(usize);

impl StreamEnd for NullEnd {
    fn length(&self) -> usize {
        self.0
    }
    fn pack(&mut self, _offset: usize, dst: &mut [u8]) {
        dst.fill(0);
    }
    fn unpack(&mut self, _offset: usize, _src: &[u8]) {}
    fn poisoned(&mut self) {}
}

/// The end behind a port that UCX handed back.
///
/// # Safety
/// `state` must be a `StreamPort` pointer given to a stream send or receive still in flight.
unsafe fn stream_end<'a>(state: *mut c_void) -> &'a mut dyn StreamEnd {
    // SAFETY: as the caller promises; the port's owner keeps the end alive and unborrowed while
    // UCX runs.
    unsafe { &mut *(*(state as *mut StreamPort)).0 }
}

unsafe extern "C" fn stream_start(
    _ctx: *mut c_void,
    buffer: *const c_void,
    _count: usize,
) -> *mut c_void {
    buffer as *mut c_void
}

unsafe extern "C" fn stream_start_unpack(
    _ctx: *mut c_void,
    buffer: *mut c_void,
    _count: usize,
) -> *mut c_void {
    buffer
}

unsafe extern "C" fn stream_packed_size(state: *mut c_void) -> usize {
    // SAFETY: state is the port given to tag_send_stream/tag_recv_stream.
    let end = unsafe { stream_end(state) };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| end.length())).unwrap_or(0)
}

unsafe extern "C" fn stream_pack(
    state: *mut c_void,
    offset: usize,
    dest: *mut c_void,
    max_length: usize,
) -> usize {
    // SAFETY: state is the port given to tag_send_stream.
    let end = unsafe { stream_end(state) };
    let n = max_length.min(end.length().saturating_sub(offset));
    if n == 0 {
        return 0;
    }
    // SAFETY: UCX hands a writable destination of max_length >= n bytes.
    let dst = unsafe { std::slice::from_raw_parts_mut(dest as *mut u8, n) };
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| end.pack(offset, dst))).is_err() {
        end.poisoned();
    }
    n
}

unsafe extern "C" fn stream_unpack(
    state: *mut c_void,
    offset: usize,
    src: *const c_void,
    length: usize,
) -> ucx::ucs_status_t {
    // SAFETY: state is the port given to tag_recv_stream.
    let end = unsafe { stream_end(state) };
    if length > 0 {
        // SAFETY: UCX hands `length` readable bytes.
        let src = unsafe { std::slice::from_raw_parts(src as *const u8, length) };
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| end.unpack(offset, src)))
            .is_err()
        {
            end.poisoned();
        }
    }
    ucx::UCS_OK
}

unsafe extern "C" fn stream_finish(_state: *mut c_void) {}

static STREAM_OPS: ucx::ucp_generic_dt_ops_t = ucx::ucp_generic_dt_ops_t {
    start_pack: Some(stream_start),
    start_unpack: Some(stream_start_unpack),
    packed_size: Some(stream_packed_size),
    pack: Some(stream_pack),
    unpack: Some(stream_unpack),
    finish: Some(stream_finish),
};

#[cfg(test)]
mod tests {
    use super::*;

    /// An end that records what it is given.
    struct Echo(Vec<u8>);

    impl StreamEnd for Echo {
        fn length(&self) -> usize {
            self.0.len()
        }
        fn pack(&mut self, offset: usize, dst: &mut [u8]) {
            dst.copy_from_slice(&self.0[offset..offset + dst.len()]);
        }
        fn unpack(&mut self, offset: usize, src: &[u8]) {
            self.0[offset..offset + src.len()].copy_from_slice(src);
        }
        fn poisoned(&mut self) {}
    }

    #[test]
    fn stream_callbacks_reach_the_end_and_a_detached_port_gives_zeros() {
        let mut end = Echo(vec![1, 2, 3, 4, 5]);
        let mut port = Box::new(StreamPort(&mut end as *mut Echo as *mut dyn StreamEnd));
        let state = &mut *port as *mut StreamPort as *mut c_void;
        let mut out = [0u8; 8];
        // SAFETY: `state` is a live port; `out` has room for what is asked.
        unsafe {
            assert_eq!(stream_packed_size(state), 5);
            // UCX may offer more room than is left: only the rest is packed.
            assert_eq!(stream_pack(state, 3, out.as_mut_ptr() as *mut c_void, 8), 2);
            assert_eq!(&out[..2], &[4, 5]);
            let src = [9u8, 8];
            assert_eq!(
                stream_unpack(state, 1, src.as_ptr() as *const c_void, 2),
                ucx::UCS_OK
            );
        }
        assert_eq!(end.0, vec![1, 9, 8, 4, 5]);
        let detached = StreamPort::detach(port, 3);
        let state = &*detached._port as *const StreamPort as *mut c_void;
        // SAFETY: the detached port points to its own end.
        unsafe {
            assert_eq!(stream_packed_size(state), 3);
            assert_eq!(stream_pack(state, 0, out.as_mut_ptr() as *mut c_void, 8), 3);
        }
        assert_eq!(&out[..3], &[0, 0, 0]);
    }
}
