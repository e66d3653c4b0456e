//! Reaching a target: what each rank published at creation ([`Record`]), the remote keys
//! unpacked for its endpoint (on first use), where an access lands (range checks, and the
//! attached region of a dynamic window, found in the target's directory), and waiting for a
//! transport request with the target's failure turned into [`Error::ProcFailed`].

use super::epoch::Epoch;
use super::memory::{Directory, DIRECTORY_HEADER, ENTRY_BYTES};
use super::{Flavor, Keys, Window};
use crate::engine::Engine;
use crate::error::{Error, Result, RmaError};
use crate::transport::{Endpoint, MemRegion, RemoteKey, UcxRequest, Worker};
use crate::TypedBuf;
use std::task::Poll;

/// What a rank tells the others about its side of a window.
pub(crate) struct Record {
    pub base: u64,
    pub size: u64,
    pub disp_unit: u32,
    pub control: u64,
    pub directory: u64,
    pub key: Vec<u8>,
    pub control_key: Vec<u8>,
    pub directory_key: Vec<u8>,
}

impl Record {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut v = Vec::new();
        for w in [
            self.base,
            self.size,
            self.disp_unit as u64,
            self.control,
            self.directory,
        ] {
            v.extend_from_slice(&w.to_ne_bytes());
        }
        for k in [&self.key, &self.control_key, &self.directory_key] {
            v.extend_from_slice(&(k.len() as u64).to_ne_bytes());
            v.extend_from_slice(k);
        }
        v
    }

    pub(crate) fn decode(b: &[u8]) -> Result<Record> {
        let bad = || Error::Transport("a malformed window record".into());
        let take = |at: &mut usize, n: usize| -> Result<&[u8]> {
            let piece = b.get(*at..*at + n).ok_or_else(bad)?;
            *at += n;
            Ok(piece)
        };
        let word = |at: &mut usize| -> Result<u64> {
            Ok(u64::from_ne_bytes(
                take(at, 8)?.try_into().map_err(|_| bad())?,
            ))
        };
        let mut at = 0usize;
        let (base, size, unit, control, directory) = (
            word(&mut at)?,
            word(&mut at)?,
            word(&mut at)?,
            word(&mut at)?,
            word(&mut at)?,
        );
        let mut keys = Vec::new();
        for _ in 0..3 {
            let n = word(&mut at)? as usize;
            keys.push(take(&mut at, n)?.to_vec());
        }
        let directory_key = keys.pop().unwrap_or_default();
        let control_key = keys.pop().unwrap_or_default();
        let key = keys.pop().unwrap_or_default();
        Ok(Record {
            base,
            size,
            disp_unit: unit as u32,
            control,
            directory,
            key,
            control_key,
            directory_key,
        })
    }
}

/// A member of the window: its world rank and what it published.
pub(crate) struct TargetInfo {
    pub world: u32,
    pub rec: Record,
}

/// Memory to release or fill once the operations of a target have completed.
pub(crate) enum Deferred {
    /// The packed origin of a put: freed after the flush.
    Keep { rank: usize, _buf: Vec<u8> },
    /// The target data of a get: unpacked into the origin buffer after the flush.
    Unpack {
        rank: usize,
        buf: Vec<u8>,
        dest: TypedBuf,
    },
}

impl Deferred {
    fn rank(&self) -> usize {
        match self {
            Deferred::Keep { rank, .. } | Deferred::Unpack { rank, .. } => *rank,
        }
    }
}

/// The mutable side of a window.
pub(crate) struct State {
    regions: Vec<MemRegion>,
    keys: Vec<Option<Keys>>,
    /// Per target of a dynamic window: the attached regions last read from its directory.
    dynamic: Vec<Vec<(u64, u64, RemoteKey)>>,
    /// Regions this rank attached to its dynamic window.
    pub attached: Vec<(u64, u64, MemRegion)>,
    pub epoch: Epoch,
    pub deferred: Vec<Deferred>,
    /// Requests of puts and gets not complete at once, by target, until their flush.
    pub inflight: Vec<(usize, UcxRequest)>,
}

impl State {
    pub(crate) fn new(regions: Vec<MemRegion>, members: usize) -> State {
        State {
            regions,
            keys: (0..members).map(|_| None).collect(),
            dynamic: (0..members).map(|_| Vec::new()).collect(),
            attached: Vec::new(),
            epoch: Epoch::new(members),
            deferred: Vec::new(),
            inflight: Vec::new(),
        }
    }

    /// The registrations and the unpacked keys, to be released.
    pub(crate) fn take_resources(&mut self) -> (Vec<MemRegion>, Vec<Keys>) {
        self.dynamic.iter_mut().for_each(Vec::clear);
        self.inflight.clear();
        let keys = self.keys.iter_mut().filter_map(Option::take).collect();
        (std::mem::take(&mut self.regions), keys)
    }

    /// Finishes the deferred work of the targets `which` selects, after their flush.
    pub(crate) fn settle(&mut self, which: impl Fn(usize) -> bool) {
        let (done, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.deferred)
            .into_iter()
            .partition(|d| which(d.rank()));
        self.deferred = kept;
        for d in done {
            if let Deferred::Unpack { buf, dest, .. } = d {
                // SAFETY: the origin buffer of a get stays valid until the operation
                // completes, which is now (MPI's rule, which the caller of `get` promised).
                unsafe { dest.unpack(0, &buf) };
            }
        }
    }
}

/// Which key reaches the bytes of an access.
#[derive(Debug, Clone, Copy)]
pub(crate) enum KeyRef {
    Data,
    /// The attached regions of a dynamic window (an access may span adjacent ones).
    Dynamic,
}

/// Where an access lands: the remote address of the target datatype's offset 0.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Located {
    pub rank: usize,
    pub addr: u64,
    pub key: KeyRef,
}

/// The byte span `[lo, hi)` that `t` (with base 0) touches; `None` when it holds no data.
fn span(t: &TypedBuf) -> Option<(i128, i128)> {
    if t.packed_size() == 0 {
        return None;
    }
    let dt = t.datatype();
    let count = t.packed_size() / dt.size().max(1);
    let (ext, tl, te) = (
        dt.extent() as i128,
        dt.true_lb() as i128,
        dt.true_extent() as i128,
    );
    let last = (count as i128 - 1) * ext;
    Some((tl + last.min(0), tl + te + last.max(0)))
}

impl Window {
    /// Runs `f` with the worker, the endpoint to member `rank` and its keys (unpacked on
    /// first use), under the engine's lock.
    pub(crate) fn on_target<R>(
        &self,
        st: &mut State,
        rank: usize,
        f: impl FnOnce(&Worker, &Endpoint, &Keys, &[(u64, u64, RemoteKey)]) -> Result<R>,
    ) -> Result<R> {
        let t = &self.targets[rank];
        self.comm.shared.with(|e: &mut Engine| {
            let (w, ep) = e.rma_endpoint(t.world)?;
            if st.keys[rank].is_none() {
                let data = match t.rec.key.is_empty() {
                    true => None,
                    false => Some(w.rkey_unpack(ep, &t.rec.key)?),
                };
                let directory = match t.rec.directory_key.is_empty() {
                    true => None,
                    false => Some(w.rkey_unpack(ep, &t.rec.directory_key)?),
                };
                st.keys[rank] = Some(Keys {
                    data,
                    control: w.rkey_unpack(ep, &t.rec.control_key)?,
                    directory,
                });
            }
            let keys = st.keys[rank].as_ref().ok_or(Error::InvalidRequest)?;
            f(w, ep, keys, &st.dynamic[rank])
        })
    }

    /// Waits for a transport request of an access to member `rank`; a transport error, or
    /// the member's failure while waiting, is `ProcFailed`.
    pub(crate) fn wait_on(&self, req: Option<UcxRequest>, rank: usize) -> Result<()> {
        self.wait_for(req, &[self.targets[rank].world])
    }

    /// Waits for every request of `reqs`, accesses to member `rank` (each is released on
    /// completion; on a failure the others are released unfinished, which UCX allows).
    pub(crate) fn wait_all(&self, reqs: Vec<UcxRequest>, rank: usize) -> Result<()> {
        let mut outcome = Ok(());
        for r in reqs {
            match outcome {
                Ok(()) => outcome = self.wait_on(Some(r), rank),
                Err(_) => {
                    let _ = self.comm.shared.with(|_| {
                        drop(r);
                        Ok(())
                    });
                }
            }
        }
        outcome
    }

    /// Waits for the requests in flight to the members `which` selects.
    pub(crate) fn wait_inflight(
        &self,
        st: &mut State,
        which: impl Fn(usize) -> bool,
    ) -> Result<()> {
        let (mine, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut st.inflight)
            .into_iter()
            .partition(|(r, _)| which(*r));
        st.inflight = kept;
        let mut outcome = Ok(());
        for (r, q) in mine {
            let waited = self.wait_on(Some(q), r);
            outcome = outcome.and(waited);
        }
        outcome
    }

    /// Waits for a request that depends on the world ranks `peers`.
    pub(crate) fn wait_for(&self, req: Option<UcxRequest>, peers: &[u32]) -> Result<()> {
        let mut req = req;
        if req.is_none() {
            // Done at once; progress all the same, so that a loop of such calls (a spin lock
            // on this process's own window) still serves the other processes' accesses.
            return self.comm.shared.with(|e| {
                e.progress();
                Ok(())
            });
        }
        let failed = |e: &Engine| peers.iter().find_map(|&p| e.rma_peer_alive(p).err());
        self.comm.shared.progress_until(|e| {
            match e.rma_worker().poll_send(&mut req) {
                Poll::Ready(Ok(())) => Ok(Some(Ok(()))),
                Poll::Ready(Err(err)) => Ok(Some(Err(failed(e).unwrap_or(match err {
                    // A lost peer the transport could not name (see `status_error`).
                    Error::Transport(_) | Error::ProcFailed { rank: -1 } if peers.len() == 1 => {
                        Error::ProcFailed {
                            rank: peers[0] as i32,
                        }
                    }
                    other => other,
                })))),
                Poll::Pending => match failed(e) {
                    Some(dead) => {
                        // Released now; UCX frees the request when it completes.
                        drop(req.take());
                        Ok(Some(Err(dead)))
                    }
                    None => Ok(None),
                },
            }
        })?
    }

    /// Where an access of `t` (base 0) at displacement `disp` of member `rank` lands, checked
    /// against the target's window (`None` for an access of no data).
    pub(crate) fn locate(
        &self,
        st: &mut State,
        rank: usize,
        disp: i64,
        t: &TypedBuf,
    ) -> Result<Option<Located>> {
        let Some((lo, hi)) = span(t) else {
            return Ok(None);
        };
        let target = &self.targets[rank];
        let range = |why: String| Error::Rma(RmaError::Range, why);
        if self.flavor != Flavor::Dynamic {
            let at = disp as i128 * target.rec.disp_unit as i128;
            if at + lo < 0 || at + hi > target.rec.size as i128 {
                return Err(range(format!(
                    "bytes {}..{} of a {}-byte window at rank {rank}",
                    at + lo,
                    at + hi,
                    target.rec.size
                )));
            }
            return Ok(Some(Located {
                rank,
                addr: (target.rec.base as i128 + at) as u64,
                key: KeyRef::Data,
            }));
        }
        let (from, to) = (disp as i128 + lo, disp as i128 + hi);
        if !covered(&st.dynamic[rank], from, to) {
            self.read_directory(st, rank)?;
            if !covered(&st.dynamic[rank], from, to) {
                return Err(range(format!(
                    "addresses {from:#x}..{to:#x} are not attached at rank {rank}"
                )));
            }
        }
        Ok(Some(Located {
            rank,
            addr: disp as u64,
            key: KeyRef::Dynamic,
        }))
    }

    /// Reads the directory of member `rank`'s dynamic window and unpacks its regions' keys.
    fn read_directory(&self, st: &mut State, rank: usize) -> Result<()> {
        let at = self.targets[rank].rec.directory;
        let mut header = vec![0u8; 8];
        self.read_control(st, rank, at, &mut header)?;
        let used = Directory::used_of(&header);
        let mut bytes = vec![0u8; used * ENTRY_BYTES];
        if used > 0 {
            self.read_control(st, rank, at + DIRECTORY_HEADER as u64, &mut bytes)?;
        }
        let entries = Directory::from_bytes(&bytes);
        let world = self.targets[rank].world;
        let regions = self.comm.shared.with(|e| {
            let (w, ep) = e.rma_endpoint(world)?;
            entries
                .iter()
                .map(|d| Ok((d.base, d.len, w.rkey_unpack(ep, &d.key)?)))
                .collect::<Result<Vec<_>>>()
        })?;
        let old = std::mem::replace(&mut st.dynamic[rank], regions);
        let _ = self.comm.shared.with(|_| {
            drop(old);
            Ok(())
        });
        Ok(())
    }

    /// Reads `into.len()` bytes at `at` of member `rank`'s directory, and waits.
    fn read_control(&self, st: &mut State, rank: usize, at: u64, into: &mut [u8]) -> Result<()> {
        let (p, n) = (into.as_mut_ptr(), into.len());
        let req = self.on_target(st, rank, |w, ep, keys, _| {
            let key = keys.directory.as_ref().ok_or(Error::InvalidRequest)?;
            // SAFETY: `into` lives until the wait below has seen the get complete.
            unsafe { w.get(ep, p, n, at, key) }
        })?;
        self.wait_on(req, rank)
    }
}

/// True when the regions cover every byte of `[from, to)`.
fn covered(regions: &[(u64, u64, RemoteKey)], from: i128, to: i128) -> bool {
    let mut at = from;
    while at < to {
        match regions
            .iter()
            .find(|r| at >= r.0 as i128 && at < r.0 as i128 + r.1 as i128)
        {
            Some(r) => at = r.0 as i128 + r.1 as i128,
            None => return false,
        }
    }
    true
}

/// The keys an access uses: one for the whole window, or one per attached region.
pub(crate) enum Keyring<'k> {
    Single(&'k RemoteKey),
    Regions(&'k [(u64, u64, RemoteKey)]),
}

impl Keyring<'_> {
    /// The key of the byte at `addr` and the end of the region it belongs to.
    pub(crate) fn at(&self, addr: u64) -> Result<(&RemoteKey, u64)> {
        match self {
            Keyring::Single(k) => Ok((k, u64::MAX)),
            Keyring::Regions(rs) => rs
                .iter()
                .find(|r| addr >= r.0 && addr - r.0 < r.1)
                .map(|r| (&r.2, r.0 + r.1))
                .ok_or_else(|| {
                    Error::Rma(
                        RmaError::Range,
                        format!("address {addr:#x} is not attached"),
                    )
                }),
        }
    }
}

/// The keys `k` names among a target's keys.
pub(crate) fn keyring<'k>(
    keys: &'k Keys,
    dynamic: &'k [(u64, u64, RemoteKey)],
    k: KeyRef,
) -> Result<Keyring<'k>> {
    match k {
        KeyRef::Data => keys
            .data
            .as_ref()
            .map(Keyring::Single)
            .ok_or_else(|| Error::Rma(RmaError::Range, "the target exposes no memory".into())),
        KeyRef::Dynamic => Ok(Keyring::Regions(dynamic)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_survives_its_encoding() {
        let r = Record {
            base: 0x7f00_1234_5000,
            size: 4096,
            disp_unit: 8,
            control: 0x7f00_0000_1000,
            directory: 0,
            key: vec![1, 2, 3],
            control_key: vec![9; 40],
            directory_key: Vec::new(),
        };
        let encoded = r.encode();
        let d = Record::decode(&encoded).expect("decodes");
        assert_eq!((d.base, d.size, d.disp_unit), (r.base, r.size, r.disp_unit));
        assert_eq!((d.control, d.directory), (r.control, r.directory));
        assert_eq!(
            (d.key, d.control_key, d.directory_key),
            (r.key, r.control_key, r.directory_key)
        );
        assert!(Record::decode(&encoded[..30]).is_err());
    }

    #[test]
    fn the_span_of_a_typed_access_covers_its_runs() {
        use crate::{Datatype, ElementType};
        let int = Datatype::of(ElementType::I32);
        let column = Datatype::vector(4, 1, 4, &int).expect("vector");
        // Four ints 16 bytes apart: bytes 0..52.
        let t = TypedBuf::new(std::ptr::null(), 1, &column);
        assert_eq!(span(&t), Some((0, 52)));
        let two = TypedBuf::new(std::ptr::null(), 2, &int);
        assert_eq!(span(&two), Some((0, 8)));
        assert_eq!(span(&TypedBuf::new(std::ptr::null(), 0, &int)), None);
    }
}
