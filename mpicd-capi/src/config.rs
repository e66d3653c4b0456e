//! The extension `MPIX_Config_string`: mpicd's configuration table as text, for C programs and
//! for Python (through ctypes). Only copies the text `mpicd::config::render` makes; what the
//! table holds is `mpicd::config`'s business.

use crate::abi::*;
use crate::errors::{fail, run, write_c_string, Errh};
use std::ffi::{c_char, c_int};

/// mpicd extension: the configuration, as text: one `NAME=value` line per `MPICD_*` variable
/// and per UCX setting mpicd applies, with the value in effect in this process's environment
/// (`doc` = 1: each preceded by `#` lines giving the layer that reads it, its default, its
/// values and its meaning; `doc` = 0: without them), then a `#` line per unknown `MPICD_*`
/// variable. The text `mpicd-info` prints.
///
/// As `MPI_Info_get_string`: `*buflen` is the size of `text` on entry (0 with a NULL `text`
/// asks for the size only), the size the whole text needs, terminating NUL included, on
/// return; at most `*buflen` - 1 bytes and a NUL are written. Callable before `MPI_Init` and
/// after `MPI_Finalize`; errors are returned (MPI_ERR_ARG), whatever the error handler.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Config_string(
    doc: c_int,
    buflen: *mut c_int,
    text: *mut c_char,
) -> c_int {
    run("MPIX_Config_string", Errh::Return, |_| {
        if buflen.is_null() {
            return Err(fail(MPI_ERR_ARG, "null buflen"));
        }
        // SAFETY: non-null; MPI in/out arguments point to valid memory.
        let size = unsafe { buflen.read() };
        let size = usize::try_from(size)
            .map_err(|_| fail(MPI_ERR_ARG, format!("negative buflen {size}")))?;
        if size > 0 && text.is_null() {
            return Err(fail(MPI_ERR_ARG, "null text with a non-zero buflen"));
        }
        let doc = match doc {
            0 => false,
            1 => true,
            other => return Err(fail(MPI_ERR_ARG, format!("doc is {other}, not 0 or 1"))),
        };
        let rendered = mpicd::config::render(doc);
        let needed = c_int::try_from(rendered.len() + 1)
            .map_err(|_| fail(MPI_ERR_INTERN, "configuration text over 2 GiB"))?;
        if size > 0 {
            // SAFETY: the caller gives `size` writable bytes at `text` (non-null, checked).
            unsafe { write_c_string(text, size, &rendered) };
        }
        // SAFETY: non-null, checked above.
        unsafe { buflen.write(needed) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn call(doc: c_int, buflen: Option<c_int>, text: Option<&mut [u8]>) -> (c_int, c_int) {
        let mut len = buflen.unwrap_or(0);
        let lenp = if buflen.is_some() {
            &mut len as *mut c_int
        } else {
            std::ptr::null_mut()
        };
        let textp = text.map_or(std::ptr::null_mut(), |t| t.as_mut_ptr() as *mut c_char);
        // SAFETY: lenp is null or points to len; textp is null or holds `len` bytes (the
        // callers below pass slices at least that long).
        let rc = unsafe { MPIX_Config_string(doc, lenp, textp) };
        (rc, len)
    }

    #[test]
    fn size_query_then_full_text() {
        let (rc, needed) = call(1, Some(0), None);
        assert_eq!(rc, MPI_SUCCESS);
        let mut buf = vec![0xffu8; needed as usize];
        let (rc, again) = call(1, Some(needed), Some(&mut buf));
        assert_eq!((rc, again), (MPI_SUCCESS, needed));
        let text = CStr::from_bytes_with_nul(&buf).unwrap().to_str().unwrap();
        assert_eq!(text, mpicd::config::render(true));
        assert!(text.contains("\nMPICD_ZCOPY_DEPTH="));
        assert!(text.contains("# UCX_RNDV_THRESH [transport] default 65536;"));
    }

    #[test]
    fn a_short_buffer_is_truncated_and_terminated() {
        let mut buf = [0xffu8; 9];
        let (rc, needed) = call(0, Some(8), Some(&mut buf));
        assert_eq!(rc, MPI_SUCCESS);
        assert!(needed > 8);
        assert_eq!(&buf[..8], b"MPICD_I\0");
        assert_eq!(buf[8], 0xff, "nothing written past buflen");
    }

    #[test]
    fn bad_arguments_are_rejected() {
        let mut buf = [0u8; 16];
        assert_eq!(call(0, None, None).0, MPI_ERR_ARG);
        assert_eq!(call(0, Some(-1), None).0, MPI_ERR_ARG);
        assert_eq!(call(0, Some(16), None).0, MPI_ERR_ARG);
        assert_eq!(call(2, Some(16), Some(&mut buf)).0, MPI_ERR_ARG);
        let (rc, len) = call(-1, Some(0), None);
        assert_eq!((rc, len), (MPI_ERR_ARG, 0), "buflen untouched on error");
    }
}
