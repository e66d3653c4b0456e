//! Connections to peer processes, made on first use: a peer's endpoint from the address it
//! published, its identity (pid and node) read once from the launcher so that a peer on this
//! node is watched by pid, and a process of this node that is gone taken as failed rather
//! than as a transport error.

use super::{launch_key, Net, ADDRESS_KEY, IDENTITY_KEY};
use crate::error::{Error, Result};
use crate::liveness::Identity;

impl Net {
    /// Connects to process `peer` (a world rank or a foreign id) unless already connected
    /// (endpoints are made on first use).
    pub(super) fn connect(&mut self, peer: u32) -> Result<()> {
        let p = self.peers.get(peer as usize).ok_or(Error::InvalidRank {
            rank: peer as i32,
            size: self.size as i32,
        })?;
        if p.failed {
            return Err(Error::ProcFailed { rank: peer as i32 });
        }
        if p.endpoint.is_none() {
            let address = match self.foreign_address(peer) {
                Some(a) => a,
                None => self
                    .boot
                    .get(peer, &launch_key(ADDRESS_KEY, self.generation))?,
            };
            self.identify(peer)?;
            // Peers on this node are watched by pid; over shared memory that is all (UCX 1.13
            // has no shared-memory transport with peer error handling), over a network
            // transport their endpoints report failures too.
            let remote = self.peers[peer as usize].local_pid.is_none();
            let detect = remote || !self.worker.uses_shared_memory();
            // A process of this node that is gone left no shared memory to attach to: it
            // failed (the periodic look at local peers would soon have said so), which UCX
            // would report as an error of its own, before or during the connect.
            if let Some(gone) = self.gone(peer) {
                return Err(gone);
            }
            let ep = self
                .worker
                .connect(&address, peer, detect)
                .map_err(|e| self.gone(peer).unwrap_or(e))?;
            self.peers[peer as usize].endpoint = Some(ep);
        }
        Ok(())
    }

    /// If `peer` is a process of this node that no longer exists: reports it failed, and the
    /// error to give.
    fn gone(&self, peer: u32) -> Option<Error> {
        let pid = self.peers.get(peer as usize)?.local_pid?;
        if crate::liveness::is_alive(pid) {
            return None;
        }
        self.worker.failures.report(peer);
        Some(Error::ProcFailed { rank: peer as i32 })
    }

    /// Reads world rank `peer`'s identity from the launcher once: a peer on this node is then
    /// watched by pid, connected or not.
    pub(super) fn identify(&mut self, peer: u32) -> Result<()> {
        match self.peers.get(peer as usize) {
            Some(p) if !p.identified => {}
            _ => return Ok(()),
        }
        let identity = match self.foreign_identity(peer) {
            Some(told) => told,
            None => {
                let key = launch_key(IDENTITY_KEY, self.generation);
                Some(
                    Identity::decode(&self.boot.get(peer, &key)?).ok_or_else(|| {
                        Error::Launch(format!("rank {peer} published a malformed identity"))
                    })?,
                )
            }
        };
        let p = &mut self.peers[peer as usize];
        p.local_pid = identity
            .filter(|i| i.node == self.identity.node)
            .map(|i| i.pid);
        p.identified = true;
        Ok(())
    }

    /// Reads the identities of `members` (see [`super::Engine::watch_members`]).
    pub(super) fn identify_all(&mut self, members: &[u32]) {
        for &m in members {
            if m != self.rank {
                let _ = self.identify(m);
            }
        }
    }
}
