//! Generalized requests (MPI_Grequest_start, MPI_Grequest_complete): requests whose operation
//! the application runs itself, as MPI 4.1 section 13.2 specifies. The handle is active until
//! the application calls MPI_Grequest_complete. A wait or test that finds it complete calls the
//! query callback for the status (MPI_Request_get_status too: the status it got is kept for
//! the completion that follows), and completing the handle then calls the free callback. If
//! MPI_Request_free frees the handle first, the free callback runs then if the request is
//! complete, else when MPI_Grequest_complete is called. MPI_Cancel calls the cancel callback
//! with whether MPI_Grequest_complete was called. A callback's non-zero return is the error the
//! call returns. Callbacks may call MPI (no lock is held while they run).
//!
//! A request's [`Greq`] is shared by its handle's entry and a table of its own (by handle
//! value), so that MPI_Grequest_complete finds it even while a wait on another thread holds
//! the entry, or after MPI_Request_free took it.

use super::{insert_work, Finished, Work};
use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{check_live, require};
use crate::errors::{fail, run, CResult};
use crate::status;
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex, MutexGuard};

/// Where a generalized request is in its life.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Life {
    /// Started, not complete.
    Running,
    /// MPI_Grequest_complete was called.
    Complete,
    /// MPI_Request_free freed the handle before completion: the free callback runs at
    /// MPI_Grequest_complete.
    Orphaned,
    /// The free callback ran: nothing more happens.
    Released,
}

/// A generalized request's callbacks and state.
pub(crate) struct Greq {
    query: MPI_Grequest_query_function,
    free: MPI_Grequest_free_function,
    cancel: MPI_Grequest_cancel_function,
    /// The application's `extra_state`, passed back to each callback.
    extra: usize,
    life: Mutex<Life>,
}

/// Generalized requests by handle value, until their free callback has run.
static GREQS: Mutex<BTreeMap<usize, Arc<Greq>>> = Mutex::new(BTreeMap::new());

fn greqs() -> MutexGuard<'static, BTreeMap<usize, Arc<Greq>>> {
    GREQS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A callback's return code as an outcome.
fn checked(rc: c_int, what: &str) -> CResult<()> {
    match rc {
        MPI_SUCCESS => Ok(()),
        code => Err(fail(
            code,
            format!("the generalized request's {what} callback returned {code}"),
        )),
    }
}

impl Greq {
    fn life(&self) -> MutexGuard<'_, Life> {
        self.life.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The outcome once MPI_Grequest_complete was called: the query callback's status.
    pub(crate) fn test(&self) -> Option<Finished> {
        if *self.life() == Life::Running {
            return None;
        }
        let mut s = status::empty();
        let rc = match self.query {
            // SAFETY: the application's callback, with its own state and a writable status.
            Some(f) => unsafe { f(self.extra as *mut c_void, &mut s) },
            None => MPI_SUCCESS,
        };
        Some(match checked(rc, "query") {
            Ok(()) => (s, None),
            Err(f) => {
                s.MPI_ERROR = f.code;
                (s, Some(f))
            }
        })
    }

    /// MPI_Cancel: the cancel callback, told whether the request is complete.
    pub(crate) fn cancel(&self) -> CResult<()> {
        let complete = *self.life() != Life::Running;
        let Some(f) = self.cancel else {
            return Ok(());
        };
        // SAFETY: the application's callback with its own state.
        checked(
            unsafe { f(self.extra as *mut c_void, complete as c_int) },
            "cancel",
        )
    }

    /// Runs the free callback once and forgets the request (its handle is gone).
    pub(crate) fn release(&self, h: MPI_Request) -> CResult<()> {
        greqs().remove(&(h as usize));
        let first = std::mem::replace(&mut *self.life(), Life::Released) != Life::Released;
        match (first, self.free) {
            // SAFETY: the application's callback with its own state, called once.
            (true, Some(f)) => checked(unsafe { f(self.extra as *mut c_void) }, "free"),
            _ => Ok(()),
        }
    }

    /// MPI_Request_free of the handle: released now if complete, else at completion.
    pub(crate) fn free(&self, h: MPI_Request) -> CResult<()> {
        {
            let mut life = self.life();
            if *life == Life::Running {
                *life = Life::Orphaned;
                return Ok(());
            }
        }
        self.release(h)
    }
}

/// Forgets every generalized request (finalize); their callbacks are not called.
pub(crate) fn free_all() {
    greqs().clear();
}

/// Starts a generalized request: `*request` is active until MPI_Grequest_complete. `query_fn`
/// fills the status a wait or test reports, `free_fn` runs once when the request is freed,
/// `cancel_fn` is MPI_Cancel's; each gets `extra_state`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Grequest_start(
    query_fn: MPI_Grequest_query_function,
    free_fn: MPI_Grequest_free_function,
    cancel_fn: MPI_Grequest_cancel_function,
    extra_state: *mut c_void,
    request: *mut MPI_Request,
) -> c_int {
    run("Grequest_start", default_errh(), |_| {
        check_live()?;
        require(request, "request pointer")?;
        let greq = Arc::new(Greq {
            query: query_fn,
            free: free_fn,
            cancel: cancel_fn,
            extra: extra_state as usize,
            life: Mutex::new(Life::Running),
        });
        let h = insert_work(Work::General(Arc::clone(&greq)), default_errh(), None);
        greqs().insert(h as usize, greq);
        // SAFETY: checked non-null.
        unsafe { request.write(h) };
        Ok(())
    })
}

/// Tells MPI that the generalized request `request` is complete: a wait on it returns. If its
/// handle was already freed, its free callback runs now.
#[no_mangle]
pub unsafe extern "C" fn MPI_Grequest_complete(request: MPI_Request) -> c_int {
    run("Grequest_complete", default_errh(), |_| {
        let greq = greqs().get(&(request as usize)).cloned().ok_or_else(|| {
            fail(
                MPI_ERR_REQUEST,
                "not an incomplete generalized request (or already freed)",
            )
        })?;
        let orphaned = {
            let mut life = greq.life();
            match *life {
                Life::Running => {
                    *life = Life::Complete;
                    false
                }
                Life::Orphaned => true,
                Life::Complete | Life::Released => {
                    return Err(fail(MPI_ERR_REQUEST, "the request is already complete"))
                }
            }
        };
        match orphaned {
            true => greq.release(request),
            false => Ok(()),
        }
    })
}
