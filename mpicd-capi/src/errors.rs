//! Errors at the C boundary: the one helper every `extern "C"` function runs its body through
//! ([`run`]: catches panics, maps errors to MPI error codes, applies the error handler), the
//! mapping of core error classes to the standard ABI values, the error handler of a call
//! ([`Errh`]: a predefined one, or a user's bound to the object it is attached to) and
//! [`raise`], which applies it. User error handlers are kept in `errhandlers.rs`; error codes,
//! classes and their text in `errcodes.rs`.

use crate::abi::*;
use crate::errhandlers::UserErrh;
use mpicd::error::class;
use std::cell::RefCell;
use std::ffi::{c_char, c_int};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A failed call: the MPI error code it returns and what to tell the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fail {
    pub code: c_int,
    pub msg: String,
}

pub(crate) type CResult<T> = Result<T, Fail>;

/// A failure with error class `code`.
pub(crate) fn fail(code: c_int, msg: impl Into<String>) -> Fail {
    Fail {
        code,
        msg: msg.into(),
    }
}

impl From<mpicd::Error> for Fail {
    fn from(e: mpicd::Error) -> Fail {
        Fail {
            code: code_of(&e),
            msg: e.to_string(),
        }
    }
}

/// The MPI error code of a core error: a callback's own code passes through unchanged.
pub(crate) fn code_of(e: &mpicd::Error) -> c_int {
    match e {
        mpicd::Error::Callback { code, .. } => *code,
        other => abi_class(other.class()),
    }
}

/// The standard ABI value of a core error class.
pub(crate) fn abi_class(core: i32) -> c_int {
    match core {
        c if c == class::ERR_IN_STATUS => MPI_ERR_IN_STATUS,
        c if c == class::ERR_PENDING => MPI_ERR_PENDING,
        c if c == class::ERR_NO_MEM => MPI_ERR_NO_MEM,
        c if c == class::ERR_PROC_ABORTED => MPI_ERR_PROC_ABORTED,
        c if c == class::ERR_PROC_FAILED => MPIX_ERR_PROC_FAILED,
        c if c == class::ERR_PROC_FAILED_PENDING => MPIX_ERR_PROC_FAILED_PENDING,
        c if c == class::ERR_REVOKED => MPIX_ERR_REVOKED,
        c if c == class::ERR_NOT_INITIALIZED => MPIX_ERR_NOT_INITIALIZED,
        c @ (0..=17 | 20..=21 | 23 | 25 | 27..=33 | 35 | 37 | 41..=42 | 44..=50 | 54..=57) => c,
        // Dynamic processes: MPI_ERR_NAME, MPI_ERR_PORT, MPI_ERR_SERVICE, MPI_ERR_SPAWN.
        c @ (38 | 43 | 51 | 53) => c,
        _ => MPI_ERR_UNKNOWN,
    }
}

/// An error handler: one of the predefined ones, or a user's, bound to the object whose errors
/// it handles (so that [`raise`] can hand the user function that object's handle).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Errh {
    Fatal,
    Return,
    Abort,
    User(UserErrh),
}

impl Errh {
    /// The predefined handler of a handle, if it is one.
    pub(crate) fn from_handle(h: MPI_Errhandler) -> Option<Errh> {
        match h as usize {
            x if x == MPI_ERRORS_ARE_FATAL as usize => Some(Errh::Fatal),
            x if x == MPI_ERRORS_RETURN as usize => Some(Errh::Return),
            x if x == MPI_ERRORS_ABORT as usize => Some(Errh::Abort),
            _ => None,
        }
    }

    /// The handle `MPI_Comm_get_errhandler` gives for this handler.
    pub(crate) fn handle(self) -> MPI_Errhandler {
        match self {
            Errh::Fatal => MPI_ERRORS_ARE_FATAL,
            Errh::Return => MPI_ERRORS_RETURN,
            Errh::Abort => MPI_ERRORS_ABORT,
            Errh::User(u) => u.handle as MPI_Errhandler,
        }
    }

    /// This handler, applied to errors of the object of handle value `obj` (a user handler is
    /// called with that handle; the predefined ones need none).
    pub(crate) fn bound_to(self, obj: usize) -> Errh {
        match self {
            Errh::User(u) => Errh::User(UserErrh { obj, ..u }),
            other => other,
        }
    }
}

/// What a call's body may change while it runs: the error handler that applies (a request's
/// communicator's, once the request is known).
pub(crate) struct Ctx {
    pub errh: Errh,
}

thread_local! {
    /// The last failure on this thread, for a detailed `MPI_Error_string`.
    static LAST: RefCell<Option<Fail>> = const { RefCell::new(None) };
}

/// Runs the body of `MPI_<name>`: catches panics, and on failure applies the error handler
/// (`errh`, or the one the body set in [`Ctx`]) and returns the error code.
pub(crate) fn run(
    name: &'static str,
    errh: Errh,
    body: impl FnOnce(&mut Ctx) -> CResult<()>,
) -> c_int {
    let mut ctx = Ctx { errh };
    let outcome = catch_unwind(AssertUnwindSafe(|| body(&mut ctx)));
    let failure = match outcome {
        Ok(Ok(())) => return MPI_SUCCESS,
        Ok(Err(f)) => f,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            fail(MPI_ERR_INTERN, format!("internal error (panic): {what}"))
        }
    };
    raise(name, ctx.errh, failure)
}

/// Applies `errh` to a failure of `MPI_<name>`; returns the code when the handler returns:
/// MPI_ERRORS_RETURN returns at once, a user handler is called with the object's handle and
/// the code first, MPI_ERRORS_ARE_FATAL and MPI_ERRORS_ABORT print the error and end the job
/// (MPI_ERRORS_ABORT would end the processes of the communicator only, which are the job's
/// as far as mpicd can abort them).
pub(crate) fn raise(name: &str, errh: Errh, failure: Fail) -> c_int {
    let code = failure.code;
    if let Errh::Fatal | Errh::Abort = errh {
        let prefix = if name.starts_with("MPIX_") {
            ""
        } else {
            "MPI_"
        };
        let what = crate::errcodes::describe(code);
        let text = format!("{prefix}{name}: {} ({what})", failure.msg);
        eprintln!("mpicd: fatal error in {text}");
        // An exit status is the code's low byte: never let it read as success.
        crate::env::abort_job(if code & 0xff == 0 { 1 } else { code }, &text)
    }
    LAST.with(|l| *l.borrow_mut() = Some(failure));
    if let Errh::User(u) = errh {
        u.call(code);
    }
    code
}

/// The name of an error class, or a note that mpicd does not know the value.
pub(crate) fn class_name(code: c_int) -> &'static str {
    predefined_class_name(code)
        .unwrap_or("error code not known to mpicd (a custom datatype callback's own code?)")
}

/// The name of a predefined error class.
pub(crate) fn predefined_class_name(code: c_int) -> Option<&'static str> {
    Some(match code {
        MPI_SUCCESS => "MPI_SUCCESS: no error",
        MPI_ERR_BUFFER => "MPI_ERR_BUFFER: invalid buffer pointer",
        MPI_ERR_COUNT => "MPI_ERR_COUNT: invalid count argument",
        MPI_ERR_TYPE => "MPI_ERR_TYPE: invalid datatype",
        MPI_ERR_TAG => "MPI_ERR_TAG: invalid tag",
        MPI_ERR_COMM => "MPI_ERR_COMM: invalid communicator",
        MPI_ERR_RANK => "MPI_ERR_RANK: invalid rank",
        MPI_ERR_REQUEST => "MPI_ERR_REQUEST: invalid request",
        MPI_ERR_ROOT => "MPI_ERR_ROOT: invalid root",
        MPI_ERR_GROUP => "MPI_ERR_GROUP: invalid group",
        MPI_ERR_OP => "MPI_ERR_OP: invalid reduce operation",
        MPI_ERR_TOPOLOGY => "MPI_ERR_TOPOLOGY: invalid topology",
        MPI_ERR_DIMS => "MPI_ERR_DIMS: invalid dimension argument",
        MPI_ERR_ARG => "MPI_ERR_ARG: invalid argument",
        MPI_ERR_UNKNOWN => "MPI_ERR_UNKNOWN: unknown error",
        MPI_ERR_TRUNCATE => "MPI_ERR_TRUNCATE: message truncated",
        MPI_ERR_OTHER => "MPI_ERR_OTHER: known error not in this list",
        MPI_ERR_INTERN => "MPI_ERR_INTERN: internal error",
        MPI_ERR_PENDING => "MPI_ERR_PENDING: pending request",
        MPI_ERR_IN_STATUS => "MPI_ERR_IN_STATUS: error code is in status",
        MPI_ERR_ACCESS => "MPI_ERR_ACCESS: permission denied",
        MPI_ERR_AMODE => "MPI_ERR_AMODE: invalid file access mode",
        MPI_ERR_ASSERT => "MPI_ERR_ASSERT: invalid assertion",
        MPI_ERR_BAD_FILE => "MPI_ERR_BAD_FILE: invalid file name",
        MPI_ERR_BASE => "MPI_ERR_BASE: invalid base address",
        MPI_ERR_CONVERSION => "MPI_ERR_CONVERSION: data conversion failed",
        MPI_ERR_DISP => "MPI_ERR_DISP: invalid displacement",
        MPI_ERR_DUP_DATAREP => "MPI_ERR_DUP_DATAREP: data representation already defined",
        MPI_ERR_FILE_EXISTS => "MPI_ERR_FILE_EXISTS: file exists",
        MPI_ERR_FILE_IN_USE => "MPI_ERR_FILE_IN_USE: file in use",
        MPI_ERR_FILE => "MPI_ERR_FILE: invalid file handle",
        MPI_ERR_INFO_KEY => "MPI_ERR_INFO_KEY: invalid info key",
        MPI_ERR_INFO_NOKEY => "MPI_ERR_INFO_NOKEY: info key not defined",
        MPI_ERR_INFO_VALUE => "MPI_ERR_INFO_VALUE: invalid info value",
        MPI_ERR_INFO => "MPI_ERR_INFO: invalid info object",
        MPI_ERR_IO => "MPI_ERR_IO: I/O error",
        MPI_ERR_KEYVAL => "MPI_ERR_KEYVAL: invalid attribute key",
        MPI_ERR_LOCKTYPE => "MPI_ERR_LOCKTYPE: invalid lock type",
        MPI_ERR_NAME => "MPI_ERR_NAME: service name not published",
        MPI_ERR_NO_MEM => "MPI_ERR_NO_MEM: out of memory",
        MPI_ERR_NOT_SAME => "MPI_ERR_NOT_SAME: collective arguments differ between processes",
        MPI_ERR_NO_SPACE => "MPI_ERR_NO_SPACE: not enough space",
        MPI_ERR_NO_SUCH_FILE => "MPI_ERR_NO_SUCH_FILE: file does not exist",
        MPI_ERR_PORT => "MPI_ERR_PORT: invalid port name",
        MPI_ERR_QUOTA => "MPI_ERR_QUOTA: quota exceeded",
        MPI_ERR_PROC_ABORTED => "MPI_ERR_PROC_ABORTED: a process aborted",
        MPI_ERR_READ_ONLY => "MPI_ERR_READ_ONLY: read-only file or file system",
        MPI_ERR_RMA_ATTACH => "MPI_ERR_RMA_ATTACH: memory cannot be attached",
        MPI_ERR_RMA_CONFLICT => "MPI_ERR_RMA_CONFLICT: conflicting accesses to a window",
        MPI_ERR_RMA_RANGE => "MPI_ERR_RMA_RANGE: target memory outside the window",
        MPI_ERR_RMA_SHARED => "MPI_ERR_RMA_SHARED: memory cannot be shared",
        MPI_ERR_RMA_SYNC => "MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls",
        MPI_ERR_RMA_FLAVOR => "MPI_ERR_RMA_FLAVOR: wrong window flavor",
        MPI_ERR_SERVICE => "MPI_ERR_SERVICE: invalid service name",
        MPI_ERR_SIZE => "MPI_ERR_SIZE: invalid size",
        MPI_ERR_SPAWN => "MPI_ERR_SPAWN: spawning processes failed",
        MPI_ERR_UNSUPPORTED_DATAREP => {
            "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation"
        }
        MPI_ERR_UNSUPPORTED_OPERATION => "MPI_ERR_UNSUPPORTED_OPERATION: unsupported operation",
        MPI_ERR_VALUE_TOO_LARGE => "MPI_ERR_VALUE_TOO_LARGE: value too large to store",
        MPI_ERR_WIN => "MPI_ERR_WIN: invalid window",
        MPI_ERR_SESSION => "MPI_ERR_SESSION: invalid session",
        MPI_ERR_ERRHANDLER => "MPI_ERR_ERRHANDLER: invalid error handler",
        MPI_ERR_ABI => "MPI_ERR_ABI: ABI mismatch",
        MPIX_ERR_PROC_FAILED => "MPIX_ERR_PROC_FAILED: a peer process failed",
        MPIX_ERR_PROC_FAILED_PENDING => {
            "MPIX_ERR_PROC_FAILED_PENDING: a receive from any source waits on a communicator \
             with a failed process (acknowledge it to wait on)"
        }
        MPIX_ERR_REVOKED => "MPIX_ERR_REVOKED: the communicator was revoked",
        MPIX_ERR_NOT_INITIALIZED => "MPIX_ERR_NOT_INITIALIZED: MPI is not initialized",
        _ => return crate::tool::error_class_name(code),
    })
}

/// Copies `text` into a C buffer of `max` bytes (NUL included, truncated on a UTF-8 boundary
/// or not); returns the length written without the NUL.
///
/// # Safety
/// `out` must be writable for `max` bytes.
pub(crate) unsafe fn write_c_string(out: *mut c_char, max: usize, text: &str) -> usize {
    let n = text.len().min(max.saturating_sub(1));
    // SAFETY: the caller gives `max` writable bytes; n + 1 <= max.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), out as *mut u8, n);
        *out.add(n) = 0;
    }
    n
}

/// The details of the last failure on this thread, if it had error code `code`.
pub(crate) fn last_detail(code: c_int) -> Option<String> {
    LAST.with(|l| {
        l.borrow()
            .as_ref()
            .filter(|f| f.code == code)
            .map(|f| f.msg.clone())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_classes_map_onto_the_abi() {
        assert_eq!(abi_class(class::ERR_TRUNCATE), MPI_ERR_TRUNCATE);
        assert_eq!(abi_class(class::ERR_PENDING), MPI_ERR_PENDING);
        assert_eq!(abi_class(class::ERR_IN_STATUS), MPI_ERR_IN_STATUS);
        assert_eq!(abi_class(class::ERR_NO_MEM), MPI_ERR_NO_MEM);
        assert_eq!(abi_class(class::ERR_GROUP), MPI_ERR_GROUP);
        assert_eq!(abi_class(class::ERR_INFO_KEY), MPI_ERR_INFO_KEY);
        assert_eq!(abi_class(class::ERR_INFO_NOKEY), MPI_ERR_INFO_NOKEY);
        assert_eq!(abi_class(class::ERR_INFO_VALUE), MPI_ERR_INFO_VALUE);
        let cb = mpicd::Error::Callback {
            callback: "pack",
            code: 1234,
        };
        assert_eq!(code_of(&cb), 1234);
        assert_eq!(code_of(&mpicd::Error::InvalidTag(-5)), MPI_ERR_TAG);
    }

    #[test]
    fn every_class_is_named_and_below_lastcode() {
        // The standard ABI's classes are 0..=MPI_ERR_ABI (62), without gaps.
        for code in 0..=MPI_ERR_ABI {
            assert!(predefined_class_name(code).is_some(), "class {code}");
            assert!(code < MPI_ERR_LASTCODE);
        }
        assert!(predefined_class_name(MPI_ERR_BASE)
            .unwrap()
            .starts_with("MPI_ERR_BASE:"));
    }

    #[test]
    fn run_catches_panics_and_returns_codes() {
        assert_eq!(run("x", Errh::Return, |_| Ok(())), MPI_SUCCESS);
        assert_eq!(
            run("x", Errh::Return, |_| Err(fail(MPI_ERR_TAG, "bad"))),
            MPI_ERR_TAG
        );
        assert_eq!(run("x", Errh::Return, |_| panic!("boom")), MPI_ERR_INTERN);
    }
}
