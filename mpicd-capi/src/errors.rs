//! Errors at the C boundary: the one helper every `extern "C"` function runs its body through
//! ([`run`]: catches panics, maps errors to MPI error codes, applies the error handler), the
//! mapping of core error classes to the standard ABI values, error handlers, and
//! `MPI_Error_string` / `MPI_Error_class`.

use crate::abi::*;
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
        c if c == class::ERR_NOT_INITIALIZED => MPIX_ERR_NOT_INITIALIZED,
        c @ (0..=17 | 31..=33) => c,
        _ => MPI_ERR_UNKNOWN,
    }
}

/// The predefined error handlers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Errh {
    Fatal,
    Return,
    Abort,
}

impl Errh {
    pub(crate) fn from_handle(h: MPI_Errhandler) -> Option<Errh> {
        match h as usize {
            x if x == MPI_ERRORS_ARE_FATAL as usize => Some(Errh::Fatal),
            x if x == MPI_ERRORS_RETURN as usize => Some(Errh::Return),
            x if x == MPI_ERRORS_ABORT as usize => Some(Errh::Abort),
            _ => None,
        }
    }

    pub(crate) fn handle(self) -> MPI_Errhandler {
        match self {
            Errh::Fatal => MPI_ERRORS_ARE_FATAL,
            Errh::Return => MPI_ERRORS_RETURN,
            Errh::Abort => MPI_ERRORS_ABORT,
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

/// Applies `errh` to a failure of `MPI_<name>`; returns the code when the handler returns.
pub(crate) fn raise(name: &str, errh: Errh, failure: Fail) -> c_int {
    let code = failure.code;
    if errh == Errh::Return {
        LAST.with(|l| *l.borrow_mut() = Some(failure));
        return code;
    }
    let prefix = if name.starts_with("MPIX_") {
        ""
    } else {
        "MPI_"
    };
    let text = format!("{prefix}{name}: {} ({})", failure.msg, class_name(code));
    eprintln!("mpicd: fatal error in {text}");
    crate::env::abort_job(if code == 0 { 1 } else { code }, &text)
}

/// The name of an error class.
pub(crate) fn class_name(code: c_int) -> &'static str {
    match code {
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
        MPI_ERR_INFO_KEY => "MPI_ERR_INFO_KEY: invalid info key",
        MPI_ERR_INFO_NOKEY => "MPI_ERR_INFO_NOKEY: info key not defined",
        MPI_ERR_INFO_VALUE => "MPI_ERR_INFO_VALUE: invalid info value",
        MPI_ERR_INFO => "MPI_ERR_INFO: invalid info object",
        MPI_ERR_KEYVAL => "MPI_ERR_KEYVAL: invalid attribute key",
        MPI_ERR_NO_MEM => "MPI_ERR_NO_MEM: out of memory",
        MPI_ERR_PROC_ABORTED => "MPI_ERR_PROC_ABORTED: a process aborted",
        MPI_ERR_UNSUPPORTED_OPERATION => "MPI_ERR_UNSUPPORTED_OPERATION: unsupported operation",
        MPI_ERR_VALUE_TOO_LARGE => "MPI_ERR_VALUE_TOO_LARGE: value too large to store",
        MPI_ERR_ERRHANDLER => "MPI_ERR_ERRHANDLER: invalid error handler",
        MPIX_ERR_PROC_FAILED => "MPIX_ERR_PROC_FAILED: a peer process failed",
        MPIX_ERR_NOT_INITIALIZED => "MPIX_ERR_NOT_INITIALIZED: MPI is not initialized",
        _ => "error code not known to mpicd (a custom datatype callback's own code?)",
    }
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

/// Text of an error code: the class, and the details of the last failure on this thread if
/// it had this code.
#[no_mangle]
pub unsafe extern "C" fn MPI_Error_string(
    errorcode: c_int,
    string: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    run("Error_string", Errh::Return, |_| {
        if string.is_null() || resultlen.is_null() {
            return Err(fail(MPI_ERR_ARG, "null string or resultlen"));
        }
        let mut text = class_name(errorcode).to_string();
        LAST.with(|l| {
            if let Some(f) = l.borrow().as_ref().filter(|f| f.code == errorcode) {
                text.push_str(": ");
                text.push_str(&f.msg);
            }
        });
        // SAFETY: MPI requires MPI_MAX_ERROR_STRING bytes at `string`.
        let n = unsafe { write_c_string(string, MPI_MAX_ERROR_STRING as usize, &text) };
        // SAFETY: checked non-null above.
        unsafe { *resultlen = n as c_int };
        Ok(())
    })
}

/// The class of an error code. Codes are classes in mpicd, except a custom datatype callback's
/// own code, which is returned as it is.
#[no_mangle]
pub unsafe extern "C" fn MPI_Error_class(errorcode: c_int, errorclass: *mut c_int) -> c_int {
    run("Error_class", Errh::Return, |_| {
        if errorclass.is_null() {
            return Err(fail(MPI_ERR_ARG, "null errorclass"));
        }
        if errorcode < 0 {
            return Err(fail(MPI_ERR_ARG, format!("invalid error code {errorcode}")));
        }
        // SAFETY: checked non-null above.
        unsafe { *errorclass = errorcode };
        Ok(())
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
    fn run_catches_panics_and_returns_codes() {
        assert_eq!(run("x", Errh::Return, |_| Ok(())), MPI_SUCCESS);
        assert_eq!(
            run("x", Errh::Return, |_| Err(fail(MPI_ERR_TAG, "bad"))),
            MPI_ERR_TAG
        );
        assert_eq!(run("x", Errh::Return, |_| panic!("boom")), MPI_ERR_INTERN);
    }
}
