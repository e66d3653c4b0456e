//! Data access: moving the bytes of a typed memory buffer to or from the file through the
//! view. A contiguous buffer is read or written in place, one system call per run of file
//! bytes; a scattered one goes through a bounded staging buffer, chunk by chunk (packed with
//! the datatype engine, then spread over the file's runs). Which offset an access starts at
//! ([`Pointer`]) is resolved first: an explicit offset, the individual file pointer, the
//! shared one, or the ordered share of it. In atomic mode each access holds a POSIX byte-range
//! lock on the file. A representation other than the memory's ([`Convert`]) always stages, and
//! makes or stores the staged instances itself.

use super::{os_error, File, View};
use crate::collective;
use crate::error::{Error, IoError, Result};
use crate::plan::derived::TypedBuf;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

/// The most bytes a scattered access stages at once.
const CHUNK: u64 = 4 << 20;

/// Where an access starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pointer {
    /// At this offset, in etypes of the view.
    Explicit(i64),
    /// At the individual file pointer, which advances past the data.
    Individual,
    /// At the shared file pointer, which advances atomically past the data.
    Shared,
    /// At the shared file pointer, in rank order of the members: collective.
    Ordered,
}

/// Which way the bytes move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    Read,
    Write,
}

/// A POSIX byte-range lock on the whole file, held while it lives (atomic mode).
struct RangeLock<'a> {
    file: &'a std::fs::File,
}

fn flock(kind: libc::c_int) -> libc::flock {
    // SAFETY: `flock` is plain data; all-zero is a valid value (whole file from offset 0).
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = kind as libc::c_short;
    l.l_whence = libc::SEEK_SET as libc::c_short;
    l
}

impl<'a> RangeLock<'a> {
    fn take(file: &'a std::fs::File, dir: Dir) -> Result<RangeLock<'a>> {
        let l = flock(match dir {
            Dir::Read => libc::F_RDLCK,
            Dir::Write => libc::F_WRLCK,
        });
        loop {
            // SAFETY: a valid descriptor and a valid `flock` for the call's duration.
            let r = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLKW, &l) };
            if r == 0 {
                return Ok(RangeLock { file });
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(os_error(&e, "locking the file (atomic mode)"));
            }
        }
    }
}

impl Drop for RangeLock<'_> {
    fn drop(&mut self) {
        let l = flock(libc::F_UNLCK);
        // SAFETY: as in `take`.
        unsafe { libc::fcntl(self.file.as_raw_fd(), libc::F_SETLK, &l) };
    }
}

/// Makes `file` at least `size` bytes with its storage allocated.
pub(super) fn preallocate(file: &std::fs::File, size: u64) -> std::io::Result<()> {
    if size == 0 {
        return Ok(());
    }
    // SAFETY: a valid descriptor; plain integers.
    let r = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, size as libc::off_t) };
    match r {
        0 => Ok(()),
        libc::EOPNOTSUPP | libc::EINVAL => {
            if file.metadata()?.len() < size {
                file.set_len(size)?;
            }
            Ok(())
        }
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}

/// Reads into `dst` from `at` until it is full or the file ends; bytes read.
fn read_full(file: &std::fs::File, dst: &mut [u8], at: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < dst.len() {
        match file.read_at(&mut dst[done..], at + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Moves `stream` (the view's data stream from `start`) to or from the file: bytes moved
/// (fewer than `stream.len()` on a read only at the end of the file).
fn move_stream(
    file: &std::fs::File,
    view: &View,
    start: u64,
    stream: &mut [u8],
    dir: Dir,
) -> Result<u64> {
    let mut done = 0usize;
    view.map(start, stream.len() as u64, |at, len| {
        let part = &mut stream[done..done + len as usize];
        match dir {
            Dir::Write => file
                .write_all_at(part, at)
                .map_err(|e| os_error(&e, "writing"))?,
            Dir::Read => {
                let n = read_full(file, part, at).map_err(|e| os_error(&e, "reading"))?;
                if n < part.len() {
                    done += n;
                    return Ok(false);
                }
            }
        }
        done += len as usize;
        Ok(true)
    })?;
    Ok(done as u64)
}

/// A data representation other than the memory's whose file bytes are as many as the
/// memory's (so that the view lays them out alike): it produces the file bytes of a piece of
/// the packed stream from memory, and stores such a piece back. Pieces are whole instances of
/// the memory datatype (but for a short read at the end of the file).
pub trait Convert: Send + Sync {
    /// Fills `chunk` with the file bytes of `buf`'s packed stream from offset `at`.
    ///
    /// # Safety
    /// `buf`'s type map must be readable.
    unsafe fn make_file_bytes(&self, buf: &TypedBuf, at: u64, chunk: &mut [u8]) -> Result<()>;
    /// Stores `chunk`, the file bytes of `buf`'s packed stream from offset `at`, into memory
    /// (it may convert `chunk` in place on the way).
    ///
    /// # Safety
    /// `buf`'s type map must be writable and not overlap `chunk`.
    unsafe fn store_file_bytes(&self, buf: &TypedBuf, at: u64, chunk: &mut [u8]) -> Result<()>;
}

/// Moves the bytes of `buf` to or from the view's stream from `start`, through `conv` if the
/// view's representation is not the memory's; bytes moved.
///
/// # Safety
/// `buf`'s type map must be readable (a write) or writable (a read).
unsafe fn transfer(
    file: &std::fs::File,
    view: &View,
    start: u64,
    buf: &TypedBuf,
    dir: Dir,
    conv: Option<&dyn Convert>,
) -> Result<u64> {
    let total = buf.packed_size();
    if total == 0 {
        return Ok(0);
    }
    if let (Some((ptr, len)), None) = (buf.contiguous(), conv) {
        // SAFETY: the caller's promise: the buffer's bytes are valid for the access (only
        // read from on a write).
        let mem = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
        return move_stream(file, view, start, mem, dir);
    }
    // A conversion works on whole instances: chunks are cut at their boundaries.
    let size = buf.datatype().size().max(1);
    let step = match conv {
        Some(_) if size <= CHUNK => CHUNK / size * size,
        Some(_) => size,
        None => CHUNK,
    };
    let mut stage = vec![0u8; total.min(step) as usize];
    let mut at = 0u64;
    while at < total {
        let n = (total - at).min(step) as usize;
        let chunk = &mut stage[..n];
        match dir {
            Dir::Write => {
                match conv {
                    // SAFETY: the caller's promise (readable).
                    Some(c) => unsafe { c.make_file_bytes(buf, at, chunk)? },
                    // SAFETY: as above.
                    None => drop(unsafe { buf.pack(at, chunk) }),
                }
                move_stream(file, view, start + at, chunk, dir)?;
            }
            Dir::Read => {
                let got = move_stream(file, view, start + at, chunk, dir)?;
                let piece = &mut chunk[..got as usize];
                match conv {
                    // SAFETY: the caller's promise (writable, not overlapping the stage).
                    Some(c) => unsafe { c.store_file_bytes(buf, at, piece)? },
                    // SAFETY: as above.
                    None => drop(unsafe { buf.unpack(at, piece) }),
                }
                if got < n as u64 {
                    return Ok(at + got);
                }
            }
        }
        at += n as u64;
    }
    Ok(total)
}

impl File {
    /// Checks that the file allows moving data `dir` from `pointer`.
    fn check_access(&self, dir: Dir, pointer: Pointer) -> Result<()> {
        match dir {
            Dir::Write => self.require_writable("a write")?,
            Dir::Read if !self.amode.readable() => {
                return Err(Error::Io(
                    IoError::Access,
                    "a read on a file opened MPI_MODE_WRONLY".into(),
                ))
            }
            Dir::Read => {}
        }
        match pointer {
            Pointer::Explicit(_) | Pointer::Individual => self.require_pointer(),
            Pointer::Shared | Pointer::Ordered => Ok(()),
        }
    }

    /// The offset (etypes) an access of `etypes` etypes starts at, pointers advanced.
    fn claim(&self, pointer: Pointer, etypes: u64) -> Result<u64> {
        match pointer {
            Pointer::Explicit(o) if o < 0 => {
                Err(Error::InvalidArgument(format!("negative offset {o}")))
            }
            Pointer::Explicit(o) => Ok(o as u64),
            Pointer::Individual => {
                let mut st = self.state();
                let at = st.position;
                st.position += etypes;
                Ok(at)
            }
            Pointer::Shared => self.shared.fetch_add(etypes),
            Pointer::Ordered => {
                let all = collective::allgather(&self.comm, &etypes.to_ne_bytes())?;
                let sizes: Vec<u64> = all
                    .iter()
                    .map(|v| u64::from_ne_bytes(v[..8].try_into().expect("8 bytes")))
                    .collect();
                let total: u64 = sizes.iter().sum();
                let mut base = [0u8; 8];
                if self.comm.rank() == 0 {
                    base = self.shared.fetch_add(total)?.to_ne_bytes();
                }
                collective::bcast(&self.comm, &mut base, 0)?;
                let before: u64 = sizes[..self.comm.rank() as usize].iter().sum();
                Ok(u64::from_ne_bytes(base) + before)
            }
        }
    }

    /// Moves `buf` from or to the file at `pointer`; bytes moved. `collective`: every member
    /// calls it, and they synchronize once done.
    ///
    /// # Safety
    /// `buf`'s type map must be readable (`write`) or writable (read).
    unsafe fn access(
        &self,
        dir: Dir,
        pointer: Pointer,
        buf: &TypedBuf,
        collective: bool,
        conv: Option<&dyn Convert>,
    ) -> Result<u64> {
        if let Err(e) = self.check_access(dir, pointer) {
            if collective {
                self.join_failed(pointer)?;
            }
            return Err(e);
        }
        let outcome = (|| {
            let (view, atomic) = {
                let st = self.state();
                (std::sync::Arc::clone(&st.view), st.atomic)
            };
            let bytes = buf.packed_size();
            let esize = view.etype_size();
            let at = self.claim(pointer, bytes.div_ceil(esize))?;
            let start = at
                .checked_mul(esize)
                .ok_or_else(|| Error::InvalidArgument("offset too large".into()))?;
            let _lock = match atomic && bytes > 0 {
                true => Some(RangeLock::take(&self.os, dir)?),
                false => None,
            };
            // SAFETY: forwarded from the caller.
            unsafe { transfer(&self.os, &view, start, buf, dir, conv) }
        })();
        if collective && pointer != Pointer::Ordered {
            self.comm.barrier()?;
        }
        outcome
    }

    /// Takes part in the synchronization of a collective access this member cannot make (its
    /// arguments were refused), as an access of no data, so that the others do not wait for it.
    pub fn join_failed(&self, pointer: Pointer) -> Result<()> {
        match pointer {
            Pointer::Ordered => self.claim(Pointer::Ordered, 0).map(drop),
            _ => self.comm.barrier(),
        }
    }

    /// Reads into `buf` from `pointer` (`collective`: the `_all`/ordered forms), converting
    /// from the view's representation with `conv` if it is not the memory's; bytes read.
    ///
    /// # Safety
    /// `buf`'s type map must be writable and stay so for the call.
    pub unsafe fn read(
        &self,
        pointer: Pointer,
        buf: &TypedBuf,
        collective: bool,
        conv: Option<&dyn Convert>,
    ) -> Result<u64> {
        // SAFETY: forwarded.
        unsafe { self.access(Dir::Read, pointer, buf, collective, conv) }
    }

    /// Writes `buf` at `pointer` (`collective`: the `_all`/ordered forms), converting to the
    /// view's representation with `conv` if it is not the memory's; bytes written.
    ///
    /// # Safety
    /// `buf`'s type map must be readable for the call.
    pub unsafe fn write(
        &self,
        pointer: Pointer,
        buf: &TypedBuf,
        collective: bool,
        conv: Option<&dyn Convert>,
    ) -> Result<u64> {
        // SAFETY: forwarded.
        unsafe { self.access(Dir::Write, pointer, buf, collective, conv) }
    }
}
