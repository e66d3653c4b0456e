//! The receiver's side of pulled regions: between two processes of one node, the receiver
//! reads the sender's zero-copy regions straight into its own regions with
//! [`process_vm_readv`](crate::cma), many regions per system call, instead of one UCX message
//! per region. The lead names the sender's pid and its list of [`RawRegion`]s; the receiver
//! reads that list in batches, checks each entry against the shape the lead announced, and
//! reads the data in steps of bounded size, so that one large message does not stall every
//! other operation's progress. When it is done (or has failed), the receiver replies once,
//! and the sender, which kept its regions alive until then, completes.

use super::wire::{PullSource, WirePlan};
use super::{RawRegion, RawRegionMut};
use crate::cma::{self, Local, Remote, MAX_IOV};
use crate::error::{Error, Result};
use std::mem::{offset_of, size_of};

// Descriptors are read as two 8-byte words (see `Pull::descriptor`).
const _: () = assert!(size_of::<usize>() == 8 && size_of::<*const u8>() == 8);

/// Bytes read per step at most (one step per progress call).
const STEP_BYTES: u64 = 4 << 20;
/// Descriptors of the sender's region list read at a time.
const DESCRIPTOR_BATCH: usize = 1024;
/// Two of the sender's regions this close (say, two heap blocks and the allocator's header
/// between them) are read as one remote range, the gap going to a scratch buffer: the kernel's
/// cost is per remote range, not per byte. Below a page, so the gap lies on pages that hold
/// region bytes, which the sender made readable.
const MAX_GAP: usize = 256;

/// Where a pull stands.
pub(crate) struct Pull {
    source: PullSource,
    rank: u32,
    /// Cursor over the plan's zero-copy regions (a run and a region index).
    cursor: (usize, usize),
    /// A region read only in part: its index, its length and the bytes read so far.
    partial: Option<(usize, u64, u64)>,
    /// Zero-copy regions read completely.
    done: u64,
    /// Descriptors `batch_start..` of the sender's list, as raw bytes.
    batch_start: usize,
    batch: Vec<u8>,
    /// Where the bytes between merged remote ranges go.
    gap_sink: Box<[u8; MAX_GAP]>,
}

impl Pull {
    /// A pull from world rank `rank`, whose lead named `source`.
    pub(crate) fn new(source: PullSource, rank: u32) -> Result<Pull> {
        if source.stride as usize != size_of::<RawRegion>() {
            return Err(Error::InvalidDatatype(
                "the sender's region list has another layout (a different mpicd build)".into(),
            ));
        }
        Ok(Pull {
            source,
            rank,
            cursor: (0, 0),
            partial: None,
            done: 0,
            batch_start: 0,
            batch: Vec::new(),
            gap_sink: Box::new([0; MAX_GAP]),
        })
    }

    /// True once every zero-copy region was read.
    pub(crate) fn finished(&self, plan: &WirePlan) -> bool {
        self.done >= plan.zero_copy_count
    }

    /// Reads the next regions: at most [`STEP_BYTES`] bytes in one system call. `mine` are the
    /// receiver's regions, already checked to hold the shape.
    pub(crate) fn step(&mut self, plan: &WirePlan, mine: &[RawRegionMut]) -> Result<()> {
        let (mut local, mut remote) = (Vec::<Local>::new(), Vec::<Remote>::new());
        let (mut bytes, mut completed) = (0u64, 0u64);
        let sink = self.gap_sink.as_mut_ptr();
        // Room for a region and a gap on the local side, a new range on the remote side.
        while local.len() + 2 <= MAX_IOV && remote.len() < MAX_IOV && bytes < STEP_BYTES {
            let (i, len, at) = match self.partial.take() {
                Some(p) => p,
                None => match plan.next_zero_copy(&mut self.cursor) {
                    Some((i, len)) => (i, len, 0),
                    None => break,
                },
            };
            let (base, remote_len) = self.descriptor(plan, i)?;
            if remote_len != len {
                return Err(Error::InvalidDatatype(
                    "the sender's regions differ from the shape it announced".into(),
                ));
            }
            let mine = mine
                .get(i)
                .filter(|r| r.bytes as u64 >= len)
                .ok_or(Error::Truncated {
                    message_bytes: len,
                    buffer_bytes: mine.get(i).map_or(0, |r| r.bytes as u64),
                })?;
            let take = (len - at).min(STEP_BYTES - bytes);
            let from = base.wrapping_add(at);
            // Extend the last remote range across a small gap, or start a new one.
            let gap = remote
                .last()
                .map(|r| r.addr.wrapping_add(r.len as u64))
                .and_then(|end| from.checked_sub(end))
                .filter(|&g| g <= MAX_GAP as u64);
            match (gap, remote.last_mut()) {
                (Some(g), Some(last)) => {
                    if g > 0 {
                        local.push(Local {
                            ptr: sink,
                            len: g as usize,
                        });
                    }
                    last.len += g as usize + take as usize;
                }
                _ => remote.push(Remote {
                    addr: from,
                    len: take as usize,
                }),
            }
            local.push(Local {
                // SAFETY: `at + take <= len <= mine.bytes`: inside the receiver's region.
                ptr: unsafe { mine.ptr.add(at as usize) },
                len: take as usize,
            });
            bytes += take;
            if at + take < len {
                self.partial = Some((i, len, at + take));
            } else {
                completed += 1;
            }
        }
        let want: usize = remote.iter().map(|r| r.len).sum();
        // SAFETY: every local range lies inside one of the receiver's regions (checked above),
        // which UnpackState keeps valid and exclusive to this operation, or is the gap sink,
        // owned here and never read.
        match unsafe { cma::read(self.source.pid, &local, &remote) } {
            Ok(n) if n == want => {
                self.done += completed;
                Ok(())
            }
            Ok(_) => Err(Error::Transport(
                "the sender's regions ended early (unmapped memory)".into(),
            )),
            Err(e) => Err(self.read_error(e)),
        }
    }

    /// The sender's address and length of region `i`, from its region list.
    fn descriptor(&mut self, plan: &WirePlan, i: usize) -> Result<(u64, u64)> {
        let stride = size_of::<RawRegion>();
        let have = self.batch.len() / stride;
        if i < self.batch_start || i >= self.batch_start + have {
            let count = DESCRIPTOR_BATCH.min(plan.shape.region_count().saturating_sub(i));
            if count == 0 {
                return Err(Error::InvalidMessage);
            }
            self.batch.resize(count * stride, 0);
            let local = Local {
                ptr: self.batch.as_mut_ptr(),
                len: self.batch.len(),
            };
            let remote = Remote {
                addr: self.source.table.wrapping_add((i * stride) as u64),
                len: self.batch.len(),
            };
            // SAFETY: the local range is `batch`, owned here and not otherwise borrowed.
            match unsafe { cma::read(self.source.pid, &[local], &[remote]) } {
                Ok(n) if n == self.batch.len() => {}
                Ok(_) => {
                    return Err(Error::Transport(
                        "the sender's region list ended early".into(),
                    ))
                }
                Err(e) => return Err(self.read_error(e)),
            }
            self.batch_start = i;
        }
        let at = (i - self.batch_start) * stride;
        let word = |offset: usize| {
            let b = &self.batch[at + offset..at + offset + 8];
            u64::from_ne_bytes(b.try_into().unwrap_or([0; 8]))
        };
        Ok((
            word(offset_of!(RawRegion, ptr)),
            word(offset_of!(RawRegion, bytes)),
        ))
    }

    fn read_error(&self, e: std::io::Error) -> Error {
        match e.raw_os_error() {
            Some(libc::ESRCH) => Error::ProcFailed {
                rank: self.rank as i32,
            },
            _ => Error::Transport(format!(
                "reading the sender's regions (process_vm_readv from pid {}): {e}; \
                 MPICD_CMA=0 turns this path off",
                self.source.pid
            )),
        }
    }
}
