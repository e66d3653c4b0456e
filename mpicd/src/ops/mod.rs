//! The operations layer: the send ([`SendOp`]) and the receive ([`RecvOp`]) of one custom-typed
//! message, as state machines. The engine advances them by calling their `poll` with a narrow
//! [`Context`] (the worker's post, poll and cancel calls, the peer's endpoint, the tunables, the
//! sequence reservation); an operation never progresses the worker and never calls the engine,
//! so it cannot re-enter it. What an operation needs the engine to keep after it is gone (a send
//! to a dead peer that UCX still holds) is handed over through the context as a [`Stranded`].
//!
//! The transport calls an operation makes are the [`Link`] trait: the UCX worker in the engine,
//! an in-memory transport in the unit tests (`flows.rs`: whole messages, every phase, failures
//! on either side, without UCX or a launcher).
//!
//! It must not know the engine's request table, its matching or its communicators.

mod course;
#[cfg(test)]
mod fake;
#[cfg(test)]
mod flows;
mod lead;
mod link;
mod recv;
mod send;
mod stream_copy;
#[cfg(test)]
mod tests;
mod typed;
mod unpacker;

pub(crate) use course::Course;
pub(crate) use link::Link;
pub(crate) use recv::RecvOp;
pub(crate) use send::{Destination, SendOp};
pub(crate) use typed::TypedEnd;

use crate::plan::CustomConfig;
use crate::transport::Worker;
use std::any::Any;
use std::mem::ManuallyDrop;

/// What an operation may use while the engine advances it (on the UCX worker; on an in-memory
/// transport in the unit tests).
pub(crate) struct Context<'a, L: Link = Worker> {
    pub worker: &'a L,
    pub config: &'a CustomConfig,
    /// The source this process writes in tags to the peer: its world rank, or the id a
    /// process of another job knows it by (see `engine::foreign`).
    pub rank: u32,
    /// The endpoint to the operation's peer, while connected and alive.
    pub endpoint: Option<&'a L::Endpoint>,
    /// The next unused private sequence number of this process.
    pub next_seq: &'a mut u64,
    /// Sends the engine keeps until UCX lets go of them.
    pub stranded: &'a mut Vec<Stranded<L>>,
}

impl<L: Link> Context<'_, L> {
    /// Reserves `n` private sequence numbers; the first of them.
    pub(crate) fn reserve_sequence(&mut self, n: u64) -> u64 {
        let base = *self.next_seq;
        *self.next_seq += n;
        base
    }

    /// Leaves a request still in flight, with the memory it reads, to the engine.
    pub(crate) fn strand(&mut self, req: L::Request, keep: Box<dyn Any + Send>) {
        self.stranded.push(Stranded::new(req, keep));
    }
}

/// A send to a dead peer that UCX may never complete (it cannot cancel sends, and endpoints to
/// this node's processes have no error handling), with the memory it reads: kept, not awaited,
/// so that the operation fails at once; released when UCX is done with it, leaked if it never
/// is.
pub(crate) struct Stranded<L: Link = Worker> {
    req: L::Request,
    keep: ManuallyDrop<Box<dyn Any + Send>>,
}

impl<L: Link> Stranded<L> {
    /// A request left in flight with the memory it may still use.
    pub(crate) fn new(req: L::Request, keep: Box<dyn Any + Send>) -> Stranded<L> {
        Stranded {
            req,
            keep: ManuallyDrop::new(keep),
        }
    }

    /// True (and the memory released) once UCX completed the request.
    pub(crate) fn release_if_done(&mut self, worker: &L) -> bool {
        if worker.is_pending(&self.req) {
            return false;
        }
        // SAFETY: UCX is done with the request, so nothing reads this memory any more; the
        // caller drops the entry right after, so this runs once.
        unsafe { ManuallyDrop::drop(&mut self.keep) };
        true
    }
}
