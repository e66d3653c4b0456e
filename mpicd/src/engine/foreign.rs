//! Peers from outside this job (processes of a spawned or spawning job, or of any job that
//! connected through a port), and this process's ports and launcher calls for MPI's dynamic
//! processes.
//!
//! Every process is named inside the engine by a process id: the world ranks `0..size` name
//! this job's processes (the fast path: their endpoints and tags are as before), and ids from
//! `size` up name foreign processes in the order this process met them, each with its
//! [`ProcDesc`] (the address it is reached at) and its *tag source*: the id under which that
//! process knows this one, which this process writes as the source of every message it sends
//! there (a world peer knows this process by its world rank). Groups and communicators name
//! foreign processes by their ids like world ranks, so everything above works unchanged.

use super::{Engine, Net, Peer};
use crate::bootstrap::LaunchApp;
use crate::dynamic::procs::{PortName, ProcDesc};
use crate::error::{DynamicError, Error, Result};
use crate::liveness::Identity;
use std::time::Duration;

/// What the engine knows of a foreign process.
pub(super) struct Foreign {
    desc: ProcDesc,
    /// The id this process has at that one (the source of the messages sent there).
    tag_source: u32,
}

impl Net {
    /// The source this process writes in the tags of messages to `peer`: its world rank, or
    /// the id a foreign peer knows it by.
    #[inline]
    pub(super) fn tag_source(&self, peer: Option<u32>) -> u32 {
        match peer {
            Some(p) if p >= self.size => self
                .peers
                .get(p as usize)
                .and_then(|q| q.foreign.as_ref())
                .map_or(self.rank, |f| f.tag_source),
            _ => self.rank,
        }
    }

    /// The address of a foreign peer (`None` for a world peer: the launcher has it).
    pub(super) fn foreign_address(&self, peer: u32) -> Option<Vec<u8>> {
        let f = self.peers.get(peer as usize)?.foreign.as_ref()?;
        Some(f.desc.address.clone())
    }

    /// The identity a foreign peer told (`None` for a world peer or if unknown).
    pub(super) fn foreign_identity(&self, peer: u32) -> Option<Option<Identity>> {
        let f = self.peers.get(peer as usize)?.foreign.as_ref()?;
        Some(f.desc.identity.clone())
    }
}

impl Engine {
    /// True if `id` names a process of another job.
    pub(crate) fn is_foreign(&self, id: u32) -> bool {
        id >= self.net.size
    }

    /// This process as others reach it.
    pub(crate) fn my_desc(&self) -> Result<ProcDesc> {
        Ok(ProcDesc {
            ns: self.net.namespace.clone(),
            rank: self.net.rank,
            address: self.net.worker.address()?,
            identity: Some(self.net.identity.clone()),
        })
    }

    /// The descriptor of process `id` (a world rank or a foreign id).
    pub(crate) fn desc_of(&mut self, id: u32) -> Result<ProcDesc> {
        if id == self.net.rank {
            return self.my_desc();
        }
        let net = &mut self.net;
        if id < net.size {
            let key = super::launch_key(super::ADDRESS_KEY, net.generation);
            let address = net.boot.get(id, &key)?;
            net.identify(id)?;
            let key = super::launch_key(super::IDENTITY_KEY, net.generation);
            let identity = Identity::decode(&net.boot.get(id, &key)?);
            return Ok(ProcDesc {
                ns: net.namespace.clone(),
                rank: id,
                address,
                identity,
            });
        }
        match net.peers.get(id as usize).and_then(|p| p.foreign.as_ref()) {
            Some(f) => Ok(f.desc.clone()),
            None => Err(Error::InvalidRank {
                rank: id as i32,
                size: net.peers.len() as i32,
            }),
        }
    }

    /// The id of the process `desc` names: its world rank if it is of this job, else its
    /// foreign id (given now if this process has not met it). A descriptor with an identity
    /// completes one learnt without (from a port name).
    pub(crate) fn register(&mut self, desc: &ProcDesc) -> Result<u32> {
        let net = &mut self.net;
        if desc.ns == net.namespace {
            if desc.rank >= net.size {
                return Err(Error::Transport(format!(
                    "rank {} of this job does not exist",
                    desc.rank
                )));
            }
            return Ok(desc.rank);
        }
        let key = (desc.ns.clone(), desc.rank);
        if let Some(&id) = net.foreign_ids.get(&key) {
            let f = net.peers[id as usize].foreign.as_mut().expect("registered");
            if f.desc.identity.is_none() && desc.identity.is_some() {
                f.desc.identity = desc.identity.clone();
                net.peers[id as usize].identified = false;
            }
            return Ok(id);
        }
        let id = net.peers.len() as u32;
        if id >= crate::tag::MAX_PROCESSES {
            return Err(Error::Transport(format!(
                "more than {} processes met",
                crate::tag::MAX_PROCESSES
            )));
        }
        net.peers.push(Peer {
            endpoint: None,
            local_pid: None,
            identified: false,
            failed: false,
            foreign: Some(Box::new(Foreign {
                desc: desc.clone(),
                tag_source: 0,
            })),
        });
        net.foreign_ids.insert(key, id);
        Ok(id)
    }

    /// Records the id process `id` (foreign) knows this one by.
    pub(crate) fn set_tag_source(&mut self, id: u32, source: u32) {
        if let Some(f) = self
            .net
            .peers
            .get_mut(id as usize)
            .and_then(|p| p.foreign.as_mut())
        {
            f.tag_source = source;
        }
    }

    /// A key that orders processes the same way in every job: (namespace, rank).
    pub(crate) fn proc_key(&self, id: u32) -> (String, u32) {
        match self
            .net
            .peers
            .get(id as usize)
            .and_then(|p| p.foreign.as_ref())
        {
            Some(f) => (f.desc.ns.clone(), f.desc.rank),
            None => (self.net.namespace.clone(), id),
        }
    }

    /// A number for a port or a handshake's replies, unique in this process for a long while
    /// (a user tag: the handshake messages travel under it).
    pub(crate) fn next_dynamic_tag(&mut self) -> i32 {
        self.net.dynamic_tags = self.net.dynamic_tags % (crate::TAG_UB as u32) + 1;
        self.net.dynamic_tags as i32
    }

    /// Opens a port: its name names this process and a new port number.
    pub(crate) fn open_port(&mut self) -> Result<String> {
        let id = self.next_dynamic_tag() as u32;
        let owner = self.my_desc()?;
        self.net.ports.insert(id);
        Ok(PortName { id, owner }.format())
    }

    /// Closes a port this process opened.
    pub(crate) fn close_port(&mut self, name: &str) -> Result<()> {
        let port = PortName::parse(name)?;
        let mine = port.owner.ns == self.net.namespace && port.owner.rank == self.net.rank;
        if !mine || !self.net.ports.remove(&port.id) {
            return Err(Error::Dynamic(
                DynamicError::Port,
                format!("{name:?} is not an open port of this process"),
            ));
        }
        Ok(())
    }

    /// True if `id` is an open port of this process.
    pub(crate) fn port_is_open(&self, id: u32) -> bool {
        self.net.ports.contains(&id)
    }

    /// After a disconnect: closes the endpoints to the foreign processes `ids` that no
    /// operation uses, and stops watching them (their end is then no failure of anything).
    /// A later use connects again.
    pub(crate) fn release_foreign(&mut self, ids: &[u32]) {
        for &id in ids {
            let in_use = self.table.iter_mut().any(|(_, op)| op.peer() == Some(id));
            let Some(p) = self.net.peers.get_mut(id as usize) else {
                continue;
            };
            if p.foreign.is_none() || in_use {
                continue;
            }
            p.local_pid = None;
            p.identified = false;
            if let Some(ep) = p.endpoint.take() {
                let lost = p.failed;
                self.net.worker.close(ep, Duration::from_secs(2), lost);
            }
        }
    }

    /// Starts `apps` as a new job (see [`crate::bootstrap::Bootstrap::spawn`]).
    pub(crate) fn spawn(&self, apps: &[LaunchApp]) -> Result<String> {
        self.net.boot.spawn(apps)
    }

    /// Publishes `port` under `service`.
    pub(crate) fn publish(&self, service: &str, port: &str) -> Result<()> {
        self.net.boot.publish(service, port)
    }

    /// The port published under `service`.
    pub(crate) fn lookup(&self, service: &str) -> Result<String> {
        self.net.boot.lookup(service)
    }

    /// Withdraws `service`.
    pub(crate) fn unpublish(&self, service: &str) -> Result<()> {
        self.net.boot.unpublish(service)
    }
}
