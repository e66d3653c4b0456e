//! Reaching a target: what each rank published at creation ([`Record`]), the remote keys
//! unpacked for its endpoint (on first use), where an access lands (range checks, and the
//! attached region of a dynamic window, found in the target's directory), and waiting for a
//! transport request with the target's failure turned into [`Error::ProcFailed`].

use super::memory::{Directory, DIRECTORY_KEY_BYTES};
use super::sync::Epoch;
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
        for w in [self.base, self.size, self.disp_unit as u64, self.control, self.directory] {
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
            Ok(u64::from_ne_bytes(take(at, 8)?.try_into().map_err(|_| bad())?))
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
        }
    }

    /// The registrations and the unpacked keys, to be released.
    pub(crate) fn take_resources(&mut self) -> (Vec<MemRegion>, Vec<Keys>) {
        self.dynamic.iter_mut().for_each(Vec::clear);
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
    Control,
    Dynamic(usize),
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
                    Error::Transport(_) if peers.len() == 1 => Error::ProcFailed {
                        rank: peers[0] as i32,
                    },
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
        let covering = |regions: &[(u64, u64, RemoteKey)]| {
            regions
                .iter()
                .position(|r| from >= r.0 as i128 && to <= r.0 as i128 + r.1 as i128)
        };
        let mut found = covering(&st.dynamic[rank]);
        if found.is_none() {
            self.read_directory(st, rank)?;
            found = covering(&st.dynamic[rank]);
        }
        let i = found.ok_or_else(|| {
            range(format!(
                "addresses {from:#x}..{to:#x} are not attached at rank {rank}"
            ))
        })?;
        Ok(Some(Located {
            rank,
            addr: disp as u64,
            key: KeyRef::Dynamic(i),
        }))
    }

    /// Reads the directory of member `rank`'s dynamic window and unpacks its regions' keys.
    fn read_directory(&self, st: &mut State, rank: usize) -> Result<()> {
        let mut bytes = vec![0u8; std::mem::size_of::<Directory>()];
        let at = self.targets[rank].rec.directory;
        let req = self.on_target(st, rank, |w, ep, keys, _| {
            let key = keys.directory.as_ref().ok_or(Error::InvalidRequest)?;
            // SAFETY: `bytes` lives until the wait below has seen the get complete.
            let r = unsafe { w.get(ep, bytes.as_mut_ptr(), bytes.len(), at, key) }?;
            Ok(r)
        })?;
        self.wait_on(req, rank)?;
        let entries = Directory::from_bytes(&bytes);
        let world = self.targets[rank].world;
        let regions = self.comm.shared.with(|e| {
            let (w, ep) = e.rma_endpoint(world)?;
            entries
                .iter()
                .filter(|d| d.key_len as usize <= DIRECTORY_KEY_BYTES)
                .map(|d| Ok((d.base, d.len, w.rkey_unpack(ep, &d.key[..d.key_len as usize])?)))
                .collect::<Result<Vec<_>>>()
        })?;
        let old = std::mem::replace(&mut st.dynamic[rank], regions);
        let _ = self.comm.shared.with(|_| {
            drop(old);
            Ok(())
        });
        Ok(())
    }
}

/// The key `k` names among a target's keys.
pub(crate) fn key_of<'k>(
    keys: &'k Keys,
    dynamic: &'k [(u64, u64, RemoteKey)],
    k: KeyRef,
) -> Result<&'k RemoteKey> {
    match k {
        KeyRef::Data => keys.data.as_ref(),
        KeyRef::Control => Some(&keys.control),
        KeyRef::Dynamic(i) => dynamic.get(i).map(|r| &r.2),
    }
    .ok_or_else(|| Error::Rma(RmaError::Range, "the target exposes no memory".into()))
}
