//! The one error type of mpicd. Every fallible call returns [`Result<T>`]; the C layer maps each
//! variant to an MPI error class with [`Error::class`].

use crate::tag::MessageKind;
use std::fmt;

/// Result alias used across mpicd.
pub type Result<T> = std::result::Result<T, Error>;

/// Whose message a receive matched: the sender's rank in the communicator and the tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Envelope {
    pub source: i32,
    pub tag: i32,
}

/// Everything that can go wrong in mpicd, each case specific enough to tell the user what to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A call was made before [`crate::init`] or after finalize.
    NotInitialized,
    /// [`crate::init`] was called while a runtime is already alive in this process.
    AlreadyInitialized,
    /// The runtime was finalized; the handle can no longer be used.
    Finalized,
    /// A rank outside `0..size` (and not `PROC_NULL`/`ANY_SOURCE` where allowed).
    InvalidRank { rank: i32, size: i32 },
    /// A rank named twice where each may appear once (a group's members, `incl`/`excl` lists).
    DuplicateRank(i32),
    /// A group that does not fit the call (for example not a subgroup of the communicator's).
    InvalidGroup(String),
    /// An info key that is empty or longer than [`crate::info::MAX_KEY`] bytes.
    InvalidInfoKey(String),
    /// An info value that is empty or longer than [`crate::info::MAX_VALUE`] bytes.
    InvalidInfoValue(String),
    /// An info key that the info object does not hold (delete), or an index past its keys.
    InfoNoKey(String),
    /// A tag that is negative (other than `ANY_TAG` on receive) or above [`crate::TAG_UB`].
    InvalidTag(i32),
    /// A buffer pointer that is null while the count is not zero.
    NullBuffer,
    /// A negative or otherwise impossible count.
    InvalidCount(i64),
    /// The communicator is unknown or was freed.
    InvalidCommunicator,
    /// A communicator of the wrong kind for the call (an inter-communicator where MPI defines
    /// the call on intra-communicators only, or the reverse).
    CommunicatorKind(String),
    /// A request handle that is unknown, already completed and freed, or inactive.
    InvalidRequest,
    /// A message handle that is unknown or was already received.
    InvalidMessage,
    /// A datatype that does not fit the operation (for example mismatching element sizes, or a
    /// custom type whose callbacks describe an impossible message).
    InvalidDatatype(String),
    /// A receive matched a message of the other kind: a custom-typed message (`message` is
    /// [`MessageKind::Custom`]) taken by a contiguous receive, or a contiguous message taken by
    /// a custom-typed receive. The message is consumed and all of its data drained, so its
    /// sender completes. A custom receive's unpack and resize callbacks are not called; a
    /// contiguous receive's buffer may hold the custom message's lead (its contents are
    /// undefined, as after any failed receive).
    DatatypeMismatch { message: MessageKind },
    /// A reduction operation that is not defined on the elements it is applied to (a bitwise
    /// op on floating-point numbers, for example), or not allowed in the call.
    InvalidOp(String),
    /// An argument that does not fit any of the more specific cases.
    InvalidArgument(String),
    /// The incoming message is larger than the receive buffer; nothing was written past it.
    /// `matched`: the message's sender and tag, where a receive matched one (what MPI's
    /// status still reports for a truncated receive).
    Truncated {
        message_bytes: u64,
        buffer_bytes: u64,
        matched: Option<Envelope>,
    },
    /// A custom datatype callback on this process returned an error code.
    Callback { callback: &'static str, code: i32 },
    /// The sending process failed while producing the message (for example its pack callback
    /// returned an error after the data started flowing).
    RemoteFailure,
    /// The peer process died or became unreachable (`rank` is -1 only inside the runtime,
    /// from the transport, before the engine names the peer).
    ProcFailed { rank: i32 },
    /// A receive from any source waits on a communicator with a failed member whose failure
    /// was not acknowledged (ULFM): the receive stays pending, and waiting for it again after
    /// the acknowledgment goes on.
    ProcFailedPending { rank: i32 },
    /// The communicator was revoked (ULFM's `MPIX_Comm_revoke`, here or by another member):
    /// no operation but the fault-tolerance calls runs on it any more.
    Revoked,
    /// The operation was cancelled.
    Cancelled,
    /// The process manager (PMIx) failed.
    Launch(String),
    /// The transport (UCX) reported an error.
    Transport(String),
    /// Finalize found operations that were never completed.
    PendingOperations(usize),
    /// Memory could not be allocated.
    NoMemory,
    /// A one-sided communication error of class `.0` (see [`RmaError`]).
    Rma(RmaError, String),
    /// A parallel I/O error of class `.0` (see [`IoError`]).
    Io(IoError, String),
    /// A dynamic-process error of class `.0` (see [`DynamicError`]).
    Dynamic(DynamicError, String),
}

/// The classes of dynamic-process errors, as MPI names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DynamicError {
    /// `MPI_ERR_PORT`: a port name that is malformed, closed, or that nobody accepts on.
    Port,
    /// `MPI_ERR_SPAWN`: the processes could not be started.
    Spawn,
    /// `MPI_ERR_NAME`: no port is published under the service name.
    Name,
    /// `MPI_ERR_SERVICE`: the service name is not published by this process.
    Service,
}

/// The classes of one-sided errors, as MPI names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RmaError {
    /// `MPI_ERR_RMA_RANGE`: outside the target's window.
    Range,
    /// `MPI_ERR_RMA_SYNC`: outside an epoch, or a synchronization call out of order.
    Sync,
    /// `MPI_ERR_RMA_ATTACH`: a memory region that cannot be attached or detached.
    Attach,
    /// `MPI_ERR_RMA_SHARED`: memory that cannot be shared.
    Shared,
    /// `MPI_ERR_RMA_FLAVOR`: the call does not suit the window's flavor.
    Flavor,
    /// `MPI_ERR_LOCKTYPE`.
    LockType,
}

/// The classes of parallel I/O errors, as MPI names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoError {
    /// `MPI_ERR_FILE`: an invalid file handle, or a call the file's state forbids.
    File,
    /// `MPI_ERR_BAD_FILE`: an invalid file name.
    BadFile,
    /// `MPI_ERR_NO_SUCH_FILE`: the file does not exist.
    NoSuchFile,
    /// `MPI_ERR_FILE_EXISTS`: `MPI_MODE_EXCL` on a file that exists.
    FileExists,
    /// `MPI_ERR_FILE_IN_USE`: the file is open elsewhere.
    FileInUse,
    /// `MPI_ERR_AMODE`: an invalid access mode.
    Amode,
    /// `MPI_ERR_ACCESS`: permission denied, or an access the mode forbids.
    Access,
    /// `MPI_ERR_READ_ONLY`: a write to a read-only file or file system.
    ReadOnly,
    /// `MPI_ERR_NO_SPACE`: the file system is full.
    NoSpace,
    /// `MPI_ERR_QUOTA`: a quota was exceeded.
    Quota,
    /// `MPI_ERR_IO`: any other I/O failure.
    Io,
    /// `MPI_ERR_DUP_DATAREP`: a data representation registered twice.
    DupDatarep,
    /// `MPI_ERR_UNSUPPORTED_DATAREP`: an unknown or unsupported data representation.
    UnsupportedDatarep,
    /// `MPI_ERR_UNSUPPORTED_OPERATION`: an operation the file's mode does not allow (an
    /// individual file pointer on an `MPI_MODE_SEQUENTIAL` file).
    UnsupportedOperation,
    /// `MPI_ERR_CONVERSION`: a data conversion function failed.
    Conversion,
}

/// MPI error classes (numbering of the MPI standard ABI) that errors map onto.
pub mod class {
    pub const SUCCESS: i32 = 0;
    pub const ERR_BUFFER: i32 = 1;
    pub const ERR_COUNT: i32 = 2;
    pub const ERR_TYPE: i32 = 3;
    pub const ERR_TAG: i32 = 4;
    pub const ERR_COMM: i32 = 5;
    pub const ERR_RANK: i32 = 6;
    pub const ERR_REQUEST: i32 = 7;
    pub const ERR_ROOT: i32 = 8;
    pub const ERR_GROUP: i32 = 9;
    pub const ERR_OP: i32 = 10;
    pub const ERR_TOPOLOGY: i32 = 11;
    pub const ERR_DIMS: i32 = 12;
    pub const ERR_ARG: i32 = 13;
    pub const ERR_UNKNOWN: i32 = 14;
    pub const ERR_TRUNCATE: i32 = 15;
    pub const ERR_OTHER: i32 = 16;
    pub const ERR_INTERN: i32 = 17;
    pub const ERR_PENDING: i32 = 18;
    pub const ERR_IN_STATUS: i32 = 19;
    pub const ERR_ACCESS: i32 = 20;
    pub const ERR_AMODE: i32 = 21;
    pub const ERR_BAD_FILE: i32 = 23;
    pub const ERR_CONVERSION: i32 = 25;
    pub const ERR_DUP_DATAREP: i32 = 27;
    pub const ERR_FILE_EXISTS: i32 = 28;
    pub const ERR_FILE_IN_USE: i32 = 29;
    pub const ERR_FILE: i32 = 30;
    pub const ERR_IO: i32 = 35;
    pub const ERR_NO_SPACE: i32 = 41;
    pub const ERR_NO_SUCH_FILE: i32 = 42;
    pub const ERR_QUOTA: i32 = 44;
    pub const ERR_READ_ONLY: i32 = 45;
    pub const ERR_UNSUPPORTED_DATAREP: i32 = 54;
    pub const ERR_UNSUPPORTED_OPERATION: i32 = 55;
    pub const ERR_LOCKTYPE: i32 = 37;
    pub const ERR_RMA_ATTACH: i32 = 46;
    pub const ERR_RMA_RANGE: i32 = 48;
    pub const ERR_RMA_SHARED: i32 = 49;
    pub const ERR_RMA_SYNC: i32 = 50;
    pub const ERR_WIN: i32 = 56;
    pub const ERR_RMA_FLAVOR: i32 = 57;
    pub const ERR_INFO_KEY: i32 = 31;
    pub const ERR_INFO_NOKEY: i32 = 32;
    pub const ERR_INFO_VALUE: i32 = 33;
    pub const ERR_NO_MEM: i32 = 39;
    pub const ERR_NAME: i32 = 38;
    pub const ERR_PORT: i32 = 43;
    pub const ERR_SERVICE: i32 = 51;
    pub const ERR_SPAWN: i32 = 53;
    pub const ERR_PROC_ABORTED: i32 = 58;
    /// Not in the standard ABI: `MPIX_ERR_PROC_FAILED` in mpi.h (Open MPI 5's value).
    pub const ERR_PROC_FAILED: i32 = 75;
    /// Not in the standard ABI: `MPIX_ERR_PROC_FAILED_PENDING` in mpi.h (Open MPI 5's value).
    pub const ERR_PROC_FAILED_PENDING: i32 = 76;
    /// Not in the standard ABI: `MPIX_ERR_REVOKED` in mpi.h (Open MPI 5's value).
    pub const ERR_REVOKED: i32 = 77;
    /// Not in the standard ABI: `MPIX_ERR_NOT_INITIALIZED` in mpi.h (above Open MPI 5's
    /// classes, which end at 92).
    pub const ERR_NOT_INITIALIZED: i32 = 93;
}

impl Error {
    /// A message of `message_bytes` bytes for a buffer of `buffer_bytes` (no matched message
    /// known yet: [`Error::matched`]).
    pub fn truncated(message_bytes: u64, buffer_bytes: u64) -> Error {
        Error::Truncated {
            message_bytes,
            buffer_bytes,
            matched: None,
        }
    }

    /// A truncation as the receive that matched `envelope`'s message reports it (other errors
    /// unchanged).
    pub(crate) fn matched(self, envelope: Envelope) -> Error {
        match self {
            Error::Truncated {
                message_bytes,
                buffer_bytes,
                ..
            } => Error::Truncated {
                message_bytes,
                buffer_bytes,
                matched: Some(envelope),
            },
            other => other,
        }
    }

    /// The MPI error class this error maps to.
    pub fn class(&self) -> i32 {
        use class::*;
        match self {
            Error::NotInitialized | Error::Finalized | Error::AlreadyInitialized => ERR_OTHER,
            Error::InvalidRank { .. } | Error::DuplicateRank(_) => ERR_RANK,
            Error::InvalidGroup(_) => ERR_GROUP,
            Error::InvalidInfoKey(_) => ERR_INFO_KEY,
            Error::InvalidInfoValue(_) => ERR_INFO_VALUE,
            Error::InfoNoKey(_) => ERR_INFO_NOKEY,
            Error::InvalidTag(_) => ERR_TAG,
            Error::NullBuffer => ERR_BUFFER,
            Error::InvalidCount(_) => ERR_COUNT,
            Error::InvalidCommunicator | Error::CommunicatorKind(_) => ERR_COMM,
            Error::InvalidRequest | Error::InvalidMessage => ERR_REQUEST,
            Error::InvalidDatatype(_) | Error::DatatypeMismatch { .. } => ERR_TYPE,
            Error::InvalidOp(_) => ERR_OP,
            Error::InvalidArgument(_) => ERR_ARG,
            Error::Truncated { .. } => ERR_TRUNCATE,
            Error::Callback { code, .. } => *code,
            Error::RemoteFailure => ERR_OTHER,
            Error::ProcFailed { .. } => ERR_PROC_FAILED,
            Error::ProcFailedPending { .. } => ERR_PROC_FAILED_PENDING,
            Error::Revoked => ERR_REVOKED,
            Error::Cancelled => ERR_OTHER,
            Error::Launch(_) | Error::Transport(_) => ERR_INTERN,
            Error::PendingOperations(_) => ERR_PENDING,
            Error::NoMemory => ERR_NO_MEM,
            Error::Rma(kind, _) => match kind {
                RmaError::Range => ERR_RMA_RANGE,
                RmaError::Sync => ERR_RMA_SYNC,
                RmaError::Attach => ERR_RMA_ATTACH,
                RmaError::Shared => ERR_RMA_SHARED,
                RmaError::Flavor => ERR_RMA_FLAVOR,
                RmaError::LockType => ERR_LOCKTYPE,
            },
            Error::Dynamic(kind, _) => match kind {
                DynamicError::Port => ERR_PORT,
                DynamicError::Spawn => ERR_SPAWN,
                DynamicError::Name => ERR_NAME,
                DynamicError::Service => ERR_SERVICE,
            },
            Error::Io(kind, _) => match kind {
                IoError::File => ERR_FILE,
                IoError::BadFile => ERR_BAD_FILE,
                IoError::NoSuchFile => ERR_NO_SUCH_FILE,
                IoError::FileExists => ERR_FILE_EXISTS,
                IoError::FileInUse => ERR_FILE_IN_USE,
                IoError::Amode => ERR_AMODE,
                IoError::Access => ERR_ACCESS,
                IoError::ReadOnly => ERR_READ_ONLY,
                IoError::NoSpace => ERR_NO_SPACE,
                IoError::Quota => ERR_QUOTA,
                IoError::Io => ERR_IO,
                IoError::DupDatarep => ERR_DUP_DATAREP,
                IoError::UnsupportedDatarep => ERR_UNSUPPORTED_DATAREP,
                IoError::UnsupportedOperation => ERR_UNSUPPORTED_OPERATION,
                IoError::Conversion => ERR_CONVERSION,
            },
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotInitialized => write!(f, "mpicd is not initialized (call init first)"),
            Error::AlreadyInitialized => write!(f, "mpicd is already initialized in this process"),
            Error::Finalized => write!(f, "mpicd was finalized; no further calls are allowed"),
            Error::InvalidRank { rank, size } => {
                write!(f, "invalid rank {rank} (communicator size is {size})")
            }
            Error::DuplicateRank(rank) => write!(f, "rank {rank} is named more than once"),
            Error::InvalidGroup(why) => write!(f, "invalid group: {why}"),
            Error::InvalidInfoKey(why) => write!(f, "invalid info key: {why}"),
            Error::InvalidInfoValue(why) => write!(f, "invalid info value: {why}"),
            Error::InfoNoKey(why) => write!(f, "no such info key: {why}"),
            Error::InvalidTag(tag) => write!(
                f,
                "invalid tag {tag} (tags must be in 0..={}, ANY_TAG only on receive)",
                crate::TAG_UB
            ),
            Error::NullBuffer => write!(f, "null buffer with a non-zero count"),
            Error::InvalidCount(c) => write!(f, "invalid count {c}"),
            Error::InvalidCommunicator => write!(f, "unknown or freed communicator"),
            Error::CommunicatorKind(why) => write!(f, "wrong kind of communicator: {why}"),
            Error::InvalidRequest => write!(f, "unknown, inactive or freed request"),
            Error::InvalidMessage => write!(f, "unknown or already received message handle"),
            Error::InvalidDatatype(why) => write!(f, "invalid datatype: {why}"),
            Error::DatatypeMismatch {
                message: MessageKind::Custom,
            } => write!(
                f,
                "datatype mismatch: a custom-typed message received with a contiguous datatype"
            ),
            Error::DatatypeMismatch {
                message: MessageKind::Contiguous,
            } => write!(
                f,
                "datatype mismatch: a contiguous message received with a custom datatype"
            ),
            Error::InvalidOp(why) => write!(f, "invalid operation: {why}"),
            Error::InvalidArgument(why) => write!(f, "invalid argument: {why}"),
            Error::Truncated {
                message_bytes,
                buffer_bytes,
                matched,
            } => {
                write!(f, "message truncated: ")?;
                match message_bytes {
                    0 => write!(f, "a longer message arrived")?,
                    n => write!(f, "{n} bytes arrived")?,
                }
                write!(f, " for a {buffer_bytes}-byte buffer")?;
                match matched {
                    Some(m) => write!(f, " (from rank {}, tag {})", m.source, m.tag),
                    None => Ok(()),
                }
            }
            Error::Callback { callback, code } => {
                write!(
                    f,
                    "custom datatype callback '{callback}' failed with code {code}"
                )
            }
            Error::RemoteFailure => {
                write!(f, "the sender failed while producing the message")
            }
            Error::ProcFailed { rank } => write!(f, "process {rank} failed or is unreachable"),
            Error::ProcFailedPending { rank } => write!(
                f,
                "a receive from any source is pending on a communicator whose process {rank} \
                 failed (not acknowledged)"
            ),
            Error::Revoked => write!(f, "the communicator was revoked"),
            Error::Cancelled => write!(f, "operation cancelled"),
            Error::Launch(why) => write!(f, "launch (PMIx) error: {why}"),
            Error::Transport(why) => write!(f, "transport (UCX) error: {why}"),
            Error::PendingOperations(n) => write!(f, "{n} operations were still pending"),
            Error::NoMemory => write!(f, "out of memory"),
            Error::Rma(_, why) => write!(f, "one-sided communication: {why}"),
            Error::Dynamic(_, why) => write!(f, "dynamic processes: {why}"),
            Error::Io(_, why) => write!(f, "I/O: {why}"),
        }
    }
}

impl std::error::Error for Error {}
