//! Integer forms of handles: `MPI_<Kind>_toint` / `_fromint` (the MPI-5 standard ABI's
//! conversions) and their older names `MPI_<Kind>_c2f` / `_f2c` (MPI_Fint is a C int here), for
//! communicators, error handlers, groups, info objects, messages, ops, requests, sessions,
//! windows, datatypes and files. A predefined handle's integer is its handle value (all below 4096, as the
//! standard ABI lays them out); another handle gets the next integer from 4096 up the first time
//! it is converted, and keeps it. An integer never given out converts back to the kind's null
//! handle.

use crate::abi::*;
use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::{Mutex, MutexGuard};

/// Handle values below this are the standard ABI's predefined handles and convert as themselves.
const PREDEFINED_END: usize = 0x1000;

/// The integers given out so far, both ways.
struct Ints {
    of_handle: HashMap<usize, c_int>,
    handles: Vec<usize>,
}

static INTS: Mutex<Option<Ints>> = Mutex::new(None);

fn ints() -> MutexGuard<'static, Option<Ints>> {
    INTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The integer of handle value `h` (handle values of all kinds are distinct in mpicd).
fn to_int(h: usize) -> c_int {
    if h < PREDEFINED_END {
        return h as c_int;
    }
    let mut guard = ints();
    let t = guard.get_or_insert_with(|| Ints {
        of_handle: HashMap::new(),
        handles: Vec::new(),
    });
    if let Some(&i) = t.of_handle.get(&h) {
        return i;
    }
    let i = (PREDEFINED_END + t.handles.len()) as c_int;
    t.handles.push(h);
    t.of_handle.insert(h, i);
    i
}

/// The handle value of integer `i`, or `null` if `i` was never given out.
fn from_int(i: c_int, null: usize) -> usize {
    let Ok(u) = usize::try_from(i) else {
        return null;
    };
    if u < PREDEFINED_END {
        return u;
    }
    ints()
        .as_ref()
        .and_then(|t| t.handles.get(u - PREDEFINED_END).copied())
        .unwrap_or(null)
}

/// The integer form of a MPI_Comm handle.
#[no_mangle]
pub extern "C" fn MPI_Comm_toint(comm: MPI_Comm) -> c_int {
    to_int(comm as usize)
}

/// The MPI_Comm handle of an integer from `MPI_Comm_toint` (MPI_COMM_NULL if it was never given out).
#[no_mangle]
pub extern "C" fn MPI_Comm_fromint(comm: c_int) -> MPI_Comm {
    from_int(comm, MPI_COMM_NULL as usize) as MPI_Comm
}

/// `MPI_Comm_toint` under its MPI-1 name (MPI_Fint is a C int).
#[no_mangle]
pub extern "C" fn MPI_Comm_c2f(comm: MPI_Comm) -> MPI_Fint {
    MPI_Comm_toint(comm)
}

/// `MPI_Comm_fromint` under its MPI-1 name.
#[no_mangle]
pub extern "C" fn MPI_Comm_f2c(comm: MPI_Fint) -> MPI_Comm {
    MPI_Comm_fromint(comm)
}

/// The integer form of a MPI_Errhandler handle.
#[no_mangle]
pub extern "C" fn MPI_Errhandler_toint(errhandler: MPI_Errhandler) -> c_int {
    to_int(errhandler as usize)
}

/// The MPI_Errhandler handle of an integer from `MPI_Errhandler_toint` (MPI_ERRHANDLER_NULL if it was never given out).
#[no_mangle]
pub extern "C" fn MPI_Errhandler_fromint(errhandler: c_int) -> MPI_Errhandler {
    from_int(errhandler, MPI_ERRHANDLER_NULL as usize) as MPI_Errhandler
}

/// `MPI_Errhandler_toint` under its MPI-1 name (MPI_Fint is a C int).
#[no_mangle]
pub extern "C" fn MPI_Errhandler_c2f(errhandler: MPI_Errhandler) -> MPI_Fint {
    MPI_Errhandler_toint(errhandler)
}

/// `MPI_Errhandler_fromint` under its MPI-1 name.
#[no_mangle]
pub extern "C" fn MPI_Errhandler_f2c(errhandler: MPI_Fint) -> MPI_Errhandler {
    MPI_Errhandler_fromint(errhandler)
}

/// The integer form of a MPI_Group handle.
#[no_mangle]
pub extern "C" fn MPI_Group_toint(group: MPI_Group) -> c_int {
    to_int(group as usize)
}

/// The MPI_Group handle of an integer from `MPI_Group_toint` (MPI_GROUP_NULL if it was never given out).
#[no_mangle]
pub extern "C" fn MPI_Group_fromint(group: c_int) -> MPI_Group {
    from_int(group, MPI_GROUP_NULL as usize) as MPI_Group
}

/// `MPI_Group_toint` under its MPI-1 name (MPI_Fint is a C int).
#[no_mangle]
pub extern "C" fn MPI_Group_c2f(group: MPI_Group) -> MPI_Fint {
    MPI_Group_toint(group)
}

/// `MPI_Group_fromint` under its MPI-1 name.
#[no_mangle]
pub extern "C" fn MPI_Group_f2c(group: MPI_Fint) -> MPI_Group {
    MPI_Group_fromint(group)
}

/// The integer form of a MPI_Info handle.
#[no_mangle]
pub extern "C" fn MPI_Info_toint(info: MPI_Info) -> c_int {
    to_int(info as usize)
}

/// The MPI_Info handle of an integer from `MPI_Info_toint` (MPI_INFO_NULL if it was never given out).
#[no_mangle]
pub extern "C" fn MPI_Info_fromint(info: c_int) -> MPI_Info {
    from_int(info, MPI_INFO_NULL as usize) as MPI_Info
}

/// `MPI_Info_toint` under its MPI-1 name (MPI_Fint is a C int).
#[no_mangle]
pub extern "C" fn MPI_Info_c2f(info: MPI_Info) -> MPI_Fint {
    MPI_Info_toint(info)
}

/// `MPI_Info_fromint` under its MPI-1 name.
#[no_mangle]
pub extern "C" fn MPI_Info_f2c(info: MPI_Fint) -> MPI_Info {
    MPI_Info_fromint(info)
}

/// The integer form of a MPI_Message handle.
#[no_mangle]
pub extern "C" fn MPI_Message_toint(message: MPI_Message) -> c_int {
    to_int(message as usize)
}

/// The MPI_Message handle of an integer from `MPI_Message_toint` (MPI_MESSAGE_NULL if it was never given out).
#[no_mangle]
pub extern "C" fn MPI_Message_fromint(message: c_int) -> MPI_Message {
    from_int(message, MPI_MESSAGE_NULL as usize) as MPI_Message
}

/// `MPI_Message_toint` under its MPI-1 name (MPI_Fint is a C int).
#[no_mangle]
pub extern "C" fn MPI_Message_c2f(message: MPI_Message) -> MPI_Fint {
    MPI_Message_toint(message)
}

/// `MPI_Message_fromint` under its MPI-1 name.
#[no_mangle]
pub extern "C" fn MPI_Message_f2c(message: MPI_Fint) -> MPI_Message {
    MPI_Message_fromint(message)
}

/// The integer form of a MPI_Op handle.
#[no_mangle]
pub extern "C" fn MPI_Op_toint(op: MPI_Op) -> c_int {
    to_int(op as usize)
}

/// The MPI_Op handle of an integer from `MPI_Op_toint` (MPI_OP_NULL if it was never given out).
#[no_mangle]
pub extern "C" fn MPI_Op_fromint(op: c_int) -> MPI_Op {
    from_int(op, MPI_OP_NULL as usize) as MPI_Op
}

/// `MPI_Op_toint` under its MPI-1 name (MPI_Fint is a C int).
#[no_mangle]
pub extern "C" fn MPI_Op_c2f(op: MPI_Op) -> MPI_Fint {
    MPI_Op_toint(op)
}

/// `MPI_Op_fromint` under its MPI-1 name.
#[no_mangle]
pub extern "C" fn MPI_Op_f2c(op: MPI_Fint) -> MPI_Op {
    MPI_Op_fromint(op)
}

/// The integer form of a MPI_Request handle.
#[no_mangle]
pub extern "C" fn MPI_Request_toint(request: MPI_Request) -> c_int {
    to_int(request as usize)
}

/// The MPI_Request handle of an integer from `MPI_Request_toint` (MPI_REQUEST_NULL if it was never given out).
#[no_mangle]
pub extern "C" fn MPI_Request_fromint(request: c_int) -> MPI_Request {
    from_int(request, MPI_REQUEST_NULL as usize) as MPI_Request
}

/// `MPI_Request_toint` under its MPI-1 name (MPI_Fint is a C int).
#[no_mangle]
pub extern "C" fn MPI_Request_c2f(request: MPI_Request) -> MPI_Fint {
    MPI_Request_toint(request)
}

/// `MPI_Request_fromint` under its MPI-1 name.
#[no_mangle]
pub extern "C" fn MPI_Request_f2c(request: MPI_Fint) -> MPI_Request {
    MPI_Request_fromint(request)
}

/// The integer form of a MPI_Session handle.
#[no_mangle]
pub extern "C" fn MPI_Session_toint(session: MPI_Session) -> c_int {
    to_int(session as usize)
}

/// The MPI_Session handle of an integer from `MPI_Session_toint` (MPI_SESSION_NULL if it was never given out).
#[no_mangle]
pub extern "C" fn MPI_Session_fromint(session: c_int) -> MPI_Session {
    from_int(session, MPI_SESSION_NULL as usize) as MPI_Session
}

/// `MPI_Session_toint` under its MPI-1 name (MPI_Fint is a C int).
#[no_mangle]
pub extern "C" fn MPI_Session_c2f(session: MPI_Session) -> MPI_Fint {
    MPI_Session_toint(session)
}

/// `MPI_Session_fromint` under its MPI-1 name.
#[no_mangle]
pub extern "C" fn MPI_Session_f2c(session: MPI_Fint) -> MPI_Session {
    MPI_Session_fromint(session)
}

/// The integer form of a MPI_Datatype handle.
#[no_mangle]
pub extern "C" fn MPI_Type_toint(datatype: MPI_Datatype) -> c_int {
    to_int(datatype as usize)
}

/// The MPI_Datatype handle of an integer from `MPI_Type_toint` (MPI_DATATYPE_NULL if it was never given out).
#[no_mangle]
pub extern "C" fn MPI_Type_fromint(datatype: c_int) -> MPI_Datatype {
    from_int(datatype, MPI_DATATYPE_NULL as usize) as MPI_Datatype
}

/// `MPI_Type_toint` under its MPI-1 name (MPI_Fint is a C int).
#[no_mangle]
pub extern "C" fn MPI_Type_c2f(datatype: MPI_Datatype) -> MPI_Fint {
    MPI_Type_toint(datatype)
}

/// `MPI_Type_fromint` under its MPI-1 name.
#[no_mangle]
pub extern "C" fn MPI_Type_f2c(datatype: MPI_Fint) -> MPI_Datatype {
    MPI_Type_fromint(datatype)
}

/// The integer form of a MPI_Win handle.
#[no_mangle]
pub extern "C" fn MPI_Win_toint(win: MPI_Win) -> c_int {
    to_int(win as usize)
}

/// The MPI_Win handle of an integer from `MPI_Win_toint` (MPI_WIN_NULL if it was never given out).
#[no_mangle]
pub extern "C" fn MPI_Win_fromint(win: c_int) -> MPI_Win {
    from_int(win, MPI_WIN_NULL as usize) as MPI_Win
}

/// `MPI_Win_toint` under its MPI-1 name.
#[no_mangle]
pub extern "C" fn MPI_Win_c2f(win: MPI_Win) -> MPI_Fint {
    MPI_Win_toint(win)
}

/// `MPI_Win_fromint` under its MPI-1 name.
#[no_mangle]
pub extern "C" fn MPI_Win_f2c(win: MPI_Fint) -> MPI_Win {
    MPI_Win_fromint(win)
}

/// The integer form of a MPI_File handle.
#[no_mangle]
pub extern "C" fn MPI_File_toint(file: MPI_File) -> c_int {
    to_int(file as usize)
}

/// The MPI_File handle of an integer from `MPI_File_toint` (MPI_FILE_NULL if it was never given out).
#[no_mangle]
pub extern "C" fn MPI_File_fromint(file: c_int) -> MPI_File {
    from_int(file, MPI_FILE_NULL as usize) as MPI_File
}

/// `MPI_File_toint` under its MPI-1 name (MPI_Fint is a C int).
#[no_mangle]
pub extern "C" fn MPI_File_c2f(file: MPI_File) -> MPI_Fint {
    MPI_File_toint(file)
}

/// `MPI_File_fromint` under its MPI-1 name.
#[no_mangle]
pub extern "C" fn MPI_File_f2c(file: MPI_Fint) -> MPI_File {
    MPI_File_fromint(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_through_ints() {
        assert_eq!(MPI_Comm_toint(MPI_COMM_WORLD), 0x101);
        assert_eq!(MPI_Comm_fromint(0x101), MPI_COMM_WORLD);
        let h = 0x1000_0000_0042usize as MPI_Comm;
        let i = MPI_Comm_toint(h);
        assert!(i >= 4096);
        assert_eq!(MPI_Comm_toint(h), i);
        assert_eq!(MPI_Comm_fromint(i), h);
        assert_eq!(MPI_Comm_f2c(MPI_Comm_c2f(h)), h);
        assert_eq!(MPI_Request_fromint(1 << 30), MPI_REQUEST_NULL);
        assert_eq!(MPI_Type_fromint(-1), MPI_DATATYPE_NULL);
        assert_eq!(MPI_File_toint(MPI_FILE_NULL), 0x118);
        assert_eq!(MPI_File_fromint(0x118), MPI_FILE_NULL);
        assert_eq!(MPI_File_fromint(1 << 30), MPI_FILE_NULL);
    }
}
