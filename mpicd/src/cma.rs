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

/// A range of this process's memory that a read writes into.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Local {
    pub ptr: *mut u8,
    pub len: usize,
}

/// A range of the other process's memory (an address there, only a number here).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Remote {
    pub addr: u64,
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
    let local = Local {
        ptr: copy.as_mut_ptr(),
        len: copy.len(),
    };
    let remote = Remote {
        addr: source.as_ptr() as u64,
        len: source.len(),
    };
    // SAFETY: both buffers are live locals of the right length; the read targets this process.
    let read = unsafe { read(std::process::id(), &[local], &[remote]) };
    read.is_ok_and(|n| n == source.len()) && copy == source
}

/// Reads the `remote` ranges of process `pid` into the `local` ranges, both taken as one
/// stream of bytes (the lists may cut it differently; at most [`MAX_IOV`] entries each), in as
/// few system calls as the kernel allows. Returns the bytes read, less than asked only if the
/// peer's memory ends early.
///
/// What costs is the number of *remote* ranges (the kernel pins each one's pages); local ranges
/// are cheap, so a caller may read across a small gap between two remote ranges into a scratch
/// local range.
///
/// # Safety
/// Every `local` range must be valid for writes and not read by anyone during the call (ranges
/// may repeat, e.g. a scratch range). The remote addresses are checked by the kernel: a bad one
/// is an error (`EFAULT`), never a write outside the local ranges.
pub(crate) unsafe fn read(pid: u32, local: &[Local], remote: &[Remote]) -> std::io::Result<usize> {
    debug_assert!(local.len() <= MAX_IOV && remote.len() <= MAX_IOV);
    let local: Vec<libc::iovec> = local
        .iter()
        .map(|l| libc::iovec {
            iov_base: l.ptr.cast(),
            iov_len: l.len,
        })
        .collect();
    let remote: Vec<libc::iovec> = remote
        .iter()
        .map(|r| libc::iovec {
            iov_base: r.addr as *mut libc::c_void,
            iov_len: r.len,
        })
        .collect();
    let want = remote
        .iter()
        .map(|r| r.iov_len)
        .sum::<usize>()
        .min(local.iter().map(|l| l.iov_len).sum());
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
            break;
        }
        done += n as usize;
    }
    Ok(done)
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
    fn reads_scattered_ranges_of_this_process() {
        assert!(available() || std::env::var("MPICD_CMA").is_ok());
        let source: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let mut dest = vec![0u8; 3000];
        let mut gap = [0u8; 10];
        let (a, b) = dest.split_at_mut(1000);
        let local = [
            Local {
                ptr: a.as_mut_ptr(),
                len: 1000,
            },
            Local {
                ptr: gap.as_mut_ptr(),
                len: 10,
            },
            Local {
                ptr: b.as_mut_ptr(),
                len: 2000,
            },
        ];
        // One remote range across the gap, into two local ranges and a scratch one.
        let remote = [Remote {
            addr: source[5000..].as_ptr() as u64,
            len: 3010,
        }];
        // SAFETY: the local ranges are disjoint live buffers.
        let n = unsafe { read(std::process::id(), &local, &remote) }.unwrap();
        assert_eq!(n, 3010);
        assert_eq!(&dest[..1000], &source[5000..6000]);
        assert_eq!(&gap[..], &source[6000..6010]);
        assert_eq!(&dest[1000..], &source[6010..8010]);
    }

    #[test]
    fn a_bad_remote_address_is_an_error() {
        let mut dest = [0u8; 8];
        let local = Local {
            ptr: dest.as_mut_ptr(),
            len: 8,
        };
        let remote = Remote { addr: 8, len: 8 }; // unmapped
                                                 // SAFETY: the local range is `dest`.
        assert!(unsafe { read(std::process::id(), &[local], &[remote]) }.is_err());
    }
}
