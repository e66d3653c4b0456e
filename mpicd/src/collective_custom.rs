//! Collectives over custom-typed values for Rust callers ([`CustomSend`], [`CustomRecv`]):
//! broadcast, gather, scatter, allgather and all-to-all. Each value travels as one
//! custom-typed message (packed part and zero-copy regions), and its receiver sizes itself from
//! the message ([`CustomRecv::resize`]), so values may differ in shape from member to member:
//! the root of a gather learns every member's shape without a probe. Where the communicator's
//! members share an area of the node's memory, they go through it
//! ([`Communicator::node_objects`]), else they run as plans ([`crate::schedule::objects`]), as
//! the C library's collectives over custom datatypes do.
//! They take intra-communicators only ([`Error::CommunicatorKind`] otherwise).
//!
//! ```no_run
//! let mpi = mpicd::init()?;
//! let world = mpi.world();
//! let mine: Vec<f64> = vec![world.rank() as f64; 1 + world.rank() as usize];
//! let mut all: Vec<Vec<f64>> = vec![Vec::new(); world.size() as usize];
//! let at_root = (world.rank() == 0).then_some(&mut all[..]);
//! world.gather_custom(&mine, at_root, 0)?; // at rank 0: all[r] has r + 1 elements
//! # Ok::<(), mpicd::Error>(())
//! ```

use crate::comm::Communicator;
use crate::custom::parts::{pack_borrowed, unpack_borrowed};
use crate::custom::{CustomRecv, CustomSend};
use crate::error::{Error, Result};
use crate::plan::{PackState, UnpackState};
use crate::schedule::select::Collective;
use crate::schedule::{objects, Builder, ObjId, Object};
use std::sync::Arc;

/// A value lent to a plan for the length of one blocking collective.
struct Lent<T: ?Sized>(*mut T);

// SAFETY: a `Lent` is made from a borrow that outlives the collective's run (it is waited for
// before the borrow ends); the value is `Sync` (sent from) or `Send` (received into), which is
// what using it from the thread that progresses the engine needs.
unsafe impl<T: ?Sized> Send for Lent<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized> Sync for Lent<T> {}

/// An object of the plan that borrows the caller's value.
///
/// # Safety
/// The plan must run to completion before the borrow ends (the blocking calls here wait).
unsafe fn object<'a>(b: &mut Builder, obj: Arc<dyn Object + 'a>) -> ObjId {
    // SAFETY: only the lifetime changes; the caller keeps the borrow alive long enough.
    b.object(unsafe { std::mem::transmute::<Arc<dyn Object + 'a>, Arc<dyn Object>>(obj) })
}

fn not_here() -> Error {
    Error::InvalidArgument("this collective does not move that value in that direction".into())
}

/// A value the plan sends.
struct Sent<S: ?Sized>(Lent<S>);

/// A value the plan receives into.
struct Received<R>(Lent<R>);

/// A value the plan receives into, then sends on (a broadcast's): sent only after its receive
/// completed.
struct Relayed<T>(Lent<T>);

impl<S: CustomSend + ?Sized> Object for Sent<S> {
    fn pack(&self) -> Result<Box<dyn PackState>> {
        // SAFETY: the value outlives the run (see `Lent`).
        unsafe { pack_borrowed(&*self.0 .0) }
    }

    fn unpack(&self) -> Result<Box<dyn UnpackState>> {
        Err(not_here())
    }
}

impl<R: CustomRecv> Object for Received<R> {
    fn pack(&self) -> Result<Box<dyn PackState>> {
        Err(not_here())
    }

    fn unpack(&self) -> Result<Box<dyn UnpackState>> {
        // SAFETY: the value outlives the run, which receives into it once (see `Lent`).
        Ok(unsafe { unpack_borrowed(&mut *self.0 .0) })
    }
}

impl<T: CustomSend + CustomRecv> Object for Relayed<T> {
    fn pack(&self) -> Result<Box<dyn PackState>> {
        // SAFETY: as for `Sent`; the send starts after the receive into it completed.
        unsafe { pack_borrowed(&*self.0 .0) }
    }

    fn unpack(&self) -> Result<Box<dyn UnpackState>> {
        // SAFETY: as for `Received`.
        Ok(unsafe { unpack_borrowed(&mut *self.0 .0) })
    }
}

/// A value sent (lent for the collective: see `Lent`).
fn lend<S: CustomSend + ?Sized>(value: &S) -> Sent<S> {
    Sent(Lent(value as *const S as *mut S))
}

/// A value received into (lent for the collective).
fn lend_mut<R: CustomRecv>(value: &mut R) -> Received<R> {
    Received(Lent(value as *mut R))
}

/// A value the plan sends.
fn sent<S: CustomSend + ?Sized>(b: &mut Builder, value: &S) -> ObjId {
    // SAFETY: `value` outlives the run (see `Lent`).
    unsafe { object(b, Arc::new(lend(value))) }
}

/// A value the plan receives into.
fn received<R: CustomRecv>(b: &mut Builder, value: &mut R) -> ObjId {
    // SAFETY: `value` outlives the run and the plan receives into it once (see `Lent`).
    unsafe { object(b, Arc::new(lend_mut(value))) }
}

/// A value the plan receives into, then sends on (a broadcast's).
fn relayed<T: CustomSend + CustomRecv>(b: &mut Builder, value: &mut T) -> ObjId {
    // SAFETY: `value` outlives the run; it is sent only after its receive completed.
    unsafe { object(b, Arc::new(Relayed(Lent(value as *mut T)))) }
}

fn dyns<O: Object>(objs: &[O]) -> Vec<&dyn Object> {
    objs.iter().map(|o| o as &dyn Object).collect()
}

fn check_root(comm: &Communicator, root: i32) -> Result<()> {
    comm.require_intra("a rooted collective of custom values")?;
    if (0..comm.size()).contains(&root) {
        Ok(())
    } else {
        Err(Error::InvalidRank {
            rank: root,
            size: comm.size(),
        })
    }
}

fn check_len(what: &str, len: usize, size: i32) -> Result<()> {
    if len == size as usize {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "{what} holds {len} values for {size} members"
        )))
    }
}

impl Communicator {
    /// Broadcasts the root's `value` into every member's (binomial tree; each member resizes
    /// from the message, then sends on from its own copy).
    pub fn bcast_custom<T: CustomSend + CustomRecv>(&self, value: &mut T, root: i32) -> Result<()> {
        check_root(self, root)?;
        if let Some(op) = self.node_objects(Collective::Bcast, Some(root as usize)) {
            return op.bcast(&Relayed(Lent(value as *mut T)), root as usize);
        }
        let mut b = self.plan();
        let obj = relayed(&mut b, value);
        objects::bcast(&mut b, obj, root);
        // SAFETY: the values are borrowed until the run completes.
        unsafe { self.run_plan(b) }
    }

    /// Gathers every member's `mine` at `root` into `all` (one per member, resized from each
    /// member's message; only read at the root, where it is required).
    pub fn gather_custom<S: CustomSend + ?Sized, R: CustomRecv>(
        &self,
        mine: &S,
        all: Option<&mut [R]>,
        root: i32,
    ) -> Result<()> {
        check_root(self, root)?;
        let all = all.filter(|_| self.rank() == root);
        // Checked once the collective's turn is taken, as a plan's failure.
        let check = |all: &Option<&mut [R]>| match all {
            Some(all) => check_len("gather_custom: all", all.len(), self.size()),
            None if self.rank() == root => Err(Error::InvalidArgument(
                "gather_custom: the root needs `all`".into(),
            )),
            None => Ok(()),
        };
        if let Some(op) = self.node_objects(Collective::Gather, Some(root as usize)) {
            // It checks `all` itself.
            let blocks: Option<Vec<_>> = all.map(|a| a.iter_mut().map(lend_mut).collect());
            let blocks = blocks.as_deref().map(dyns);
            return op.gather(Some(&lend(mine)), blocks.as_deref(), root as usize);
        }
        let mut b = self.plan();
        check(&all)?;
        let own = sent(&mut b, mine);
        let blocks = all.map(|all| {
            all.iter_mut()
                .map(|v| received(&mut b, v))
                .collect::<Vec<_>>()
        });
        objects::gather(&mut b, Some(own), blocks.as_deref(), root);
        // SAFETY: the values are borrowed until the run completes.
        unsafe { self.run_plan(b) }
    }

    /// Scatters the root's `all` (one per member) into every member's `mine`.
    pub fn scatter_custom<S: CustomSend, R: CustomRecv>(
        &self,
        all: Option<&[S]>,
        mine: &mut R,
        root: i32,
    ) -> Result<()> {
        check_root(self, root)?;
        let all = all.filter(|_| self.rank() == root);
        // Checked once the collective's turn is taken, as a plan's failure.
        let check = || match all {
            Some(all) => check_len("scatter_custom: all", all.len(), self.size()),
            None if self.rank() == root => Err(Error::InvalidArgument(
                "scatter_custom: the root needs `all`".into(),
            )),
            None => Ok(()),
        };
        if let Some(op) = self.node_objects(Collective::Gather, Some(root as usize)) {
            // It checks `all` itself, and fails its members if `all` is wrong.
            let blocks: Option<Vec<_>> = all.map(|a| a.iter().map(lend).collect());
            let blocks = blocks.as_deref().map(dyns);
            return op.scatter(blocks.as_deref(), Some(&lend_mut(mine)), root as usize);
        }
        let mut b = self.plan();
        check()?;
        let own = received(&mut b, mine);
        let blocks = all.map(|all| all.iter().map(|v| sent(&mut b, v)).collect::<Vec<_>>());
        objects::scatter(&mut b, blocks.as_deref(), Some(own), root);
        // SAFETY: the values are borrowed until the run completes.
        unsafe { self.run_plan(b) }
    }

    /// Every member's `mine` into `all` (one per member) on every member.
    pub fn allgather_custom<S: CustomSend + ?Sized, R: CustomRecv>(
        &self,
        mine: &S,
        all: &mut [R],
    ) -> Result<()> {
        self.require_intra("allgather_custom")?;
        check_len("allgather_custom: all", all.len(), self.size())?;
        if let Some(op) = self.node_objects(Collective::Allgather, None) {
            let blocks: Vec<_> = all.iter_mut().map(lend_mut).collect();
            return op.allgather(Some(&lend(mine)), &dyns(&blocks));
        }
        let mut b = self.plan();
        let own = sent(&mut b, mine);
        let blocks: Vec<ObjId> = all.iter_mut().map(|v| received(&mut b, v)).collect();
        objects::allgather(&mut b, Some(own), &blocks);
        // SAFETY: the values are borrowed until the run completes.
        unsafe { self.run_plan(b) }
    }

    /// `send[i]` to member i, `recv[i]` from member i.
    pub fn alltoall_custom<S: CustomSend, R: CustomRecv>(
        &self,
        send: &[S],
        recv: &mut [R],
    ) -> Result<()> {
        self.require_intra("alltoall_custom")?;
        check_len("alltoall_custom: send", send.len(), self.size())?;
        check_len("alltoall_custom: recv", recv.len(), self.size())?;
        if let Some(op) = self.node_objects(Collective::Alltoall, None) {
            let out: Vec<_> = send.iter().map(lend).collect();
            let inc: Vec<_> = recv.iter_mut().map(lend_mut).collect();
            return op.alltoall(&dyns(&out), &dyns(&inc));
        }
        let mut b = self.plan();
        let out: Vec<ObjId> = send.iter().map(|v| sent(&mut b, v)).collect();
        let inc: Vec<ObjId> = recv.iter_mut().map(|v| received(&mut b, v)).collect();
        objects::alltoall(&mut b, &out, &inc);
        // SAFETY: the values are borrowed until the run completes.
        unsafe { self.run_plan(b) }
    }
}
