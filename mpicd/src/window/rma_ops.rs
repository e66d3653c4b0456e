//! The communication calls: put and get (one UCX operation per contiguous run of the target
//! datatype; a non-contiguous origin is packed before a put and unpacked after the flush that
//! completes a get), and the accumulate family (accumulate, get-accumulate, fetch-and-op,
//! compare-and-swap). Over UCX every accumulate-class operation runs under the target's
//! accumulate lock (read, combine locally, write back, flush, release), so all of them are
//! atomic with respect to each other, per element and more, whatever the type and op. On a
//! mapped window, elements of 1, 2, 4 and 8 bytes are instead changed one by one with the
//! CPU's atomics, without the lock ([`super::element`] says why that is atomic enough); only
//! larger or misaligned elements take the lock there.

use super::access::{keyring, Deferred, Keyring, Located, State};
use super::{direct, element, packed_len, Window};
use crate::error::{Error, Result};
use crate::reduction::{reduce_local, CombineFn, ReduceOp};
use crate::transport::{Endpoint, UcxRequest, Worker};
use crate::{ElementType, TypedBuf, PROC_NULL};
use smallvec::SmallVec;
use std::sync::Arc;

/// What an accumulate does with the target's elements.
#[derive(Clone)]
pub enum AccumulateOp {
    /// `MPI_REPLACE`: the origin's elements replace them.
    Replace,
    /// `MPI_NO_OP`: they stay (get-accumulate then only reads them, atomically).
    NoOp,
    /// A predefined reduction on elements of a known type (what the CPU's atomics do on a
    /// mapped window: an integer sum is one atomic add).
    Reduce(ReduceOp, ElementType),
    /// Any other combination: `combine(target, origin)` sets the target's packed elements.
    Combine(Arc<CombineFn>),
}

/// Posts one UCX operation per contiguous run of `target` (base 0, at remote `addr`), each
/// with the next bytes of the packed stream at `local`; `put` chooses the direction. The
/// requests of operations not complete at once go to `pending`.
///
/// # Safety
/// `local` must hold the packed size of `target` (readable for a put, writable for a get)
/// until the requests and a flush of the endpoint complete.
#[allow(clippy::too_many_arguments)]
unsafe fn each_run(
    w: &Worker,
    ep: &Endpoint,
    ring: &Keyring,
    addr: u64,
    target: &TypedBuf,
    local: *mut u8,
    put: bool,
    pending: &mut Vec<UcxRequest>,
) -> Result<()> {
    let mut post = |at: usize, len: usize, pos: usize| -> Result<()> {
        let (mut remote, mut len, mut pos) = (addr.wrapping_add(at as u64), len, pos);
        while len > 0 {
            // A run may cross from one attached region of a dynamic window to the next.
            let (key, end) = ring.at(remote)?;
            let n = (end - remote).min(len as u64) as usize;
            // SAFETY: `pos + n` stays within the packed size, which the caller's buffer holds.
            let req = unsafe {
                match put {
                    true => w.put(ep, local.add(pos), n, remote, key),
                    false => w.get(ep, local.add(pos), n, remote, key),
                }
            }?;
            pending.extend(req);
            (remote, len, pos) = (remote + n as u64, len - n, pos + n);
        }
        Ok(())
    };
    if let Some((at, len)) = target.contiguous() {
        return post(at as usize, len, 0);
    }
    let (mut pos, mut outcome) = (0usize, Ok(()));
    target.for_each_run(|at, len| {
        if outcome.is_ok() && len > 0 {
            outcome = post(at as usize, len, pos);
        }
        pos += len;
    });
    outcome
}

impl Window {
    /// Checks the target rank and the epoch; `None` for `MPI_PROC_NULL`.
    fn begin(&self, rank: i32) -> Result<Option<std::sync::MutexGuard<'_, State>>> {
        if rank == PROC_NULL {
            return Ok(None);
        }
        self.check_rank(rank)?;
        let st = self.lock_state();
        self.check_access(&st, rank as usize)?;
        Ok(Some(st))
    }

    /// `MPI_Put`: writes the origin's data to `target` (a [`TypedBuf`] with base 0) at
    /// displacement `disp` of member `rank`; complete at the next synchronization.
    ///
    /// # Safety
    /// The origin's type map must stay readable and unchanged until the operation completes.
    pub unsafe fn put(
        &self,
        origin: &TypedBuf,
        rank: i32,
        disp: i64,
        target: &TypedBuf,
    ) -> Result<()> {
        let Some(mut st) = self.begin(rank)? else {
            return Ok(());
        };
        let r = rank as usize;
        same_size(origin, target)?;
        let Some(loc) = self.locate(&mut st, r, disp, target)? else {
            return Ok(());
        };
        if let Some(m) = &self.mapped {
            let at = m.data(r, loc.addr, self.targets[r].rec.base);
            // SAFETY: `locate` checked the range; the origin is readable (the caller's
            // promise), or packed here.
            match origin.contiguous() {
                Some((p, _)) => unsafe { direct::copy_runs(at, target, p, true) },
                None => {
                    let mut v = SmallVec::<[u8; 256]>::from_elem(0, packed_len(origin)?);
                    unsafe {
                        origin.pack(0, &mut v);
                        direct::copy_runs(at, target, v.as_mut_ptr(), true)
                    }
                }
            }
            return Ok(());
        }
        let (src, packed) = match origin.contiguous() {
            Some((p, _)) => (p, None),
            None => {
                let mut v = vec![0u8; packed_len(origin)?];
                // SAFETY: the caller's promise: the origin is readable.
                unsafe { origin.pack(0, &mut v) };
                (v.as_mut_ptr(), Some(v))
            }
        };
        let mut pending = Vec::new();
        let posted = self.on_target(&mut st, r, |w, ep, keys, dynamic| {
            let ring = keyring(keys, dynamic, loc.key)?;
            // SAFETY: the origin (or its packed copy, kept in `deferred` below) stays valid
            // until the flush that completes the put.
            unsafe { each_run(w, ep, &ring, loc.addr, target, src, true, &mut pending) }
        });
        st.inflight.extend(pending.into_iter().map(|q| (r, q)));
        posted?;
        if let Some(v) = packed {
            st.deferred.push(Deferred::Keep { rank: r, _buf: v });
        }
        Ok(())
    }

    /// `MPI_Get`: reads `target` at displacement `disp` of member `rank` into the origin;
    /// the data is there after the next synchronization.
    ///
    /// # Safety
    /// The origin's type map must stay writable and untouched until the operation completes.
    pub unsafe fn get(
        &self,
        origin: &TypedBuf,
        rank: i32,
        disp: i64,
        target: &TypedBuf,
    ) -> Result<()> {
        let Some(mut st) = self.begin(rank)? else {
            return Ok(());
        };
        let r = rank as usize;
        same_size(origin, target)?;
        let Some(loc) = self.locate(&mut st, r, disp, target)? else {
            return Ok(());
        };
        if let Some(m) = &self.mapped {
            let at = m.data(r, loc.addr, self.targets[r].rec.base);
            // SAFETY: `locate` checked the range; the origin is writable (the caller's
            // promise), or staged here and unpacked into it.
            match origin.contiguous() {
                Some((p, _)) => unsafe { direct::copy_runs(at, target, p, false) },
                None => {
                    let mut v = SmallVec::<[u8; 256]>::from_elem(0, packed_len(origin)?);
                    unsafe {
                        direct::copy_runs(at, target, v.as_mut_ptr(), false);
                        origin.unpack(0, &v);
                    }
                }
            }
            return Ok(());
        }
        let (dst, staged) = match origin.contiguous() {
            Some((p, _)) => (p, None),
            None => {
                let mut v = vec![0u8; packed_len(origin)?];
                (v.as_mut_ptr(), Some(v))
            }
        };
        let mut pending = Vec::new();
        let posted = self.on_target(&mut st, r, |w, ep, keys, dynamic| {
            let ring = keyring(keys, dynamic, loc.key)?;
            // SAFETY: the origin (or the staging buffer, kept in `deferred` below) stays valid
            // until the flush that completes the get.
            unsafe { each_run(w, ep, &ring, loc.addr, target, dst, false, &mut pending) }
        });
        st.inflight.extend(pending.into_iter().map(|q| (r, q)));
        posted?;
        if let Some(buf) = staged {
            st.deferred.push(Deferred::Unpack {
                rank: r,
                buf,
                dest: origin.clone(),
            });
        }
        Ok(())
    }

    /// `MPI_Accumulate` (`result` `None`) and `MPI_Get_accumulate`: combines `origin` (the
    /// packed origin elements; empty for [`AccumulateOp::NoOp`]) into `target` at `disp` of
    /// member `rank`, atomically with every other accumulate; with `result`, the target's
    /// previous elements land there. Complete (at the target too) when it returns.
    ///
    /// # Safety
    /// `result`'s type map must be writable.
    pub unsafe fn accumulate(
        &self,
        origin: &[u8],
        result: Option<&TypedBuf>,
        rank: i32,
        disp: i64,
        target: &TypedBuf,
        op: &AccumulateOp,
    ) -> Result<()> {
        let Some(mut st) = self.begin(rank)? else {
            return Ok(());
        };
        let r = rank as usize;
        let len = packed_len(target)?;
        if !matches!(op, AccumulateOp::NoOp) && origin.len() != len {
            return Err(Error::truncated(origin.len() as u64, len as u64));
        }
        if let Some(res) = result {
            same_size(res, target)?;
        }
        let Some(loc) = self.locate(&mut st, r, disp, target)? else {
            return Ok(());
        };
        if let Some(width) = self.element_width(target) {
            // SAFETY: `locate` checked the range; the result is writable (the caller's promise).
            return unsafe {
                self.accumulate_elements(&mut st, &loc, target, width, origin, result, op)
            };
        }
        self.acquire_accumulate(&mut st, r)?;
        let read = result.is_some() || !matches!(op, AccumulateOp::NoOp | AccumulateOp::Replace);
        let outcome = self.read_modify_write(&mut st, &loc, target, read, |old| {
            if let Some(res) = result {
                // SAFETY: the caller's promise: the result is writable.
                unsafe { res.unpack(0, old) };
            }
            match op {
                AccumulateOp::NoOp => Ok(false),
                AccumulateOp::Replace => {
                    old.copy_from_slice(origin);
                    Ok(true)
                }
                AccumulateOp::Reduce(rop, e) => reduce_local(*rop, *e, old, origin).map(|()| true),
                AccumulateOp::Combine(f) => f(old, origin).map(|()| true),
            }
        });
        let released = self.release_accumulate(&mut st, r);
        outcome.and(released)
    }

    /// `MPI_Compare_and_swap` on one element of `origin.len()` bytes at `disp` of member
    /// `rank`: the element's old value lands in `result`; it becomes `origin` if it equalled
    /// `compare`. Atomic with every accumulate; complete when it returns.
    pub fn compare_and_swap(
        &self,
        origin: &[u8],
        compare: &[u8],
        result: &mut [u8],
        rank: i32,
        disp: i64,
        target: &TypedBuf,
    ) -> Result<()> {
        let Some(mut st) = self.begin(rank)? else {
            return Ok(());
        };
        let r = rank as usize;
        let n = packed_len(target)?;
        if origin.len() != n || compare.len() != n || result.len() != n {
            return Err(Error::InvalidArgument(
                "compare-and-swap operands differ in size".into(),
            ));
        }
        let Some(loc) = self.locate(&mut st, r, disp, target)? else {
            return Ok(());
        };
        if let (Some(width), Some(m)) = (self.element_width(target), &self.mapped) {
            let at = m.data(r, loc.addr, self.targets[r].rec.base);
            if width == n && at as usize % width == 0 {
                // SAFETY: `locate` checked the range; aligned, as just checked.
                unsafe { element::compare_swap(at, n, origin, compare, result) };
                return Ok(());
            }
        }
        self.acquire_accumulate(&mut st, r)?;
        let outcome = self.read_modify_write(&mut st, &loc, target, true, |old| {
            result.copy_from_slice(old);
            if old == compare {
                old.copy_from_slice(origin);
                return Ok(true);
            }
            Ok(false)
        });
        let released = self.release_accumulate(&mut st, r);
        outcome.and(released)
    }

    /// Reads `target`'s elements (when `read`), lets `f` change them (it says whether it
    /// did: then they are written back and flushed, complete at the target before the caller
    /// releases the target's accumulate lock, which it holds).
    fn read_modify_write(
        &self,
        st: &mut State,
        loc: &Located,
        target: &TypedBuf,
        read: bool,
        f: impl FnOnce(&mut [u8]) -> Result<bool>,
    ) -> Result<()> {
        if let Some(m) = &self.mapped {
            let at = m.data(loc.rank, loc.addr, self.targets[loc.rank].rec.base);
            let mut tmp = SmallVec::<[u8; 64]>::from_elem(0, packed_len(target)?);
            // SAFETY: `locate` checked the range; `tmp` holds the packed size.
            if read {
                unsafe { direct::copy_runs(at, target, tmp.as_mut_ptr(), false) };
            }
            if f(&mut tmp)? {
                // SAFETY: as above.
                unsafe { direct::copy_runs(at, target, tmp.as_mut_ptr(), true) };
            }
            return Ok(());
        }
        let mut tmp = vec![0u8; packed_len(target)?];
        let p = tmp.as_mut_ptr();
        if read {
            let mut pending = Vec::new();
            let posted = self.on_target(st, loc.rank, |w, ep, keys, dynamic| {
                let ring = keyring(keys, dynamic, loc.key)?;
                // SAFETY: `tmp` lives until the requests below have completed (a get done at
                // once returns no request).
                unsafe { each_run(w, ep, &ring, loc.addr, target, p, false, &mut pending) }
            });
            self.wait_all(pending, loc.rank)?;
            posted?;
        }
        if !f(&mut tmp)? {
            return Ok(());
        }
        let p = tmp.as_mut_ptr();
        let mut pending = Vec::new();
        let req = self.on_target(st, loc.rank, |w, ep, keys, dynamic| {
            let ring = keyring(keys, dynamic, loc.key)?;
            // SAFETY: as above; `tmp` lives until the requests and the flush have completed.
            unsafe { each_run(w, ep, &ring, loc.addr, target, p, true, &mut pending) }?;
            // A flush, not a worker fence: UCX's default (weak) fence orders operations on one
            // lane only, and the lock word is reached on another (lost updates were seen).
            w.flush_endpoint(ep)
        });
        self.wait_all(pending, loc.rank)?;
        self.wait_on(req?, loc.rank)
    }
}

/// `Truncated` unless both sides move the same number of bytes.
fn same_size(origin: &TypedBuf, target: &TypedBuf) -> Result<()> {
    if origin.packed_size() != target.packed_size() {
        return Err(Error::truncated(origin.packed_size(), target.packed_size()));
    }
    Ok(())
}
