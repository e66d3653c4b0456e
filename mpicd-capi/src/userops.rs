//! User reduction operations: `MPI_Op_create` (+`_c`), `MPI_Op_free`, `MPI_Op_commutative`, and
//! `MPI_Reduce_local`. A user op is called on element layouts as MPI describes them, so it applies
//! to predefined types and derived types whose data is contiguous (what the reductions combine
//! in place); a non-commutative one combines in rank order ([`mpicd::collective::Order`]).

use crate::abi::*;
use crate::blocks::Elem;
use crate::comms::default_errh;
use crate::env::{out, read_arg, require};
use crate::errors::{fail, run, CResult};
use crate::handles::{Table, OP_BASE};
use crate::reductions::Reduction;
use std::ffi::{c_int, c_void};

/// A user's function, in either length width.
#[derive(Debug, Clone, Copy)]
pub(crate) enum UserFn {
    Int(unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype)),
    Count(unsafe extern "C" fn(*mut c_void, *mut c_void, *mut MPI_Count, *mut MPI_Datatype)),
}

/// A user op: its function and whether it commutes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UserOp {
    pub f: UserFn,
    pub commute: bool,
}

impl UserOp {
    /// `inout[i] = in[i] op inout[i]` for `len` elements of `datatype`.
    ///
    /// # Safety
    /// `input` and `inout` must hold `len` elements of `datatype` as the function expects them.
    pub(crate) unsafe fn apply(
        &self,
        input: *mut c_void,
        inout: *mut c_void,
        len: i64,
        datatype: MPI_Datatype,
    ) -> CResult<()> {
        let mut dt = datatype;
        // SAFETY: the application's function, called as its typedef says.
        unsafe {
            match self.f {
                UserFn::Int(f) => {
                    let mut n = c_int::try_from(len).map_err(|_| {
                        fail(
                            MPI_ERR_COUNT,
                            "a count above INT_MAX for an op made by MPI_Op_create",
                        )
                    })?;
                    f(input, inout, &mut n, &mut dt)
                }
                UserFn::Count(f) => {
                    let mut n = len;
                    f(input, inout, &mut n, &mut dt)
                }
            }
        }
        Ok(())
    }
}

static OPS: Table<UserOp> = Table::new(OP_BASE);

/// The user op of a handle, if it is one.
pub(crate) fn user_op(op: MPI_Op) -> Option<UserOp> {
    OPS.with(op as usize, |o| *o)
}

fn create(f: UserFn, commute: c_int, op: *mut MPI_Op) -> CResult<()> {
    require(op, "op")?;
    crate::env::check_live()?;
    let h = OPS.insert(UserOp {
        f,
        commute: commute != 0,
    });
    out(op, h as MPI_Op)
}

/// Creates a reduction operation from a user function.
#[no_mangle]
pub unsafe extern "C" fn MPI_Op_create(
    user_fn: MPI_User_function,
    commute: c_int,
    op: *mut MPI_Op,
) -> c_int {
    run("Op_create", default_errh(), |_| {
        let f = user_fn.ok_or_else(|| fail(MPI_ERR_ARG, "null user function"))?;
        create(UserFn::Int(f), commute, op)
    })
}

/// [`MPI_Op_create`] with a function taking an MPI_Count length.
#[no_mangle]
pub unsafe extern "C" fn MPI_Op_create_c(
    user_fn: MPI_User_function_c,
    commute: c_int,
    op: *mut MPI_Op,
) -> c_int {
    run("Op_create_c", default_errh(), |_| {
        let f = user_fn.ok_or_else(|| fail(MPI_ERR_ARG, "null user function"))?;
        create(UserFn::Count(f), commute, op)
    })
}

/// Frees a user operation and sets the handle to MPI_OP_NULL.
#[no_mangle]
pub unsafe extern "C" fn MPI_Op_free(op: *mut MPI_Op) -> c_int {
    run("Op_free", default_errh(), |_| {
        let h = read_arg(op, "op pointer")?;
        OPS.remove(h as usize).ok_or_else(|| {
            fail(
                MPI_ERR_OP,
                "not a user operation (predefined ops cannot be freed)",
            )
        })?;
        out(op, MPI_OP_NULL)
    })
}

/// Whether an operation commutes (every predefined one does).
#[no_mangle]
pub unsafe extern "C" fn MPI_Op_commutative(op: MPI_Op, commute: *mut c_int) -> c_int {
    run("Op_commutative", default_errh(), |_| {
        let c = match user_op(op) {
            Some(u) => u.commute,
            None if Reduction::is_predefined(op) => true,
            None => return Err(fail(MPI_ERR_OP, "unknown operation")),
        };
        out(commute, c as c_int)
    })
}

/// Shared body of Reduce_local and Reduce_local_c: `inout = in op inout`.
fn reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> CResult<()> {
    let elem = Elem::of(datatype)?;
    let red = Reduction::of(op, datatype, &elem)?;
    if count > 0 && overlap(inbuf, inoutbuf, count, &elem) {
        return Err(fail(
            MPI_ERR_BUFFER,
            "the input and input-output buffers overlap (they must not)",
        ));
    }
    // SAFETY: MPI requires `count` elements at both buffers, distinct.
    let input = unsafe { elem.read(inbuf, count) }?.into_owned();
    // SAFETY: as above.
    unsafe {
        elem.staged(inoutbuf, count, true, |inout| {
            let mut acc = input;
            red.combine(&mut acc, inout)?;
            inout.copy_from_slice(&acc);
            Ok(())
        })
    }
}

/// Whether `count` elements of `elem` at `a` and at `b` share memory: the same start, or (of
/// a predefined type, whose elements lie back to back) ranges that meet.
fn overlap(a: *const c_void, b: *mut c_void, count: i64, elem: &Elem) -> bool {
    let (a, b) = (a as usize, b as usize);
    match elem {
        Elem::Basic(t) => {
            let len = (count as usize).saturating_mul(t.size);
            a < b.saturating_add(len) && b < a.saturating_add(len)
        }
        Elem::Derived(_) => a == b,
    }
}

/// Combines two local buffers: `inoutbuf = inbuf op inoutbuf`, element by element.
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> c_int {
    run("Reduce_local", default_errh(), |_| {
        reduce_local(inbuf, inoutbuf, count as i64, datatype, op)
    })
}

/// [`MPI_Reduce_local`] with an MPI_Count.
#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_local_c(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> c_int {
    run("Reduce_local_c", default_errh(), |_| {
        reduce_local(inbuf, inoutbuf, count, datatype, op)
    })
}

/// Drops every user operation (finalize).
pub(crate) fn free_all() {
    drop(OPS.drain());
}
