//! Collectives over custom datatypes (`MPI_Type_create_custom`): broadcast, gather(v),
//! scatter(v), allgather(v) and all-to-all(v,w). Each block of `count` objects travels as one
//! custom-typed message, packed part and zero-copy regions together, and its receiver learns
//! the sender's shape from the message (the type's resize callback, `MPIX_Type_custom_set_resize`,
//! sizes the receiving objects), so every member may contribute objects of its own shape: the
//! root of a gather needs no probe per member. Blocks of an array are `extent` apart, the
//! extent MPI_Type_create_resized gives the custom type (1 by default: displacements in
//! bytes). Reductions over custom types do not exist (MPI_ERR_TYPE).

use super::writer::{Arg, Each, Layout};
use super::Written;
use crate::abi::*;
use crate::blocks::in_place;
use crate::custom::{CustomType, Operation};
use crate::errors::{fail, CResult};
use crate::types::{self, Dtype};
use mpicd::schedule::select::Collective;
use mpicd::schedule::{objects, Builder, NodeObjects, ObjId, Object};
use mpicd::Communicator;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

/// The custom type of a handle, if it is one.
pub(crate) fn custom_type(dtype: MPI_Datatype) -> Option<Arc<CustomType>> {
    // A predefined handle (the standard ABI's, below 4096) is never a custom type.
    if (dtype as usize) < 0x1000 {
        return None;
    }
    match types::get(dtype) {
        Ok(Dtype::Custom(t)) => Some(t),
        _ => None,
    }
}

/// The custom type of a collective whose own block has type `mine` (ignored `here`, in place)
/// and whose layout (where it is significant) is `layout`: both custom, or neither
/// (MPI_ERR_TYPE).
pub(crate) fn custom_of(
    mine: MPI_Datatype,
    here: bool,
    layout: Option<&Layout>,
) -> CResult<Option<Arc<CustomType>>> {
    // The layout's type, where it names every block and is custom (looked up already).
    let whole = layout.and_then(|l| Some((*l.dtypes.first()?, Arc::clone(l.custom.as_ref()?))));
    let own = match (here, &whole) {
        (true, _) => None,
        (false, Some((d, t))) if *d == mine => Some(Arc::clone(t)),
        (false, _) => custom_type(mine),
    };
    let Some(layout) = layout else {
        return Ok(own);
    };
    let (first, plain) = match whole {
        Some((_, t)) => (Some(t), false),
        None => layout_types(layout),
    };
    let mixed = match &own {
        Some(_) => plain,
        None => !here && first.is_some(),
    };
    if mixed && !here {
        return Err(fail(
            MPI_ERR_TYPE,
            "a custom datatype on one side of a collective needs custom types on the other",
        ));
    }
    Ok(own.or(first))
}

/// The first custom type among `layout`'s datatypes, and whether any is not custom.
fn layout_types(layout: &Layout) -> (Option<Arc<CustomType>>, bool) {
    let (mut first, mut plain) = (None, false);
    // Each datatype once where neighbours repeat it (every block of a uniform layout).
    let mut seen = None;
    for &d in &layout.dtypes {
        if seen.replace(d) == Some(d) {
            continue;
        }
        match custom_type(d) {
            Some(t) => {
                first.get_or_insert(t);
            }
            None => plain = true,
        }
    }
    (first, plain)
}

/// `count` objects of a custom type at an address of the caller's, lent to a plan: a send or
/// receive of them starts the type's state callback anew at each run.
struct Objects {
    ty: Arc<CustomType>,
    addr: *mut c_void,
    count: MPI_Count,
}

// SAFETY: MPI's rules for the buffers of a collective keep the memory valid and reserved for
// the operation while a run is in flight; the states made from it are used by one thread at a
// time (the one progressing the engine).
unsafe impl Send for Objects {}
// SAFETY: as above; the address itself is only copied.
unsafe impl Sync for Objects {}

impl Object for Objects {
    fn pack(&self) -> mpicd::Result<Box<dyn mpicd::custom::PackState>> {
        let op = Operation::start(Arc::clone(&self.ty), self.addr, self.count)?;
        Ok(Box::new(op))
    }

    fn unpack(&self) -> mpicd::Result<Box<dyn mpicd::custom::UnpackState>> {
        let op = Operation::start(Arc::clone(&self.ty), self.addr, self.count)?;
        Ok(Box::new(op))
    }
}

/// `a`'s objects.
fn objects_of(t: &Arc<CustomType>, a: Arg) -> Objects {
    Objects {
        ty: Arc::clone(t),
        addr: a.p as *mut c_void,
        count: a.count,
    }
}

/// `a`'s objects in the plan.
fn object(b: &mut Builder, t: &Arc<CustomType>, a: Arg) -> ObjId {
    b.object(Arc::new(objects_of(t, a)))
}

fn blocks(b: &mut Builder, t: &Arc<CustomType>, l: &Layout) -> Each<ObjId> {
    each(t, l)
        .into_iter()
        .map(|o| b.object(Arc::new(o)))
        .collect()
}

/// `l`'s blocks, each a member's objects, of the custom type its datatype names (a w-layout's
/// may differ from block to block; `t` is the first's).
fn each(t: &Arc<CustomType>, l: &Layout) -> Each<Objects> {
    let mut last = l.custom.as_ref().map(|c| (l.dtypes[0], Arc::clone(c)));
    (0..l.counts.len())
        .map(|i| {
            let a = l.arg(i);
            let ty = match &last {
                Some((d, ty)) if *d == a.dtype => Arc::clone(ty),
                _ => custom_type(a.dtype).unwrap_or_else(|| Arc::clone(t)),
            };
            last = Some((a.dtype, Arc::clone(&ty)));
            objects_of(&ty, a)
        })
        .collect()
}

fn dyns(objs: &[Objects]) -> Each<&dyn Object> {
    objs.iter().map(|o| o as &dyn Object).collect()
}

/// A blocking collective (`now`) through the node's memory, where the communicator has an
/// area ([`Communicator::node_objects`]; `root`: the collective's, if it has one): done, or
/// failed; `None`: the caller writes a plan (a non-blocking one always: it takes no turn
/// here).
fn on_node(
    c: &Communicator,
    now: bool,
    (coll, root): (Collective, Option<c_int>),
    run: impl FnOnce(NodeObjects) -> mpicd::Result<()>,
) -> Option<CResult<Written>> {
    let root = root.map(|r| r as usize);
    let op = now.then(|| c.node_objects(coll, root)).flatten()?;
    Some(run(op).map(|()| Written::Done).map_err(Into::into))
}

pub(crate) fn bcast(
    c: &Communicator,
    t: Arc<CustomType>,
    a: Arg,
    root: c_int,
    now: bool,
) -> CResult<Written> {
    let on = on_node(c, now, (Collective::Bcast, Some(root)), |op| {
        op.bcast(&objects_of(&t, a), root as usize)
    });
    on.unwrap_or_else(|| {
        let mut b = c.plan();
        let obj = object(&mut b, &t, a);
        objects::bcast(&mut b, obj, root);
        Ok(Written::Plan(b.finish()))
    })
}

pub(crate) fn gather(
    c: &Communicator,
    t: Arc<CustomType>,
    send: Arg,
    recv: Option<Layout>,
    root: c_int,
    now: bool,
) -> CResult<Written> {
    let at_root = c.rank() == root;
    let here = at_root && in_place(send.p);
    let recv = recv.filter(|_| at_root);
    let on = on_node(c, now, (Collective::Gather, Some(root)), |op| {
        let mine = (!here).then(|| objects_of(&t, send));
        let all = recv.as_ref().map(|l| each(&t, l));
        let all = all.as_deref().map(dyns);
        op.gather(
            mine.as_ref().map(|m| m as &dyn Object),
            all.as_deref(),
            root as usize,
        )
    });
    on.unwrap_or_else(|| {
        let mut b = c.plan();
        let mine = (!here).then(|| object(&mut b, &t, send));
        let all = recv.map(|l| blocks(&mut b, &t, &l));
        objects::gather(&mut b, mine, all.as_deref(), root);
        Ok(Written::Plan(b.finish()))
    })
}

pub(crate) fn scatter(
    c: &Communicator,
    t: Arc<CustomType>,
    send: Option<Layout>,
    recv: Arg,
    root: c_int,
    now: bool,
) -> CResult<Written> {
    let at_root = c.rank() == root;
    let here = at_root && in_place(recv.p);
    let send = send.filter(|_| at_root);
    let on = on_node(c, now, (Collective::Gather, Some(root)), |op| {
        let mine = (!here).then(|| objects_of(&t, recv));
        let all = send.as_ref().map(|l| each(&t, l));
        let all = all.as_deref().map(dyns);
        op.scatter(
            all.as_deref(),
            mine.as_ref().map(|m| m as &dyn Object),
            root as usize,
        )
    });
    on.unwrap_or_else(|| {
        let mut b = c.plan();
        let mine = (!here).then(|| object(&mut b, &t, recv));
        let all = send.map(|l| blocks(&mut b, &t, &l));
        objects::scatter(&mut b, all.as_deref(), mine, root);
        Ok(Written::Plan(b.finish()))
    })
}

pub(crate) fn allgather(
    c: &Communicator,
    t: Arc<CustomType>,
    send: Arg,
    recv: Layout,
    now: bool,
) -> CResult<Written> {
    let here = in_place(send.p);
    let on = on_node(c, now, (Collective::Allgather, None), |op| {
        let mine = (!here).then(|| objects_of(&t, send));
        let all = each(&t, &recv);
        let all = dyns(&all);
        op.allgather(mine.as_ref().map(|m| m as &dyn Object), &all)
    });
    on.unwrap_or_else(|| {
        let mut b = c.plan();
        let mine = (!here).then(|| object(&mut b, &t, send));
        let all = blocks(&mut b, &t, &recv);
        objects::allgather(&mut b, mine, &all);
        Ok(Written::Plan(b.finish()))
    })
}

pub(crate) fn alltoall(
    c: &Communicator,
    t: Arc<CustomType>,
    send: Option<Layout>,
    recv: Layout,
    now: bool,
) -> CResult<Written> {
    let Some(send) = send else {
        return Err(fail(
            MPI_ERR_BUFFER,
            "MPI_IN_PLACE all-to-all of custom-typed objects is not supported",
        ));
    };
    let on = on_node(c, now, (Collective::Alltoall, None), |op| {
        let (out, inc) = (each(&t, &send), each(&t, &recv));
        let (out, inc) = (dyns(&out), dyns(&inc));
        op.alltoall(&out, &inc)
    });
    on.unwrap_or_else(|| {
        let mut b = c.plan();
        let out = blocks(&mut b, &t, &send);
        let inc = blocks(&mut b, &t, &recv);
        objects::alltoall(&mut b, &out, &inc);
        Ok(Written::Plan(b.finish()))
    })
}
