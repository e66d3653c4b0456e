//! Reads of another member's memory with Linux's cross-memory attach (`process_vm_readv`):
//! the single-copy way of the node collectives' blocks that only move ([`super::lend`]),
//! where the reader copies a block straight from the owner's buffer, as UCX's cma rendezvous
//! does, without a message or a handshake of its own.

use crate::error::{Error, Result};
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
    let mut done = 0;
    while done < into.len() {
        let local = libc::iovec {
            iov_base: into[done..].as_mut_ptr().cast(),
            iov_len: into.len() - done,
        };
        let remote = libc::iovec {
            iov_base: (from + done as u64) as *mut libc::c_void,
            iov_len: into.len() - done,
        };
        // SAFETY: `local` is this process's writable slice; the kernel checks `remote` against
        // the other process's mappings (a bad address fails with EFAULT, nothing is written
        // outside `into`).
        let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
        match n {
            n if n > 0 => done += n as usize,
            0 => {
                return Err(Error::Transport(format!(
                    "process_vm_readv from {pid}: no progress"
                )))
            }
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(Error::Transport(format!(
                        "process_vm_readv from {pid}: {e}"
                    )));
                }
            }
        }
    }
    Ok(())
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
    fn a_bad_address_is_an_error() {
        let mut dst = [0u8; 16];
        assert!(read(std::process::id(), 8, &mut dst).is_err());
    }
}
