//! The handshake of `MPI_Comm_accept` and `MPI_Comm_connect`, which makes an
//! inter-communicator between the group of the accepting communicator and the group of the
//! connecting one; `MPI_Comm_disconnect`; and the ports and name service.
//!
//! Only the roots of the two sides talk, on [`PORT_CONTEXT`] under tags their processes give
//! (a port's number, then numbers each root takes for the replies it waits for):
//!
//! 1. every member of each side tells its root its context id proposal and its descriptor;
//! 2. the connecting root sends a request (its reply tag, its own descriptor: small enough to
//!    leave at once) to the port's owner, and waits for the reply at most
//!    [`connect_timeout`] (then `MPI_ERR_PORT`);
//! 3. the accepting root, which took the request, replies: its side's largest proposal,
//!    its table of descriptors, and a tag of its own; the connecting root answers with its
//!    side's largest proposal and table. Both now know the agreed context id (the larger);
//! 4. each root hands its members the other side's table; every member registers those
//!    processes (gives them ids, `engine::foreign`) and tells its root the ids it gave;
//! 5. the roots swap these id tables and hand them on: each member learns the id every
//!    process of the other side knows it by (the source of its messages to them).
//!
//! From step 3 on, each root waits for the other at most [`connect_timeout`]. A failure at a
//! root reaches its members in the next hand-over, so nobody waits for a handshake that
//! failed.

use crate::collective::allgather_bytes;
use crate::comm::{Communicator, Sides};
use crate::dynamic::procs::{decode_table, encode_table, take_u32, PortName, ProcDesc};
use crate::error::{DynamicError, Error, Result};
use crate::group::Group;
use crate::newcomm::Proposal;
use crate::route::PORT_CONTEXT;
use crate::session::Session;
use crate::ANY_SOURCE;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a connect waits for an accept, and either root of a handshake for the other
/// once it began (`MPICD_CONNECT_TIMEOUT`).
pub(crate) fn connect_timeout() -> Duration {
    let knob = crate::config::CONNECT_TIMEOUT;
    let secs = knob
        .number(std::env::var(knob.name).ok().as_deref())
        .unwrap_or(30);
    Duration::from_secs(secs as u64)
}

/// What the root of a side does in step 2.
pub(crate) enum Side<'a> {
    /// Takes a request on this port of this process (waiting for it until the deadline, if
    /// any).
    Accept {
        port: &'a str,
        deadline: Option<Instant>,
    },
    /// Sends a request to this port.
    Connect { port: &'a str },
}

/// What a root learnt from the other root in steps 2 and 3.
struct Met {
    agreed: u32,
    remote: Vec<ProcDesc>,
    /// The other root's id here, and the tags to send to it and receive from it under.
    other: u32,
    send_tag: i32,
    recv_tag: i32,
}

impl Communicator {
    /// An inter-communicator with the group that connects to `port` (`MPI_Comm_accept`;
    /// collective over this communicator; `port` is read at `root` only, where it must be an
    /// open port of this process). Waits until a connect comes.
    pub fn accept(&self, port: Option<&str>, root: i32) -> Result<Communicator> {
        let side = port.map(|port| Side::Accept {
            port,
            deadline: None,
        });
        self.handshake(side, root)
    }

    /// An inter-communicator with the group that accepts on `port` (`MPI_Comm_connect`;
    /// collective over this communicator; `port` is read at `root` only).
    /// [`DynamicError::Port`] when the port is malformed, or nobody accepts on it within
    /// `MPICD_CONNECT_TIMEOUT` seconds.
    pub fn connect(&self, port: Option<&str>, root: i32) -> Result<Communicator> {
        self.handshake(port.map(|port| Side::Connect { port }), root)
    }

    /// Steps 1 to 5 of the module's handshake; `side` is needed at `root` only.
    pub(crate) fn handshake(&self, side: Option<Side<'_>>, root: i32) -> Result<Communicator> {
        self.require_intra("MPI_Comm_accept and MPI_Comm_connect")?;
        if !(0..self.size()).contains(&root) {
            return Err(Error::InvalidRank {
                rank: root,
                size: self.size(),
            });
        }
        let proposal = Proposal::alone(&self.shared)?;
        let mut mine = proposal.value().to_le_bytes().to_vec();
        self.shared.with(|e| e.my_desc())?.encode(&mut mine);
        let entries = allgather_bytes(self, &mine)?;
        let is_root = self.rank == root;
        let met = match (is_root, side) {
            (true, Some(side)) => self.meet(side, &entries),
            (true, None) => Err(Error::InvalidArgument("no port name at the root".into())),
            (false, _) => Ok(None),
        };
        // Step 4: the other side's table, from the root.
        let told = match &met {
            Ok(Some(m)) => {
                let mut told = vec![1u8];
                told.extend_from_slice(&m.agreed.to_le_bytes());
                encode_table(&m.remote, &mut told);
                told
            }
            Err(e) => failure_note(e),
            Ok(None) => Vec::new(),
        };
        let all = allgather_bytes(self, &told)?;
        let met = met?;
        let (agreed, remote) = read_note(&all[root as usize], |buf| {
            let agreed = take_u32(buf)?;
            Ok((agreed, decode_table(buf)?))
        })?;
        let ids = self.shared.with(|e| {
            remote
                .iter()
                .map(|d| e.register(d))
                .collect::<Result<Vec<u32>>>()
        })?;
        // Step 5: the ids given, swapped between the roots.
        let swap = met.as_ref().map(|m| |table: &[u8]| self.swap_ids(m, table));
        self.learn_sources(root, &ids, swap)?;
        proposal.assign(agreed)?;
        let remote = Group::new(ids).map_err(|_| {
            Error::InvalidGroup("a process is on both sides of a connect/accept".into())
        })?;
        Ok(Communicator::new_inter(
            Arc::clone(&self.shared),
            agreed,
            self.group(),
            remote,
            self.rank,
        ))
    }

    /// Steps 2 and 3 at a root: meets the other root; `entries` are its side's (proposal,
    /// descriptor) entries.
    fn meet(&self, side: Side<'_>, entries: &[Vec<u8>]) -> Result<Option<Met>> {
        let mut local_max = 0;
        let mut table = Vec::with_capacity(entries.len());
        for entry in entries {
            let mut buf = &entry[..];
            local_max = local_max.max(take_u32(&mut buf)?);
            table.push(ProcDesc::decode(&mut buf)?);
        }
        let me = table[self.rank as usize].clone();
        let mut ours = local_max.to_le_bytes().to_vec();
        encode_table(&table, &mut ours);
        let chan = port_channel(self);
        let timeout = connect_timeout();
        let new_tag = || self.shared.with(|e| Ok(e.next_dynamic_tag()));
        match side {
            Side::Accept { port, deadline } => {
                let port = PortName::parse(port)?;
                let open = self.shared.with(|e| {
                    let mine = e.my_desc()?;
                    Ok(port.owner.ns == mine.ns
                        && port.owner.rank == mine.rank
                        && e.port_is_open(port.id))
                })?;
                if !open {
                    return Err(port_error("accept on a port this process did not open"));
                }
                let request =
                    recv_within(&chan, port.id as i32, deadline, "a connect").map_err(|e| {
                        match deadline {
                            Some(_) => Error::Dynamic(DynamicError::Spawn, e.to_string()),
                            None => e,
                        }
                    })?;
                let mut buf = &request[..];
                let reply_tag = take_u32(&mut buf)? as i32;
                let other_root = ProcDesc::decode(&mut buf)?;
                let other = self.shared.with(|e| e.register(&other_root))?;
                let recv_tag = new_tag()?;
                let mut reply = (recv_tag as u32).to_le_bytes().to_vec();
                reply.extend_from_slice(&ours);
                chan.send(&reply, other as i32, reply_tag)?;
                let answer = recv_within(
                    &chan,
                    recv_tag,
                    Some(Instant::now() + timeout),
                    "the connecting side",
                )?;
                let mut buf = &answer[..];
                let their_max = take_u32(&mut buf)?;
                Ok(Some(Met {
                    agreed: local_max.max(their_max),
                    remote: decode_table(&mut buf)?,
                    other,
                    send_tag: reply_tag,
                    recv_tag,
                }))
            }
            Side::Connect { port } => {
                let port = PortName::parse(port)?;
                let other = self.shared.with(|e| e.register(&port.owner))?;
                let recv_tag = new_tag()?;
                let mut request = (recv_tag as u32).to_le_bytes().to_vec();
                me.encode(&mut request);
                chan.send(&request, other as i32, port.id as i32)
                    .map_err(|e| port_error(&format!("the port's process is unreachable: {e}")))?;
                let reply =
                    recv_within(&chan, recv_tag, Some(Instant::now() + timeout), "an accept")?;
                let mut buf = &reply[..];
                let send_tag = take_u32(&mut buf)? as i32;
                let their_max = take_u32(&mut buf)?;
                let remote = decode_table(&mut buf)?;
                chan.send(&ours, other as i32, send_tag)?;
                Ok(Some(Met {
                    agreed: local_max.max(their_max),
                    remote,
                    other,
                    send_tag,
                    recv_tag,
                }))
            }
        }
    }

    /// Step 5 of the handshake, also for the other calls that join the groups of two jobs
    /// (collective over this intra-communicator): every member gave `ids` to the members of
    /// the other group (in their rank order); `swap`, at `root` only, sends what this side
    /// gave (one entry per member, end to end) to the other side's root and returns what the
    /// other side gave. Each member then knows the id every process of the other side knows
    /// it by.
    pub(crate) fn learn_sources(
        &self,
        root: i32,
        ids: &[u32],
        swap: Option<impl FnOnce(&[u8]) -> Result<Vec<u8>>>,
    ) -> Result<()> {
        let given: Vec<u8> = ids.iter().flat_map(|id| id.to_le_bytes()).collect();
        let table = allgather_bytes(self, &given)?.concat();
        let swapped = match swap {
            Some(swap) => swap(&table),
            None => Ok(Vec::new()),
        };
        let told = match &swapped {
            Ok(theirs) if self.rank == root => {
                let mut told = vec![1u8];
                told.extend_from_slice(theirs);
                told
            }
            Err(e) => failure_note(e),
            Ok(_) => Vec::new(),
        };
        let all = allgather_bytes(self, &told)?;
        swapped?;
        let theirs = read_note(&all[root as usize], |buf| Ok(buf.to_vec()))?;
        let n = self.size() as usize;
        if theirs.len() != ids.len() * n * 4 {
            return Err(malformed());
        }
        self.shared.with(|e| {
            for (i, &id) in ids.iter().enumerate() {
                let at = (i * n + self.rank as usize) * 4;
                let source = u32::from_le_bytes(theirs[at..at + 4].try_into().expect("4 bytes"));
                e.set_tag_source(id, source);
            }
            Ok(())
        })
    }

    /// Step 5's swap at a root: sends the ids its side gave and returns those the other side
    /// gave.
    fn swap_ids(&self, met: &Met, ours: &[u8]) -> Result<Vec<u8>> {
        let chan = port_channel(self);
        chan.send(ours, met.other as i32, met.send_tag)?;
        recv_within(
            &chan,
            met.recv_tag,
            Some(Instant::now() + connect_timeout()),
            "the other side's ids",
        )
    }

    /// Ends this communicator's connection (`MPI_Comm_disconnect`; collective): waits until
    /// every member got here (so that the communication each started on it is over), then
    /// lets go of the processes of other jobs it named, which are then no longer watched
    /// (their end is no failure here) unless another communicator uses them.
    pub fn disconnect(&self) -> Result<()> {
        self.barrier()?;
        let mut members = self.group().members();
        if let Sides::Inter { .. } = self.sides {
            members.extend(self.route.group.members());
        }
        self.shared.with(|e| {
            e.release_foreign(&members);
            Ok(())
        })
    }
}

impl Session {
    /// A new port of this process (`MPI_Open_port`): its name, at most
    /// [`MAX_PORT_NAME`] bytes long (with its NUL).
    pub fn open_port(&self) -> Result<String> {
        let port = self.shared.with(|e| e.open_port())?;
        if port.len() >= MAX_PORT_NAME {
            return Err(port_error(&format!(
                "this process's address makes a port name of {} bytes, above the {} allowed",
                port.len(),
                MAX_PORT_NAME - 1
            )));
        }
        Ok(port)
    }

    /// Closes a port this process opened (`MPI_Close_port`).
    pub fn close_port(&self, port: &str) -> Result<()> {
        self.shared.with(|e| e.close_port(port))
    }

    /// Publishes `port` under `service` (`MPI_Publish_name`).
    pub fn publish_name(&self, service: &str, port: &str) -> Result<()> {
        self.shared.with(|e| e.publish(service, port))
    }

    /// The port published under `service` (`MPI_Lookup_name`); [`DynamicError::Name`] if
    /// none.
    pub fn lookup_name(&self, service: &str) -> Result<String> {
        self.shared.with(|e| e.lookup(service))
    }

    /// Withdraws `service` (`MPI_Unpublish_name`); [`DynamicError::Service`] if it is not
    /// published.
    pub fn unpublish_name(&self, service: &str) -> Result<()> {
        self.shared.with(|e| e.unpublish(service))
    }
}

/// The longest port name, its terminating NUL included (`MPI_MAX_PORT_NAME`).
pub const MAX_PORT_NAME: usize = 1024;

/// Where a root talks to the other root: the port context, every process id a rank.
fn port_channel(comm: &Communicator) -> Communicator {
    Communicator::new(
        Arc::clone(&comm.shared),
        PORT_CONTEXT,
        Group::world(crate::tag::MAX_PROCESSES),
        0,
    )
}

/// The next message under `tag` on the port channel, from anyone; waits until `deadline`
/// (forever without), then fails with [`DynamicError::Port`] naming `what` it waited for.
fn recv_within(
    chan: &Communicator,
    tag: i32,
    deadline: Option<Instant>,
    what: &str,
) -> Result<Vec<u8>> {
    loop {
        if let Some((message, status)) = chan.improbe(ANY_SOURCE, tag)? {
            let len = status.bytes.ok_or_else(malformed)?;
            let mut buf = vec![0u8; len as usize];
            message.recv(&mut buf)?;
            return Ok(buf);
        }
        if deadline.is_some_and(|d| Instant::now() > d) {
            return Err(port_error(&format!(
                "no answer from {what} within the time allowed (MPICD_CONNECT_TIMEOUT)"
            )));
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// A root's failure as its members get it: 0, the error class, the message.
fn failure_note(e: &Error) -> Vec<u8> {
    let mut note = vec![0u8];
    note.extend_from_slice(&e.class().to_le_bytes());
    note.extend_from_slice(e.to_string().as_bytes());
    note
}

/// Reads a root's note: its content (after the 1), or the root's failure as an error of the
/// same class.
fn read_note<T>(note: &[u8], read: impl FnOnce(&mut &[u8]) -> Result<T>) -> Result<T> {
    match note.split_first() {
        Some((1, mut rest)) => read(&mut rest),
        Some((0, mut rest)) => {
            let class = take_u32(&mut rest).unwrap_or(0) as i32;
            let why = format!("the root failed: {}", String::from_utf8_lossy(rest));
            use crate::error::class as c;
            Err(match class {
                c::ERR_SPAWN => Error::Dynamic(DynamicError::Spawn, why),
                _ => Error::Dynamic(DynamicError::Port, why),
            })
        }
        _ => Err(malformed()),
    }
}

fn port_error(why: &str) -> Error {
    Error::Dynamic(DynamicError::Port, why.to_string())
}

fn malformed() -> Error {
    Error::Transport("malformed message in a dynamic-process handshake".into())
}
