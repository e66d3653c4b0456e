//! MPI-4 partitioned communication: MPI_Psend_init, MPI_Precv_init (and their `_c` forms),
//! MPI_Pready, MPI_Pready_range, MPI_Pready_list and MPI_Parrived; the requests are persistent
//! and started with MPI_Start(all).
//!
//! The design is the simple correct one. A partitioned send is one message of all its
//! partitions (`partitions` x `count` elements), posted in each epoch when the last partition
//! is marked ready; a partitioned receive posts its receive of the whole message at MPI_Start,
//! and MPI_Parrived reports any partition arrived once the whole message has (and true on an
//! inactive request: nothing is pending). The two sides may split the message differently;
//! their totals must agree. The message travels as a point-to-point message on (communicator,
//! rank, tag), so a program must not post ordinary receives that could match it. Any datatype
//! works, custom ones included. Several operations active at once on one (communicator, peer,
//! tag) therefore pair up in the order their messages are sent and their receives posted, not
//! in the order of their init calls as MPI-4 specifies: that needs a per-pair channel agreed at
//! init, which point-to-point messages on the user's tag cannot give.
//!
//! A request's [`Parts`] is shared by its handle's entry and a table of weak references by
//! handle value, so MPI_Pready and MPI_Parrived reach it even while another thread waits on
//! the handle (partitions are typically readied by threads while one waits).

use super::{insert_persistent_work, outcome_to_c, Finished, Owned, Work, WorkStarter};
use crate::abi::*;
use crate::comms::{errh, run_on};
use crate::env::{out, require};
use crate::errors::{fail, run, CResult};
use crate::p2p::{self, count_of, Incoming, Outgoing};
use crate::types;
use mpicd::{Request, SendMode};
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// What posts a side's whole message.
type Post = Box<dyn Fn() -> CResult<Request<'static>> + Send>;

/// Which side of a partitioned exchange a request is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Send,
    Recv,
}

/// Where a partitioned operation is in its epoch.
enum Epoch {
    /// Not started, or completed since.
    Inactive,
    /// A started send waiting for partitions to be ready.
    Armed,
    /// The whole message posted.
    Posted(Owned),
    /// A receive found complete by MPI_Parrived; its outcome awaits the completion call.
    Arrived(Finished),
}

struct State {
    /// Which partitions are ready (send side) in this epoch.
    ready: Vec<bool>,
    /// How many are not yet ready.
    missing: usize,
    epoch: Epoch,
    post: Post,
}

/// A partitioned request's state, shared with MPI_Pready and MPI_Parrived.
pub(crate) struct Parts {
    side: Side,
    partitions: usize,
    /// The count a custom-typed receive reports.
    custom_count: Option<i64>,
    state: Mutex<State>,
}

/// Partitioned requests by handle value (weak: the handle's entry owns them).
static PARTS: Mutex<BTreeMap<usize, Weak<Parts>>> = Mutex::new(BTreeMap::new());

fn parts() -> MutexGuard<'static, BTreeMap<usize, Weak<Parts>>> {
    PARTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The partitioned request of a handle.
fn lookup(h: MPI_Request) -> CResult<Arc<Parts>> {
    parts()
        .get(&(h as usize))
        .and_then(Weak::upgrade)
        .ok_or_else(|| fail(MPI_ERR_REQUEST, "not a partitioned request"))
}

impl Parts {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// MPI_Start: a send waits for its partitions, a receive is posted.
    fn start(&self) -> CResult<()> {
        let mut st = self.state();
        match self.side {
            Side::Send => {
                st.ready.iter_mut().for_each(|r| *r = false);
                st.missing = self.partitions;
                st.epoch = Epoch::Armed;
            }
            Side::Recv => st.epoch = Epoch::Posted(Owned::new((st.post)()?)),
        }
        Ok(())
    }

    /// One check of a started operation; the outcome once done (it is then inactive).
    pub(crate) fn test(&self) -> Option<Finished> {
        let mut st = self.state();
        let done = match &mut st.epoch {
            Epoch::Armed => return None,
            Epoch::Posted(op) => match op.test() {
                Ok(None) => return None,
                Ok(Some(s)) => outcome_to_c(Ok(s), self.custom_count),
                Err(e) => outcome_to_c(Err(e), self.custom_count),
            },
            Epoch::Arrived(done) => done.clone(),
            Epoch::Inactive => (crate::status::empty(), None),
        };
        st.epoch = Epoch::Inactive;
        Some(done)
    }

    /// MPI_Cancel: a posted receive is asked to cancel; a send completes normally.
    pub(crate) fn cancel(&self) -> CResult<()> {
        match &self.state().epoch {
            Epoch::Posted(op) => op.cancel().map_err(Into::into),
            _ => Ok(()),
        }
    }

    /// Marks `partitions` ready; the message goes once all are.
    fn ready(&self, partitions: impl IntoIterator<Item = c_int>) -> CResult<()> {
        if self.side != Side::Send {
            return Err(fail(MPI_ERR_REQUEST, "not a partitioned send request"));
        }
        let mut st = self.state();
        if !matches!(st.epoch, Epoch::Armed) {
            return Err(fail(
                MPI_ERR_REQUEST,
                "the partitioned send is not started, or all its partitions are ready",
            ));
        }
        for p in partitions {
            let i = self.index(p)?;
            if std::mem::replace(&mut st.ready[i], true) {
                return Err(fail(MPI_ERR_ARG, format!("partition {p} is already ready")));
            }
            st.missing -= 1;
        }
        if st.missing == 0 {
            st.epoch = Epoch::Posted(Owned::new((st.post)()?));
        }
        Ok(())
    }

    /// MPI_Parrived: whether the whole message (so every partition) has arrived.
    fn arrived(&self, partition: c_int) -> CResult<bool> {
        if self.side != Side::Recv {
            return Err(fail(MPI_ERR_REQUEST, "not a partitioned receive request"));
        }
        self.index(partition)?;
        let mut st = self.state();
        let done = match &mut st.epoch {
            Epoch::Posted(op) => match op.test() {
                Ok(None) => return Ok(false),
                Ok(Some(s)) => outcome_to_c(Ok(s), self.custom_count),
                Err(e) => outcome_to_c(Err(e), self.custom_count),
            },
            Epoch::Inactive | Epoch::Arrived(_) | Epoch::Armed => return Ok(true),
        };
        st.epoch = Epoch::Arrived(done);
        Ok(true)
    }

    fn index(&self, p: c_int) -> CResult<usize> {
        usize::try_from(p)
            .ok()
            .filter(|&i| i < self.partitions)
            .ok_or_else(|| {
                fail(
                    MPI_ERR_ARG,
                    format!("partition {p} outside 0..{}", self.partitions),
                )
            })
    }
}

/// Makes the persistent handle of a partitioned request.
fn insert(
    side: Side,
    partitions: usize,
    custom_count: Option<i64>,
    post: Post,
    comm: MPI_Comm,
) -> MPI_Request {
    let shared = Arc::new(Parts {
        side,
        partitions,
        custom_count,
        state: Mutex::new(State {
            ready: vec![false; partitions],
            missing: partitions,
            epoch: Epoch::Inactive,
            post,
        }),
    });
    let own = Arc::clone(&shared);
    let start: WorkStarter = Box::new(move || {
        own.start()?;
        Ok(Work::Partitioned(Arc::clone(&own)))
    });
    let h = insert_persistent_work(start, errh(comm), custom_count);
    let mut table = parts();
    table.retain(|_, w| w.strong_count() > 0);
    table.insert(h as usize, Arc::downgrade(&shared));
    h
}

/// The whole message's count: `partitions` x `count`.
fn total(partitions: c_int, count: i64) -> CResult<(usize, i64)> {
    let n = usize::try_from(partitions)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            fail(
                MPI_ERR_ARG,
                format!("invalid number of partitions {partitions}"),
            )
        })?;
    let count = count_of(count)?;
    let all = count
        .checked_mul(partitions as i64)
        .ok_or_else(|| fail(MPI_ERR_COUNT, "partitions x count overflows"))?;
    Ok((n, all))
}

/// Shared body of MPI_Psend_init(_c).
///
/// # Safety
/// MPI's rules for a persistent send's buffer.
#[allow(clippy::too_many_arguments)]
unsafe fn psend_init(
    name: &'static str,
    buf: *const c_void,
    partitions: c_int,
    count: i64,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    run_on(name, comm, |c| {
        require(request, "request pointer")?;
        let (n, all) = total(partitions, count)?;
        p2p::send_tag(tag)?;
        p2p::check_peer(&c, dest, false)?;
        let dtype = types::get(datatype)?;
        let m = Outgoing::new(buf, all, datatype, dest, tag);
        // SAFETY: MPI's rules for a partitioned send: the buffer stays valid while the request
        // lives and unchanged while it is active.
        let post: Post =
            Box::new(move || unsafe { p2p::start_send_as(&c, m, &dtype, SendMode::Standard) });
        out(request, insert(Side::Send, n, None, post, comm))
    })
}

/// Shared body of MPI_Precv_init(_c).
///
/// # Safety
/// MPI's rules for a persistent receive's buffer.
#[allow(clippy::too_many_arguments)]
unsafe fn precv_init(
    name: &'static str,
    buf: *mut c_void,
    partitions: c_int,
    count: i64,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    run_on(name, comm, |c| {
        require(request, "request pointer")?;
        let (n, all) = total(partitions, count)?;
        p2p::recv_tag(tag)?;
        p2p::check_peer(&c, source, true)?;
        let dtype = types::get(datatype)?;
        let custom_count = matches!(dtype, types::Dtype::Custom(_)).then_some(all);
        let m = Incoming::new(buf, all, datatype, source, tag);
        // SAFETY: MPI's rules for a partitioned receive: the buffer stays valid while the
        // request lives and untouched while it is active.
        let post: Post =
            Box::new(move || unsafe { p2p::start_recv_as(&c, m, &dtype) }.map(|(r, _)| r));
        out(request, insert(Side::Recv, n, custom_count, post, comm))
    })
}

/// A persistent partitioned send of `partitions` x `count` elements to `dest`: each MPI_Start
/// begins an epoch, and the message goes once MPI_Pready has marked every partition.
#[no_mangle]
pub unsafe extern "C" fn MPI_Psend_init(
    buf: *const c_void,
    partitions: c_int,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: MPI's rules for the arguments.
    unsafe {
        psend_init(
            "Psend_init",
            buf,
            partitions,
            count.into(),
            datatype,
            dest,
            tag,
            comm,
            request,
        )
    }
}

/// [`MPI_Psend_init`] with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Psend_init_c(
    buf: *const c_void,
    partitions: c_int,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: MPI's rules for the arguments.
    unsafe {
        psend_init(
            "Psend_init_c",
            buf,
            partitions,
            count,
            datatype,
            dest,
            tag,
            comm,
            request,
        )
    }
}

/// A persistent partitioned receive of `partitions` x `count` elements from `source`: each
/// MPI_Start posts it; MPI_Parrived tells when partitions have arrived.
#[no_mangle]
pub unsafe extern "C" fn MPI_Precv_init(
    buf: *mut c_void,
    partitions: c_int,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: MPI's rules for the arguments.
    unsafe {
        precv_init(
            "Precv_init",
            buf,
            partitions,
            count.into(),
            datatype,
            source,
            tag,
            comm,
            request,
        )
    }
}

/// [`MPI_Precv_init`] with an MPI_Count count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Precv_init_c(
    buf: *mut c_void,
    partitions: c_int,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> c_int {
    let _ = info; // hints: none applies
                  // SAFETY: MPI's rules for the arguments.
    unsafe {
        precv_init(
            "Precv_init_c",
            buf,
            partitions,
            count,
            datatype,
            source,
            tag,
            comm,
            request,
        )
    }
}

/// Runs a partition call on the partitioned request `h` under its error handler.
fn on_parts(name: &'static str, h: MPI_Request, body: impl FnOnce(&Parts) -> CResult<()>) -> c_int {
    let errh = super::REQUESTS
        .with(h as usize, |e| e.errh)
        .unwrap_or_else(crate::comms::default_errh);
    run(name, errh, |_| body(&*lookup(h)?))
}

/// Marks `partition` of a started partitioned send ready.
#[no_mangle]
pub unsafe extern "C" fn MPI_Pready(partition: c_int, request: MPI_Request) -> c_int {
    on_parts("Pready", request, |p| p.ready([partition]))
}

/// Marks partitions `partition_low` to `partition_high` (inclusive) ready.
#[no_mangle]
pub unsafe extern "C" fn MPI_Pready_range(
    partition_low: c_int,
    partition_high: c_int,
    request: MPI_Request,
) -> c_int {
    on_parts("Pready_range", request, |p| {
        if partition_low > partition_high {
            return Err(fail(
                MPI_ERR_ARG,
                format!("empty partition range {partition_low}..={partition_high}"),
            ));
        }
        p.ready(partition_low..=partition_high)
    })
}

/// Marks the `length` partitions listed in `array_of_partitions` ready.
#[no_mangle]
pub unsafe extern "C" fn MPI_Pready_list(
    length: c_int,
    array_of_partitions: *const c_int,
    request: MPI_Request,
) -> c_int {
    on_parts("Pready_list", request, |p| {
        let n = usize::try_from(length)
            .map_err(|_| fail(MPI_ERR_ARG, format!("negative length {length}")))?;
        if n == 0 {
            return p.ready([]);
        }
        require(array_of_partitions, "array_of_partitions")?;
        // SAFETY: non-null, and MPI requires `length` partitions there.
        let list = unsafe { std::slice::from_raw_parts(array_of_partitions, n) };
        p.ready(list.iter().copied())
    })
}

/// Sets `*flag` to whether `partition` of a partitioned receive has arrived (in mpicd: whether
/// the whole message has).
#[no_mangle]
pub unsafe extern "C" fn MPI_Parrived(
    request: MPI_Request,
    partition: c_int,
    flag: *mut c_int,
) -> c_int {
    on_parts("Parrived", request, |p| {
        require(flag, "flag")?;
        super::sweep_detached();
        out(flag, p.arrived(partition)? as c_int)
    })
}
