//! An in-memory [`Link`] for unit tests: requests are numbers, a send waits until
//! [`Fake::deliver`] hands it to the first matching receive (in the order both were posted),
//! streams are produced and consumed in small fragments through their [`StreamEnd`], and
//! collectors keep what UCX's collector would. Nothing here touches UCX.

use super::Link;
use crate::error::{Error, Result};
use crate::tag::TagMatch;
use crate::transport::{Collector, RecvInfo, StreamPort};
use std::cell::RefCell;
use std::collections::HashMap;
use std::task::Poll;

/// Bytes of one fragment of a stream, small enough that every stream is cut in pieces.
const FRAGMENT: usize = 1000;

/// What a send carries.
enum Source {
    Bytes(Vec<u8>),
    Stream(*mut StreamPort),
}

/// Where a receive puts what it takes.
enum Target {
    Buffer(*mut u8, usize),
    Collect(*mut Collector),
    Stream(*mut StreamPort),
}

#[derive(Default)]
struct State {
    next: u64,
    sends: Vec<(u64, u64, Source)>,
    recvs: Vec<(u64, TagMatch, Target)>,
    /// Completed requests and their outcome.
    done: HashMap<u64, Result<RecvInfo>>,
    /// Messages delivered so far.
    delivered: usize,
}

/// The in-memory transport.
#[derive(Default)]
pub(crate) struct Fake(RefCell<State>);

impl Fake {
    fn post_send(&self, tag: u64, source: Source) -> u64 {
        let mut s = self.0.borrow_mut();
        s.next += 1;
        let id = s.next;
        s.sends.push((id, tag, source));
        id
    }

    fn post_recv(&self, m: TagMatch, target: Target) -> u64 {
        let mut s = self.0.borrow_mut();
        s.next += 1;
        let id = s.next;
        s.recvs.push((id, m, target));
        id
    }

    /// Hands every send that a posted receive matches to that receive; true if any moved.
    pub(crate) fn deliver(&self) -> bool {
        let mut moved = false;
        loop {
            let pair = {
                let s = self.0.borrow();
                s.recvs.iter().enumerate().find_map(|(r, (_, m, _))| {
                    let send = s
                        .sends
                        .iter()
                        .position(|(_, tag, _)| tag & m.mask == m.tag & m.mask);
                    send.map(|x| (r, x))
                })
            };
            let Some((r, x)) = pair else { return moved };
            let (recv_id, _, target) = self.0.borrow_mut().recvs.remove(r);
            let (send_id, tag, source) = self.0.borrow_mut().sends.remove(x);
            // SAFETY: the operations keep what their requests point to until they complete,
            // which is after this call (the Link contract).
            let bytes = unsafe { produce(source) };
            let outcome = unsafe { consume(target, &bytes) }.map(|()| RecvInfo {
                sender_tag: tag,
                length: bytes.len(),
            });
            let mut s = self.0.borrow_mut();
            s.done.insert(
                send_id,
                Ok(RecvInfo {
                    sender_tag: tag,
                    length: 0,
                }),
            );
            s.done.insert(recv_id, outcome);
            s.delivered += 1;
            moved = true;
        }
    }

    /// Messages delivered so far.
    pub(crate) fn delivered(&self) -> usize {
        self.0.borrow().delivered
    }

    /// Sends and receives posted and not matched yet.
    pub(crate) fn unmatched(&self) -> (usize, usize) {
        let s = self.0.borrow();
        (s.sends.len(), s.recvs.len())
    }

    fn poll(&self, req: &mut Option<u64>) -> Poll<Result<RecvInfo>> {
        let Some(id) = *req else {
            return Poll::Ready(Err(Error::InvalidRequest));
        };
        match self.0.borrow_mut().done.remove(&id) {
            Some(outcome) => {
                *req = None;
                Poll::Ready(outcome)
            }
            None => Poll::Pending,
        }
    }
}

/// The bytes of a send, a stream's in fragments.
unsafe fn produce(source: Source) -> Vec<u8> {
    match source {
        Source::Bytes(b) => b,
        Source::Stream(port) => {
            // SAFETY: the caller's contract.
            let end = unsafe { &mut *(*port).0 };
            let mut out = vec![0u8; end.length()];
            for (i, piece) in out.chunks_mut(FRAGMENT).enumerate() {
                end.pack(i * FRAGMENT, piece);
            }
            out
        }
    }
}

/// Puts a message's bytes where a receive wants them.
unsafe fn consume(target: Target, bytes: &[u8]) -> Result<()> {
    let truncated = |capacity: usize| Error::truncated(bytes.len() as u64, capacity as u64);
    match target {
        Target::Buffer(buf, len) => {
            if bytes.len() > len {
                return Err(truncated(len));
            }
            // SAFETY: the caller's contract: `buf` holds `len` writable bytes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf, bytes.len()) };
        }
        Target::Collect(sink) => {
            // SAFETY: the caller's contract.
            let c = unsafe { &mut *sink };
            c.received = bytes.len();
            let keep = bytes.len().min(c.keep);
            c.bytes.clear();
            c.bytes.extend_from_slice(&bytes[..keep]);
        }
        Target::Stream(port) => {
            // SAFETY: the caller's contract.
            let end = unsafe { &mut *(*port).0 };
            if bytes.len() > end.length() {
                return Err(truncated(end.length()));
            }
            for (i, piece) in bytes.chunks(FRAGMENT).enumerate() {
                end.unpack(i * FRAGMENT, piece);
            }
        }
    }
    Ok(())
}

impl Link for Fake {
    type Request = u64;
    type Endpoint = ();
    type Message = ();

    unsafe fn tag_send(
        &self,
        _ep: &(),
        buf: *const u8,
        len: usize,
        tag: u64,
        _synchronous: bool,
    ) -> Result<Option<u64>> {
        // SAFETY: the caller's contract; the bytes are copied now, as an eager send would.
        let bytes = unsafe { std::slice::from_raw_parts(buf, len) }.to_vec();
        Ok(Some(self.post_send(tag, Source::Bytes(bytes))))
    }

    unsafe fn tag_send_stream(
        &self,
        _ep: &(),
        port: *mut StreamPort,
        tag: u64,
    ) -> Result<Option<u64>> {
        Ok(Some(self.post_send(tag, Source::Stream(port))))
    }

    unsafe fn tag_recv(&self, buf: *mut u8, len: usize, m: TagMatch) -> Result<u64> {
        Ok(self.post_recv(m, Target::Buffer(buf, len)))
    }

    unsafe fn tag_recv_collect(&self, sink: *mut Collector, m: TagMatch) -> Result<u64> {
        Ok(self.post_recv(m, Target::Collect(sink)))
    }

    unsafe fn tag_recv_stream(&self, port: *mut StreamPort, m: TagMatch) -> Result<u64> {
        Ok(self.post_recv(m, Target::Stream(port)))
    }

    unsafe fn msg_recv_collect(&self, _sink: *mut Collector, _message: ()) -> Result<u64> {
        Err(Error::InvalidMessage)
    }

    fn poll_send(&self, req: &mut Option<u64>) -> Poll<Result<()>> {
        if req.is_none() {
            return Poll::Ready(Ok(()));
        }
        self.poll(req).map(|r| r.map(drop))
    }

    fn poll_recv(&self, req: &mut Option<u64>) -> Poll<Result<RecvInfo>> {
        self.poll(req)
    }

    fn is_pending(&self, req: &u64) -> bool {
        !self.0.borrow().done.contains_key(req)
    }

    fn cancel(&self, req: &u64) {
        let mut s = self.0.borrow_mut();
        let before = (s.sends.len(), s.recvs.len());
        s.sends.retain(|(id, ..)| id != req);
        s.recvs.retain(|(id, ..)| id != req);
        if (s.sends.len(), s.recvs.len()) != before {
            s.done.insert(*req, Err(Error::Cancelled));
        }
    }

    fn lead_buffer(&self) -> Vec<u8> {
        Vec::new()
    }

    fn recycle_lead(&self, _buffer: Vec<u8>) {}
}
