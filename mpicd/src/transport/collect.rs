//! Receive buffers as UCX's generic datatypes see them (the worker keeps the spare ones).
//!
//! A [`Collector`] takes a message of any length into a growing vector (up to what it keeps),
//! which is how leads are received and unwanted messages drained. A [`Sink`] stands for a
//! user's contiguous buffer that is shorter than a lead: it takes a message of any length,
//! writes what fits into the buffer and keeps the first bytes aside, so that a custom-typed
//! lead arriving there can still be read ([`RecvTarget::lead_header`]). How many bytes that is,
//! and how large a lead buffer is, come from [`super::WorkerSettings`]: nothing here knows the
//! format of a lead.

use super::stream::{OwnedPort, StreamPort};
use mpicd_ucx_sys as ucx;
use std::ffi::c_void;
use std::ptr;

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

/// The operations of the collector datatype (see [`super::Worker::tag_recv_collect`]).
pub(super) static COLLECT_OPS: ucx::ucp_generic_dt_ops_t = ucx::ucp_generic_dt_ops_t {
    start_pack: Some(collect_start_pack),
    start_unpack: Some(collect_start_unpack),
    packed_size: Some(collect_packed_size),
    pack: Some(collect_pack),
    unpack: Some(collect_unpack),
    finish: Some(collect_finish),
};

/// The memory a user's contiguous receive writes to (see [`super::Worker::tag_recv_contiguous`]).
pub(crate) struct RecvTarget {
    buf: *mut u8,
    len: usize,
    /// Bytes at the start of the message that [`RecvTarget::lead_header`] gives.
    header: usize,
    sink: Option<Box<Sink>>,
    /// The stream end a derived-typed receive's sink hands its bytes to.
    port: Option<OwnedPort>,
}

// SAFETY: used only under the engine's mutex; the buffer belongs to the receive's caller, who
// keeps it valid until the receive completes.
unsafe impl Send for RecvTarget {}

impl RecvTarget {
    /// A target whose receive writes straight into `buf..buf+len`; `header` bytes of the
    /// message make its lead header.
    pub(super) fn direct(buf: *mut u8, len: usize, header: usize) -> RecvTarget {
        RecvTarget {
            buf,
            len,
            header,
            sink: None,
            port: None,
        }
    }

    /// A target whose receive goes through `sink`, aimed at `buf..buf+len`.
    pub(super) fn through(sink: Box<Sink>, buf: *mut u8, len: usize, header: usize) -> RecvTarget {
        RecvTarget {
            buf,
            len,
            header,
            sink: Some(sink),
            port: None,
        }
    }

    /// Keeps the port the sink hands bytes to, as long as the target.
    pub(super) fn keep(&mut self, port: OwnedPort) {
        self.port = Some(port);
    }

    /// The sink of a finished receive, for reuse.
    pub(super) fn take_sink(&mut self) -> Option<Box<Sink>> {
        self.sink.take()
    }

    /// The first [`super::WorkerSettings::header_keep`] bytes of the message a completed
    /// receive took, when it took that many and they can be had (a custom-typed lead's header);
    /// `length` is the message length the completion reported.
    pub(crate) fn lead_header(&self, length: usize) -> Option<Vec<u8>> {
        if length < self.header {
            return None;
        }
        if let Some(sink) = &self.sink {
            return Some(sink.head.clone());
        }
        if self.len < self.header || self.buf.is_null() {
            return None;
        }
        // SAFETY: the receive completed successfully with `length >= header` bytes, so UCX
        // wrote at least that many into the buffer, which its caller keeps valid until the
        // receive is reported complete (which has not happened yet); `len >= header`.
        let head = unsafe { std::slice::from_raw_parts(self.buf as *const u8, self.header) };
        Some(head.to_vec())
    }
}

/// Where a sink puts what fits.
enum Aim {
    /// `capacity` bytes at a pointer.
    Buffer(*mut u8),
    /// A stream end that places the bytes (a derived-typed receive), taking `capacity`.
    Port(*mut StreamPort),
}

/// The receive buffer of a small contiguous receive, or the stream end of a derived-typed
/// one, as a generic datatype sees it.
pub(super) struct Sink {
    aim: Aim,
    capacity: usize,
    /// The first bytes of the message, whatever the buffer's size (as many as the worker's
    /// `header_keep`).
    head: Vec<u8>,
}

impl Sink {
    /// A sink that keeps the first `header` bytes of a message.
    pub(super) fn new(header: usize) -> Sink {
        Sink {
            aim: Aim::Buffer(ptr::null_mut()),
            capacity: 0,
            head: vec![0; header],
        }
    }

    /// Points the sink at `capacity` bytes at `buf`, with nothing of a message kept yet.
    pub(super) fn aim(&mut self, buf: *mut u8, capacity: usize) {
        self.aim = Aim::Buffer(buf);
        self.capacity = capacity;
        self.head.fill(0);
    }

    /// Points the sink at the end behind `port`, which takes `capacity` bytes.
    pub(super) fn aim_port(&mut self, port: *mut StreamPort, capacity: usize) {
        self.aim = Aim::Port(port);
        self.capacity = capacity;
        self.head.fill(0);
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
    let keep = sink.head.len();
    if offset < keep {
        let n = end.min(keep) - offset;
        sink.head[offset..offset + n].copy_from_slice(&src[..n]);
    }
    if offset < sink.capacity {
        let n = end.min(sink.capacity) - offset;
        match sink.aim {
            // SAFETY: offset + n <= capacity, and the buffer holds `capacity` writable bytes
            // that the receive's caller keeps valid and untouched until the request completes.
            Aim::Buffer(buf) => unsafe {
                ptr::copy_nonoverlapping(src.as_ptr(), buf.add(offset), n)
            },
            // SAFETY: the port and its end are kept by the receive's owner until the request
            // completes (`tag_recv_through`).
            Aim::Port(port) => unsafe { super::stream::unpack_into(port, offset, &src[..n]) },
        }
    }
    ucx::UCS_OK
}

/// The operations of the sink datatype (see [`super::Worker::tag_recv_contiguous`]).
pub(super) static SINK_OPS: ucx::ucp_generic_dt_ops_t = ucx::ucp_generic_dt_ops_t {
    start_pack: Some(collect_start_pack),
    start_unpack: Some(sink_start_unpack),
    // A receive through the sink accepts a message of any size: UCX never truncates it.
    packed_size: Some(collect_packed_size),
    pack: Some(collect_pack),
    unpack: Some(sink_unpack),
    finish: Some(collect_finish),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sink_fills_what_fits_and_keeps_the_head_of_any_message() {
        let mut buf = [0u8; 3];
        let mut sink = Sink::new(4);
        sink.head.fill(9);
        sink.aim(buf.as_mut_ptr(), buf.len());
        assert_eq!(sink.head, vec![0; 4]);
        let state = &mut sink as *mut Sink as *mut c_void;
        let message: Vec<u8> = (1..=6).collect();
        // SAFETY: `state` is a live sink aimed at `buf`; the sources are readable.
        unsafe {
            assert_eq!(
                sink_unpack(state, 0, message.as_ptr() as *const c_void, 2),
                ucx::UCS_OK
            );
            sink_unpack(state, 2, message[2..].as_ptr() as *const c_void, 4);
        }
        assert_eq!(buf, [1, 2, 3]);
        assert_eq!(sink.head, vec![1, 2, 3, 4]);
        let target = RecvTarget::through(Box::new(sink), buf.as_mut_ptr(), buf.len(), 4);
        assert_eq!(target.lead_header(6), Some(vec![1, 2, 3, 4]));
        assert_eq!(target.lead_header(3), None);
    }

    #[test]
    fn a_collector_keeps_what_it_may_and_counts_the_rest() {
        let mut c = Collector {
            keep: 3,
            ..Collector::default()
        };
        let state = &mut c as *mut Collector as *mut c_void;
        let message = [5u8, 6, 7, 8];
        // SAFETY: `state` is a live collector; the source is readable.
        unsafe { collect_unpack(state, 0, message.as_ptr() as *const c_void, 4) };
        assert_eq!((c.bytes.as_slice(), c.received), (&[5u8, 6, 7][..], 4));
    }
}
