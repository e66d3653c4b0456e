//! MPI_Comm_spawn and MPI_Comm_spawn_multiple: the root reads the programs, their arguments,
//! counts and info keys (`wdir`, `host`, `path`; others are not read); the core starts them
//! and makes the inter-communicator ([`mpicd::Communicator::spawn`]). Every process is started
//! or the call fails with MPI_ERR_SPAWN, so `array_of_errcodes` is all MPI_SUCCESS or, at the
//! root, all MPI_ERR_SPAWN.

use crate::abi::*;
use crate::comms::{insert, run_on};
use crate::env::require;
use crate::errors::{fail, CResult};
use mpicd::dynamic::SpawnApp;
use std::ffi::{c_char, c_int, CStr};

/// A C string argument (not null).
///
/// # Safety
/// `ptr` is null or a NUL-terminated string.
unsafe fn text(ptr: *const c_char, what: &str) -> CResult<String> {
    if ptr.is_null() {
        return Err(fail(MPI_ERR_ARG, format!("null {what}")));
    }
    // SAFETY: non-null; MPI requires a NUL-terminated string.
    Ok(unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned())
}

/// The strings of a NULL-terminated `argv` (none for MPI_ARGV_NULL).
///
/// # Safety
/// `argv` is null or a NULL-terminated array of NUL-terminated strings.
unsafe fn args(argv: *mut *mut c_char) -> CResult<Vec<String>> {
    let mut out = Vec::new();
    if argv.is_null() {
        return Ok(out);
    }
    for i in 0.. {
        // SAFETY: the array is NULL-terminated: entries up to the NULL are readable.
        let arg = unsafe { *argv.add(i) };
        if arg.is_null() {
            break;
        }
        // SAFETY: a non-null entry is a NUL-terminated string.
        out.push(unsafe { text(arg, "argument") }?);
    }
    Ok(out)
}

/// The value of `key` in `info` (none for MPI_INFO_NULL).
fn info_value(info: MPI_Info, key: &str) -> CResult<Option<String>> {
    if info == MPI_INFO_NULL {
        return Ok(None);
    }
    let v = crate::info::with(info, |i| i.get(key).map(|v| v.map(<[u8]>::to_vec)))??;
    Ok(v.map(|v| String::from_utf8_lossy(&v).into_owned()))
}

/// One program as the root reads it.
///
/// # Safety
/// As for [`text`] and [`args`].
unsafe fn app(
    command: *const c_char,
    argv: *mut *mut c_char,
    maxprocs: c_int,
    info: MPI_Info,
) -> CResult<SpawnApp> {
    // SAFETY: forwarded from the caller.
    let mut command = unsafe { text(command, "command") }?;
    if maxprocs < 1 {
        return Err(fail(MPI_ERR_ARG, format!("maxprocs {maxprocs} is below 1")));
    }
    if let Some(dir) = info_value(info, "path")? {
        if !command.contains('/') {
            command = format!("{}/{command}", dir.trim_end_matches('/'));
        }
    }
    Ok(SpawnApp {
        command,
        // SAFETY: forwarded from the caller.
        args: unsafe { args(argv) }?,
        procs: maxprocs as u32,
        wdir: info_value(info, "wdir")?,
        host: info_value(info, "host")?,
    })
}

/// Spawns `apps` (read at the root) over `comm` and writes the outcome: the
/// inter-communicator, and the error codes of the processes.
fn spawn_on(
    c: &mpicd::Communicator,
    comm: MPI_Comm,
    apps: CResult<Option<Vec<SpawnApp>>>,
    root: c_int,
    intercomm: *mut MPI_Comm,
    errcodes: *mut c_int,
) -> CResult<()> {
    require(intercomm, "intercomm")?;
    let wanted: usize = match &apps {
        Ok(Some(apps)) => apps.iter().map(|a| a.procs as usize).sum(),
        _ => 0,
    };
    // A bad argument at the root must still let the others leave the call: they learn of it
    // in the spawn (an empty list fails there at the root, which tells them).
    let (apps, bad) = match apps {
        Ok(apps) => (apps, None),
        Err(f) => (Some(Vec::new()), Some(f)),
    };
    let outcome = c.spawn(apps.as_deref(), root);
    let codes = |n: usize, code: c_int| {
        if !errcodes.is_null() {
            for i in 0..n {
                // SAFETY: MPI requires one writable int per process spawned.
                unsafe { *errcodes.add(i) = code };
            }
        }
    };
    if let Some(f) = bad {
        return Err(f);
    }
    match outcome {
        Ok(inter) => {
            let n = inter.remote_group().map_or(0, |g| g.size()) as usize;
            codes(n, MPI_SUCCESS);
            crate::env::out(intercomm, insert(inter, comm))
        }
        Err(e) => {
            codes(wanted, MPI_ERR_SPAWN);
            Err(e.into())
        }
    }
}

/// Starts `maxprocs` copies of `command` with the arguments `argv` (MPI_ARGV_NULL: none)
/// as a new job, and returns in `*intercomm` the inter-communicator between `comm`'s group and
/// the new processes (collective over `comm`; `command`, `argv`, `maxprocs` and `info` are
/// read at `root` only). Info keys: `wdir` (their working directory; default: the root's),
/// `host` (where they run), `path` (where `command` is found). All start, or MPI_ERR_SPAWN.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_spawn(
    command: *const c_char,
    argv: *mut *mut c_char,
    maxprocs: c_int,
    info: MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    intercomm: *mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> c_int {
    run_on("Comm_spawn", comm, |c| {
        let apps = match c.rank() == root {
            // SAFETY: MPI requires valid arguments at the root.
            true => unsafe { app(command, argv, maxprocs, info) }.map(|a| Some(vec![a])),
            false => Ok(None),
        };
        spawn_on(&c, comm, apps, root, intercomm, array_of_errcodes)
    })
}

/// MPI_Comm_spawn of `count` programs as one job: program `i` is `array_of_commands[i]`
/// with arguments `array_of_argv[i]` (MPI_ARGVS_NULL: none for any), `array_of_maxprocs[i]`
/// copies and info `array_of_info[i]`; the new processes are ranked in that order.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_spawn_multiple(
    count: c_int,
    array_of_commands: *mut *mut c_char,
    array_of_argv: *mut *mut *mut c_char,
    array_of_maxprocs: *const c_int,
    array_of_info: *const MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    intercomm: *mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> c_int {
    run_on("Comm_spawn_multiple", comm, |c| {
        let read = || -> CResult<Vec<SpawnApp>> {
            if count < 1 {
                return Err(fail(MPI_ERR_ARG, format!("count {count} is below 1")));
            }
            require(array_of_commands, "array_of_commands")?;
            require(array_of_maxprocs, "array_of_maxprocs")?;
            require(array_of_info, "array_of_info")?;
            (0..count as usize)
                .map(|i| {
                    // SAFETY: MPI requires `count` entries in each array at the root.
                    unsafe {
                        let argv = match array_of_argv.is_null() {
                            true => std::ptr::null_mut(),
                            false => *array_of_argv.add(i),
                        };
                        app(
                            *array_of_commands.add(i),
                            argv,
                            *array_of_maxprocs.add(i),
                            *array_of_info.add(i),
                        )
                    }
                })
                .collect()
        };
        let apps = match c.rank() == root {
            true => read().map(Some),
            false => Ok(None),
        };
        spawn_on(&c, comm, apps, root, intercomm, array_of_errcodes)
    })
}
