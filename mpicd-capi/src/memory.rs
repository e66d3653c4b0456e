//! Memory for MPI (`MPI_Alloc_mem`, `MPI_Free_mem`): allocations aligned as the
//! `mpi_minimum_memory_alignment` info key asks (MPI 4.1), at least to [`MIN_ALIGN`] bytes, and
//! the table of live allocations that lets `MPI_Free_mem` refuse memory it did not give out.
//! (Registering the memory with UCX, for one-sided communication, is for the windows to add.)

use crate::abi::*;
use crate::comms::default_errh;
use crate::errors::{fail, run, CResult};
use std::alloc::Layout;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard};

/// The alignment of every allocation (a cache line).
const MIN_ALIGN: usize = 64;
/// The info key of a larger alignment.
const ALIGN_KEY: &str = "mpi_minimum_memory_alignment";

/// Live allocations: address to layout.
static LIVE: Mutex<Option<HashMap<usize, Layout>>> = Mutex::new(None);

fn live() -> MutexGuard<'static, Option<HashMap<usize, Layout>>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The alignment `info` asks for: its `mpi_minimum_memory_alignment` if that is a power of two
/// (other values are hints mpicd ignores), never below [`MIN_ALIGN`].
fn alignment(info: MPI_Info) -> CResult<usize> {
    if info == MPI_INFO_NULL {
        return Ok(MIN_ALIGN);
    }
    let asked = crate::info::with(info, |i| {
        i.get(ALIGN_KEY)
            .ok()
            .flatten()
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(|v| v.trim().parse::<usize>().ok())
    })?;
    Ok(asked
        .filter(|a| a.is_power_of_two())
        .map_or(MIN_ALIGN, |a| a.max(MIN_ALIGN)))
}

/// Allocates `size` bytes (aligned to 64 bytes, or to the `mpi_minimum_memory_alignment` of
/// `info` if larger) and stores the address at `baseptr` (a `void **` passed as `void *`).
/// Free it with `MPI_Free_mem`. A negative size is MPI_ERR_ARG, exhausted memory
/// MPI_ERR_NO_MEM.
#[no_mangle]
pub unsafe extern "C" fn MPI_Alloc_mem(
    size: MPI_Aint,
    info: MPI_Info,
    baseptr: *mut c_void,
) -> c_int {
    run("Alloc_mem", default_errh(), |_| {
        if size < 0 {
            return Err(fail(MPI_ERR_ARG, format!("negative size {size}")));
        }
        if baseptr.is_null() {
            return Err(fail(MPI_ERR_ARG, "null baseptr"));
        }
        let align = alignment(info)?;
        // A zero-byte request still gets an address of its own, which MPI_Free_mem takes.
        let layout = Layout::from_size_align(size.max(1) as usize, align)
            .map_err(|_| fail(MPI_ERR_NO_MEM, format!("{size} bytes cannot be allocated")))?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc(layout) };
        if p.is_null() {
            return Err(fail(
                MPI_ERR_NO_MEM,
                format!("out of memory for {size} bytes"),
            ));
        }
        live()
            .get_or_insert_with(HashMap::new)
            .insert(p as usize, layout);
        // SAFETY: MPI passes the address of a pointer as `baseptr`; checked non-null.
        unsafe { (baseptr as *mut *mut c_void).write(p as *mut c_void) };
        Ok(())
    })
}

/// Frees memory from `MPI_Alloc_mem`. A null pointer is ignored (as `free(NULL)`); any other
/// address that `MPI_Alloc_mem` did not return, or that was freed already, is MPI_ERR_BASE.
#[no_mangle]
pub unsafe extern "C" fn MPI_Free_mem(base: *mut c_void) -> c_int {
    run("Free_mem", default_errh(), |_| {
        if base.is_null() {
            return Ok(());
        }
        let layout = live()
            .as_mut()
            .and_then(|m| m.remove(&(base as usize)))
            .ok_or_else(|| {
                fail(
                    MPI_ERR_BASE,
                    format!("{base:p} was not allocated by MPI_Alloc_mem (or is freed)"),
                )
            })?;
        // SAFETY: allocated by MPI_Alloc_mem with this layout, and taken off the table once.
        unsafe { std::alloc::dealloc(base as *mut u8, layout) };
        Ok(())
    })
}
