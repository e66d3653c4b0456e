//! Cross-memory attach: reading another process's memory on this node with one kernel copy
//! (`process_vm_readv`), the way UCX's `cma` transport moves its rendezvous data.
//!
//! The custom path uses it to pull a message's regions straight from the sender's memory into
//! the receiver's regions: one copy, many regions per system call, no per-region message (see
//! [`crate::custom::pull`]). UCX 1.13 can do this only for one contiguous buffer per message;
//! a `Vec<Vec<T>>` of 1 KiB rows would otherwise be packed, sent and unpacked (three copies).
//!
//! The kernel allows the read when the reader may ptrace the target: same user, and no Yama
//! `ptrace_scope` above 0. Containers may forbid the call altogether (seccomp). [`available`]
//! checks both once at start-up; `MPICD_CMA=0` turns the path off.

use std::borrow::Cow;

/// The most iovec entries one `process_vm_readv` call takes (the kernel's `UIO_MAXIOV`).
pub(crate) const MAX_IOV: usize = 1024;

/// One piece of a read: `len` bytes from `remote` (an address in the other process) to `local`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Piece {
    pub local: *mut u8,
    pub remote: u64,
    pub len: usize,
}

/// True if this process may read its peers' memory: not turned off with `MPICD_CMA=0`, not
/// forbidden by Yama's ptrace scope, and the system call works here (a read of our own memory).
pub(crate) fn available() -> bool {
    if std::env::var("MPICD_CMA").is_ok_and(|v| v.trim() == "0") {
        return false;
    }
    let scope = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope");
    if scope.is_ok_and(|s| s.trim() != "0") {
        return false;
    }
    let source = [0x5au8; 16];
    let mut copy = [0u8; 16];
    let piece = Piece {
        local: copy.as_mut_ptr(),
        remote: source.as_ptr() as u64,
        len: source.len(),
    };
    // SAFETY: both buffers are live locals of the right length; the read targets this process.
    let read = unsafe { read(std::process::id(), &[piece]) };
    read.is_ok_and(|n| n == source.len()) && copy == source
}

/// Reads the pieces from process `pid`, in order, in as few system calls as the kernel allows;
/// returns the bytes read, which is less than asked only if the peer's memory ends early.
///
/// # Safety
/// Every `local` pointer must be valid for writes of `len` bytes and not aliased by anything
/// the caller reads during the call. The remote addresses are checked by the kernel: a bad
/// one is an error (`EFAULT`), never a write outside the local pieces.
pub(crate) unsafe fn read(pid: u32, pieces: &[Piece]) -> std::io::Result<usize> {
    let mut total = 0usize;
    for batch in pieces.chunks(MAX_IOV) {
        let local: Vec<libc::iovec> = batch
            .iter()
            .map(|p| libc::iovec {
                iov_base: p.local.cast(),
                iov_len: p.len,
            })
            .collect();
        let remote: Vec<libc::iovec> = batch
            .iter()
            .map(|p| libc::iovec {
                iov_base: p.remote as *mut libc::c_void,
                iov_len: p.len,
            })
            .collect();
        let want: usize = batch.iter().map(|p| p.len).sum();
        let mut done = 0usize;
        while done < want {
            // A short read stops at an iovec boundary or a page the peer does not have; go on
            // from where it stopped.
            let (l, r) = if done == 0 {
                (Cow::Borrowed(&local[..]), Cow::Borrowed(&remote[..]))
            } else {
                (
                    Cow::Owned(skip(&local, done)),
                    Cow::Owned(skip(&remote, done)),
                )
            };
            // SAFETY: the caller guarantees the local iovecs; the kernel checks the remote ones.
            let n = unsafe {
                libc::process_vm_readv(
                    pid as libc::pid_t,
                    l.as_ptr(),
                    l.len() as libc::c_ulong,
                    r.as_ptr(),
                    r.len() as libc::c_ulong,
                    0,
                )
            };
            if n < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if n == 0 {
                return Ok(total + done);
            }
            done += n as usize;
        }
        total += done;
    }
    Ok(total)
}

/// The iovecs left after the first `bytes` bytes.
fn skip(iov: &[libc::iovec], mut bytes: usize) -> Vec<libc::iovec> {
    let mut out = Vec::with_capacity(iov.len());
    for v in iov {
        if bytes >= v.iov_len {
            bytes -= v.iov_len;
            continue;
        }
        out.push(libc::iovec {
            // SAFETY: `bytes < iov_len`, so the address stays inside the piece (for a remote
            // iovec the pointer is only a number handed to the kernel).
            iov_base: unsafe { v.iov_base.cast::<u8>().add(bytes) }.cast(),
            iov_len: v.iov_len - bytes,
        });
        bytes = 0;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_scattered_pieces_of_this_process() {
        assert!(available() || std::env::var("MPICD_CMA").is_ok());
        let source: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let mut dest = vec![0u8; 3000];
        let (a, b) = dest.split_at_mut(1000);
        let pieces = [
            Piece {
                local: a.as_mut_ptr(),
                remote: source[5000..].as_ptr() as u64,
                len: 1000,
            },
            Piece {
                local: b.as_mut_ptr(),
                remote: source[17..].as_ptr() as u64,
                len: 2000,
            },
        ];
        // SAFETY: the local pieces are disjoint parts of `dest`.
        let n = unsafe { read(std::process::id(), &pieces) }.unwrap();
        assert_eq!(n, 3000);
        assert_eq!(&dest[..1000], &source[5000..6000]);
        assert_eq!(&dest[1000..], &source[17..2017]);
    }

    #[test]
    fn a_bad_remote_address_is_an_error() {
        let mut dest = [0u8; 8];
        let piece = Piece {
            local: dest.as_mut_ptr(),
            remote: 8, // unmapped
            len: 8,
        };
        // SAFETY: the local piece is `dest`.
        assert!(unsafe { read(std::process::id(), &[piece]) }.is_err());
    }
}
