//! Parallel I/O (MPI 4.1 chapter 14): a [`File`] opened collectively by the members of a
//! communicator. It owns the operating system's file, its communicator (a duplicate), the
//! access mode, the view ([`view`]), the individual file pointer, the atomicity flag and the
//! info hints; the shared file pointer lives in a window on member 0 ([`shared`]); the bytes
//! move between typed memory and the file through the view in [`access`].
//!
//! Collective calls (open, close, set_view, set_size, the `_all` and ordered accesses) do their
//! part of the work independently and synchronize the members where the standard's semantics
//! need it; every member sees the file through POSIX calls of its own.

mod access;
mod shared;
pub mod view;

pub use access::{Convert, Pointer};
pub use view::View;

use crate::collective;
use crate::comm::Communicator;
use crate::error::{Error, IoError, Result};
use crate::group::Group;
use crate::info::Info;
use shared::SharedPointer;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::{Arc, Mutex, MutexGuard};

/// How a file may be accessed: exactly one of the three.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    ReadOnly,
    WriteOnly,
    ReadWrite,
}

/// The access mode of `MPI_File_open`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Amode {
    pub access: Access,
    pub create: bool,
    pub excl: bool,
    pub delete_on_close: bool,
    pub unique_open: bool,
    pub sequential: bool,
    pub append: bool,
}

impl Amode {
    /// Checks the combinations the standard forbids (`MPI_ERR_AMODE`).
    pub fn check(&self) -> Result<()> {
        let bad = |why: &str| Err(Error::Io(IoError::Amode, why.into()));
        match self.access {
            Access::ReadOnly if self.create || self.excl => {
                bad("MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL")
            }
            Access::ReadWrite if self.sequential => bad("MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL"),
            _ => Ok(()),
        }
    }

    fn readable(&self) -> bool {
        self.access != Access::WriteOnly
    }

    fn writable(&self) -> bool {
        self.access != Access::ReadOnly
    }
}

/// The error of a failed system call on a file, by its `errno`.
pub(crate) fn os_error(e: &std::io::Error, what: &str) -> Error {
    let kind = match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENOTDIR) => IoError::NoSuchFile,
        Some(libc::EEXIST) => IoError::FileExists,
        Some(libc::EACCES) | Some(libc::EPERM) => IoError::Access,
        Some(libc::EROFS) => IoError::ReadOnly,
        Some(libc::ENOSPC) => IoError::NoSpace,
        Some(libc::EDQUOT) => IoError::Quota,
        Some(libc::ETXTBSY) | Some(libc::EBUSY) => IoError::FileInUse,
        Some(libc::ENAMETOOLONG) | Some(libc::EISDIR) | Some(libc::ELOOP) => IoError::BadFile,
        _ => IoError::Io,
    };
    Error::Io(kind, format!("{what}: {e}"))
}

/// The wire code of an I/O error class (open's agreement on an outcome).
fn code_of(e: &Error) -> u8 {
    use IoError::*;
    let kinds = [
        File, BadFile, NoSuchFile, FileExists, FileInUse, Amode, Access, ReadOnly, NoSpace, Quota,
        Io,
    ];
    match e {
        Error::Io(k, _) => kinds
            .iter()
            .position(|x| x == k)
            .map_or(11, |i| i as u8 + 1),
        _ => 11,
    }
}

fn error_of(code: u8, what: &str) -> Error {
    use IoError::*;
    let kinds = [
        File, BadFile, NoSuchFile, FileExists, FileInUse, Amode, Access, ReadOnly, NoSpace, Quota,
        Io,
    ];
    let kind = kinds.get(code as usize - 1).copied().unwrap_or(Io);
    Error::Io(kind, format!("{what} failed on another member"))
}

/// The path a file name names: a file-system prefix (`ufs:`, `nfs:`) is dropped.
fn path_of(name: &str) -> Result<&str> {
    let path = ["ufs:", "nfs:", "file:"]
        .iter()
        .find_map(|p| name.strip_prefix(p))
        .unwrap_or(name);
    if path.is_empty() {
        return Err(Error::Io(IoError::BadFile, "an empty file name".into()));
    }
    Ok(path)
}

/// What a file's calls change: its view, individual file pointer, atomicity and hints.
struct State {
    view: Arc<View>,
    /// The individual file pointer, in etypes of the view.
    position: u64,
    atomic: bool,
    info: Info,
    /// A split collective begun and not yet ended.
    split: bool,
}

/// An open file.
pub struct File {
    os: std::fs::File,
    comm: Communicator,
    path: String,
    amode: Amode,
    shared: SharedPointer,
    state: Mutex<State>,
}

impl File {
    /// Opens (and with `create`, makes) the file `name` on every member of `comm`: collective.
    /// Member 0 creates it; the outcome is agreed, so that every member fails alike.
    pub fn open(comm: &Communicator, name: &str, amode: Amode, info: Info) -> Result<File> {
        amode.check()?;
        let path = path_of(name)?.to_string();
        let comm = comm.dup()?;
        let open = |first: bool| -> Result<std::fs::File> {
            let mut o = std::fs::OpenOptions::new();
            o.read(amode.readable()).write(amode.writable());
            if first && amode.create {
                match amode.excl {
                    true => o.create_new(true),
                    false => o.create(true),
                };
            }
            o.custom_flags(libc::O_CLOEXEC);
            o.open(&path).map_err(|e| os_error(&e, &path))
        };
        // Member 0 first, so that the others find the file it made.
        let mut first = [0u8];
        let mut mine = None;
        if comm.rank() == 0 {
            let f = open(true);
            first[0] = f.as_ref().err().map_or(0, code_of);
            mine = Some(f);
        }
        collective::bcast(&comm, &mut first, 0)?;
        if first[0] != 0 {
            return Err(match mine {
                Some(Err(e)) => e,
                _ => error_of(first[0], &format!("opening {path}")),
            });
        }
        let f = match mine {
            Some(f) => f,
            None => open(false),
        };
        let code = f.as_ref().err().map_or(0, code_of);
        let all = collective::allgather(&comm, &[code])?;
        if let Some(c) = all.iter().map(|v| v[0]).find(|&c| c != 0) {
            return Err(match f {
                Err(e) => e,
                Ok(_) => error_of(c, &format!("opening {path}")),
            });
        }
        let os = f?;
        let start = match amode.append {
            true => os.metadata().map_err(|e| os_error(&e, &path))?.len(),
            false => 0,
        };
        let shared = SharedPointer::new(&comm, start)?;
        Ok(File {
            os,
            comm,
            path,
            amode,
            shared,
            state: Mutex::new(State {
                view: Arc::new(View::bytes()),
                position: start,
                atomic: false,
                info,
                split: false,
            }),
        })
    }

    /// Closes the file: collective. With `MPI_MODE_DELETE_ON_CLOSE`, member 0 deletes it once
    /// every member closed it.
    pub fn close(self) -> Result<()> {
        let File {
            os,
            comm,
            path,
            amode,
            shared,
            ..
        } = self;
        drop(os);
        let freed = shared.free();
        let synced = comm.barrier();
        if amode.delete_on_close {
            // Deleted once every member closed it, and before any member returns.
            let deleted = match comm.rank() {
                0 => std::fs::remove_file(&path).map_err(|e| os_error(&e, &path)),
                _ => Ok(()),
            };
            comm.barrier()?;
            deleted?;
        }
        freed.and(synced)
    }

    /// Deletes the file `name` (`MPI_File_delete`).
    pub fn delete(name: &str) -> Result<()> {
        let path = path_of(name)?;
        std::fs::remove_file(path).map_err(|e| os_error(&e, path))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The members' group.
    pub fn group(&self) -> Group {
        self.comm.group()
    }

    /// The file's communicator (a duplicate of the one it was opened on).
    pub fn comm(&self) -> &Communicator {
        &self.comm
    }

    /// The access mode it was opened with.
    pub fn amode(&self) -> Amode {
        self.amode
    }

    /// Its size in bytes.
    pub fn size(&self) -> Result<u64> {
        Ok(self
            .os
            .metadata()
            .map_err(|e| os_error(&e, &self.path))?
            .len())
    }

    fn require_writable(&self, what: &str) -> Result<()> {
        match self.amode.writable() {
            true => Ok(()),
            false => Err(Error::Io(
                IoError::ReadOnly,
                format!("{what} on a file opened MPI_MODE_RDONLY"),
            )),
        }
    }

    /// Truncates or extends the file to `size` bytes: collective.
    pub fn set_size(&self, size: u64) -> Result<()> {
        self.require_writable("set_size")?;
        let done = match self.comm.rank() {
            0 => self.os.set_len(size).map_err(|e| os_error(&e, &self.path)),
            _ => Ok(()),
        };
        self.comm.barrier()?;
        done
    }

    /// Makes the file at least `size` bytes, its storage allocated: collective.
    pub fn preallocate(&self, size: u64) -> Result<()> {
        self.require_writable("preallocate")?;
        let done = match self.comm.rank() {
            0 => access::preallocate(&self.os, size).map_err(|e| os_error(&e, &self.path)),
            _ => Ok(()),
        };
        self.comm.barrier()?;
        done
    }

    /// Writes the data of every member to storage: collective.
    pub fn sync(&self) -> Result<()> {
        let done = match self.amode.writable() {
            true => self.os.sync_all().map_err(|e| os_error(&e, &self.path)),
            false => Ok(()),
        };
        self.comm.barrier()?;
        done
    }

    /// The hints in use.
    pub fn info(&self) -> Info {
        self.state().info.clone()
    }

    /// Replaces the hints in use.
    pub fn set_info(&self, info: Info) {
        self.state().info = info;
    }

    /// Whether accesses are atomic.
    pub fn atomicity(&self) -> bool {
        self.state().atomic
    }

    /// Makes accesses atomic (each takes a lock on the file) or not: collective.
    pub fn set_atomicity(&self, atomic: bool) -> Result<()> {
        self.state().atomic = atomic;
        self.comm.barrier()
    }

    /// The view.
    pub fn view(&self) -> Arc<View> {
        Arc::clone(&self.state().view)
    }

    /// Sets the view (`disp` `None`: `MPI_DISPLACEMENT_CURRENT`, the shared file pointer's
    /// byte offset, for a sequential file) and resets both file pointers: collective.
    pub fn set_view(
        &self,
        disp: Option<u64>,
        etype: &crate::Datatype,
        filetype: &crate::Datatype,
        datarep: &str,
    ) -> Result<()> {
        let disp = match disp {
            Some(d) => d,
            None if self.amode.sequential => {
                let at = self.shared.get()?;
                let view = self.view();
                view.file_offset(view.stream_offset(at)?)?
            }
            None => {
                return Err(Error::InvalidArgument(
                    "MPI_DISPLACEMENT_CURRENT on a file not opened MPI_MODE_SEQUENTIAL".into(),
                ))
            }
        };
        let view = View::new(disp, etype, filetype, datarep, self.amode.writable())?;
        self.comm.barrier()?;
        {
            let mut st = self.state();
            st.view = Arc::new(view);
            st.position = 0;
        }
        self.shared.set_collective(&self.comm, 0)
    }

    fn require_pointer(&self) -> Result<()> {
        match self.amode.sequential {
            false => Ok(()),
            true => Err(Error::Io(
                IoError::UnsupportedOperation,
                "an individual file pointer or explicit offset on a file opened \
                 MPI_MODE_SEQUENTIAL"
                    .into(),
            )),
        }
    }

    /// The individual file pointer, in etypes.
    pub fn position(&self) -> Result<i64> {
        self.require_pointer()?;
        Ok(self.state().position as i64)
    }

    /// The end of the file in etypes of the view (rounded up).
    fn end(&self, view: &View) -> Result<i64> {
        let bytes = view.stream_below(self.size()?);
        Ok(bytes.div_ceil(view.etype_size()) as i64)
    }

    /// Where a seek leads from `current`.
    fn seek_target(&self, current: i64, offset: i64, whence: Whence) -> Result<u64> {
        let base = match whence {
            Whence::Set => 0,
            Whence::Current => current,
            Whence::End => self.end(&self.view())?,
        };
        let to = base.checked_add(offset).filter(|&t| t >= 0);
        to.map(|t| t as u64).ok_or_else(|| {
            Error::InvalidArgument(format!("seeking to a negative offset ({base} + {offset})"))
        })
    }

    /// Moves the individual file pointer.
    pub fn seek(&self, offset: i64, whence: Whence) -> Result<()> {
        self.require_pointer()?;
        let current = self.state().position as i64;
        let to = self.seek_target(current, offset, whence)?;
        self.state().position = to;
        Ok(())
    }

    /// The shared file pointer, in etypes.
    pub fn position_shared(&self) -> Result<i64> {
        self.shared.get()
    }

    /// Moves the shared file pointer: collective (every member passes the same arguments).
    /// No member's earlier access or query sees the new position: the members meet first.
    pub fn seek_shared(&self, offset: i64, whence: Whence) -> Result<()> {
        self.comm.barrier()?;
        let mut to = [0u8; 9];
        if self.comm.rank() == 0 {
            match self
                .shared
                .get()
                .and_then(|cur| self.seek_target(cur, offset, whence))
            {
                Ok(t) => to[1..].copy_from_slice(&t.to_ne_bytes()),
                Err(_) => to[0] = 1,
            }
        }
        collective::bcast(&self.comm, &mut to, 0)?;
        if to[0] != 0 {
            return Err(Error::InvalidArgument(format!(
                "seeking the shared file pointer to a negative offset (offset {offset})"
            )));
        }
        let target = u64::from_ne_bytes(to[1..].try_into().expect("8 bytes"));
        self.shared.set_collective(&self.comm, target)
    }

    /// Starts a split collective; fails if one is in progress.
    pub fn begin_split(&self) -> Result<()> {
        let mut st = self.state();
        if st.split {
            return Err(Error::InvalidArgument(
                "a split collective is already in progress on this file".into(),
            ));
        }
        st.split = true;
        Ok(())
    }

    /// Ends a split collective; fails if none is in progress.
    pub fn end_split(&self) -> Result<()> {
        let mut st = self.state();
        if !st.split {
            return Err(Error::InvalidArgument(
                "no split collective is in progress on this file".into(),
            ));
        }
        st.split = false;
        Ok(())
    }
}

/// Where a seek counts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whence {
    Set,
    Current,
    End,
}
