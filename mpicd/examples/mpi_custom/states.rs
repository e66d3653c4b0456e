//! Engine-level states (`PackState`/`UnpackState`) that fail where told and count how often
//! they are made and freed.

use crate::types::{gen, injected, ragged, GUARD};
use mpicd::custom::{PackState, RawRegion, RawRegionMut, UnpackState};
use mpicd::{ElementType, Error};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

// ----- engine-level states: failure injection and lifetime counting -----

/// Counts states made and freed.
#[derive(Default, Debug)]
pub struct Lifetimes {
    pub created: AtomicUsize,
    pub dropped: AtomicUsize,
}

impl Lifetimes {
    pub fn counts(&self) -> (usize, usize) {
        (
            self.created.load(Ordering::SeqCst),
            self.dropped.load(Ordering::SeqCst),
        )
    }
}

/// Where a send state fails.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SendFailure {
    Never,
    PackedSize,
    Regions,
    /// The pack call that covers this stream offset returns an error.
    PackAt(u64),
    /// The pack call that covers this stream offset returns 0 bytes (not allowed).
    PackZeroAt(u64),
}

/// A send state with a generated packed part and one owned region (none if empty), that fails
/// where told.
pub struct InjectedSend {
    pub seed: u64,
    pub len: u64,
    pub region: Vec<i32>,
    pub fail: SendFailure,
    pub life: Arc<Lifetimes>,
}

impl InjectedSend {
    pub fn new(
        seed: u64,
        len: u64,
        region_len: usize,
        fail: SendFailure,
        life: &Arc<Lifetimes>,
    ) -> Box<Self> {
        life.created.fetch_add(1, Ordering::SeqCst);
        Box::new(InjectedSend {
            seed,
            len,
            region: ragged(seed, &[region_len]).remove(0),
            fail,
            life: Arc::clone(life),
        })
    }
}

impl Drop for InjectedSend {
    fn drop(&mut self) {
        self.life.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: the only region is owned by the state and never changed while it lives.
unsafe impl PackState for InjectedSend {
    fn packed_size(&mut self) -> mpicd::Result<u64> {
        match self.fail {
            SendFailure::PackedSize => Err(injected("packed_size")),
            _ => Ok(self.len),
        }
    }

    fn pack(&mut self, offset: u64, dst: &mut [u8]) -> mpicd::Result<usize> {
        let end = offset + dst.len() as u64;
        match self.fail {
            SendFailure::PackAt(at) if offset <= at && at < end => return Err(injected("pack")),
            SendFailure::PackZeroAt(at) if offset <= at && at < end => return Ok(0),
            _ => {}
        }
        for (k, b) in dst.iter_mut().enumerate() {
            *b = gen(self.seed, offset + k as u64);
        }
        Ok(dst.len())
    }

    fn regions(&mut self) -> mpicd::Result<Vec<RawRegion>> {
        if self.fail == SendFailure::Regions {
            return Err(injected("regions"));
        }
        if self.region.is_empty() {
            return Ok(Vec::new());
        }
        Ok(vec![RawRegion {
            ptr: self.region.as_ptr() as *const u8,
            bytes: self.region.len() * 4,
            elem: ElementType::I32,
        }])
    }
}

/// What a receive state saw, readable after the state is gone.
#[derive(Default)]
pub struct Seen {
    pub packed: Vec<u8>,
    pub region: Vec<i32>,
}

/// A receive state with its own region buffer (shared with the test through `seen`).
pub struct CountedRecv {
    pub capacity: u64,
    pub seen: Arc<Mutex<Seen>>,
    pub region_ptr: *mut i32,
    pub region_len: usize,
    pub fail_unpack: bool,
    pub life: Arc<Lifetimes>,
}

// SAFETY: the raw pointer points into `seen`'s region vector, which the state keeps alive.
unsafe impl Send for CountedRecv {}

impl CountedRecv {
    pub fn new(
        capacity: u64,
        region_len: usize,
        fail_unpack: bool,
        life: &Arc<Lifetimes>,
    ) -> (Box<Self>, Arc<Mutex<Seen>>) {
        life.created.fetch_add(1, Ordering::SeqCst);
        let seen = Arc::new(Mutex::new(Seen {
            packed: Vec::new(),
            region: vec![GUARD; region_len],
        }));
        let region_ptr = seen
            .lock()
            .map(|mut s| s.region.as_mut_ptr())
            .unwrap_or(std::ptr::null_mut());
        let state = Box::new(CountedRecv {
            capacity,
            seen: Arc::clone(&seen),
            region_ptr,
            region_len,
            fail_unpack,
            life: Arc::clone(life),
        });
        (state, seen)
    }
}

impl Drop for CountedRecv {
    fn drop(&mut self) {
        self.life.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: the region is the state's own vector (never resized while the state lives), written
// only by the engine while the operation runs.
unsafe impl UnpackState for CountedRecv {
    fn packed_capacity(&mut self) -> mpicd::Result<u64> {
        Ok(self.capacity)
    }

    fn unpack(&mut self, offset: u64, src: &[u8]) -> mpicd::Result<()> {
        if self.fail_unpack {
            return Err(injected("unpack"));
        }
        let mut seen = self.seen.lock().map_err(|_| Error::InvalidRequest)?;
        assert_eq!(offset, seen.packed.len() as u64, "unpack offsets in order");
        seen.packed.extend_from_slice(src);
        Ok(())
    }

    fn regions(&mut self) -> mpicd::Result<Vec<RawRegionMut>> {
        Ok(vec![RawRegionMut {
            ptr: self.region_ptr as *mut u8,
            bytes: self.region_len * 4,
            elem: ElementType::I32,
        }])
    }
}
