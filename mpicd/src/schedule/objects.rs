//! The collectives that move objects of custom datatypes: broadcast, gather, scatter, allgather
//! and all-to-all, each object one custom-typed message (packed part and zero-copy regions
//! together), whose receiver learns its shape from the message, so objects may differ in
//! shape from member to member. An object is never copied locally: a member's own block goes
//! to itself as a message (UCX's self transport), which runs the type's pack and unpack as any
//! other. `None` for a member's own object means "in place".

use super::{Builder, ObjId, Xfer};

/// Binomial-tree broadcast of the root's object: each member receives it, then sends it on
/// from its own copy.
pub fn bcast(b: &mut Builder, obj: ObjId, root: i32) {
    let (rank, size) = (b.rank(), b.size());
    let vr = (rank - root).rem_euclid(size);
    let absolute = |v: i32| (v + root) % size;
    let mut mask = 1;
    while mask < size {
        if vr & mask != 0 {
            b.exchange(vec![Xfer::RecvObject {
                from: absolute(vr - mask),
                obj,
            }]);
            break;
        }
        mask <<= 1;
    }
    let mut sends = Vec::new();
    mask >>= 1;
    while mask > 0 {
        if vr + mask < size {
            sends.push(Xfer::SendObject {
                to: absolute(vr + mask),
                obj,
            });
        }
        mask >>= 1;
    }
    b.exchange(sends);
}

/// Every member's object to the root, which receives them all at once into `blocks`.
pub fn gather(b: &mut Builder, mine: Option<ObjId>, blocks: Option<&[ObjId]>, root: i32) {
    let rank = b.rank();
    let mut xfers = Vec::new();
    if let (Some(blocks), true) = (blocks, rank == root) {
        for (from, &obj) in blocks.iter().enumerate() {
            if from as i32 != rank || mine.is_some() {
                xfers.push(Xfer::RecvObject {
                    from: from as i32,
                    obj,
                });
            }
        }
    }
    if let Some(obj) = mine {
        xfers.push(Xfer::SendObject { to: root, obj });
    }
    b.exchange(xfers);
}

/// The root's `blocks[i]` to member i, received into its object.
pub fn scatter(b: &mut Builder, blocks: Option<&[ObjId]>, mine: Option<ObjId>, root: i32) {
    let rank = b.rank();
    let mut xfers = Vec::new();
    if let Some(obj) = mine {
        xfers.push(Xfer::RecvObject { from: root, obj });
    }
    if let (Some(blocks), true) = (blocks, rank == root) {
        for (to, &obj) in blocks.iter().enumerate() {
            if to as i32 != rank || mine.is_some() {
                xfers.push(Xfer::SendObject { to: to as i32, obj });
            }
        }
    }
    b.exchange(xfers);
}

/// Every member's object to every member, in one round.
pub fn allgather(b: &mut Builder, mine: Option<ObjId>, blocks: &[ObjId]) {
    let rank = b.rank() as usize;
    let own = mine.unwrap_or(blocks[rank]);
    let mut xfers = Vec::new();
    for (i, &obj) in blocks.iter().enumerate() {
        if i != rank || mine.is_some() {
            xfers.push(Xfer::RecvObject {
                from: i as i32,
                obj,
            });
        }
    }
    for i in 0..blocks.len() {
        if i != rank || mine.is_some() {
            xfers.push(Xfer::SendObject {
                to: i as i32,
                obj: own,
            });
        }
    }
    b.exchange(xfers);
}

/// `send[i]` to member i and `recv[i]` from it, every message at once.
pub fn alltoall(b: &mut Builder, send: &[ObjId], recv: &[ObjId]) {
    let mut xfers: Vec<Xfer> = recv
        .iter()
        .enumerate()
        .map(|(i, &obj)| Xfer::RecvObject {
            from: i as i32,
            obj,
        })
        .collect();
    xfers.extend(
        send.iter()
            .enumerate()
            .map(|(i, &obj)| Xfer::SendObject { to: i as i32, obj }),
    );
    b.exchange(xfers);
}
