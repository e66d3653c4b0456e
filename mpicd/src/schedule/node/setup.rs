//! How a communicator's members come to share an area ([`Area`]): at its first blocking
//! collective that could run through one, in four short rounds of messages under that
//! collective's tag (one-time; every member takes part, so all of them end up agreeing):
//!
//! 1. every member tells member 0 what it offers ([`Engine::node_offer`]: the most bytes a
//!    member may put in the area, 0 if a member runs elsewhere);
//! 2. member 0 makes an area for the smallest offer (at most [`AREA_BUDGET`] in all) and
//!    broadcasts its size and name (size 0: none; the collectives of this communicator then
//!    always go by messages);
//! 3. the others map it and tell member 0 whether they could, whether they may read the
//!    others' memory ([`cma::available`]), and whether their waits spin;
//! 4. member 0 removes the name (every member has mapped it or given up) and broadcasts
//!    whether all could, and whether all may (and whether all waits spin: [`SingleCopy`]).
//!
//! [`Engine::node_offer`]: crate::engine::Engine::node_offer

use super::area::{mapped, unlink, Area, SLOTS};
use super::{cma, Node, SingleCopy};
use crate::engine::WaitPolicy;
use crate::schedule::algorithms::bcast_binomial;
use crate::schedule::{Buf, Builder, Xfer};
use smallvec::SmallVec;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};

/// A communicator's area for its blocking collectives, once its members have agreed on one
/// (`None`: they use messages).
#[derive(Default)]
pub(crate) struct NodeCell(OnceLock<Option<Arc<Node>>>);

impl NodeCell {
    pub(crate) fn new() -> NodeCell {
        NodeCell::default()
    }

    /// The area, if the members agreed on one already.
    pub(super) fn agreed(&self) -> Option<&Arc<Node>> {
        self.0.get()?.as_ref()
    }

    /// Whether the members decided, on an area or on messages.
    pub(super) fn settled(&self) -> bool {
        self.0.get().is_some()
    }
}

/// Most bytes of slots an area holds: a slot holds at most this over twice the members.
const AREA_BUDGET: usize = 4 << 20;

/// Most bytes of areas one process maps, every communicator's together: past it, a member
/// offers only what is left, and none once that is under [`MIN_SLOT`] a slot, so the
/// communicators made after use messages (a thousand communicators of 4 members kept alive
/// would otherwise hold 4 GiB of `/dev/shm`).
const AREAS_BUDGET: usize = 256 << 20;

/// The smallest slot worth an area.
const MIN_SLOT: usize = 4 << 10;

/// Longest area name sent in round 2 (the notice is 64 bytes: the size, then the name).
const NOTICE: usize = 64;

/// The area of `b`'s communicator, agreed on at the first call (a collective one: every
/// member calls it at the same collective). `None` in a builder that writes a plan, after a
/// failure, or when the members use messages.
pub(super) fn node(b: &mut Builder) -> Option<Arc<Node>> {
    let d = b.direct.as_ref().filter(|d| !d.failed())?;
    if let Some(node) = d.node_cell().0.get() {
        return node.clone();
    }
    let cell = Arc::clone(d.node_cell());
    let direct = |b: &mut Builder, on: bool| b.direct.as_mut().map(|d| d.set_agreeing(on));
    direct(b, true);
    let made = agree(b).map(Arc::new);
    direct(b, false);
    let _ = cell.0.set(made.clone());
    made
}

/// The four rounds; `None` if the members use messages (or a message failed: the builder
/// then holds the failure).
fn agree(b: &mut Builder) -> Option<Node> {
    let (me, members) = (b.rank() as usize, b.size() as usize);
    if members < 2 {
        return None;
    }
    let (shared, route) = b.direct.as_ref()?.engine();
    let (shared, route) = (Arc::clone(shared), route.clone());
    let group = route.group.members();
    let (offer, wait) = shared
        .with(|e| Ok((e.node_offer(&group), e.wait_policy())))
        .unwrap_or((0, WaitPolicy::Spin));
    let room = AREAS_BUDGET.saturating_sub(mapped()) / (SLOTS * members);
    let offer = match offer.min(room) {
        slot if slot < MIN_SLOT => 0,
        slot => slot,
    };

    let words = b.temp(8 * members);
    let offers = gather_words(b, words, offer as u64)?;
    let notice = b.temp(NOTICE);
    let mut made = None;
    if me == 0 {
        let cap = (offers.iter().copied().min().unwrap_or(0) as usize)
            .min(AREA_BUDGET / (SLOTS * members))
            / 64
            * 64;
        // No area where some member offers none (it runs elsewhere, or node collectives are
        // off there): making one anyway left its name behind in /dev/shm, one per
        // communicator, since only a shared area's name is removed below.
        let created = match cap {
            0 => None,
            _ => Area::create(members, cap).ok(),
        };
        let (cap, name) = match created {
            Some((area, name)) if name.len() < NOTICE - 8 => {
                made = Some(area);
                (cap, name)
            }
            Some((_, name)) => {
                unlink(&name);
                (0, String::new())
            }
            None => (0, String::new()),
        };
        let text = b.bytes_now(notice)?;
        text[..8].copy_from_slice(&(cap as u64).to_le_bytes());
        text[8..8 + name.len()].copy_from_slice(name.as_bytes());
        text[8 + name.len()..].fill(0);
    }
    bcast_binomial(b, notice, 0);
    let (cap, name) = read_notice(b.bytes_now(notice)?);
    if cap == 0 {
        return None;
    }
    let area = match me {
        0 => made,
        _ => Area::attach(&name, members, cap).ok(),
    };
    // 0: not mapped; MAPPED, with READS if this member may read the others' memory, and
    // SPINS if its waits spin (it has a core of its own).
    const MAPPED: u64 = 1;
    const READS: u64 = 2;
    const SPINS: u64 = 4;
    let mine = match area {
        Some(_) => {
            MAPPED
                | if cma::available() { READS } else { 0 }
                | if wait == WaitPolicy::Spin { SPINS } else { 0 }
        }
        None => 0,
    };
    let mapped = gather_words(b, words, mine);
    let verdict = b.temp(8);
    if me == 0 {
        unlink(&name);
        let all = mapped.map_or(0, |m| {
            m.iter().fold(MAPPED | READS | SPINS, |all, &w| all & w)
        });
        b.bytes_now(verdict)?.copy_from_slice(&all.to_le_bytes());
    }
    bcast_binomial(b, verdict, 0);
    let all = word(b.bytes_now(verdict)?);
    Some(Node {
        area: area.filter(|_| all & MAPPED != 0)?,
        single_copy: match (all & READS != 0, all & SPINS != 0) {
            (false, _) => SingleCopy::Never,
            (true, false) => SingleCopy::SharedCores,
            (true, true) => SingleCopy::OwnCores,
        },
        pid: std::process::id(),
        me,
        members,
        shared,
        wait,
        route,
        last: AtomicU64::new(0),
        wrote: std::array::from_fn(|_| AtomicU64::new(0)),
        seen: (0..members).map(|_| AtomicU64::new(0)).collect(),
    })
}

/// Every member's `value` at member 0 (in `words`, one 8-byte word each): the words there,
/// `Some(empty)` elsewhere, `None` if a message failed.
fn gather_words(b: &mut Builder, words: Buf, value: u64) -> Option<SmallVec<[u64; 8]>> {
    let (me, members) = (b.rank() as usize, b.size() as usize);
    let mine = words.part(8 * me, 8);
    b.bytes_now(mine)?.copy_from_slice(&value.to_le_bytes());
    if me != 0 {
        b.send(0, mine);
        return b.ok_now().then(SmallVec::new);
    }
    let receives: SmallVec<[Xfer; 8]> = (1..members)
        .map(|j| Xfer::Recv {
            from: j as i32,
            buf: words.part(8 * j, 8),
        })
        .collect();
    b.exchange_all(&receives);
    let all = b.bytes_now(words)?;
    Some(all.chunks_exact(8).map(word).collect())
}

fn word(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes[..8].try_into().unwrap_or_default())
}

/// The size and name of round 2's notice.
fn read_notice(text: &[u8]) -> (usize, String) {
    let cap = word(text) as usize;
    let name = &text[8..];
    let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    (cap, String::from_utf8_lossy(&name[..end]).into_owned())
}
