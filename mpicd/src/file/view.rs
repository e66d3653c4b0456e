//! A file view (MPI 4.1 section 14.3): the displacement, the elementary type and the filetype
//! whose tiles, repeated from the displacement, say which bytes of the file a process sees.
//! The view turns offsets of its data stream (the bytes a process sees, in order) into runs of
//! file bytes, adjacent runs merged, so that an access makes one system call per run.

use crate::error::{Error, IoError, Result};
use crate::plan::derived::{Datatype, TypedBuf};

/// One run of a filetype tile: `len` file bytes at `disp` from the tile's start, holding the
/// tile's data stream from `stream`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    disp: i64,
    len: u64,
    stream: u64,
}

/// Checks the standard's rule for the types of a view (MPI 4.1 section 14.3): displacements
/// non-negative and monotonically nondecreasing, and, in a file open for writing, no overlap.
/// A breach is MPI_ERR_IO, as MPICH reports it.
fn check_layout(ty: &Datatype, what: &str, writable: bool) -> Result<()> {
    let (mut end, mut start, mut why) = (0i64, 0i64, None);
    TypedBuf::new(std::ptr::null(), 1, ty).for_each_run(|at, len| {
        let disp = at as usize as i64;
        if why.is_some() {
            return;
        }
        if disp < 0 {
            why = Some("has a negative displacement");
        } else if disp < start {
            why = Some("has decreasing displacements");
        } else if writable && disp < end {
            why = Some("overlaps itself in a file open for writing");
        }
        start = disp;
        end = end.max(disp + len as i64);
    });
    match why {
        None => Ok(()),
        Some(w) => Err(Error::Io(IoError::Io, format!("the view's {what} {w}"))),
    }
}

/// A file view: where a process's data stream lies in the file.
#[derive(Debug, Clone)]
pub struct View {
    disp: u64,
    etype: Datatype,
    filetype: Datatype,
    datarep: String,
    /// The runs of one tile, in stream order, adjacent ones merged.
    runs: Vec<Run>,
}

impl View {
    /// The default view: displacement 0, bytes, the `native` representation.
    pub fn bytes() -> View {
        let byte = Datatype::of(crate::datatype::ElementType::Byte);
        View::new(0, &byte, &byte, "native", false).expect("the byte view is valid")
    }

    /// A view of `filetype` tiles from byte `disp`, in units of `etype`; `datarep` is the data
    /// representation's name (checked by the caller). `writable`: the file is open for
    /// writing, so that neither type may overlap itself.
    pub fn new(
        disp: u64,
        etype: &Datatype,
        filetype: &Datatype,
        datarep: &str,
        writable: bool,
    ) -> Result<View> {
        let esize = etype.size();
        if esize == 0 {
            return Err(Error::InvalidDatatype("an etype without data".into()));
        }
        if filetype.size() % esize != 0 {
            return Err(Error::InvalidDatatype(format!(
                "the filetype's size {} is not a multiple of the etype's {esize}",
                filetype.size()
            )));
        }
        if filetype.size() > 0 && filetype.extent() <= 0 {
            return Err(Error::InvalidDatatype(
                "a filetype with data must have a positive extent".into(),
            ));
        }
        check_layout(etype, "etype", writable)?;
        check_layout(filetype, "filetype", writable)?;
        let mut runs: Vec<Run> = Vec::new();
        let mut stream = 0u64;
        TypedBuf::new(std::ptr::null(), 1, filetype).for_each_run(|at, len| {
            let disp = at as usize as i64;
            match runs.last_mut() {
                Some(r) if r.disp + r.len as i64 == disp => r.len += len as u64,
                _ => runs.push(Run {
                    disp,
                    len: len as u64,
                    stream,
                }),
            }
            stream += len as u64;
        });
        runs.retain(|r| r.len > 0);
        Ok(View {
            disp,
            etype: etype.clone(),
            filetype: filetype.clone(),
            datarep: datarep.to_string(),
            runs,
        })
    }

    /// The displacement in bytes.
    pub fn disp(&self) -> u64 {
        self.disp
    }

    /// The elementary type.
    pub fn etype(&self) -> &Datatype {
        &self.etype
    }

    /// The filetype.
    pub fn filetype(&self) -> &Datatype {
        &self.filetype
    }

    /// The data representation's name.
    pub fn datarep(&self) -> &str {
        &self.datarep
    }

    /// Bytes of one etype.
    pub fn etype_size(&self) -> u64 {
        self.etype.size()
    }

    /// The stream offset of `offset` etypes (saturating checks: a negative offset is refused).
    pub fn stream_offset(&self, offset: i64) -> Result<u64> {
        if offset < 0 {
            return Err(Error::InvalidArgument(format!("negative offset {offset}")));
        }
        (offset as u64)
            .checked_mul(self.etype_size())
            .ok_or_else(|| Error::InvalidArgument(format!("offset {offset} is too large")))
    }

    /// Calls `f(file_offset, len)` for each run of file bytes holding the view's data stream
    /// from `start` for `len` bytes, in stream order, adjacent runs merged. Stops early when
    /// `f` returns false.
    pub(crate) fn map(
        &self,
        start: u64,
        len: u64,
        mut f: impl FnMut(u64, u64) -> Result<bool>,
    ) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        let tile_size = self.filetype.size();
        if tile_size == 0 || self.runs.is_empty() {
            return Err(Error::InvalidDatatype(
                "the view's filetype has no data to access".into(),
            ));
        }
        let extent = self.filetype.extent() as u64;
        let (mut tile, mut within) = (start / tile_size, start % tile_size);
        let mut left = len;
        let mut pending: Option<(u64, u64)> = None;
        let mut i = self.runs.partition_point(|r| r.stream + r.len <= within);
        while left > 0 {
            let r = self.runs[i];
            let skip = within - r.stream;
            let n = (r.len - skip).min(left);
            let base = tile
                .checked_mul(extent)
                .and_then(|b| b.checked_add(self.disp))
                .and_then(|b| b.checked_add(r.disp as u64 + skip))
                .ok_or_else(|| Error::InvalidArgument("file offset overflows".into()))?;
            pending = match pending {
                Some((at, l)) if at + l == base => Some((at, l + n)),
                Some((at, l)) => {
                    if !f(at, l)? {
                        return Ok(());
                    }
                    Some((base, n))
                }
                None => Some((base, n)),
            };
            left -= n;
            within += n;
            i += 1;
            if i == self.runs.len() {
                (i, within, tile) = (0, 0, tile + 1);
            }
        }
        if let Some((at, l)) = pending {
            f(at, l)?;
        }
        Ok(())
    }

    /// The file offset of the stream byte `at` (`MPI_File_get_byte_offset`).
    pub fn file_offset(&self, at: u64) -> Result<u64> {
        let mut found = self.disp;
        self.map(at, 1, |off, _| {
            found = off;
            Ok(false)
        })?;
        Ok(found)
    }

    /// Bytes of the view's data stream that lie below file offset `size`: where the end of a
    /// file of `size` bytes is in the view.
    pub fn stream_below(&self, size: u64) -> u64 {
        let tile_size = self.filetype.size();
        if size <= self.disp || tile_size == 0 {
            return 0;
        }
        let rel = size - self.disp;
        let extent = self.filetype.extent() as u64;
        let (tiles, rem) = (rel / extent, rel % extent);
        let partial: u64 = self
            .runs
            .iter()
            .map(|r| (rem as i64 - r.disp).clamp(0, r.len as i64) as u64)
            .sum();
        // A tile whose runs go past its extent is counted whole once entirely below.
        (tiles * tile_size + partial).min(tiles.saturating_add(1) * tile_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::ElementType;

    fn runs(v: &View, start: u64, len: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        v.map(start, len, |a, l| {
            out.push((a, l));
            Ok(true)
        })
        .unwrap();
        out
    }

    #[test]
    fn a_vector_view_maps_strided_runs_and_merges_tiles() {
        let int = Datatype::of(ElementType::I32);
        // 2 blocks of 1 int, stride 2: data at 0 and 8, extent 12.
        let ft = Datatype::vector(2, 1, 2, &int).unwrap();
        let v = View::new(100, &int, &ft, "native", true).unwrap();
        assert_eq!(runs(&v, 0, 16), vec![(100, 4), (108, 8), (120, 4)]);
        assert_eq!(runs(&v, 6, 4), vec![(110, 4)]);
        assert_eq!(runs(&v, 2, 8), vec![(102, 2), (108, 6)]);
        assert_eq!(v.file_offset(8).unwrap(), 112);
        assert_eq!(v.stream_below(100), 0);
        assert_eq!(v.stream_below(112), 8);
        assert_eq!(v.stream_below(110), 6);
    }

    #[test]
    fn the_byte_view_is_the_file() {
        let v = View::bytes();
        assert_eq!(runs(&v, 5, 1000), vec![(5, 1000)]);
        assert_eq!(v.stream_below(77), 77);
    }
}
