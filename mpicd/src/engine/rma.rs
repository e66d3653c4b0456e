//! What one-sided communication ([`crate::window`]) may use of the engine: the worker, for
//! registering memory and posting remote memory access, and the endpoint of a peer (made on
//! first use, as for messages), with the peer's failure known to the engine reported as
//! [`Error::ProcFailed`]. Windows keep their own state; the engine keeps none of theirs.

use super::Engine;
use crate::error::{Error, Result};
use crate::transport::{Endpoint, Worker};

impl Engine {
    /// The worker (registration, flushes of the whole worker).
    pub(crate) fn rma_worker(&self) -> &Worker {
        &self.net.worker
    }

    /// The worker and the endpoint to world rank `peer`, connecting if needed; `ProcFailed`
    /// once the peer is known to have failed.
    pub(crate) fn rma_endpoint(&mut self, peer: u32) -> Result<(&Worker, &Endpoint)> {
        self.net.connect(peer)?;
        let net = &self.net;
        let ep = net
            .existing_endpoint(peer)
            .ok_or(Error::ProcFailed { rank: peer as i32 })?;
        Ok((&net.worker, ep))
    }

    /// `ProcFailed` if world rank `peer` is known to have failed.
    pub(crate) fn rma_peer_alive(&self, peer: u32) -> Result<()> {
        match self.net.has_failed(peer) {
            true => Err(Error::ProcFailed { rank: peer as i32 }),
            false => Ok(()),
        }
    }
}
