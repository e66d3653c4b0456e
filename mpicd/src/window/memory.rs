//! The memory a window exposes and the memory it keeps for its own synchronization: the
//! user's memory ([`Exposed::User`]), memory the window allocated ([`Exposed::Owned`]), a
//! piece of a node's shared segment ([`SharedSegment`]: the first rank creates it, the others
//! map it), and the [`Control`] block every rank registers so
//! that the others can take its locks and count its PSCW epochs with remote atomics, and the
//! [`Directory`] of the regions attached to a dynamic window.

use crate::error::{Error, Result};
use crate::shm::SharedSegment;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::sync::atomic::{AtomicU64, Ordering};

/// Alignment of memory the window allocates (enough for any element and for atomics).
const ALIGN: usize = 64;

/// Memory the window allocated (`MPI_Win_allocate`), zeroed, freed with the window.
pub(crate) struct OwnedMemory {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: plain heap memory; access is the application's and the transport's, as MPI says.
unsafe impl Send for OwnedMemory {}
// SAFETY: as above.
unsafe impl Sync for OwnedMemory {}

impl OwnedMemory {
    /// `len` zeroed bytes aligned to [`ALIGN`] (a zero-length window still gets a unique
    /// address, as MPI lets it).
    pub(crate) fn new(len: usize) -> Result<OwnedMemory> {
        let layout = Layout::from_size_align(len.max(1), ALIGN).map_err(|_| Error::NoMemory)?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(Error::NoMemory);
        }
        Ok(OwnedMemory { ptr, len })
    }

    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for OwnedMemory {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this very layout, freed once.
        unsafe {
            dealloc(
                self.ptr,
                Layout::from_size_align_unchecked(self.len.max(1), ALIGN),
            )
        }
    }
}

/// What a window exposes to the others (held only to be freed with the window).
#[allow(dead_code)]
pub(crate) enum Exposed {
    /// The user's memory (`MPI_Win_create`), or none (`MPI_Win_create_dynamic`).
    User,
    Owned(OwnedMemory),
    Shared(SharedSegment),
}

/// The words of a rank's control block, at these byte offsets; every remote access to them
/// is a UCX atomic on a 64-bit word.
pub(crate) mod word {
    /// The passive-target lock: shared holders counted in the low bits, [`super::EXCLUSIVE`]
    /// added by the exclusive holder.
    pub const LOCK: u64 = 0;
    /// The accumulate lock: 0, or 1 + the world rank of the holder.
    pub const ACCUMULATE: u64 = 8;
    /// Posts (`MPI_Win_post`) this rank received as an origin, ever.
    pub const POSTS: u64 = 16;
    /// Completions (`MPI_Win_complete`) this rank received as a target, ever.
    pub const COMPLETES: u64 = 24;
}

/// The lock word's value for an exclusive holder.
pub(crate) const EXCLUSIVE: u64 = 1 << 40;

/// A rank's control block.
#[repr(C, align(64))]
#[derive(Default)]
pub(crate) struct Control {
    words: [AtomicU64; 8],
}

impl Control {
    /// The word at byte offset `at` ([`word`]), read locally.
    pub(crate) fn load(&self, at: u64) -> u64 {
        self.words[(at / 8) as usize].load(Ordering::Acquire)
    }
}

/// Regions a dynamic window's directory lists at most.
pub(crate) const DIRECTORY_SLOTS: usize = 4096;
/// Bytes of a packed remote key a directory entry holds at most.
pub(crate) const DIRECTORY_KEY_BYTES: usize = 232;
/// Bytes of one directory entry: base, length, key length (u64 each), then the key.
pub(crate) const ENTRY_BYTES: usize = 24 + DIRECTORY_KEY_BYTES;
/// Bytes before the first entry: the number of slots in use (a u64), padded.
pub(crate) const DIRECTORY_HEADER: usize = 64;

/// One attached region of a dynamic window: where it is and its packed remote key.
#[derive(Clone)]
pub(crate) struct DirectoryEntry {
    pub base: u64,
    pub len: u64,
    pub key: Vec<u8>,
}

/// The regions attached to a dynamic window, in registered memory that the others read
/// with two gets (the number of slots in use, then those slots): a header word, then
/// [`DIRECTORY_SLOTS`] entries of [`ENTRY_BYTES`] (a free slot has length 0).
pub(crate) struct Directory {
    memory: OwnedMemory,
}

impl Directory {
    pub(crate) fn new() -> Result<Directory> {
        Ok(Directory {
            memory: OwnedMemory::new(DIRECTORY_HEADER + DIRECTORY_SLOTS * ENTRY_BYTES)?,
        })
    }

    /// Address and length of the registered memory.
    pub(crate) fn region(&self) -> (usize, usize) {
        (
            self.memory.ptr() as usize,
            DIRECTORY_HEADER + DIRECTORY_SLOTS * ENTRY_BYTES,
        )
    }

    fn bytes(&mut self) -> &mut [u8] {
        let (p, n) = self.region();
        // SAFETY: the directory's own allocation of `n` bytes, borrowed mutably through
        // `self`; remote readers only read it (and see a consistent entry after the
        // synchronization MPI requires between an attach and an access).
        unsafe { std::slice::from_raw_parts_mut(p as *mut u8, n) }
    }

    fn word(b: &[u8], at: usize) -> u64 {
        u64::from_ne_bytes(b[at..at + 8].try_into().unwrap_or_default())
    }

    /// Lists a region in a free slot; false when every slot is taken.
    pub(crate) fn add(&mut self, base: u64, len: u64, key: &[u8]) -> bool {
        let b = self.bytes();
        let used = Self::word(b, 0) as usize;
        let free = (0..DIRECTORY_SLOTS)
            .find(|&i| Self::word(b, DIRECTORY_HEADER + i * ENTRY_BYTES + 8) == 0);
        let Some(i) = free else {
            return false;
        };
        let e = &mut b[DIRECTORY_HEADER + i * ENTRY_BYTES..][..ENTRY_BYTES];
        e[0..8].copy_from_slice(&base.to_ne_bytes());
        e[16..24].copy_from_slice(&(key.len() as u64).to_ne_bytes());
        e[24..24 + key.len()].copy_from_slice(key);
        e[8..16].copy_from_slice(&len.to_ne_bytes());
        b[0..8].copy_from_slice(&(used.max(i + 1) as u64).to_ne_bytes());
        true
    }

    /// Takes the region at `base` off the list.
    pub(crate) fn remove(&mut self, base: u64) {
        let b = self.bytes();
        for i in 0..DIRECTORY_SLOTS {
            let at = DIRECTORY_HEADER + i * ENTRY_BYTES;
            if Self::word(b, at + 8) != 0 && Self::word(b, at) == base {
                b[at + 8..at + 16].copy_from_slice(&0u64.to_ne_bytes());
                return;
            }
        }
    }

    /// The entries in the bytes another rank read (the slots in use).
    pub(crate) fn from_bytes(bytes: &[u8]) -> Vec<DirectoryEntry> {
        bytes
            .chunks_exact(ENTRY_BYTES)
            .map(|c| {
                let key_len = (Self::word(c, 16) as usize).min(DIRECTORY_KEY_BYTES);
                DirectoryEntry {
                    base: Self::word(c, 0),
                    len: Self::word(c, 8),
                    key: c[24..24 + key_len].to_vec(),
                }
            })
            .filter(|e| e.len > 0)
            .collect()
    }

    /// The number of slots in use, from the header bytes another rank read.
    pub(crate) fn used_of(header: &[u8]) -> usize {
        (Self::word(header, 0) as usize).min(DIRECTORY_SLOTS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_lists_what_is_attached() {
        let mut d = Directory::new().expect("directory");
        assert!(d.add(0x1000, 64, &[1, 2, 3]));
        assert!(d.add(0x2000, 32, &[4]));
        d.remove(0x1000);
        assert!(d.add(0x3000, 16, &[5, 6]));
        let (p, n) = d.region();
        // SAFETY: the directory's own memory, read while nothing writes it.
        let bytes = unsafe { std::slice::from_raw_parts(p as *const u8, n) };
        let used = Directory::used_of(&bytes[..8]);
        assert_eq!(used, 2); // the freed first slot was reused
        let entries = Directory::from_bytes(&bytes[DIRECTORY_HEADER..][..used * ENTRY_BYTES]);
        let listed: Vec<_> = entries
            .iter()
            .map(|e| (e.base, e.len, e.key.clone()))
            .collect();
        assert_eq!(
            listed,
            vec![(0x3000, 16, vec![5, 6]), (0x2000, 32, vec![4])]
        );
    }
}
