//! One-sided communication (MPI 4.1 chapter 12): windows over UCX remote memory access.
//!
//! A [`Window`] is made collectively over a private duplicate of a communicator. Each rank
//! registers the memory it exposes and a small [`memory::Control`] block with UCX, and the
//! ranks exchange base addresses, sizes, displacement units and packed remote keys with one
//! allgather. From then on no target ever needs to call MPI for an origin to progress:
//!
//! - puts and gets are UCX puts and gets, one per contiguous run of the target datatype (the
//!   origin side packed or unpacked through [`TypedBuf`] when it is not contiguous);
//! - every accumulate-class operation takes the target's accumulate lock (a control word,
//!   acquired with a remote compare-and-swap), reads the target elements, combines them
//!   locally, writes them back, flushes, and releases the lock: atomic per element with every
//!   op on every type, and with each other;
//! - passive-target locks are a control word manipulated by remote atomics only (shared
//!   holders counted, an exclusive holder adds [`memory::EXCLUSIVE`]);
//! - fence flushes the worker and runs a barrier on the window's communicator; PSCW counts
//!   posts and completions in the control words of the origins and targets.
//!
//! Over a transport that emulates remote memory access in software (UCX's tcp), the target's
//! worker serves those operations when it progresses: while the process has a window that is
//! not mapped, the engine's background progress helper (a thread, see
//! `crate::engine::helper`) progresses the worker whenever the application has not done so
//! for a millisecond, so that a lock, put, accumulate or unlock never waits for the target to
//! call MPI. Mapped windows need no such help and start no thread.
//!
//! A window whose members all map each other's memory ([`direct`]) does all this with loads,
//! stores and the CPU's atomics instead; its accumulates change elements of 1 to 8 bytes with
//! one atomic each ([`element`]), and its calls on contiguous data of one predefined type run
//! without the state's mutex ([`hot`]).
//!
//! The files: [`memory`] (exposed memory, shared segments, control block, dynamic directory),
//! [`access`] (targets, remote keys, address and range checks, waiting), [`rma_ops`] (put,
//! get, accumulates), [`sync`] (epochs: fence, locks, flushes, PSCW), [`epoch`] (the epochs,
//! and what each target allows now), [`direct`], [`element`] and [`hot`] (mapped windows).

mod access;
mod direct;
mod element;
mod epoch;
mod hot;
mod memory;
mod rma_ops;
mod scoped;
mod sync;

use crate::comm::Communicator;
use crate::error::{Error, Result, RmaError};
use crate::group::Group;
use crate::shm::SharedSegment;
use crate::transport::{MemRegion, RemoteKey};
use crate::TypedBuf;
use access::{Record, TargetInfo};
use memory::{Control, Directory, Exposed, OwnedMemory};
use std::sync::atomic::AtomicU32;
use std::sync::{Mutex, MutexGuard};

pub use crate::reduction::CombineFn;
pub use element::accumulate_whole;
pub use epoch::LockKind;
pub use rma_ops::AccumulateOp;
pub use scoped::Epoch;

/// How a window's memory came to be (`MPI_WIN_CREATE_FLAVOR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Create,
    Allocate,
    Dynamic,
    Shared,
}

/// A window: memory of every member of a communicator that the others may access.
pub struct Window {
    comm: Communicator,
    flavor: Flavor,
    base: usize,
    size: usize,
    disp_unit: u32,
    targets: Vec<TargetInfo>,
    /// For a shared window: each rank's piece, mapped in this process.
    shared_bases: Vec<usize>,
    // Field order: registrations (in `state`) are released before this memory is freed.
    state: Mutex<access::State>,
    _exposed: Exposed,
    /// This process's control block, in memory the transport allocated (in `state`'s
    /// regions, released with them).
    control: *const Control,
    directory: Option<Mutex<Directory>>,
    /// Every member's memory mapped here (see [`direct`]), when the window allows it.
    mapped: Option<direct::Mapped>,
    /// What each target allows now, readable without `state`'s mutex.
    access: epoch::AccessMap,
    /// Synchronization calls of a mapped window so far (see [`direct`]).
    direct_calls: AtomicU32,
    /// An unmapped window's claim on the engine's background progress (see
    /// [`Window::enlisted`]); dropped after the window's resources are released.
    background: Option<crate::engine::Enlisted>,
}

// SAFETY: the control block pointer names memory the window owns (through its registration)
// and only reads atomically; everything else is Send and Sync or behind the state's mutex.
unsafe impl Send for Window {}
// SAFETY: as above.
unsafe impl Sync for Window {}

impl Window {
    /// `MPI_Win_create`: exposes `size` bytes at `base`, addressed in units of `disp_unit`.
    ///
    /// # Safety
    /// The memory must stay valid until the window is freed; the transport reads and writes
    /// it whenever another rank accesses the window.
    pub unsafe fn create(
        comm: &Communicator,
        base: *mut u8,
        size: usize,
        disp_unit: u32,
    ) -> Result<Window> {
        Window::build(
            comm,
            Flavor::Create,
            base as usize,
            size,
            disp_unit,
            Exposed::User,
        )
        .map(Window::enlisted)
    }

    /// `MPI_Win_allocate`: a window over `size` new zeroed bytes ([`Window::base`]).
    pub fn allocate(comm: &Communicator, size: usize, disp_unit: u32) -> Result<Window> {
        // The transport allocates non-empty memory (see `build`); an empty window still gets
        // an address of its own.
        let memory = OwnedMemory::new(0)?;
        let base = memory.ptr() as usize;
        let mut w = Window::build(
            comm,
            Flavor::Allocate,
            base,
            size,
            disp_unit,
            Exposed::Owned(memory),
        )?;
        w.map_members(None)?;
        Ok(w.enlisted())
    }

    /// `MPI_Win_create_dynamic`: a window with no memory until [`Window::attach`].
    pub fn create_dynamic(comm: &Communicator) -> Result<Window> {
        Window::build(comm, Flavor::Dynamic, 0, 0, 1, Exposed::User).map(Window::enlisted)
    }

    /// `MPI_Win_allocate_shared`: each rank's `size` bytes in one segment shared by the
    /// members (all on this node), contiguous in rank order; [`Window::shared_query`] gives
    /// each rank's piece as mapped here.
    pub fn allocate_shared(comm: &Communicator, size: usize, disp_unit: u32) -> Result<Window> {
        comm.require_intra("MPI_Win_allocate_shared")?;
        let sizes = crate::collective::allgather(comm, &(size as u64).to_ne_bytes())?;
        let sizes: Vec<usize> = sizes
            .iter()
            .map(|b| u64::from_ne_bytes(b[..8].try_into().unwrap_or_default()) as usize)
            .collect();
        // Each piece starts at a multiple of 64 bytes, so that every rank's memory is aligned.
        let mut offsets = Vec::with_capacity(sizes.len());
        let mut total = 0usize;
        for s in &sizes {
            offsets.push(total);
            total += s.div_ceil(64) * 64;
        }
        let mut name = [0u8; 64];
        // The creator makes the segment before it tells the name.
        let created = if comm.rank() == 0 {
            let n = SharedSegment::fresh_name("win");
            name[..n.len()].copy_from_slice(n.as_bytes());
            Some(SharedSegment::map(&n, total, true))
        } else {
            None
        };
        let ok = [u8::from(matches!(created, Some(Ok(_)) | None))];
        let mut msg = [0u8; 65];
        msg[..64].copy_from_slice(&name);
        msg[64] = ok[0];
        let told = crate::collective::bcast(comm, &mut msg, 0);
        let n = std::str::from_utf8(&msg[..64])
            .unwrap_or("")
            .trim_end_matches('\0')
            .to_string();
        if let Err(e) = told {
            if comm.rank() == 0 {
                SharedSegment::unlink(&n);
            }
            return Err(e);
        }
        let segment = match created {
            Some(s) => s,
            None if msg[64] == 1 => SharedSegment::map(&n, total, false),
            None => Err(Error::Transport(
                "the shared segment could not be made".into(),
            )),
        };
        // Everyone has mapped it (or failed) before the name goes.
        let all = crate::collective::allgather(comm, &[u8::from(segment.is_ok())])?;
        if comm.rank() == 0 {
            SharedSegment::unlink(&n);
        }
        let segment = segment?;
        if all.iter().any(|b| b.first() != Some(&1)) {
            return Err(Error::Transport(
                "a member could not map the shared segment".into(),
            ));
        }
        let at = segment.ptr() as usize;
        let me = comm.rank() as usize;
        let mut w = Window::build(
            comm,
            Flavor::Shared,
            at + offsets[me],
            size,
            disp_unit,
            Exposed::Shared(segment),
        )?;
        w.shared_bases = offsets.iter().map(|o| at + o).collect();
        let pieces = w.shared_bases.clone();
        w.map_members(Some(&pieces))?;
        Ok(w.enlisted())
    }

    /// Registers the memory, exchanges what the others need, and makes the window.
    fn build(
        comm: &Communicator,
        flavor: Flavor,
        base: usize,
        size: usize,
        disp_unit: u32,
        exposed: Exposed,
    ) -> Result<Window> {
        comm.require_intra("window creation")?;
        if disp_unit == 0 {
            return Err(Error::InvalidArgument(
                "a window's displacement unit must be positive".into(),
            ));
        }
        let comm = comm.dup()?;
        let (mut base, mut exposed) = (base, exposed);
        let directory = match flavor {
            Flavor::Dynamic => Some(Directory::new()?),
            _ => None,
        };
        let shared = std::sync::Arc::clone(&comm.shared);
        let mut regions: Vec<MemRegion> = Vec::new();
        let mut control: *const Control = std::ptr::null();
        let registered = shared.with(|e| {
            let w = e.rma_worker();
            // Memory UCX allocates: other processes of the node reach it directly (their
            // atomics on the control words are the CPU's, with no help from this process).
            let (r, p) = w.mem_allocate(std::mem::size_of::<Control>())?;
            // SAFETY: `p` is fresh memory of the control block's size, suitably aligned (UCX
            // allocates page-aligned); an all-zero block is a valid one.
            unsafe { std::ptr::write_bytes(p, 0, std::mem::size_of::<Control>()) };
            control = p as *const Control;
            let control_key = w.rkey_pack(&r);
            regions.push(r);
            let control_key = control_key?;
            if flavor == Flavor::Allocate && size > 0 {
                let (r, p) = w.mem_allocate(size)?;
                // SAFETY: `size` fresh bytes; MPI_Win_allocate's memory starts zeroed here.
                unsafe { std::ptr::write_bytes(p, 0, size) };
                let key = w.rkey_pack(&r);
                regions.push(r);
                base = p as usize;
                exposed = Exposed::User;
                return Ok((control_key, key?, Vec::new()));
            }
            let mut reg = |p: usize, len: usize| -> Result<Vec<u8>> {
                // SAFETY: the memory lives as long as the window, which unmaps it first.
                let r = unsafe { w.mem_map(p as *mut u8, len) }?;
                let key = w.rkey_pack(&r);
                regions.push(r);
                key
            };
            let data_key = match size {
                0 => Vec::new(),
                _ => reg(base, size)?,
            };
            let directory_key = match &directory {
                Some(d) => {
                    let (p, n) = d.region();
                    reg(p, n)?
                }
                None => Vec::new(),
            };
            Ok((control_key, data_key, directory_key))
        });
        let (control_key, key, directory_key) = match registered {
            Ok(k) => k,
            Err(err) => {
                let _ = shared.with(|e| {
                    regions.drain(..).for_each(|r| e.rma_worker().mem_unmap(r));
                    Ok(())
                });
                return Err(err);
            }
        };
        let mine = Record {
            base: base as u64,
            size: size as u64,
            disp_unit,
            control: control as u64,
            directory: directory.as_ref().map_or(0, |d| d.region().0 as u64),
            key,
            control_key,
            directory_key,
        };
        let all = crate::collective::allgather(&comm, &mine.encode());
        let targets = all.and_then(|all| {
            all.iter()
                .enumerate()
                .map(|(r, b)| {
                    let world = comm.world_rank(r as i32)?;
                    Record::decode(b).map(|rec| TargetInfo { world, rec })
                })
                .collect::<Result<Vec<_>>>()
        });
        let targets = match targets {
            Ok(t) => t,
            Err(err) => {
                let _ = shared.with(|e| {
                    regions.drain(..).for_each(|r| e.rma_worker().mem_unmap(r));
                    Ok(())
                });
                return Err(err);
            }
        };
        let n = targets.len();
        Ok(Window {
            comm,
            flavor,
            base,
            size,
            disp_unit,
            targets,
            shared_bases: Vec::new(),
            state: Mutex::new(access::State::new(regions, n)),
            _exposed: exposed,
            control,
            directory: directory.map(Mutex::new),
            mapped: None,
            access: epoch::AccessMap::new(n),
            direct_calls: AtomicU32::new(0),
            background: None,
        })
    }

    /// The window, with the engine's background progress running for it unless it is mapped
    /// (its members' decision, the same on every member): its targets' side of the transport's
    /// remote memory access then progresses while they compute outside MPI.
    fn enlisted(mut self) -> Window {
        if self.mapped.is_none() {
            self.background = Some(self.comm.shared.enlist());
        }
        self
    }

    /// The window's local memory (null for a dynamic window).
    pub fn base(&self) -> *mut u8 {
        self.base as *mut u8
    }

    /// Bytes of local memory.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The local displacement unit.
    pub fn disp_unit(&self) -> u32 {
        self.disp_unit
    }

    /// How the window was made.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// The members (the group of the communicator it was made on).
    pub fn group(&self) -> Group {
        self.comm.group()
    }

    /// This process's rank in the window's group.
    pub fn rank(&self) -> i32 {
        self.comm.rank()
    }

    /// Members of the window's group.
    pub fn members(&self) -> i32 {
        self.comm.size()
    }

    /// `MPI_Win_shared_query`: the piece of `rank` (or, for `None`, of the first rank with a
    /// non-empty piece) as mapped in this process: address (null for an empty piece), size,
    /// displacement unit. On a window of another flavor, the others' pieces are there when the
    /// window is mapped (see [`direct`]); otherwise only this process's own memory is shared
    /// with it and the others' pieces have size 0.
    pub fn shared_query(&self, rank: Option<i32>) -> Result<(*mut u8, usize, u32)> {
        if let Some(r) = rank {
            self.check_rank(r)?;
        }
        let me = self.rank() as usize;
        // A mapped window's other members are reachable by load and store too (MPI 4.1 lets
        // the query answer for any window whose memory the caller can reach that way).
        let mapped = self.mapped.as_ref();
        let visible = |r: usize| self.flavor == Flavor::Shared || r == me || mapped.is_some();
        let r = match rank {
            Some(r) => r as usize,
            None => match (0..self.targets.len()).find(|&r| self.targets[r].rec.size > 0) {
                Some(r) => r,
                None => return Ok((std::ptr::null_mut(), 0, self.targets[0].rec.disp_unit)),
            },
        };
        let t = &self.targets[r];
        if !visible(r) || t.rec.size == 0 {
            return Ok((std::ptr::null_mut(), 0, t.rec.disp_unit));
        }
        let base = match (self.flavor, mapped) {
            (Flavor::Shared, _) => self.shared_bases[r],
            (_, Some(m)) => m.base(r),
            _ => self.base,
        };
        Ok((base as *mut u8, t.rec.size as usize, t.rec.disp_unit))
    }

    /// `MPI_Win_free`: completes what this process started, waits for every member, and
    /// releases the window's registrations and memory.
    pub fn free(self) -> Result<()> {
        let outcome = self.flush_everything().and_then(|()| self.comm.barrier());
        self.release();
        outcome
    }

    /// Releases the registrations and keys while the engine lives (else forgets them: the
    /// transport they belonged to is gone).
    fn release(&self) {
        let mut st = self.lock_state();
        let (regions, keys) = st.take_resources();
        let attached = self
            .directory
            .as_ref()
            .map(|_| std::mem::take(&mut st.attached))
            .unwrap_or_default();
        let released = self.comm.shared.with(|e| {
            let w = e.rma_worker();
            drop(keys);
            regions.into_iter().for_each(|r| w.mem_unmap(r));
            attached.into_iter().for_each(|(_, _, r)| w.mem_unmap(r));
            Ok(())
        });
        if let Err(Error::Finalized) = released {
            // The closure did not run: its captures were dropped with it, before the unmaps.
        }
    }

    /// This process's control block.
    fn control(&self) -> &Control {
        // SAFETY: allocated and zeroed in `build`, valid until the window's regions are
        // released, after which nothing reads it.
        unsafe { &*self.control }
    }

    fn lock_state(&self) -> MutexGuard<'_, access::State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `InvalidRank` unless `rank` is a member.
    fn check_rank(&self, rank: i32) -> Result<()> {
        if rank < 0 || rank as usize >= self.targets.len() {
            return Err(Error::InvalidRank {
                rank,
                size: self.targets.len() as i32,
            });
        }
        Ok(())
    }

    /// `MPI_Win_attach`: exposes `len` bytes at `base` through a dynamic window.
    ///
    /// # Safety
    /// The memory must stay valid until it is detached or the window freed.
    pub unsafe fn attach(&self, base: *mut u8, len: usize) -> Result<()> {
        let Some(dir) = &self.directory else {
            return Err(Error::Rma(
                RmaError::Flavor,
                "MPI_Win_attach needs a window made by MPI_Win_create_dynamic".into(),
            ));
        };
        if len == 0 {
            return Ok(());
        }
        let mut dir = dir.lock().unwrap_or_else(|p| p.into_inner());
        let mut st = self.lock_state();
        let (region, key) = self.comm.shared.with(|e| {
            let w = e.rma_worker();
            // SAFETY: the caller keeps the memory valid until it is detached.
            let r = unsafe { w.mem_map(base, len) }?;
            match w.rkey_pack(&r) {
                Ok(k) => Ok((r, k)),
                Err(err) => {
                    w.mem_unmap(r);
                    Err(err)
                }
            }
        })?;
        if key.len() > memory::DIRECTORY_KEY_BYTES {
            let _ = self.comm.shared.with(|e| {
                e.rma_worker().mem_unmap(region);
                Ok(())
            });
            return Err(Error::Rma(
                RmaError::Attach,
                format!("a {}-byte remote key does not fit the directory", key.len()),
            ));
        }
        if !dir.add(base as u64, len as u64, &key) {
            let _ = self.comm.shared.with(|e| {
                e.rma_worker().mem_unmap(region);
                Ok(())
            });
            return Err(Error::Rma(
                RmaError::Attach,
                format!(
                    "at most {} regions may be attached",
                    memory::DIRECTORY_SLOTS
                ),
            ));
        }
        st.attached.push((base as u64, len as u64, region));
        Ok(())
    }

    /// `MPI_Win_detach`: stops exposing the region attached at `base`.
    pub fn detach(&self, base: *const u8) -> Result<()> {
        let Some(dir) = &self.directory else {
            return Err(Error::Rma(
                RmaError::Flavor,
                "MPI_Win_detach needs a window made by MPI_Win_create_dynamic".into(),
            ));
        };
        let mut dir = dir.lock().unwrap_or_else(|p| p.into_inner());
        let mut st = self.lock_state();
        let Some(i) = st.attached.iter().position(|a| a.0 == base as u64) else {
            return Err(Error::Rma(
                RmaError::Attach,
                "no region is attached at this address".into(),
            ));
        };
        let (_, _, region) = st.attached.remove(i);
        dir.remove(base as u64);
        self.comm.shared.with(|e| {
            e.rma_worker().mem_unmap(region);
            Ok(())
        })
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        self.release();
    }
}

/// The packed data of `count` elements of the target datatype: how many bytes an origin
/// buffer must give or take.
fn packed_len(t: &TypedBuf) -> Result<usize> {
    usize::try_from(t.packed_size()).map_err(|_| Error::InvalidCount(-1))
}

/// Keys of one target: its data region and its control block (and directory).
pub(crate) struct Keys {
    data: Option<RemoteKey>,
    control: RemoteKey,
    directory: Option<RemoteKey>,
}
