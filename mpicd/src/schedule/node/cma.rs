//! Reads and writes of another member's memory with Linux's cross-memory attach
//! (`process_vm_readv`, `process_vm_writev`): the single-copy way of the node collectives'
//! blocks that only move ([`super::lend`]), where the reader copies a block straight from the
//! owner's buffer, as UCX's cma rendezvous does, without a message or a handshake of its own;
//! and of a gather's long objects, which each giver writes into the root's.

use crate::error::{Error, Result};
use smallvec::SmallVec;
use std::sync::OnceLock;

/// Whether this process may read other processes' memory: the system call is allowed
/// (seccomp lets it through: a read of our own memory works) and Yama does not restrict it
/// to descendants (`/proc/sys/kernel/yama/ptrace_scope` absent or 0; the members are siblings
/// under the launcher). Checked once.
pub(super) fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let scope = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
            .map(|s| s.trim() == "0")
            .unwrap_or(true);
        let probe = [7u8; 8];
        let mut copy = [0u8; 8];
        let read = read(std::process::id(), probe.as_ptr() as u64, &mut copy);
        scope && read.is_ok() && copy == probe
    })
}

/// Copies `into.len()` bytes at address `from` of process `pid` into `into`.
pub(super) fn read(pid: u32, from: u64, into: &mut [u8]) -> Result<()> {
    let local = [(into.as_mut_ptr() as u64, into.len())];
    streams(pid, Way::Read, &local, &[(from, into.len())])
}

/// Whether this process runs under valgrind (its preloaded core library), which cannot see
/// another process write this one's memory ([`super::lend::may_be_written`]).
pub(super) fn under_valgrind() -> bool {
    static UNDER: OnceLock<bool> = OnceLock::new();
    *UNDER.get_or_init(|| std::env::var("LD_PRELOAD").is_ok_and(|p| p.contains("vgpreload")))
}

/// The most ranges one system call takes (Linux's `UIO_MAXIOV`).
const IOV_MAX: usize = 1024;

/// Copies the ranges `from` of this process, as one stream of bytes, into the ranges `to` of
/// process `pid` (`process_vm_writev`): the single-copy way of a gather's long objects, which
/// each giver writes into the root's ([`super::objects`]). `to` must hold at least as many bytes
/// as `from`.
pub(super) fn write(pid: u32, from: &[(*const u8, usize)], to: &[(u64, usize)]) -> Result<()> {
    let local: Ranges = from.iter().map(|&(p, n)| (p as u64, n)).collect();
    streams(pid, Way::Write, &local, to)
}

/// Address and length of each range of a copy.
type Ranges = SmallVec<[(u64, usize); 4]>;

/// Which way [`streams`] copies: out of the other process's ranges, or into them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    Read,
    Write,
}

/// Copies the source's ranges (`remote`, of process `pid`, to read; `local`, of this process,
/// to write) as one stream of bytes into the other's, which must hold as many or more.
fn streams(pid: u32, way: Way, local: &[(u64, usize)], remote: &[(u64, usize)]) -> Result<()> {
    let call = match way {
        Way::Read => "process_vm_readv",
        Way::Write => "process_vm_writev",
    };
    let total = |r: &[(u64, usize)]| r.iter().map(|r| r.1).sum::<usize>();
    let (source, room) = match way {
        Way::Read => (total(remote), total(local)),
        Way::Write => (total(local), total(remote)),
    };
    if room < source {
        return Err(Error::Transport(format!(
            "{call} with {pid}: {source} bytes for {room} of room"
        )));
    }
    let iovecs = |r: &[(u64, usize)]| -> SmallVec<[libc::iovec; 4]> {
        r.iter()
            .filter(|r| r.1 > 0)
            .map(|&(a, n)| libc::iovec {
                iov_base: a as *mut libc::c_void,
                iov_len: n,
            })
            .collect()
    };
    let (mut mine, mut theirs) = (iovecs(local), iovecs(remote));
    let (mut done, mut l, mut r) = (0, 0, 0);
    while done < source {
        let (nl, nr) = (
            (mine.len() - l).min(IOV_MAX),
            (theirs.len() - r).min(IOV_MAX),
        );
        let (lv, rv) = (mine[l..].as_ptr(), theirs[r..].as_ptr());
        let (nl, nr) = (nl as libc::c_ulong, nr as libc::c_ulong);
        // SAFETY: `mine` names ranges of this process that the caller hands over: readable to
        // write from, or writable and touched by nothing else meanwhile to read into; the
        // kernel checks `theirs` against the other process's mappings (a bad address fails
        // with EFAULT), and nothing outside `mine` is touched here.
        let n = unsafe {
            match way {
                Way::Read => libc::process_vm_readv(pid as libc::pid_t, lv, nl, rv, nr, 0),
                Way::Write => libc::process_vm_writev(pid as libc::pid_t, lv, nl, rv, nr, 0),
            }
        };
        match n {
            n if n > 0 => {
                done += n as usize;
                advance(&mut mine, &mut l, n as usize);
                advance(&mut theirs, &mut r, n as usize);
            }
            0 => return Err(Error::Transport(format!("{call} with {pid}: no progress"))),
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(Error::Transport(format!("{call} with {pid}: {e}")));
                }
            }
        }
    }
    Ok(())
}

/// Moves the cursor `at` of `ranges` past `n` more bytes, shortening the range it stops in.
fn advance(ranges: &mut [libc::iovec], at: &mut usize, mut n: usize) {
    while n > 0 {
        let v = &mut ranges[*at];
        let step = n.min(v.iov_len);
        v.iov_base = v.iov_base.wrapping_byte_add(step);
        v.iov_len -= step;
        n -= step;
        if v.iov_len == 0 {
            *at += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process_memory() {
        let src: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        let mut dst = vec![0u8; src.len()];
        read(std::process::id(), src.as_ptr() as u64, &mut dst).unwrap();
        assert_eq!(src, dst);
    }

    #[test]
    fn writes_a_stream_across_differently_cut_ranges() {
        let src: Vec<u8> = (0..70_000u32).map(|i| (i * 7) as u8).collect();
        let from = [
            (src.as_ptr(), 10),
            (src[10..].as_ptr(), 0),
            (src[10..].as_ptr(), 69_990),
        ];
        let mut dst = vec![0u8; 70_003];
        let (a, b) = dst.split_at_mut(33_333);
        let to = [
            (a.as_mut_ptr() as u64, a.len()),
            (b.as_mut_ptr() as u64, b.len()),
        ];
        write(std::process::id(), &from, &to).unwrap();
        assert_eq!(&dst[..70_000], &src[..]);
        assert_eq!(&dst[70_000..], &[0, 0, 0]);
        assert!(
            write(std::process::id(), &from, &to[..1]).is_err(),
            "too short"
        );
    }

    #[test]
    fn a_bad_address_is_an_error() {
        let mut dst = [0u8; 16];
        assert!(read(std::process::id(), 8, &mut dst).is_err());
    }
}
