//! Liveness of peer processes on the same node, watched without the transport's help.
//!
//! UCX can detect a dead peer itself (error-handling endpoints with keepalive), but UCX 1.13's
//! shared-memory transports lack that mode: an endpoint that asks for it moves to tcp over
//! loopback (`ucx_info -e -u te -P intra`). So endpoints to processes on this node use no UCX
//! error handling while shared memory is allowed, and the engine instead looks, about every
//! 200 ms while it progresses (at once after UCX reported a failed copy between processes), at
//! whether the processes it is connected to still exist. Endpoints to other nodes, and to this
//! node's processes when `UCX_TLS` leaves shared memory out, keep UCX's peer error handling.

use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

/// How often connected local peers are looked at while progressing.
const CHECK_INTERVAL: Duration = Duration::from_millis(200);
/// Progress calls between two looks at the clock.
const CALLS_PER_CLOCK_READ: u32 = 256;

/// Who a process is: its pid and the node it runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    pub pid: u32,
    pub node: String,
}

impl Identity {
    /// This process. The node is the host name, the kernel's boot id (so two machines that
    /// share a host name are not taken for one) and the pid namespace.
    pub(crate) fn current() -> Identity {
        let read = |path: &str| {
            std::fs::read_to_string(path)
                .unwrap_or_default()
                .trim()
                .to_string()
        };
        // Processes in different pid namespaces (containers) cannot name each other by pid:
        // they count as different nodes.
        let pid_namespace = std::fs::read_link("/proc/self/ns/pid")
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let node = format!(
            "{}/{}/{pid_namespace}",
            read("/proc/sys/kernel/hostname"),
            read("/proc/sys/kernel/random/boot_id")
        );
        Identity {
            pid: std::process::id(),
            node,
        }
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = self.pid.to_le_bytes().to_vec();
        out.extend_from_slice(self.node.as_bytes());
        out
    }

    pub(crate) fn decode(bytes: &[u8]) -> Option<Identity> {
        let pid = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
        let node = String::from_utf8(bytes.get(4..)?.to_vec()).ok()?;
        Some(Identity { pid, node })
    }
}

/// True while process `pid` of this node exists and has not exited (a zombie counts as dead).
pub(crate) fn is_alive(pid: u32) -> bool {
    use std::io::{Read, Write};
    // On the stack: the check runs every few hundred milliseconds inside the progress loop,
    // which allocates nothing on its own (examples/mpi_no_alloc.rs).
    let mut path = [0u8; 32];
    let mut cursor = std::io::Cursor::new(&mut path[..]);
    if write!(cursor, "/proc/{pid}/stat").is_err() {
        return true;
    }
    let len = cursor.position() as usize;
    let path = std::ffi::OsStr::from_bytes(&path[..len]);
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    // "pid (comm) S ...": the command name is at most 16 bytes, so the state is within the
    // first 64; it follows the last ')' there (a name may hold parentheses and spaces).
    let mut head = [0u8; 64];
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return false,
        }
    }
    let head = &head[..got];
    match head.iter().rposition(|&b| b == b')') {
        Some(i) => match head[i + 1..].iter().find(|b| !b.is_ascii_whitespace()) {
            Some(state) => !matches!(state, b'Z' | b'X' | b'x'),
            None => true,
        },
        None => true,
    }
}

/// Tells the engine when it is time to look at its local peers again.
#[derive(Debug)]
pub(crate) struct Watch {
    calls: u32,
    next: Instant,
}

impl Watch {
    pub(crate) fn new() -> Watch {
        Watch {
            calls: 0,
            next: Instant::now() + CHECK_INTERVAL,
        }
    }

    /// Makes the next [`Watch::due`] read the clock (progress calls are about to become rare).
    pub(crate) fn hurry(&mut self) {
        self.calls = CALLS_PER_CLOCK_READ;
    }

    /// Counts one progress call; true when a check is due.
    pub(crate) fn due(&mut self) -> bool {
        self.calls += 1;
        if self.calls < CALLS_PER_CLOCK_READ {
            return false;
        }
        self.calls = 0;
        let now = Instant::now();
        if now < self.next {
            return false;
        }
        self.next = now + CHECK_INTERVAL;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_round_trips_and_self_is_alive() {
        let me = Identity::current();
        assert_eq!(Identity::decode(&me.encode()), Some(me.clone()));
        assert!(me.node.len() > 1);
        assert!(is_alive(me.pid));
        assert!(!is_alive(u32::MAX - 1));
    }

    #[test]
    fn an_exited_child_is_dead() {
        let mut child = std::process::Command::new("true")
            .spawn()
            .expect("spawn true");
        let pid = child.id();
        child.wait().expect("wait");
        assert!(!is_alive(pid));
    }
}
