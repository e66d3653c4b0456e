//! POSIX shared-memory segments that the processes of one node map together: one process makes
//! a segment under a name, the others open that name, and once all have mapped it the name is
//! removed ([`SharedSegment::unlink`]); the memory lives until the last mapping goes. Windows of
//! `MPI_Win_allocate_shared` and the areas of the node collectives (`schedule::node`) use them.

use crate::error::{Error, Result};
use std::ffi::CString;
use std::sync::atomic::{AtomicU64, Ordering};

/// Segment names this process handed out, numbered.
static NAMED: AtomicU64 = AtomicU64::new(0);

/// A POSIX shared memory segment mapped into this process, read and write.
pub(crate) struct SharedSegment {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a mapping; what its users keep there is ordered by them (MPI's rules for a shared
// window, the node collectives' sequence numbers).
unsafe impl Send for SharedSegment {}
// SAFETY: as above.
unsafe impl Sync for SharedSegment {}

impl SharedSegment {
    /// A name for a segment this process is about to make: `/mpicd-KIND-PID-N`, with an `N`
    /// this process never used. A segment already under it can only have been left by a
    /// process killed before it removed the name, whose pid this one reuses: it is removed,
    /// so that making the new one does not fail.
    pub(crate) fn fresh_name(kind: &str) -> String {
        let name = format!(
            "/mpicd-{kind}-{}-{}",
            std::process::id(),
            NAMED.fetch_add(1, Ordering::Relaxed)
        );
        SharedSegment::unlink(&name);
        name
    }

    /// Makes (`create`) or opens the segment `name` of `len` bytes and maps it. A new segment
    /// reads as zeros and has its pages reserved, so that a full /dev/shm fails here, not with
    /// SIGBUS at a later write; an opened one must be at least `len` bytes.
    pub(crate) fn map(name: &str, len: usize, create: bool) -> Result<SharedSegment> {
        let len = len.max(1);
        let cname = CString::new(name).map_err(|_| Error::InvalidArgument(name.into()))?;
        let flags = if create {
            libc::O_CREAT | libc::O_EXCL | libc::O_RDWR
        } else {
            libc::O_RDWR
        };
        let failed =
            |what: &str, e: std::io::Error| Error::Transport(format!("{what} {name}: {e}"));
        // SAFETY: cname is NUL-terminated; the flags and mode are plain values.
        let fd = unsafe { libc::shm_open(cname.as_ptr(), flags, 0o600) };
        if fd < 0 {
            return Err(failed("shm_open", std::io::Error::last_os_error()));
        }
        let sized = if create {
            // SAFETY: fd is an open descriptor of this process, open for writing.
            match unsafe { libc::posix_fallocate(fd, 0, len as libc::off_t) } {
                0 => Ok(()),
                rc => Err(failed(
                    "posix_fallocate",
                    std::io::Error::from_raw_os_error(rc),
                )),
            }
        } else {
            let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
            // SAFETY: fd is open; `st` is writable.
            match unsafe { libc::fstat(fd, st.as_mut_ptr()) } {
                // SAFETY: fstat succeeded and filled it.
                0 if unsafe { st.assume_init() }.st_size as u64 >= len as u64 => Ok(()),
                0 => Err(Error::Transport(format!(
                    "shared segment {name} is too short"
                ))),
                _ => Err(failed("fstat", std::io::Error::last_os_error())),
            }
        };
        if let Err(e) = sized {
            // SAFETY: fd is open; a name created here is removed again.
            unsafe {
                libc::close(fd);
                if create {
                    libc::shm_unlink(cname.as_ptr());
                }
            }
            return Err(e);
        }
        // SAFETY: a new shared read-write mapping of the descriptor; no address is imposed.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        // SAFETY: fd is open and no longer needed (the mapping keeps the object).
        unsafe { libc::close(fd) };
        if ptr == libc::MAP_FAILED {
            let e = std::io::Error::last_os_error();
            if create {
                SharedSegment::unlink(name);
            }
            return Err(failed("mmap", e));
        }
        Ok(SharedSegment {
            ptr: ptr as *mut u8,
            len,
        })
    }

    /// Removes the segment's name (the mappings stay).
    pub(crate) fn unlink(name: &str) {
        if let Ok(c) = CString::new(name) {
            // SAFETY: c is NUL-terminated.
            unsafe { libc::shm_unlink(c.as_ptr()) };
        }
    }

    /// The first byte of the mapping (page-aligned).
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for SharedSegment {
    fn drop(&mut self) {
        // SAFETY: the mapping was made in `map` with this length and is unmapped once.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_left_by_a_killed_process_with_this_pid_is_replaced() {
        loop {
            // What a process killed between making a segment and removing its name leaves
            // behind, under the name this process hands out next.
            let next = NAMED.load(Ordering::Relaxed);
            let stale = format!("/mpicd-test-{}-{next}", std::process::id());
            drop(SharedSegment::map(&stale, 64, true).unwrap());
            let name = SharedSegment::fresh_name("test");
            if name != stale {
                // Another test took that number meanwhile: again.
                SharedSegment::unlink(&stale);
                continue;
            }
            let made = SharedSegment::map(&name, 64, true);
            SharedSegment::unlink(&name);
            assert!(made.is_ok(), "{:?}", made.err());
            break;
        }
    }
}
