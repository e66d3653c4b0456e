//! Info handles: the table, the predefined read-only `MPI_INFO_ENV` (how the process was
//! started: command, argv, wdir), and the info calls. Info calls work before `MPI_Init` and
//! after `MPI_Finalize`, as MPI-4 allows; the info object itself is the core's
//! ([`mpicd::Info`]: ordered keys, MPI's length limits).

use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{out, read_arg, require};
use crate::errors::{fail, run, CResult};
use crate::handles::{Table, INFO_BASE};
use mpicd::info::{MAX_KEY, MAX_VALUE};
use mpicd::Info;
use std::ffi::{c_char, c_int};
use std::sync::OnceLock;

static INFOS: Table<Info> = Table::new(INFO_BASE);
static ENV: OnceLock<Info> = OnceLock::new();

const _: () = assert!(MAX_KEY < MPI_MAX_INFO_KEY as usize && MAX_VALUE < MPI_MAX_INFO_VAL as usize);

/// The command line of this process, from the kernel.
fn command_line() -> Vec<Vec<u8>> {
    std::fs::read("/proc/self/cmdline")
        .unwrap_or_default()
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// Runs `f` on the info object of `h` (`MPI_INFO_ENV` included).
pub(crate) fn with<R>(h: MPI_Info, f: impl FnOnce(&Info) -> R) -> CResult<R> {
    if h == MPI_INFO_ENV {
        return Ok(f(ENV.get_or_init(|| Info::environment(&command_line()))));
    }
    if h == MPI_INFO_NULL {
        return Err(fail(MPI_ERR_INFO, "MPI_INFO_NULL is not an info object"));
    }
    INFOS
        .with(h as usize, |info| f(info))
        .ok_or_else(|| fail(MPI_ERR_INFO, "unknown or freed info object"))
}

/// A new info handle for `info`.
pub(crate) fn insert(info: Info) -> MPI_Info {
    INFOS.insert(info) as MPI_Info
}

/// Runs `f` on the info object of `h` to change it (`MPI_INFO_ENV` is read-only).
pub(crate) fn with_mut<R>(h: MPI_Info, f: impl FnOnce(&mut Info) -> R) -> CResult<R> {
    if h == MPI_INFO_ENV {
        return Err(fail(MPI_ERR_INFO, "MPI_INFO_ENV cannot be changed"));
    }
    if h == MPI_INFO_NULL {
        return Err(fail(MPI_ERR_INFO, "MPI_INFO_NULL is not an info object"));
    }
    INFOS
        .with(h as usize, f)
        .ok_or_else(|| fail(MPI_ERR_INFO, "unknown or freed info object"))
}

/// The bytes of the C string at `ptr`, read up to `limit + 1` bytes (a longer string is cut
/// there, and the core's check then refuses it); `code` is the error class of a null pointer.
///
/// # Safety
/// `ptr` is null or a NUL-terminated string.
unsafe fn c_str<'a>(
    ptr: *const c_char,
    limit: usize,
    code: c_int,
    what: &str,
) -> CResult<&'a [u8]> {
    if ptr.is_null() {
        return Err(fail(code, format!("null {what}")));
    }
    let mut len = 0;
    // SAFETY: the bytes up to the NUL are readable; the scan stops at the NUL or before.
    while len <= limit && unsafe { *ptr.add(len) } != 0 {
        len += 1;
    }
    // SAFETY: the `len` bytes just scanned are readable.
    Ok(unsafe { std::slice::from_raw_parts(ptr as *const u8, len) })
}

/// The key argument `key`.
///
/// # Safety
/// As for [`c_str`].
unsafe fn key_arg<'a>(key: *const c_char) -> CResult<&'a [u8]> {
    // SAFETY: forwarded from the caller.
    unsafe { c_str(key, MAX_KEY, MPI_ERR_INFO_KEY, "key") }
}

/// Copies `bytes` and a NUL to `dst`, cut to `room` bytes before the NUL.
///
/// # Safety
/// `dst` is writable for `min(bytes.len(), room) + 1` bytes.
unsafe fn put_c_str(dst: *mut c_char, room: usize, bytes: &[u8]) {
    let n = bytes.len().min(room);
    // SAFETY: the caller's promise.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst as *mut u8, n);
        *dst.add(n) = 0;
    }
}

/// Runs an info call under the default error handler (MPI_COMM_WORLD's once initialized).
fn run_info(name: &'static str, body: impl FnOnce() -> CResult<()>) -> c_int {
    run(name, default_errh(), |_| body())
}

/// A new info object without keys.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_create(info: *mut MPI_Info) -> c_int {
    run_info("Info_create", || {
        require(info, "info")?;
        out(info, INFOS.insert(Info::new()) as MPI_Info)
    })
}

/// A new info object describing the hardware this process runs on (MPI 4.1): the resource
/// type mpicd can tell, `mpi_hw_resource_type` = `mpi_shared_memory` (the node, which
/// `MPI_Comm_split_type` splits by).
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_hw_resource_info(hw_info: *mut MPI_Info) -> c_int {
    run_info("Get_hw_resource_info", || {
        require(hw_info, "hw_info")?;
        let mut info = Info::new();
        info.set("mpi_hw_resource_type", "mpi_shared_memory")?;
        out(hw_info, INFOS.insert(info) as MPI_Info)
    })
}

/// A new info object describing the standard ABI of this library: `mpi_aint_size`,
/// `mpi_count_size` and `mpi_offset_size`, the bytes of `MPI_Aint`, `MPI_Count` and
/// `MPI_Offset` (the keys Open MPI gives). Callable at any time, from any thread.
#[no_mangle]
pub unsafe extern "C" fn MPI_Abi_get_info(info: *mut MPI_Info) -> c_int {
    run_info("Abi_get_info", || {
        require(info, "info")?;
        let mut abi = Info::new();
        for (key, size) in [
            ("mpi_aint_size", size_of::<MPI_Aint>()),
            ("mpi_count_size", size_of::<MPI_Count>()),
            ("mpi_offset_size", size_of::<MPI_Offset>()),
        ] {
            abi.set(key, size.to_string())?;
        }
        out(info, INFOS.insert(abi) as MPI_Info)
    })
}

/// A new info object like MPI_INFO_ENV, for the command line `argv` (the process's own when
/// `argv` is null).
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_create_env(
    argc: c_int,
    argv: *mut *mut c_char,
    info: *mut MPI_Info,
) -> c_int {
    run_info("Info_create_env", || {
        require(info, "info")?;
        let args = if argv.is_null() || argc <= 0 {
            command_line()
        } else {
            (0..argc as usize)
                // SAFETY: MPI requires `argc` entries at `argv`, as main received them.
                .map(|i| unsafe { *argv.add(i) })
                .take_while(|a| !a.is_null())
                // SAFETY: each entry of argv is a NUL-terminated string.
                .map(|a| unsafe { std::ffi::CStr::from_ptr(a) }.to_bytes().to_vec())
                .collect()
        };
        out(info, INFOS.insert(Info::environment(&args)) as MPI_Info)
    })
}

/// Sets `key` to `value` (MPI_ERR_INFO_KEY, MPI_ERR_INFO_VALUE for ones too long).
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_set(
    info: MPI_Info,
    key: *const c_char,
    value: *const c_char,
) -> c_int {
    run_info("Info_set", || {
        // SAFETY: MPI requires NUL-terminated strings.
        let key = unsafe { key_arg(key) }?;
        // SAFETY: as above.
        let value = unsafe { c_str(value, MAX_VALUE, MPI_ERR_INFO_VALUE, "value") }?;
        with_mut(info, |i| i.set(key, value))?.map_err(Into::into)
    })
}

/// The value of `key`, if set (`*flag`), cut to `valuelen` characters plus a NUL.
/// Deprecated by MPI-4 in favour of MPI_Info_get_string.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get(
    info: MPI_Info,
    key: *const c_char,
    valuelen: c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    run_info("Info_get", || {
        // SAFETY: MPI requires a NUL-terminated string.
        let key = unsafe { key_arg(key) }?;
        let room = usize::try_from(valuelen)
            .map_err(|_| fail(MPI_ERR_ARG, format!("negative valuelen {valuelen}")))?;
        require(value, "value")?;
        require(flag, "flag")?;
        let found = with(info, |i| i.get(key).map(|v| v.map(<[u8]>::to_vec)))??;
        if let Some(v) = &found {
            // SAFETY: MPI requires `valuelen` + 1 writable bytes at `value`.
            unsafe { put_c_str(value, room, v) };
        }
        out(flag, found.is_some() as c_int)
    })
}

/// The value of `key`, if set (`*flag`): `*buflen` bytes at `value` on entry (the value is cut
/// to fit with its NUL; 0 writes nothing), the size the whole value and its NUL need on return.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get_string(
    info: MPI_Info,
    key: *const c_char,
    buflen: *mut c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    run_info("Info_get_string", || {
        // SAFETY: MPI requires a NUL-terminated string.
        let key = unsafe { key_arg(key) }?;
        let size = read_arg(buflen, "buflen")?;
        let room = usize::try_from(size)
            .map_err(|_| fail(MPI_ERR_ARG, format!("negative buflen {size}")))?;
        require(flag, "flag")?;
        let found = with(info, |i| i.get(key).map(|v| v.map(<[u8]>::to_vec)))??;
        let Some(v) = found else {
            return out(flag, 0);
        };
        if room > 0 {
            require(value, "value")?;
            // SAFETY: MPI requires `*buflen` writable bytes at `value`.
            unsafe { put_c_str(value, room - 1, &v) };
        }
        out(buflen, v.len() as c_int + 1)?;
        out(flag, 1)
    })
}

/// The length of the value of `key` without its NUL, if set (`*flag`).
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get_valuelen(
    info: MPI_Info,
    key: *const c_char,
    valuelen: *mut c_int,
    flag: *mut c_int,
) -> c_int {
    run_info("Info_get_valuelen", || {
        // SAFETY: MPI requires a NUL-terminated string.
        let key = unsafe { key_arg(key) }?;
        require(valuelen, "valuelen")?;
        require(flag, "flag")?;
        match with(info, |i| i.get(key).map(|v| v.map(<[u8]>::len)))?? {
            Some(len) => {
                out(valuelen, len as c_int)?;
                out(flag, 1)
            }
            None => out(flag, 0),
        }
    })
}

/// The number of keys set.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get_nkeys(info: MPI_Info, nkeys: *mut c_int) -> c_int {
    run_info("Info_get_nkeys", || {
        require(nkeys, "nkeys")?;
        out(nkeys, with(info, Info::len)? as c_int)
    })
}

/// Key number `n` (0 to nkeys - 1, in the order the keys were first set) into `key`, which
/// holds MPI_MAX_INFO_KEY bytes.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get_nthkey(info: MPI_Info, n: c_int, key: *mut c_char) -> c_int {
    run_info("Info_get_nthkey", || {
        require(key, "key")?;
        let k = with(info, |i| i.nth_key(n).map(<[u8]>::to_vec))??;
        // SAFETY: MPI requires MPI_MAX_INFO_KEY writable bytes at `key`; keys are shorter.
        unsafe { put_c_str(key, MAX_KEY, &k) };
        Ok(())
    })
}

/// Removes `key`; MPI_ERR_INFO_NOKEY if it is not set.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_delete(info: MPI_Info, key: *const c_char) -> c_int {
    run_info("Info_delete", || {
        // SAFETY: MPI requires a NUL-terminated string.
        let key = unsafe { key_arg(key) }?;
        with_mut(info, |i| i.delete(key))?.map_err(Into::into)
    })
}

/// A new info object with the same keys and values (MPI_INFO_ENV may be duplicated).
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_dup(info: MPI_Info, newinfo: *mut MPI_Info) -> c_int {
    run_info("Info_dup", || {
        require(newinfo, "newinfo")?;
        let copy = with(info, Info::clone)?;
        out(newinfo, INFOS.insert(copy) as MPI_Info)
    })
}

/// Frees an info object and sets the handle to MPI_INFO_NULL.
#[no_mangle]
pub unsafe extern "C" fn MPI_Info_free(info: *mut MPI_Info) -> c_int {
    run_info("Info_free", || {
        let h = read_arg(info, "info")?;
        if h == MPI_INFO_ENV {
            return Err(fail(MPI_ERR_INFO, "MPI_INFO_ENV cannot be freed"));
        }
        if INFOS.remove(h as usize).is_none() {
            return Err(fail(MPI_ERR_INFO, "unknown or already freed info object"));
        }
        out(info, MPI_INFO_NULL)
    })
}
