//! Communicators and their point-to-point calls. Every call checks its arguments here and
//! returns a specific error before anything reaches the engine.
//!
//! A communicator is an intra-communicator (one group) or an inter-communicator ([`Sides`]:
//! a local group and a remote one, made by [`crate::intercomm`]). Point-to-point addresses
//! `route.group`: the members of an intra-communicator, the remote group of an
//! inter-communicator (whose receives report remote ranks as sources).
//!
//! Calls that borrow a buffer beyond their own return take a [`Scope`] (see
//! [`crate::request`] for why); blocking calls wait before their borrows end and need none.

use crate::datatype::{bytes_of, bytes_of_mut, Primitive};
use crate::engine::{Posted, Shared};
use crate::error::{Error, Result};
use crate::group::Group;
use crate::message::Message;
use crate::request::{wait_posted, Request, Scope};
use crate::route::{Route, COLL_OFFSET};
use crate::schedule::NodeCell;
use crate::status::Status;
use crate::{ANY_SOURCE, ANY_TAG, PROC_NULL, TAG_UB};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

mod custom;

/// Send modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendMode {
    /// Standard: may complete before the receive is posted.
    Standard,
    /// Synchronous: completes only once the receive has matched.
    Synchronous,
}

/// A group of processes with its own matching context: no message crosses communicators.
pub struct Communicator {
    pub(crate) shared: Arc<Shared>,
    /// Point-to-point: the members, or an inter-communicator's remote group.
    pub(crate) route: Route,
    /// Collectives: the members, or an inter-communicator's local group then its remote group
    /// (as [`crate::schedule::Builder::remote`] names them).
    pub(crate) coll: Route,
    /// This process's rank (in the local group of an inter-communicator).
    pub(crate) rank: i32,
    pub(crate) sides: Sides,
    /// Collectives started on this communicator: the next one's messages carry this number
    /// as their tag on the collective context, so that several in flight never mix.
    pub(crate) coll_seq: Arc<AtomicU32>,
    /// Agreements and shrinks started on this communicator (ULFM), numbered apart from the
    /// collectives: members may disagree on how many collectives they started once one failed
    /// or the communicator was revoked, never on these.
    pub(crate) fault_seq: AtomicU32,
    /// The engine watches every member ([`Communicator::watch_members`]).
    pub(crate) members_watched: AtomicBool,
    /// The shared-memory area of its blocking collectives, once agreed on (see
    /// `schedule::node`).
    pub(crate) node: Arc<NodeCell>,
}

/// Which processes a communicator connects.
pub(crate) enum Sides {
    /// One group: `route.group`.
    Intra,
    /// An inter-communicator: this process's group `local`, and the remote group
    /// (`route.group`), disjoint.
    Inter { local: Arc<Group> },
}

impl Communicator {
    pub(crate) fn new(shared: Arc<Shared>, context: u32, group: Group, rank: i32) -> Communicator {
        let group = Arc::new(group);
        Communicator {
            shared,
            route: Route {
                context,
                group: Arc::clone(&group),
            },
            coll: Route {
                context: context + COLL_OFFSET,
                group,
            },
            rank,
            sides: Sides::Intra,
            coll_seq: Arc::new(AtomicU32::new(0)),
            fault_seq: AtomicU32::new(0),
            members_watched: AtomicBool::new(false),
            node: Arc::new(NodeCell::new()),
        }
    }

    /// An inter-communicator between `local` (where this process has rank `rank`) and
    /// `remote`, two disjoint groups, on `context` and the two after it (point-to-point,
    /// collectives, and the third for the calls that make new communicators from it).
    pub(crate) fn new_inter(
        shared: Arc<Shared>,
        context: u32,
        local: Group,
        remote: Group,
        rank: i32,
    ) -> Communicator {
        let mut both = local.members();
        both.extend(remote.members());
        Communicator {
            shared,
            route: Route {
                context,
                group: Arc::new(remote),
            },
            coll: Route {
                context: context + COLL_OFFSET,
                group: Arc::new(Group::from_members(both)),
            },
            rank,
            sides: Sides::Inter {
                local: Arc::new(local),
            },
            coll_seq: Arc::new(AtomicU32::new(0)),
            fault_seq: AtomicU32::new(0),
            members_watched: AtomicBool::new(false),
            node: Arc::new(NodeCell::new()),
        }
    }

    /// This process's rank in the communicator (in its local group on an inter-communicator).
    pub fn rank(&self) -> i32 {
        self.rank
    }

    /// Number of processes in the communicator (in its local group on an
    /// inter-communicator).
    pub fn size(&self) -> i32 {
        self.local_group().size()
    }

    /// The world rank of the process that point-to-point rank `rank` names (a member of the
    /// remote group on an inter-communicator).
    pub fn world_rank(&self, rank: i32) -> Result<u32> {
        self.route.group.world_rank(rank)
    }

    /// The members, in rank order (the local group on an inter-communicator).
    pub fn group(&self) -> Group {
        (**self.local_group()).clone()
    }

    fn local_group(&self) -> &Arc<Group> {
        match &self.sides {
            Sides::Intra => &self.route.group,
            Sides::Inter { local } => local,
        }
    }

    /// True for an inter-communicator.
    pub fn is_inter(&self) -> bool {
        matches!(self.sides, Sides::Inter { .. })
    }

    /// The remote group of an inter-communicator; `None` for an intra-communicator.
    pub fn remote_group(&self) -> Option<Group> {
        self.is_inter().then(|| (*self.route.group).clone())
    }

    /// Fails on an inter-communicator, for the calls MPI defines on intra-communicators only
    /// (`call` names it in the error).
    pub(crate) fn require_intra(&self, call: &str) -> Result<()> {
        if self.is_inter() {
            return Err(Error::CommunicatorKind(format!(
                "{call} needs an intra-communicator, not an inter-communicator"
            )));
        }
        Ok(())
    }

    fn send_tag(tag: i32) -> Result<i32> {
        if (0..=TAG_UB).contains(&tag) {
            Ok(tag)
        } else {
            Err(Error::InvalidTag(tag))
        }
    }

    fn recv_tag(tag: i32) -> Result<Option<i32>> {
        if tag == ANY_TAG {
            Ok(None)
        } else {
            Self::send_tag(tag).map(Some)
        }
    }

    /// A send's checked destination (world rank) and tag; `None` for the null process.
    pub(crate) fn send_target(&self, dest: i32, tag: i32) -> Result<Option<(u32, i32)>> {
        let tag = Self::send_tag(tag)?;
        Ok(match dest {
            PROC_NULL => None,
            d => Some((self.route.group.world_rank(d)?, tag)),
        })
    }

    /// Has the engine watch every member of this communicator (the first time only): a dead
    /// one then fails the collectives waiting on it, directly or through others, and the
    /// receives from any source.
    pub(crate) fn watch_members(&self) {
        // A load first: after the first time, no read-modify-write per call.
        if !self.members_watched.load(Ordering::Relaxed)
            && !self.members_watched.swap(true, Ordering::Relaxed)
        {
            let members = self.coll.group.members();
            let _ = self.shared.with(|e| {
                e.watch_members(&members);
                Ok(())
            });
        }
    }

    /// A receive's checked source and tag filters (`None`: any); `None` for the null process.
    /// A receive from any source has the engine watch every member, as it may wait on each.
    pub(crate) fn recv_filter(
        &self,
        source: i32,
        tag: i32,
    ) -> Result<Option<(Option<u32>, Option<i32>)>> {
        let tag = Self::recv_tag(tag)?;
        Ok(match source {
            PROC_NULL => None,
            ANY_SOURCE => {
                self.watch_members();
                Some((None, tag))
            }
            r => Some((Some(self.route.group.world_rank(r)?), tag)),
        })
    }

    // ----- contiguous point-to-point -----

    /// Posts a send of `len` bytes at `buf`.
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and unchanged until the operation completes.
    pub(crate) unsafe fn post_send(
        &self,
        buf: *const u8,
        len: usize,
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<Posted> {
        let Some((dest, tag)) = self.send_target(dest, tag)? else {
            return Ok(Posted::null());
        };
        if buf.is_null() && len > 0 {
            return Err(Error::NullBuffer);
        }
        let sync = mode == SendMode::Synchronous;
        // SAFETY: forwarded from the caller.
        self.shared
            .with(|e| unsafe { e.post_send(&self.route, dest, tag, buf, len, sync) })
    }

    /// Posts a receive of at most `len` bytes into `buf`.
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and untouched until the operation completes.
    pub(crate) unsafe fn post_recv(
        &self,
        buf: *mut u8,
        len: usize,
        source: i32,
        tag: i32,
    ) -> Result<Posted> {
        let Some((from, tag)) = self.recv_filter(source, tag)? else {
            return Ok(Posted::null());
        };
        if buf.is_null() && len > 0 {
            return Err(Error::NullBuffer);
        }
        // SAFETY: forwarded from the caller.
        self.shared
            .with(|e| unsafe { e.post_recv(&self.route, from, tag, buf, len) })
    }

    /// Starts a send of `len` bytes at `buf` (the form the C library uses).
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and unchanged until the request completes, even if the
    /// request is forgotten (never dropped).
    pub unsafe fn isend_raw(
        &self,
        buf: *const u8,
        len: usize,
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<Request<'static>> {
        // SAFETY: forwarded from the caller.
        let posted = unsafe { self.post_send(buf, len, dest, tag, mode) }?;
        Ok(Request::posted(&self.shared, posted))
    }

    /// Posts a receive of at most `len` bytes into `buf` (the form the C library uses).
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and untouched until the request completes, even if the
    /// request is forgotten (never dropped).
    pub unsafe fn irecv_raw(
        &self,
        buf: *mut u8,
        len: usize,
        source: i32,
        tag: i32,
    ) -> Result<Request<'static>> {
        // SAFETY: forwarded from the caller.
        let posted = unsafe { self.post_recv(buf, len, source, tag) }?;
        Ok(Request::posted(&self.shared, posted))
    }

    /// Progresses the runtime once: the transport and every operation in flight, whoever waits
    /// on it (for a binding that waits on something the runtime does not know, such as MPI's
    /// generalized requests).
    pub fn progress(&self) -> Result<()> {
        self.shared.with(|e| {
            e.progress();
            Ok(())
        })
    }

    /// Starts a standard-mode send of `buf` in `scope` (see [`crate::scope`]).
    pub fn isend<'s, 'a, T: Primitive>(
        &self,
        scope: &'s Scope<'a>,
        buf: &'a [T],
        dest: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        self.isend_in(scope, buf, dest, tag, SendMode::Standard)
    }

    /// Starts a synchronous send of `buf` in `scope`.
    pub fn issend<'s, 'a, T: Primitive>(
        &self,
        scope: &'s Scope<'a>,
        buf: &'a [T],
        dest: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        self.isend_in(scope, buf, dest, tag, SendMode::Synchronous)
    }

    fn isend_in<'s, 'a, T: Primitive>(
        &self,
        scope: &'s Scope<'a>,
        buf: &'a [T],
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<Request<'s>> {
        let bytes = bytes_of(buf);
        // SAFETY: `buf` is borrowed for the scope's 'a, and the scope completes the operation
        // before it returns, even if the request is forgotten.
        let posted = unsafe { self.post_send(bytes.as_ptr(), bytes.len(), dest, tag, mode) }?;
        Ok(scope.request(&self.shared, posted))
    }

    /// Posts a receive into `buf` in `scope` (see [`crate::scope`]).
    pub fn irecv<'s, 'a, T: Primitive>(
        &self,
        scope: &'s Scope<'a>,
        buf: &'a mut [T],
        source: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        let bytes = bytes_of_mut(buf);
        // SAFETY: `buf` is borrowed exclusively for the scope's 'a, and the scope completes (or
        // cancels) the receive before it returns, even if the request is forgotten.
        let posted = unsafe { self.post_recv(bytes.as_mut_ptr(), bytes.len(), source, tag) }?;
        Ok(scope.request(&self.shared, posted))
    }

    /// Sends `buf` to `dest` (standard mode).
    pub fn send<T: Primitive>(&self, buf: &[T], dest: i32, tag: i32) -> Result<()> {
        self.send_blocking(buf, dest, tag, SendMode::Standard)
    }

    /// Sends `buf` to `dest` and returns once the receiver has matched it.
    pub fn ssend<T: Primitive>(&self, buf: &[T], dest: i32, tag: i32) -> Result<()> {
        self.send_blocking(buf, dest, tag, SendMode::Synchronous)
    }

    fn send_blocking<T: Primitive>(
        &self,
        buf: &[T],
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<()> {
        let bytes = bytes_of(buf);
        // SAFETY: the send completes before `buf`'s borrow ends.
        unsafe { self.send_raw(bytes.as_ptr(), bytes.len(), dest, tag, mode) }
    }

    /// Receives into `buf`.
    pub fn recv<T: Primitive>(&self, buf: &mut [T], source: i32, tag: i32) -> Result<Status> {
        let bytes = bytes_of_mut(buf);
        // SAFETY: the receive completes before `buf`'s borrow ends.
        unsafe { self.recv_raw(bytes.as_mut_ptr(), bytes.len(), source, tag) }
    }

    /// Sends `len` bytes at `buf` and returns once they can be reused (the form the C library
    /// uses). A short message the transport takes at once returns without a request.
    ///
    /// # Safety
    /// `buf..buf+len` must be valid for reads for the duration of the call.
    pub unsafe fn send_raw(
        &self,
        buf: *const u8,
        len: usize,
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<()> {
        // SAFETY: forwarded from the caller; a pending send is waited for before returning
        // (or, on unwinding, its request is dropped, which waits too).
        let posted = unsafe { self.post_send(buf, len, dest, tag, mode) }?;
        wait_posted(&self.shared, posted).map(drop)
    }

    /// Receives at most `len` bytes into `buf` (the form the C library uses).
    ///
    /// # Safety
    /// `buf..buf+len` must be valid for writes, and not otherwise accessed, for the duration of
    /// the call.
    pub unsafe fn recv_raw(
        &self,
        buf: *mut u8,
        len: usize,
        source: i32,
        tag: i32,
    ) -> Result<Status> {
        // SAFETY: as in `send_raw`.
        let posted = unsafe { self.post_recv(buf, len, source, tag) }?;
        wait_posted(&self.shared, posted)
    }

    /// Sends and receives at once (no deadlock whatever the order of the peers).
    #[allow(clippy::too_many_arguments)]
    pub fn sendrecv<S: Primitive, R: Primitive>(
        &self,
        send: &[S],
        dest: i32,
        send_tag: i32,
        recv: &mut [R],
        source: i32,
        recv_tag: i32,
    ) -> Result<Status> {
        crate::request::scope(|s| {
            let r = self.irecv(s, recv, source, recv_tag)?;
            let s = self.isend(s, send, dest, send_tag)?;
            let status = r.wait();
            s.wait()?;
            status
        })
    }

    // ----- probes -----

    fn probe_step(
        &self,
        source: i32,
        tag: i32,
        remove: bool,
    ) -> Result<Option<(Status, Option<Message>)>> {
        let Some((from, tag)) = self.recv_filter(source, tag)? else {
            let message = remove.then(|| Message::new(&self.shared, None));
            return Ok(Some((Status::empty(), message)));
        };
        let found = self
            .shared
            .with(|e| e.probe(&self.route, from, tag, remove))?;
        Ok(found.map(|(status, matched)| {
            let message = matched.map(|m| Message::new(&self.shared, Some(m)));
            (status, message)
        }))
    }

    /// Checks for a matching message without receiving it.
    pub fn iprobe(&self, source: i32, tag: i32) -> Result<Option<Status>> {
        Ok(self.probe_step(source, tag, false)?.map(|(s, _)| s))
    }

    /// Waits for a matching message without receiving it.
    pub fn probe(&self, source: i32, tag: i32) -> Result<Status> {
        loop {
            if let Some(s) = self.iprobe(source, tag)? {
                return Ok(s);
            }
        }
    }

    /// Takes a matching message if one is there: no other receive can match it afterwards.
    pub fn improbe(&self, source: i32, tag: i32) -> Result<Option<(Message, Status)>> {
        Ok(self
            .probe_step(source, tag, true)?
            .and_then(|(s, m)| m.map(|m| (m, s))))
    }

    /// Waits for a matching message and takes it.
    pub fn mprobe(&self, source: i32, tag: i32) -> Result<(Message, Status)> {
        loop {
            if let Some(found) = self.improbe(source, tag)? {
                return Ok(found);
            }
        }
    }

    // ----- communicator management -----

    /// Frees the communicator; its pending operations still complete.
    pub fn free(self) {}
}
