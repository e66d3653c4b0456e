//! A collective's C buffers named in its plan: [`Arg`] (one block of C arguments), [`Layout`]
//! (one block per member, as v- and w-layouts give them) and [`Writer`], which checks each
//! buffer, refuses send and receive buffers that overlap without MPI_IN_PLACE, and names it in
//! the plan being written (or, for a blocking collective, in the builder that does each step
//! at once).
//!
//! A buffer of a predefined type, or of a derived type whose data is one contiguous run, is the
//! caller's memory itself. Any other derived type's data is packed into a temporary at the
//! start of each run (what is sent) or unpacked from one at its end (what is received).

use super::objects;
use super::Written;
use crate::abi::*;
use crate::blocks::{in_place, Elem};
use crate::custom::CustomType;
use crate::errors::{fail, CResult};
use mpicd::schedule::{Buf, Builder, Frame, Plan};
use mpicd::{Communicator, TypedBuf};
use smallvec::SmallVec;
use std::ffi::c_void;
use std::sync::Arc;

/// `count` elements of `dtype` at `p`: one block of a collective's C arguments.
#[derive(Clone, Copy)]
pub(crate) struct Arg {
    pub p: *const c_void,
    pub count: i64,
    pub dtype: MPI_Datatype,
}

impl Arg {
    pub(crate) fn new(p: *const c_void, count: i64, dtype: MPI_Datatype) -> Arg {
        Arg { p, count, dtype }
    }
}

/// One entry per member: inline for the usual few members (no heap allocation per call).
pub(crate) type Each<T> = SmallVec<[T; 8]>;

/// One block per member, as a v- or w-layout gives them: counts, byte displacements from `p`,
/// and datatypes.
pub(crate) struct Layout {
    pub p: *const c_void,
    pub counts: Each<i64>,
    pub displs: Each<i64>,
    pub dtypes: Each<MPI_Datatype>,
    /// The custom type of every block, where one datatype (a custom one) names them all:
    /// looked up once, with the extent.
    pub custom: Option<Arc<CustomType>>,
}

impl Layout {
    /// `n` blocks of `count` elements, one after the other.
    pub(crate) fn uniform(
        p: *const c_void,
        n: usize,
        count: i64,
        dtype: MPI_Datatype,
    ) -> CResult<Layout> {
        let (extent, custom) = extent(dtype)?;
        Ok(Layout {
            p,
            counts: SmallVec::from_elem(count, n),
            displs: (0..n as i64).map(|i| i * count * extent).collect(),
            dtypes: SmallVec::from_elem(dtype, n),
            custom,
        })
    }

    /// Counts and displacements in elements (a v-layout).
    pub(crate) fn varying(
        p: *const c_void,
        counts: Each<i64>,
        displs: Each<i64>,
        dtype: MPI_Datatype,
    ) -> CResult<Layout> {
        let (extent, custom) = extent(dtype)?;
        let n = counts.len();
        Ok(Layout {
            p,
            counts,
            displs: displs.into_iter().map(|d| d * extent).collect(),
            dtypes: SmallVec::from_elem(dtype, n),
            custom,
        })
    }

    /// Counts, byte displacements and a datatype per block (a w-layout).
    pub(crate) fn typed(
        p: *const c_void,
        counts: Each<i64>,
        displs: Each<i64>,
        dtypes: Each<MPI_Datatype>,
    ) -> Layout {
        Layout {
            p,
            counts,
            displs,
            dtypes,
            custom: None,
        }
    }

    pub(crate) fn arg(&self, i: usize) -> Arg {
        let p = (self.p as *const u8).wrapping_offset(self.displs[i] as isize);
        Arg::new(p as *const c_void, self.counts[i], self.dtypes[i])
    }
}

/// The distance between consecutive elements of `dtype` in an array (a custom type's is 1
/// unless MPI_Type_create_resized set it), and its custom type if it is one.
fn extent(dtype: MPI_Datatype) -> CResult<(i64, Option<Arc<CustomType>>)> {
    match objects::custom_type(dtype) {
        Some(t) => Ok((t.bounds.1, Some(t))),
        None => Ok((Elem::of(dtype)?.stride(), None)),
    }
}

/// What happens to a buffer's data in a run.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    /// Read: packed at the start.
    In,
    /// Written: unpacked at the end.
    Out,
    /// Both.
    InOut,
}

/// A plan being written from C arguments, with the unpack steps that end it. A blocking
/// collective is done as it is written (`now`): the builder does each step at once, a derived
/// type's data is packed when its buffer is named and unpacked when the messages are in.
pub(crate) struct Writer {
    pub b: Builder,
    /// Data of derived types to unpack at the end: from the temporary into the type map.
    tail: Vec<(Buf, TypedBuf)>,
    /// The caller's memory the plan reads (`In`) and writes (`Out`, `InOut`), as byte ranges:
    /// a send buffer that overlaps a receive buffer without MPI_IN_PLACE is MPI_ERR_BUFFER.
    spans: SmallVec<[(Flow, std::ops::Range<usize>); 4]>,
}

impl Writer {
    /// A writer of a plan.
    pub(crate) fn new(c: &Communicator) -> Writer {
        Writer::new_for(c, false)
    }

    /// A writer of a plan, or (`now`, on an intra-communicator) of a collective done as it is
    /// written. Inlined, so that the builder is made where the caller keeps it (not moved).
    #[inline(always)]
    pub(crate) fn new_for(c: &Communicator, now: bool) -> Writer {
        Writer {
            b: match now {
                true => c.direct(),
                false => c.plan(),
            },
            tail: Vec::new(),
            spans: SmallVec::new(),
        }
    }

    /// Records the caller's bytes `at..at + len` as used by `flow`; refuses a send buffer that
    /// overlaps a receive buffer.
    fn claim(&mut self, at: usize, len: usize, flow: Flow) -> CResult<()> {
        if len == 0 {
            return Ok(());
        }
        let span = at..at.saturating_add(len);
        let clash = self.spans.iter().any(|(f, s)| {
            let crosses = (*f == Flow::In) != (flow == Flow::In);
            crosses && s.start < span.end && span.start < s.end
        });
        if clash {
            return Err(fail(
                MPI_ERR_BUFFER,
                "the send and receive buffers overlap (only MPI_IN_PLACE may share them)",
            ));
        }
        self.spans.push((flow, span));
        Ok(())
    }

    /// The buffer of block `a` in the plan.
    ///
    /// # Safety
    /// `a` must describe memory valid for every run of the plan (MPI's rules for the buffers
    /// of a collective).
    unsafe fn buffer(&mut self, a: Arg, flow: Flow) -> CResult<Buf> {
        let elem = Elem::of(a.dtype)?;
        let len = elem.packed(a.count)?;
        if len > 0 && in_place(a.p) {
            return Err(fail(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed here"));
        }
        let t = match elem {
            Elem::Basic(_) => {
                if len > 0 && a.p.is_null() {
                    return Err(fail(MPI_ERR_BUFFER, "null buffer"));
                }
                self.claim(a.p as usize, len, flow)?;
                // SAFETY: the caller's promise.
                return Ok(unsafe { self.b.raw(a.p as *mut u8, len) });
            }
            Elem::Derived(t) => {
                // The bytes the type map spans: from its true lower bound to the true end of
                // the last element.
                let span = match a.count {
                    0 => 0,
                    n => (n - 1) * t.extent() + t.true_extent(),
                };
                // MPI_BOTTOM (null) is a valid base for a type of absolute addresses.
                let start = (a.p as usize).wrapping_add_signed(t.true_lb() as isize);
                if len > 0 && start == 0 {
                    return Err(fail(MPI_ERR_BUFFER, "null buffer"));
                }
                self.claim(start, usize::try_from(span).unwrap_or(0), flow)?;
                TypedBuf::new(a.p as *const u8, a.count as u64, &t)
            }
        };
        if let Some((p, n)) = t.contiguous() {
            // SAFETY: as above.
            return Ok(unsafe { self.b.raw(p, n) });
        }
        let tmp = self.b.temp(len);
        if flow != Flow::Out {
            if self.b.is_direct() {
                if let Some(bytes) = self.b.bytes_now(tmp) {
                    // SAFETY: the type map is readable during the call (the caller's promise).
                    unsafe { t.pack(0, bytes) };
                }
            } else {
                let t = t.clone();
                self.b.local(Arc::new(move |f: &mut Frame| {
                    // SAFETY: the type map is readable while the run lasts (the caller's
                    // promise).
                    unsafe { t.pack(0, f.bytes_mut(tmp)) };
                    Ok(())
                }));
            }
        }
        if flow != Flow::In {
            self.tail.push((tmp, t));
        }
        Ok(tmp)
    }

    /// Data the collective sends.
    pub(crate) unsafe fn input(&mut self, a: Arg) -> CResult<Buf> {
        // SAFETY: forwarded.
        unsafe { self.buffer(a, Flow::In) }
    }

    /// Where the collective puts what it receives.
    pub(crate) unsafe fn output(&mut self, a: Arg) -> CResult<Buf> {
        // SAFETY: forwarded.
        unsafe { self.buffer(a, Flow::Out) }
    }

    /// Data read and then overwritten (MPI_IN_PLACE).
    pub(crate) unsafe fn inout(&mut self, a: Arg) -> CResult<Buf> {
        // SAFETY: forwarded.
        unsafe { self.buffer(a, Flow::InOut) }
    }

    /// Every block of a layout; block `keep` (in place) is read as well as written.
    pub(super) unsafe fn blocks(
        &mut self,
        l: &Layout,
        flow: Flow,
        keep: Option<usize>,
    ) -> CResult<Each<Buf>> {
        // SAFETY: forwarded.
        if let Some(blocks) = unsafe { self.dense(l, flow)? } {
            return Ok(blocks);
        }
        (0..l.counts.len())
            .map(|i| {
                let f = if Some(i) == keep { Flow::InOut } else { flow };
                // SAFETY: forwarded.
                unsafe { self.buffer(l.arg(i), f) }
            })
            .collect()
    }

    /// The blocks of a layout of equal blocks of one predefined type, end to end: parts of
    /// one buffer ([`Writer::array`]). A block read as well as written is no different there:
    /// a predefined type's buffer is the caller's memory itself.
    unsafe fn dense(&mut self, l: &Layout, flow: Flow) -> CResult<Option<Each<Buf>>> {
        let (n, dtype, count) = (l.counts.len(), l.dtypes[0], l.counts[0]);
        let Ok(Elem::Basic(basic)) = Elem::of(dtype) else {
            return Ok(None);
        };
        let stride = count.saturating_mul(basic.size as i64);
        let uniform = (0..n).all(|i| {
            l.dtypes[i] == dtype && l.counts[i] == count && l.displs[i] == i as i64 * stride
        });
        if !uniform || n == 0 {
            return Ok(None);
        }
        // SAFETY: forwarded.
        unsafe { self.array(Arg::new(l.p, count, dtype), n, flow) }.map(Some)
    }

    /// `n` blocks of `a.count` elements of `a.dtype` (not a custom type), one after the other
    /// from `a.p`: parts of one buffer, named and checked once.
    pub(super) unsafe fn array(&mut self, a: Arg, n: usize, flow: Flow) -> CResult<Each<Buf>> {
        let total = a.count.checked_mul(n as i64).ok_or_else(|| {
            fail(
                MPI_ERR_COUNT,
                format!("{n} blocks of {} elements overflow", a.count),
            )
        })?;
        // SAFETY: forwarded.
        let all = unsafe { self.buffer(Arg::new(a.p, total, a.dtype), flow)? };
        let len = all.len() / n.max(1);
        Ok((0..n).map(|i| all.part(i * len, len)).collect())
    }

    /// The plan written (by a writer of a plan: [`Writer::new`]).
    pub(crate) fn finish(self) -> CResult<Arc<Plan>> {
        match self.written()? {
            Written::Plan(plan) => Ok(plan),
            Written::Done => Err(fail(MPI_ERR_INTERN, "a plan was expected")),
        }
    }

    /// The plan written, or the outcome of the collective done as it was written. The usual
    /// end, a collective done with nothing to unpack, is inlined (the writer is not moved).
    #[inline(always)]
    pub(crate) fn written(mut self) -> CResult<Written> {
        if self.tail.is_empty() && self.b.is_direct() {
            return self
                .b
                .complete()
                .map(|()| Written::Done)
                .map_err(Into::into);
        }
        self.written_rest()
    }

    fn written_rest(mut self) -> CResult<Written> {
        if !self.tail.is_empty() {
            // Unpacking reads what the messages brought.
            self.b.wait();
        }
        if self.b.is_direct() {
            for (tmp, t) in self.tail {
                if let Some(bytes) = self.b.bytes_now(tmp) {
                    // SAFETY: the type map is writable during the call, apart from `tmp`.
                    unsafe { t.unpack(0, bytes) };
                }
            }
            return self
                .b
                .complete()
                .map(|()| Written::Done)
                .map_err(Into::into);
        }
        for (tmp, t) in self.tail {
            self.b.local(Arc::new(move |f: &mut Frame| {
                // SAFETY: the type map is writable while the run lasts, apart from `tmp`.
                unsafe { t.unpack(0, f.bytes_mut(tmp)) };
                Ok(())
            }));
        }
        Ok(Written::Plan(self.b.finish()))
    }
}
