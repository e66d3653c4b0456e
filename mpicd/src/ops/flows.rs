//! Whole custom-typed messages through a send and a receive operation over the in-memory
//! transport ([`Fake`]), without UCX or a launcher: every receive phase (lead alone, region
//! table apart, body, zero-copy regions), and what failures on either side come to.

use super::fake::Fake;
use super::{Context, Destination, RecvOp, SendOp, Stranded};
use crate::datatype::ElementType;
use crate::error::{Error, Result};
use crate::group::Group;
use crate::plan::{CustomConfig, PackState, RawRegion, RawRegionMut, Reach, UnpackState};
use crate::route::Route;
use crate::status::Status;
use crate::tag::UserTag;
use std::sync::Arc;
use std::task::Poll;

const CONTEXT: u32 = 4;
const TAG: i32 = 7;

/// A message: packed bytes and regions, all owned (heap buffers never move).
#[derive(Clone, PartialEq, Debug)]
struct Object {
    packed: Vec<u8>,
    regions: Vec<Vec<u8>>,
}

impl Object {
    fn new(packed: usize, regions: &[usize]) -> Object {
        let fill = |n: usize, seed: usize| (0..n).map(|i| (i * 31 + seed) as u8).collect();
        Object {
            packed: fill(packed, 1),
            regions: regions
                .iter()
                .enumerate()
                .map(|(i, &n)| fill(n, i + 2))
                .collect(),
        }
    }

    fn zeroed_like(&self) -> Object {
        Object {
            packed: vec![0; self.packed.len()],
            regions: self.regions.iter().map(|r| vec![0; r.len()]).collect(),
        }
    }
}

/// The sender's state; `fail_at` makes pack fail from that offset on.
struct Packer {
    object: Object,
    fail_at: Option<u64>,
}

// SAFETY: the regions point into the object's own buffers, kept until the state is dropped.
unsafe impl PackState for Packer {
    fn packed_size(&mut self) -> Result<u64> {
        Ok(self.object.packed.len() as u64)
    }
    fn pack(&mut self, offset: u64, dst: &mut [u8]) -> Result<usize> {
        if self.fail_at.is_some_and(|at| offset >= at) {
            return Err(Error::RemoteFailure);
        }
        let src = &self.object.packed[offset as usize..];
        let n = src.len().min(dst.len());
        dst[..n].copy_from_slice(&src[..n]);
        Ok(n)
    }
    fn regions(&mut self) -> Result<Vec<RawRegion>> {
        Ok(self
            .object
            .regions
            .iter()
            .map(|r| RawRegion {
                ptr: r.as_ptr(),
                bytes: r.len(),
                elem: ElementType::U8,
            })
            .collect())
    }
}

/// The receiver's state, writing into a shared object so the test can read it afterwards.
struct Unpacker(Arc<std::sync::Mutex<Object>>);

// SAFETY: the regions point into the shared object's buffers, which outlive the state and are
// not resized while it lives.
unsafe impl UnpackState for Unpacker {
    fn resizes(&self) -> bool {
        false
    }
    fn packed_capacity(&mut self) -> Result<u64> {
        Ok(self.0.lock().unwrap().packed.len() as u64)
    }
    fn unpack(&mut self, offset: u64, src: &[u8]) -> Result<()> {
        let mut o = self.0.lock().unwrap();
        o.packed[offset as usize..offset as usize + src.len()].copy_from_slice(src);
        Ok(())
    }
    fn regions(&mut self) -> Result<Vec<RawRegionMut>> {
        let mut o = self.0.lock().unwrap();
        Ok(o.regions
            .iter_mut()
            .map(|r| RawRegionMut {
                ptr: r.as_mut_ptr(),
                bytes: r.len(),
                elem: ElementType::U8,
            })
            .collect())
    }
}

/// One process's side of the fake transport: its context's parts.
struct Side {
    rank: u32,
    config: CustomConfig,
    next_seq: u64,
    stranded: Vec<Stranded<Fake>>,
}

impl Side {
    fn new(rank: u32, config: CustomConfig) -> Side {
        Side {
            rank,
            config,
            next_seq: 0,
            stranded: Vec::new(),
        }
    }

    fn context<'a>(&'a mut self, link: &'a Fake) -> Context<'a, Fake> {
        Context {
            worker: link,
            config: &self.config,
            rank: self.rank,
            endpoint: Some(&()),
            next_seq: &mut self.next_seq,
            stranded: &mut self.stranded,
        }
    }
}

fn route() -> Route {
    Route {
        context: CONTEXT,
        group: Arc::new(Group::from_members(vec![0, 1])),
    }
}

struct Pair {
    link: Fake,
    sender: Side,
    receiver: Side,
    send: SendOp<Fake>,
    recv: RecvOp<Fake>,
    received: Arc<std::sync::Mutex<Object>>,
}

impl Pair {
    /// Posts the receive of `like`'s shape, then starts the send of `object`.
    fn start(object: &Object, like: &Object, config: CustomConfig, reach: Reach) -> Pair {
        Pair::start_with(object, None, like, config, reach)
    }

    fn start_with(
        object: &Object,
        fail_at: Option<u64>,
        like: &Object,
        config: CustomConfig,
        reach: Reach,
    ) -> Pair {
        let link = Fake::default();
        let mut receiver = Side::new(1, config);
        let mut sender = Side::new(0, config);
        let received = Arc::new(std::sync::Mutex::new(like.zeroed_like()));
        let m = UserTag::matcher(CONTEXT, Some(0), Some(TAG));
        let state = Box::new(Unpacker(Arc::clone(&received)));
        let recv = RecvOp::post(&mut receiver.context(&link), &route(), Some(0), m, state).unwrap();
        let to = Destination {
            context: CONTEXT,
            rank: 1,
            tag: TAG,
            reach,
        };
        let state = Box::new(Packer {
            object: object.clone(),
            fail_at,
        });
        let send = SendOp::start(&mut sender.context(&link), to, state, false).unwrap();
        Pair {
            link,
            sender,
            receiver,
            send,
            recv,
            received,
        }
    }

    /// Delivers and polls until both sides are done: their outcomes.
    fn run(&mut self) -> (Result<Status>, Result<Status>) {
        let (mut sent, mut got) = (None, None);
        for _ in 0..10_000 {
            self.link.deliver();
            if sent.is_none() {
                if let Poll::Ready(r) = self.send.poll(&mut self.sender.context(&self.link)) {
                    sent = Some(r);
                }
            }
            if got.is_none() {
                if let Poll::Ready(r) = self.recv.poll(&mut self.receiver.context(&self.link)) {
                    got = Some(r);
                }
            }
            if let (Some(s), Some(g)) = (&sent, &got) {
                return (s.clone(), g.clone());
            }
        }
        panic!("no completion: send {sent:?}, receive {got:?}");
    }
}

fn cfg(inline: usize, zcopy_threshold: usize, depth: usize) -> CustomConfig {
    CustomConfig {
        inline_bytes: inline,
        inline_split: 0,
        zcopy_threshold,
        zcopy_depth: depth,
        node_local: true,
    }
}

fn check(object: &Object, config: CustomConfig, reach: Reach, messages: usize) {
    let mut pair = Pair::start(object, object, config, reach);
    let (sent, got) = pair.run();
    sent.unwrap();
    let status = got.unwrap();
    assert_eq!((status.source, status.tag), (0, TAG));
    let total = object.packed.len() + object.regions.iter().map(Vec::len).sum::<usize>();
    assert_eq!(status.bytes, Some(total as u64));
    assert_eq!(*pair.received.lock().unwrap(), *object);
    assert_eq!(pair.link.delivered(), messages, "messages on the wire");
    assert_eq!(pair.link.unmatched(), (0, 0));
}

#[test]
fn a_small_message_is_its_lead_alone() {
    check(
        &Object::new(100, &[8, 8, 16]),
        cfg(4000, 1 << 20, 4),
        Reach::NodeLocal,
        1,
    );
}

#[test]
fn a_long_stream_goes_in_one_body_message_in_fragments() {
    let object = Object::new(50_000, &[3000, 3000, 17]);
    check(&object, cfg(4000, 1 << 20, 4), Reach::NodeLocal, 2);
}

#[test]
fn regions_from_the_threshold_travel_zero_copy_through_a_window() {
    // Seven regions of 5000 bytes go on their own, two at a time; the small one is coalesced
    // into a stream short enough for the lead.
    let object = Object::new(10, &[5000, 5000, 5000, 5000, 5000, 5000, 5000, 12]);
    check(&object, cfg(4000, 4096, 2), Reach::Remote, 1 + 7);
    // On this node every region is coalesced into the stream.
    check(&object, cfg(4000, 4096, 2), Reach::NodeLocal, 2);
}

#[test]
fn a_long_region_table_travels_apart() {
    let lengths: Vec<usize> = (1..=700).collect();
    let object = Object::new(64, &lengths);
    // Lead, table, body.
    check(&object, cfg(4000, 1 << 20, 4), Reach::NodeLocal, 3);
}

#[test]
fn a_receiver_too_small_fails_and_still_drains_the_sender() {
    let object = Object::new(20_000, &[5000, 5000, 9]);
    let small = Object::new(20_000, &[5000, 4999, 9]);
    let mut pair = Pair::start(&object, &small, cfg(4000, 4096, 1), Reach::Remote);
    let (sent, got) = pair.run();
    sent.unwrap();
    assert!(matches!(got, Err(Error::Truncated { .. })), "{got:?}");
    assert_eq!(pair.link.unmatched(), (0, 0), "every message was taken");
}

#[test]
fn a_pack_failure_after_the_lead_reaches_the_receiver() {
    let object = Object::new(30_000, &[5000, 5000]);
    let mut pair = Pair::start_with(
        &object,
        Some(10_000),
        &object,
        cfg(0, 4096, 1),
        Reach::Remote,
    );
    let (sent, got) = pair.run();
    assert!(sent.is_err());
    assert!(matches!(got, Err(Error::RemoteFailure)), "{got:?}");
    assert_eq!(
        pair.link.unmatched(),
        (0, 0),
        "the region tags got empty messages"
    );
}

#[test]
fn a_dead_peer_stops_both_sides_at_once() {
    let object = Object::new(30_000, &[5000; 6]);
    let mut pair = Pair::start(&object, &object, cfg(0, 4096, 2), Reach::Remote);
    // Only the lead goes through: the receive is in its transfer, the send has work in flight.
    pair.link.deliver();
    let mut ctx = pair.receiver.context(&pair.link);
    assert!(pair.recv.poll(&mut ctx).is_pending());
    pair.recv.abort(&pair.link, Error::ProcFailed { rank: 0 });
    pair.send.abort(&pair.link, Error::ProcFailed { rank: 1 });
    let mut ctx = pair.sender.context(&pair.link);
    assert!(matches!(
        pair.send.poll(&mut ctx),
        Poll::Ready(Err(Error::ProcFailed { rank: 1 }))
    ));
    // The send's requests still in flight were left to the engine, with their memory.
    assert!(!pair.sender.stranded.is_empty());
    let mut ctx = pair.receiver.context(&pair.link);
    assert!(matches!(
        pair.recv.poll(&mut ctx),
        Poll::Ready(Err(Error::ProcFailed { rank: 0 }))
    ));
}

#[test]
fn a_receive_cancelled_before_its_lead_reports_cancelled() {
    let link = Fake::default();
    let mut side = Side::new(1, cfg(4000, 1 << 20, 1));
    let received = Arc::new(std::sync::Mutex::new(Object::new(1, &[])));
    let m = UserTag::matcher(CONTEXT, Some(0), Some(TAG));
    let state = Box::new(Unpacker(received));
    let mut recv = RecvOp::post(&mut side.context(&link), &route(), Some(0), m, state).unwrap();
    assert!(recv.shape().is_none());
    recv.cancel(&link);
    match recv.poll(&mut side.context(&link)) {
        Poll::Ready(Ok(status)) => assert!(status.cancelled),
        other => panic!("{other:?}"),
    }
    // Nothing was reserved for a message that never came.
    assert_eq!(link.unmatched(), (0, 0));
}
