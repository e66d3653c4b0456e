//! Messages whose bytes UCX packs and unpacks through callbacks, fragment by fragment, straight
//! into and out of its transport buffers: the [`StreamEnd`] trait that the layer above
//! implements, the [`StreamPort`] UCX holds, and the stream datatype's operations (posted by
//! [`super::Worker::tag_send_stream`] and [`super::Worker::tag_recv_stream`]). What the bytes
//! mean is the end's business.

use mpicd_ucx_sys as ucx;
use std::ffi::c_void;

/// One end of a message that UCX packs or unpacks through callbacks (see
/// [`super::Worker::tag_send_stream`]). The callbacks cannot fail towards UCX: an end records
/// its own errors (and a panic in it is caught and reported through [`StreamEnd::poisoned`]).
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

/// A stream end and the port UCX holds for it, owned together by the operation that posted
/// them (see [`OwnedPort::detach`] for one whose request may outlive it).
pub(crate) struct OwnedPort {
    // The port first: it points into the end.
    port: Box<StreamPort>,
    end: Box<dyn StreamEnd + Send>,
}

impl OwnedPort {
    pub(crate) fn new(mut end: Box<dyn StreamEnd + Send>) -> OwnedPort {
        let at: *mut (dyn StreamEnd + Send) = &mut *end;
        OwnedPort {
            port: Box::new(StreamPort(at as *mut dyn StreamEnd)),
            end,
        }
    }

    /// The port to hand to UCX (it stays put while `self` lives, wherever `self` moves).
    pub(crate) fn port(&mut self) -> *mut StreamPort {
        &mut *self.port
    }

    /// The port pointed at a [`NullEnd`] of the same length, for a request left in flight
    /// after its operation ended; the real end is dropped.
    pub(crate) fn detach(self) -> DetachedPort {
        let length = self.end.length();
        StreamPort::detach(self.port, length)
    }
}

/// Hands `src` (the stream's bytes from `offset`) to the end behind `port` (a sink aimed at a
/// port calls this).
///
/// # Safety
/// `port` must be a live port whose end is not otherwise borrowed.
pub(super) unsafe fn unpack_into(port: *mut StreamPort, offset: usize, src: &[u8]) {
    // SAFETY: as the caller promises.
    let end = unsafe { &mut *(*port).0 };
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| end.unpack(offset, src))).is_err() {
        end.poisoned();
    }
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

/// The operations of the stream datatype.
pub(super) static STREAM_OPS: ucx::ucp_generic_dt_ops_t = ucx::ucp_generic_dt_ops_t {
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
