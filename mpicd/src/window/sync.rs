//! Epochs and synchronization: which targets this process may access now ([`Epoch`](super::epoch::Epoch): a fence
//! epoch, passive-target locks, a PSCW access group), fence, lock and unlock (shared and
//! exclusive, on the target's lock word with remote atomics only, so the target never has to
//! call MPI), lock-all, flushes, and post/start/complete/wait/test (posts and completions
//! counted in the control words of the origins and the targets).

use super::access::State;
use super::epoch::{Held, LockKind};
use super::memory::{word, EXCLUSIVE};
use super::Window;
use crate::error::{Error, Result, RmaError};
use crate::transport::AtomicOp;

fn sync_error(why: impl Into<String>) -> Error {
    Error::Rma(RmaError::Sync, why.into())
}

impl Window {
    /// `RmaSync` unless member `rank` may be accessed now.
    pub(crate) fn check_access(&self, st: &State, rank: usize) -> Result<()> {
        let e = &st.epoch;
        let in_group = e.access.as_ref().is_some_and(|g| g.contains(&rank));
        if e.fence || e.passive(rank) || in_group {
            return Ok(());
        }
        Err(sync_error(format!(
            "no access epoch is open on rank {rank} (fence, lock or start first)"
        )))
    }

    /// `RmaSync` unless member `rank` is in a passive-target epoch (request-based calls).
    pub fn check_passive(&self, rank: i32) -> Result<()> {
        if rank == crate::PROC_NULL {
            return Ok(());
        }
        self.check_rank(rank)?;
        match self.lock_state().epoch.passive(rank as usize) {
            true => Ok(()),
            false => Err(sync_error(
                "request-based operations need a passive-target epoch (lock or lock_all)",
            )),
        }
    }

    /// A remote atomic on control word `at` of member `rank`, complete at the target when it
    /// returns; returns the word's old value (`swap`: the new value of a compare-and-swap,
    /// whose operand is the value compared).
    fn control_atomic(
        &self,
        st: &mut State,
        rank: usize,
        op: AtomicOp,
        at: u64,
        value: u64,
        swap: Option<u64>,
    ) -> Result<u64> {
        if let Some(m) = &self.mapped {
            self.direct_alive(std::iter::once(rank))?;
            return Ok(m.atomic(rank, op, at, value, swap));
        }
        let v = value.to_ne_bytes();
        let mut reply = swap.unwrap_or(0).to_ne_bytes();
        let addr = self.targets[rank].rec.control + at;
        let (vp, rp) = (v.as_ptr(), reply.as_mut_ptr());
        let req = self.on_target(st, rank, |w, ep, keys, dynamic| {
            let _ = dynamic;
            let key = &keys.control;
            // SAFETY: `v` and `reply` live until the wait below has seen the request complete.
            // Always a fetching atomic: its completion is its completion at the target, with
            // no flush (UCX 1.13's flush after a posted software atomic could hang).
            unsafe { w.atomic(ep, op, 8, vp, Some(rp), addr, key) }
        })?;
        self.wait_on(req, rank)?;
        Ok(u64::from_ne_bytes(reply))
    }

    /// Takes member `rank`'s accumulate lock.
    pub(crate) fn acquire_accumulate(&self, st: &mut State, rank: usize) -> Result<()> {
        let me = self.targets[self.rank() as usize].world as u64 + 1;
        let mut tries = 0u32;
        while self.control_atomic(
            st,
            rank,
            AtomicOp::CompareSwap,
            word::ACCUMULATE,
            0,
            Some(me),
        )? != 0
        {
            // The holder may be waiting for this core (more processes than cores).
            tries += 1;
            match tries % 16 {
                0 => std::thread::yield_now(),
                _ => std::hint::spin_loop(),
            }
        }
        Ok(())
    }

    /// Releases member `rank`'s accumulate lock.
    pub(crate) fn release_accumulate(&self, st: &mut State, rank: usize) -> Result<()> {
        let me = self.targets[self.rank() as usize].world as u64 + 1;
        let minus = me.wrapping_neg();
        self.control_atomic(st, rank, AtomicOp::Add, word::ACCUMULATE, minus, None)
            .map(drop)
    }

    /// Takes member `rank`'s lock word as `kind`.
    fn take_lock(&self, st: &mut State, rank: usize, kind: LockKind) -> Result<()> {
        loop {
            match kind {
                LockKind::Exclusive => {
                    let old = self.control_atomic(
                        st,
                        rank,
                        AtomicOp::CompareSwap,
                        word::LOCK,
                        0,
                        Some(EXCLUSIVE),
                    )?;
                    if old == 0 {
                        return Ok(());
                    }
                }
                LockKind::Shared => {
                    let old = self.control_atomic(st, rank, AtomicOp::Add, word::LOCK, 1, None)?;
                    if old < EXCLUSIVE {
                        return Ok(());
                    }
                    self.control_atomic(
                        st,
                        rank,
                        AtomicOp::Add,
                        word::LOCK,
                        1u64.wrapping_neg(),
                        None,
                    )?;
                }
            }
            std::thread::yield_now();
        }
    }

    /// Gives back member `rank`'s lock word taken as `kind`.
    fn give_lock(&self, st: &mut State, rank: usize, kind: LockKind) -> Result<()> {
        let minus = match kind {
            LockKind::Exclusive => EXCLUSIVE.wrapping_neg(),
            LockKind::Shared => 1u64.wrapping_neg(),
        };
        self.control_atomic(st, rank, AtomicOp::Add, word::LOCK, minus, None)
            .map(drop)
    }

    /// `MPI_Win_lock`: a passive-target epoch on member `rank` (`nocheck`: no other process
    /// holds or wants a conflicting lock, so the lock word is left alone).
    pub fn lock(&self, kind: LockKind, rank: i32, nocheck: bool) -> Result<()> {
        if rank == crate::PROC_NULL {
            return Ok(());
        }
        self.check_rank(rank)?;
        let r = rank as usize;
        let mut st = self.lock_state();
        if st.epoch.locks[r].is_some() || st.epoch.lock_all.is_some() {
            return Err(sync_error(format!("rank {rank} is already locked")));
        }
        Self::leave_active(&mut st)?;
        if !nocheck {
            self.take_lock(&mut st, r, kind)?;
        }
        st.epoch.locks[r] = Some(Held {
            kind,
            taken: !nocheck,
        });
        self.access.publish(&st.epoch);
        Ok(())
    }

    /// Before a passive-target epoch: none inside a PSCW access epoch, and a fence epoch (one
    /// a fence without `MPI_MODE_NOSUCCEED` opened, with no call of its own: the two kinds
    /// never overlap) ends, so that communication after the unlock needs a fence again.
    fn leave_active(st: &mut State) -> Result<()> {
        if st.epoch.access.is_some() {
            return Err(sync_error(
                "a lock inside a PSCW access epoch (MPI_Win_start)",
            ));
        }
        st.epoch.fence = false;
        Ok(())
    }

    /// Refuses to free the window while this process is in an epoch other than a fence's:
    /// holding a lock, or between start and complete, or post and wait (`MPI_Win_free`).
    pub fn check_closed(&self) -> Result<()> {
        let st = self.lock_state();
        let e = &st.epoch;
        if e.lock_all.is_some() || e.locks.iter().any(Option::is_some) {
            return Err(sync_error("the window is freed while a lock on it is held"));
        }
        if e.access.is_some() || e.exposure.is_some() {
            return Err(sync_error("the window is freed inside a PSCW epoch"));
        }
        Ok(())
    }

    /// `MPI_Win_unlock`: completes the operations on member `rank` and releases its lock.
    pub fn unlock(&self, rank: i32) -> Result<()> {
        if rank == crate::PROC_NULL {
            return Ok(());
        }
        self.check_rank(rank)?;
        let r = rank as usize;
        let mut st = self.lock_state();
        let Some(held) = st.epoch.locks[r] else {
            return Err(sync_error(format!("rank {rank} is not locked")));
        };
        let flushed = self.flush_rank(&mut st, r);
        st.epoch.locks[r] = None;
        self.access.publish(&st.epoch);
        let released = match held.taken {
            true => self.give_lock(&mut st, r, held.kind),
            false => Ok(()),
        };
        flushed.and(released)
    }

    /// `MPI_Win_lock_all`: a shared passive-target epoch on every member.
    pub fn lock_all(&self, nocheck: bool) -> Result<()> {
        let mut st = self.lock_state();
        if st.epoch.lock_all.is_some() || st.epoch.locks.iter().any(Option::is_some) {
            return Err(sync_error("a lock is already held on this window"));
        }
        Self::leave_active(&mut st)?;
        if !nocheck {
            for r in 0..self.targets.len() {
                if let Err(e) = self.take_lock(&mut st, r, LockKind::Shared) {
                    for done in 0..r {
                        let _ = self.give_lock(&mut st, done, LockKind::Shared);
                    }
                    return Err(e);
                }
            }
        }
        st.epoch.lock_all = Some(!nocheck);
        self.access.publish(&st.epoch);
        Ok(())
    }

    /// `MPI_Win_unlock_all`.
    pub fn unlock_all(&self) -> Result<()> {
        let mut st = self.lock_state();
        let Some(taken) = st.epoch.lock_all else {
            return Err(sync_error("MPI_Win_lock_all was not called"));
        };
        let mut outcome = self.flush_all_locked(&mut st);
        st.epoch.lock_all = None;
        self.access.publish(&st.epoch);
        if taken {
            for r in 0..self.targets.len() {
                let released = self.give_lock(&mut st, r, LockKind::Shared);
                outcome = outcome.and(released);
            }
        }
        outcome
    }

    /// Completes the operations on member `rank` at the target, then finishes their
    /// deferred work.
    fn flush_rank(&self, st: &mut State, rank: usize) -> Result<()> {
        if self.mapped.is_some() {
            // Copies and CPU atomics are complete: only their order and the target's
            // liveness remain.
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            return self.direct_alive(std::iter::once(rank));
        }
        let waited = self.wait_inflight(st, |r| r == rank);
        let req = self.on_target(st, rank, |w, ep, _, _| w.flush_endpoint(ep))?;
        let outcome = waited.and(self.wait_on(req, rank));
        st.settle(|r| r == rank);
        // A target of this node may die with its memory still mapped here (copies and atomics
        // then succeed): the synchronization reports it all the same.
        let world = self.targets[rank].world;
        outcome.and(self.comm.shared.with(|e| e.rma_peer_alive(world)))
    }

    /// Completes every operation of this process (all windows, all targets).
    fn flush_all_locked(&self, st: &mut State) -> Result<()> {
        if self.mapped.is_some() {
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            return self.direct_alive(0..self.targets.len());
        }
        let waited = self.wait_inflight(st, |_| true);
        let req = self.comm.shared.with(|e| e.rma_worker().flush_worker())?;
        let worlds: Vec<u32> = self.targets.iter().map(|t| t.world).collect();
        let outcome = waited.and(self.wait_for(req, &worlds));
        st.settle(|_| true);
        outcome.and(
            self.comm
                .shared
                .with(|e| worlds.iter().try_for_each(|&w| e.rma_peer_alive(w))),
        )
    }

    /// Flushes everything (window free).
    pub(crate) fn flush_everything(&self) -> Result<()> {
        let mut st = self.lock_state();
        self.flush_all_locked(&mut st)
    }

    /// `MPI_Win_flush` (and `MPI_Win_flush_local`): the operations on member `rank` are
    /// complete, at the target too.
    pub fn flush(&self, rank: i32) -> Result<()> {
        if rank == crate::PROC_NULL {
            return Ok(());
        }
        self.check_rank(rank)?;
        let mut st = self.lock_state();
        if !st.epoch.passive(rank as usize) {
            return Err(sync_error("MPI_Win_flush outside a passive-target epoch"));
        }
        self.flush_rank(&mut st, rank as usize)
    }

    /// `MPI_Win_flush_all` (and `MPI_Win_flush_local_all`).
    pub fn flush_all(&self) -> Result<()> {
        let mut st = self.lock_state();
        let e = &st.epoch;
        if e.lock_all.is_none() && e.locks.iter().all(Option::is_none) {
            return Err(sync_error(
                "MPI_Win_flush_all outside a passive-target epoch",
            ));
        }
        self.flush_all_locked(&mut st)
    }

    /// `MPI_Win_sync`: orders this process's memory accesses to the window.
    pub fn sync(&self) -> Result<()> {
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    /// `MPI_Win_fence`: completes every operation of the epoch, at every target, and waits
    /// for every member; `no_succeed`: no epoch follows.
    pub fn fence(&self, no_precede: bool, no_succeed: bool) -> Result<()> {
        let mut st = self.lock_state();
        if st.epoch.locks.iter().any(Option::is_some) || st.epoch.lock_all.is_some() {
            return Err(sync_error("MPI_Win_fence inside a passive-target epoch"));
        }
        if st.epoch.access.is_some() || st.epoch.exposure.is_some() {
            return Err(sync_error("MPI_Win_fence inside a PSCW epoch"));
        }
        let flushed = match no_precede && st.deferred.is_empty() {
            true => Ok(()),
            false => self.flush_all_locked(&mut st),
        };
        st.epoch.fence = !no_succeed;
        self.access.publish(&st.epoch);
        drop(st);
        flushed?;
        self.comm.barrier()
    }

    /// `MPI_Win_post`: exposes the window to the members `origins` until [`Window::wait`].
    pub fn post(&self, origins: &[i32]) -> Result<()> {
        let mut st = self.lock_state();
        if st.epoch.exposure.is_some() {
            return Err(sync_error("MPI_Win_post twice without MPI_Win_wait"));
        }
        let group = self.members_of(origins)?;
        for &o in &group {
            self.control_atomic(&mut st, o, AtomicOp::Add, word::POSTS, 1, None)?;
        }
        st.epoch.exposure = Some(group);
        Ok(())
    }

    /// `MPI_Win_start`: an access epoch on the members `targets`, once each has posted.
    pub fn start(&self, targets: &[i32]) -> Result<()> {
        let group = self.members_of(targets)?;
        let mut st = self.lock_state();
        if st.epoch.access.is_some() {
            return Err(sync_error("MPI_Win_start twice without MPI_Win_complete"));
        }
        let want = st.epoch.posts_seen + group.len() as u64;
        self.await_word(word::POSTS, want, &group)?;
        st.epoch.posts_seen = want;
        st.epoch.access = Some(group);
        self.access.publish(&st.epoch);
        Ok(())
    }

    /// `MPI_Win_complete`: completes the access epoch's operations and tells its targets.
    pub fn complete(&self) -> Result<()> {
        let mut st = self.lock_state();
        let Some(group) = st.epoch.access.take() else {
            return Err(sync_error("MPI_Win_complete without MPI_Win_start"));
        };
        self.access.publish(&st.epoch);
        let mut outcome = self.flush_all_locked(&mut st);
        for &t in &group {
            let told = self.control_atomic(&mut st, t, AtomicOp::Add, word::COMPLETES, 1, None);
            outcome = outcome.and(told.map(drop));
        }
        outcome
    }

    /// `MPI_Win_wait`: ends the exposure epoch once every origin completed.
    pub fn wait(&self) -> Result<()> {
        let mut st = self.lock_state();
        let Some(group) = st.epoch.exposure.take() else {
            return Err(sync_error("MPI_Win_wait without MPI_Win_post"));
        };
        let want = st.epoch.completes_seen + group.len() as u64;
        let outcome = self.await_word(word::COMPLETES, want, &group);
        st.epoch.completes_seen = want;
        outcome
    }

    /// `MPI_Win_test`: like [`Window::wait`], without blocking; true once it ended.
    pub fn test(&self) -> Result<bool> {
        let mut st = self.lock_state();
        let Some(group) = &st.epoch.exposure else {
            return Err(sync_error("MPI_Win_test without MPI_Win_post"));
        };
        let want = st.epoch.completes_seen + group.len() as u64;
        self.comm.progress()?;
        if self.control().load(word::COMPLETES) >= want {
            st.epoch.exposure = None;
            st.epoch.completes_seen = want;
            return Ok(true);
        }
        Ok(false)
    }

    /// Progresses until the local control word `at` reaches `want`; `ProcFailed` if a member
    /// of `group` fails first.
    fn await_word(&self, at: u64, want: u64, group: &[usize]) -> Result<()> {
        let worlds: Vec<u32> = group.iter().map(|&r| self.targets[r].world).collect();
        self.comm.shared.progress_until(|e| {
            if self.control().load(at) >= want {
                return Ok(Some(()));
            }
            for &w in &worlds {
                e.rma_peer_alive(w)?;
            }
            Ok(None)
        })
    }

    /// Window ranks of a list, checked.
    fn members_of(&self, ranks: &[i32]) -> Result<Vec<usize>> {
        ranks
            .iter()
            .map(|&r| self.check_rank(r).map(|()| r as usize))
            .collect()
    }
}
