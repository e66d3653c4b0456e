//! The dynamic-process calls of ports and names: MPI_Open_port, MPI_Close_port,
//! MPI_Comm_accept, MPI_Comm_connect, MPI_Comm_disconnect, MPI_Comm_join, MPI_Publish_name,
//! MPI_Lookup_name, MPI_Unpublish_name, and MPI_Comm_get_parent (the communicator a spawned
//! process's MPI_Init made, [`connect_parent`]). The core does the handshakes
//! ([`mpicd::dynamic`]); the spawn calls are in `dynamic_spawn.rs`.

use crate::abi::*;
use crate::comms::{get, insert, run_on, COMMS};
use crate::env::{core_session, new_comm_out, out, require};
use crate::errors::{fail, run, CResult};
use crate::sessions::string_arg;
use mpicd::Communicator;
use std::ffi::{c_char, c_int};
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

/// The communicator to the parents of this spawned process: its handle and the object (a
/// handle reused after the communicator was freed is not it).
static PARENT: Mutex<Option<(usize, Arc<Communicator>)>> = Mutex::new(None);

fn parent() -> std::sync::MutexGuard<'static, Option<(usize, Arc<Communicator>)>> {
    PARENT.lock().unwrap_or_else(|p| p.into_inner())
}

/// In MPI_Init of a process that MPI_Comm_spawn started: connects the world to the parents
/// (collective over the world), whose inter-communicator MPI_Comm_get_parent then returns.
pub(crate) fn connect_parent(world: &Communicator) -> CResult<()> {
    if let Some(inter) = mpicd::dynamic::connect_parent(world)? {
        let inter = Arc::new(inter);
        let mut entry =
            crate::comms::CommEntry::new(Arc::clone(&inter), crate::errors::Errh::Fatal);
        entry.name = Some("MPI_COMM_PARENT".into());
        let h = COMMS.insert(entry);
        *parent() = Some((h, inter));
    }
    Ok(())
}

/// Runs a call not tied to a communicator under the default error handler.
fn run_plain(name: &'static str, body: impl FnOnce() -> CResult<()>) -> c_int {
    run(name, crate::comms::default_errh(), |_| body())
}

/// A port name argument.
///
/// # Safety
/// `port` is null or a NUL-terminated string.
unsafe fn port_arg(port: *const c_char) -> CResult<String> {
    // SAFETY: forwarded from the caller.
    unsafe { string_arg(port, MPI_MAX_PORT_NAME, "port_name") }
        .map_err(|f| fail(MPI_ERR_PORT, f.msg))
}

/// A service name argument.
///
/// # Safety
/// `service` is null or a NUL-terminated string.
unsafe fn service_arg(service: *const c_char) -> CResult<String> {
    // SAFETY: forwarded from the caller.
    unsafe { string_arg(service, MPI_MAX_PORT_NAME, "service_name") }
        .map_err(|f| fail(MPI_ERR_SERVICE, f.msg))
}

/// Copies `text` and its NUL to `dst`, which holds MPI_MAX_PORT_NAME bytes.
///
/// # Safety
/// `dst` is writable for MPI_MAX_PORT_NAME bytes.
unsafe fn put_port(dst: *mut c_char, text: &str) -> CResult<()> {
    require(dst, "port_name")?;
    if text.len() >= MPI_MAX_PORT_NAME as usize {
        return Err(fail(
            MPI_ERR_PORT,
            "port name longer than MPI_MAX_PORT_NAME",
        ));
    }
    // SAFETY: the caller's promise; text.len() + 1 <= MPI_MAX_PORT_NAME bytes are written.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), dst as *mut u8, text.len());
        *dst.add(text.len()) = 0;
    }
    Ok(())
}

/// A new port of this process, written to `port_name` (MPI_MAX_PORT_NAME bytes). `info` is
/// not read.
#[no_mangle]
pub unsafe extern "C" fn MPI_Open_port(_info: MPI_Info, port_name: *mut c_char) -> c_int {
    run_plain("Open_port", || {
        require(port_name, "port_name")?;
        let port = core_session()?.open_port()?;
        // SAFETY: MPI requires MPI_MAX_PORT_NAME writable bytes at port_name.
        unsafe { put_port(port_name, &port) }
    })
}

/// Closes a port this process opened (MPI_ERR_PORT for any other name).
#[no_mangle]
pub unsafe extern "C" fn MPI_Close_port(port_name: *const c_char) -> c_int {
    run_plain("Close_port", || {
        // SAFETY: MPI requires a NUL-terminated string.
        let port = unsafe { port_arg(port_name) }?;
        Ok(core_session()?.close_port(&port)?)
    })
}

/// Accepts a connection on `port_name` (read at `root` only, an open port of that process):
/// `*newcomm` is the inter-communicator between `comm`'s group and the group that connected
/// (collective over `comm`; waits until a connect comes). `info` is not read.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_accept(
    port_name: *const c_char,
    _info: MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
) -> c_int {
    run_on("Comm_accept", comm, |c| {
        new_comm_out(newcomm, "newcomm")?;
        let port = match c.rank() == root {
            // SAFETY: MPI requires a NUL-terminated string at the root.
            true => Some(unsafe { port_arg(port_name) }?),
            false => None,
        };
        let inter = c.accept(port.as_deref(), root)?;
        out(newcomm, insert(inter, comm))
    })
}

/// Connects to the group accepting on `port_name` (read at `root` only): `*newcomm` is the
/// inter-communicator between `comm`'s group and that group (collective over `comm`).
/// MPI_ERR_PORT when the name is no port, or nobody accepts on it within
/// `MPICD_CONNECT_TIMEOUT` seconds (30 by default). `info` is not read.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_connect(
    port_name: *const c_char,
    _info: MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    newcomm: *mut MPI_Comm,
) -> c_int {
    run_on("Comm_connect", comm, |c| {
        new_comm_out(newcomm, "newcomm")?;
        let port = match c.rank() == root {
            // SAFETY: MPI requires a NUL-terminated string at the root.
            true => Some(unsafe { port_arg(port_name) }?),
            false => None,
        };
        let inter = c.connect(port.as_deref(), root)?;
        out(newcomm, insert(inter, comm))
    })
}

/// Waits until the communication on `*comm` is over on every member (collective), frees it
/// and sets `*comm` to MPI_COMM_NULL; the processes of other jobs it connected are then
/// independent of this one (unless another communicator still connects them).
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_disconnect(comm: *mut MPI_Comm) -> c_int {
    let h = if comm.is_null() {
        MPI_COMM_NULL
    } else {
        // SAFETY: non-null; MPI requires a valid pointer.
        unsafe { *comm }
    };
    run_on("Comm_disconnect", h, |c| {
        if h == MPI_COMM_WORLD || h == MPI_COMM_SELF {
            return Err(fail(
                MPI_ERR_COMM,
                "predefined communicators cannot be disconnected",
            ));
        }
        c.disconnect()?;
        crate::attrs::comm::release(h)?;
        if let Some(entry) = COMMS.remove(h as usize) {
            crate::errhandlers::release(entry.errh);
        }
        let mut p = parent();
        if p.as_ref().is_some_and(|(ph, _)| *ph == h as usize) {
            *p = None;
        }
        out(comm, MPI_COMM_NULL)
    })
}

/// The inter-communicator to the parents of a process that MPI_Comm_spawn started;
/// MPI_COMM_NULL in a process that was not spawned, or once that communicator was freed or
/// disconnected.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_parent(parent_comm: *mut MPI_Comm) -> c_int {
    run_plain("Comm_get_parent", || {
        require(parent_comm, "parent")?;
        crate::env::check_live()?;
        let p = parent();
        let live = p.as_ref().and_then(|(h, inter)| {
            let same = COMMS.with(*h, |e| Arc::ptr_eq(&e.comm, inter))?;
            same.then_some(*h)
        });
        out(parent_comm, live.map_or(MPI_COMM_NULL, |h| h as MPI_Comm))
    })
}

/// An inter-communicator between this process and the process at the other end of the
/// connected socket `fd` (which calls MPI_Comm_join too): each sends the other a port name
/// over the socket, then the one with the smaller name accepts and the other connects.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_join(fd: c_int, intercomm: *mut MPI_Comm) -> c_int {
    run_plain("Comm_join", || {
        require(intercomm, "intercomm")?;
        if fd < 0 {
            return Err(fail(MPI_ERR_ARG, format!("invalid socket {fd}")));
        }
        let session = core_session()?;
        let this = get(MPI_COMM_SELF)?;
        let port = session.open_port()?;
        let joined = join_over(fd, &port).and_then(|theirs| {
            let inter = match port.as_str() < theirs.as_str() {
                true => this.accept(Some(&port), 0),
                false => this.connect(Some(&theirs), 0),
            };
            Ok(inter?)
        });
        let _ = session.close_port(&port);
        out(intercomm, insert(joined?, MPI_COMM_SELF))
    })
}

/// Sends `port` over the socket `fd` (its length, 4 bytes big-endian, then its bytes) and
/// reads the other side's the same way.
fn join_over(fd: c_int, port: &str) -> CResult<String> {
    use std::os::fd::FromRawFd;
    // SAFETY: the caller's socket is borrowed for the exchange and never closed here
    // (ManuallyDrop): the user keeps it.
    let mut sock = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
    let io = |e: std::io::Error| fail(MPI_ERR_OTHER, format!("MPI_Comm_join: socket: {e}"));
    let mut msg = (port.len() as u32).to_be_bytes().to_vec();
    msg.extend_from_slice(port.as_bytes());
    sock.write_all(&msg).map_err(io)?;
    let mut len = [0u8; 4];
    sock.read_exact(&mut len).map_err(io)?;
    let len = u32::from_be_bytes(len) as usize;
    if len >= MPI_MAX_PORT_NAME as usize {
        return Err(fail(
            MPI_ERR_PORT,
            "MPI_Comm_join: the other side sent no port name",
        ));
    }
    let mut theirs = vec![0u8; len];
    sock.read_exact(&mut theirs).map_err(io)?;
    String::from_utf8(theirs).map_err(|_| {
        fail(
            MPI_ERR_PORT,
            "MPI_Comm_join: the other side sent no port name",
        )
    })
}

/// Publishes `port_name` under `service_name` in the launcher's name service (the processes
/// of every job of this launcher see it). `info` is not read.
#[no_mangle]
pub unsafe extern "C" fn MPI_Publish_name(
    service_name: *const c_char,
    _info: MPI_Info,
    port_name: *const c_char,
) -> c_int {
    run_plain("Publish_name", || {
        // SAFETY: MPI requires NUL-terminated strings.
        let (service, port) = unsafe { (service_arg(service_name)?, port_arg(port_name)?) };
        Ok(core_session()?.publish_name(&service, &port)?)
    })
}

/// The port published under `service_name`, written to `port_name` (MPI_MAX_PORT_NAME
/// bytes); MPI_ERR_NAME if none is. `info` is not read.
#[no_mangle]
pub unsafe extern "C" fn MPI_Lookup_name(
    service_name: *const c_char,
    _info: MPI_Info,
    port_name: *mut c_char,
) -> c_int {
    run_plain("Lookup_name", || {
        // SAFETY: MPI requires a NUL-terminated string.
        let service = unsafe { service_arg(service_name) }?;
        require(port_name, "port_name")?;
        let port = core_session()?.lookup_name(&service)?;
        // SAFETY: MPI requires MPI_MAX_PORT_NAME writable bytes at port_name.
        unsafe { put_port(port_name, &port) }
    })
}

/// Withdraws `service_name` from the name service; MPI_ERR_SERVICE if it is not published.
/// `info` and `port_name` are not read.
#[no_mangle]
pub unsafe extern "C" fn MPI_Unpublish_name(
    service_name: *const c_char,
    _info: MPI_Info,
    _port_name: *const c_char,
) -> c_int {
    run_plain("Unpublish_name", || {
        // SAFETY: MPI requires a NUL-terminated string.
        let service = unsafe { service_arg(service_name) }?;
        Ok(core_session()?.unpublish_name(&service)?)
    })
}
