//! The collectives that move objects of custom datatypes: broadcast, gather, scatter, allgather
//! and all-to-all, each object one custom-typed message (packed part and zero-copy regions
//! together), whose receiver learns its shape from the message, so objects may differ in
//! shape from member to member. A member's own block moves without a message
//! ([`Step::Transfer`](super::Step::Transfer): the type's pack and unpack run locally, regions
//! copied region to region) while the messages travel. `None` for a member's own object means
//! "in place".

use super::{Builder, ObjId, Xfer};

/// The root's object sent to every member, each receiving it into its own. Not relayed down
/// a tree: a member whose receive failed (the root's pack callback failed, say) would not
/// pass it on, and the members after it would wait forever; sent straight, every member's
/// receive fails with the root's.
pub fn bcast(b: &mut Builder, obj: ObjId, root: i32) {
    match b.rank() == root {
        true => {
            let sends = (0..b.size())
                .filter(|&to| to != root)
                .map(|to| Xfer::SendObject { to, obj })
                .collect();
            b.exchange(sends);
        }
        false => b.exchange(vec![Xfer::RecvObject { from: root, obj }]),
    }
}

/// Every member's object to the root, which receives them all at once into `blocks`.
pub fn gather(b: &mut Builder, mine: Option<ObjId>, blocks: Option<&[ObjId]>, root: i32) {
    let rank = b.rank();
    match (blocks, rank == root) {
        (Some(blocks), true) => {
            let xfers = blocks
                .iter()
                .enumerate()
                .filter(|&(from, _)| from as i32 != rank)
                .map(|(from, &obj)| Xfer::RecvObject {
                    from: from as i32,
                    obj,
                })
                .collect();
            b.post(xfers);
            if let Some(obj) = mine {
                b.transfer(obj, blocks[rank as usize]);
            }
        }
        _ => {
            if let Some(obj) = mine {
                b.exchange(vec![Xfer::SendObject { to: root, obj }]);
            }
        }
    }
}

/// The root's `blocks[i]` to member i, received into its object.
pub fn scatter(b: &mut Builder, blocks: Option<&[ObjId]>, mine: Option<ObjId>, root: i32) {
    let rank = b.rank();
    match (blocks, rank == root) {
        (Some(blocks), true) => {
            let xfers = blocks
                .iter()
                .enumerate()
                .filter(|&(to, _)| to as i32 != rank)
                .map(|(to, &obj)| Xfer::SendObject { to: to as i32, obj })
                .collect();
            b.post(xfers);
            if let Some(obj) = mine {
                b.transfer(blocks[rank as usize], obj);
            }
        }
        _ => {
            if let Some(obj) = mine {
                b.exchange(vec![Xfer::RecvObject { from: root, obj }]);
            }
        }
    }
}

/// Every member's object to every member, in one round.
pub fn allgather(b: &mut Builder, mine: Option<ObjId>, blocks: &[ObjId]) {
    let rank = b.rank() as usize;
    let own = mine.unwrap_or(blocks[rank]);
    let mut xfers = Vec::new();
    for (i, &obj) in blocks.iter().enumerate().filter(|&(i, _)| i != rank) {
        xfers.push(Xfer::RecvObject {
            from: i as i32,
            obj,
        });
        xfers.push(Xfer::SendObject {
            to: i as i32,
            obj: own,
        });
    }
    b.post(xfers);
    if let Some(obj) = mine {
        b.transfer(obj, blocks[rank]);
    }
}

/// `send[i]` to member i and `recv[i]` from it, every message at once; the own block moves
/// locally.
pub fn alltoall(b: &mut Builder, send: &[ObjId], recv: &[ObjId]) {
    let rank = b.rank() as usize;
    let mut xfers = Vec::new();
    for i in (0..send.len()).filter(|&i| i != rank) {
        xfers.push(Xfer::RecvObject {
            from: i as i32,
            obj: recv[i],
        });
        xfers.push(Xfer::SendObject {
            to: i as i32,
            obj: send[i],
        });
    }
    b.post(xfers);
    b.transfer(send[rank], recv[rank]);
}
