//! The plan of each collective from its C arguments, shared by the blocking, non-blocking and
//! persistent forms (and their `_c` variants): arguments checked, MPI_IN_PLACE resolved, each
//! buffer named in the plan ([`Writer`]), then the core writes the algorithm
//! ([`mpicd::schedule::collectives`]).
//!
//! A buffer of a predefined type, or of a derived type whose data is one contiguous run, is the
//! caller's memory itself. Any other derived type's data is packed into a temporary at the
//! start of each run (what is sent) or unpacked from one at its end (what is received).

pub(super) use super::combine::reduction;
use super::objects;
use super::Written;
use crate::abi::*;
use crate::blocks::{in_place, Elem};
use crate::errors::{fail, CResult};
use mpicd::schedule::{collectives as coll, Buf, Builder, Frame, Plan};
use mpicd::{Communicator, TypedBuf};
use smallvec::SmallVec;
use std::ffi::{c_int, c_void};
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
}

impl Layout {
    /// `n` blocks of `count` elements, one after the other.
    pub(crate) fn uniform(
        p: *const c_void,
        n: usize,
        count: i64,
        dtype: MPI_Datatype,
    ) -> CResult<Layout> {
        let extent = extent(dtype)?;
        Ok(Layout {
            p,
            counts: SmallVec::from_elem(count, n),
            displs: (0..n as i64).map(|i| i * count * extent).collect(),
            dtypes: SmallVec::from_elem(dtype, n),
        })
    }

    /// Counts and displacements in elements (a v-layout).
    pub(crate) fn varying(
        p: *const c_void,
        counts: Each<i64>,
        displs: Each<i64>,
        dtype: MPI_Datatype,
    ) -> CResult<Layout> {
        let extent = extent(dtype)?;
        let n = counts.len();
        Ok(Layout {
            p,
            counts,
            displs: displs.into_iter().map(|d| d * extent).collect(),
            dtypes: SmallVec::from_elem(dtype, n),
        })
    }

    pub(crate) fn arg(&self, i: usize) -> Arg {
        let p = (self.p as *const u8).wrapping_offset(self.displs[i] as isize);
        Arg::new(p as *const c_void, self.counts[i], self.dtypes[i])
    }
}

/// The distance between consecutive elements of `dtype` in an array (a custom type's is 1
/// unless MPI_Type_create_resized set it).
fn extent(dtype: MPI_Datatype) -> CResult<i64> {
    match objects::custom_type(dtype) {
        Some(t) => Ok(t.bounds.1),
        None => Ok(Elem::of(dtype)?.stride()),
    }
}

/// What happens to a buffer's data in a run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flow {
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
    unsafe fn blocks(&mut self, l: &Layout, flow: Flow, keep: Option<usize>) -> CResult<Each<Buf>> {
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
    unsafe fn array(&mut self, a: Arg, n: usize, flow: Flow) -> CResult<Each<Buf>> {
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

fn check_root(c: &Communicator, root: c_int) -> CResult<()> {
    if (0..c.size()).contains(&root) {
        Ok(())
    } else {
        Err(fail(
            MPI_ERR_ROOT,
            format!("invalid root {root} (size {})", c.size()),
        ))
    }
}

pub(crate) fn barrier(c: &Communicator, now: bool) -> CResult<Written> {
    if c.is_inter() {
        return super::inter::barrier(c).map(Written::Plan);
    }
    let mut w = Writer::new_for(c, now);
    coll::barrier(&mut w.b);
    w.written()
}

/// # Safety
/// Buffers as MPI requires of every collective below.
pub(crate) unsafe fn bcast(c: &Communicator, a: Arg, root: c_int, now: bool) -> CResult<Written> {
    if c.is_inter() {
        // SAFETY: forwarded.
        return unsafe { super::inter::bcast(c, a, root) }.map(Written::Plan);
    }
    check_root(c, root)?;
    if let Some(t) = objects::custom_type(a.dtype) {
        return Ok(Written::Plan(objects::bcast(c, t, a, root)));
    }
    let mut w = Writer::new_for(c, now);
    // SAFETY: MPI's rules for the buffer.
    let buf = unsafe {
        match c.rank() == root {
            true => w.input(a),
            false => w.output(a),
        }
    }?;
    coll::bcast(&mut w.b, buf, root);
    w.written()
}

pub(crate) unsafe fn reduce(
    c: &Communicator,
    send: Arg,
    recv: Arg,
    op: MPI_Op,
    root: c_int,
    now: bool,
) -> CResult<Written> {
    if c.is_inter() {
        // SAFETY: forwarded.
        return unsafe { super::inter::reduce(c, send, recv, op, root) }.map(Written::Plan);
    }
    check_root(c, root)?;
    let mut w = Writer::new_for(c, now);
    w.b.reduce_with(reduction(op, send.dtype)?);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        if c.rank() != root {
            let send = w.input(send)?;
            coll::reduce(&mut w.b, send, None, root);
        } else if in_place(send.p) {
            let buf = w.inout(recv)?;
            coll::reduce(&mut w.b, buf, Some(buf), root);
        } else {
            let (send, recv) = (w.input(send)?, w.output(recv)?);
            coll::reduce(&mut w.b, send, Some(recv), root);
        }
    }
    w.written()
}

pub(crate) unsafe fn allreduce(
    c: &Communicator,
    send: Arg,
    recv: Arg,
    op: MPI_Op,
    now: bool,
) -> CResult<Written> {
    if c.is_inter() {
        // SAFETY: forwarded.
        return unsafe { super::inter::allreduce(c, send, recv, op) }.map(Written::Plan);
    }
    let mut w = Writer::new_for(c, now);
    w.b.reduce_with(reduction(op, recv.dtype)?);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        if in_place(send.p) {
            let buf = w.inout(recv)?;
            coll::allreduce(&mut w.b, None, buf);
        } else {
            let (send, recv) = (w.input(send)?, w.output(recv)?);
            coll::allreduce(&mut w.b, Some(send), recv);
        }
    }
    w.written()
}

/// Reduce_scatter(_block): member i gets `counts[i]` elements of the reduction.
pub(crate) unsafe fn reduce_scatter(
    c: &Communicator,
    sendbuf: *const c_void,
    recvbuf: *const c_void,
    counts: &[i64],
    dtype: MPI_Datatype,
    op: MPI_Op,
    now: bool,
) -> CResult<Written> {
    if c.is_inter() {
        // SAFETY: forwarded.
        return unsafe { super::inter::reduce_scatter(c, sendbuf, recvbuf, counts, dtype, op) }
            .map(Written::Plan);
    }
    if counts.len() != c.size() as usize {
        return Err(fail(MPI_ERR_COUNT, "one count per member is needed"));
    }
    let elem = Elem::of(dtype)?;
    let bytes: Vec<usize> = counts
        .iter()
        .map(|&n| elem.packed(n))
        .collect::<CResult<_>>()?;
    let total: i64 = counts.iter().sum();
    let mine = counts[c.rank() as usize];
    let mut w = Writer::new_for(c, now);
    w.b.reduce_with(reduction(op, dtype)?);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        if in_place(sendbuf) {
            let all = w.inout(Arg::new(recvbuf, total, dtype))?;
            let recv = all.part(0, bytes[c.rank() as usize]);
            coll::reduce_scatter(&mut w.b, all, recv, &bytes);
        } else {
            let send = w.input(Arg::new(sendbuf, total, dtype))?;
            let recv = w.output(Arg::new(recvbuf, mine, dtype))?;
            coll::reduce_scatter(&mut w.b, send, recv, &bytes);
        }
    }
    w.written()
}

pub(crate) unsafe fn scan(
    c: &Communicator,
    send: Arg,
    recv: Arg,
    op: MPI_Op,
    exclusive: bool,
    now: bool,
) -> CResult<Written> {
    if c.is_inter() {
        return super::inter::scan().map(Written::Plan);
    }
    let mut w = Writer::new_for(c, now);
    w.b.reduce_with(reduction(op, recv.dtype)?);
    // SAFETY: MPI's rules for the buffers. An exclusive scan leaves member 0's recvbuf as it
    // was: it is read first, so that its unpacking writes it back unchanged.
    unsafe {
        if in_place(send.p) {
            let buf = w.inout(recv)?;
            coll::scan(&mut w.b, None, buf, exclusive);
        } else {
            let send = w.input(send)?;
            let recv = if exclusive {
                w.inout(recv)?
            } else {
                w.output(recv)?
            };
            coll::scan(&mut w.b, Some(send), recv, exclusive);
        }
    }
    w.written()
}

/// Gather(v): `recv` is read at the root only; `uniform` for Gather.
pub(crate) unsafe fn gather(
    c: &Communicator,
    send: Arg,
    recv: Option<Layout>,
    root: c_int,
    uniform: bool,
    now: bool,
) -> CResult<Written> {
    check_root(c, root)?;
    let here = in_place(send.p) && c.rank() == root;
    if let Some(t) = objects::custom_of(send.dtype, here, recv.as_ref())? {
        return Ok(Written::Plan(objects::gather(c, t, send, recv, root)));
    }
    let mut w = Writer::new_for(c, now);
    let at_root = c.rank() == root;
    let here = in_place(send.p) && at_root;
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let blocks = match recv.filter(|_| at_root) {
            Some(l) => Some(w.blocks(&l, Flow::Out, here.then_some(root as usize))?),
            None => None,
        };
        let mine = if here { None } else { Some(w.input(send)?) };
        coll::gather(&mut w.b, mine, blocks.as_deref(), root, uniform);
    }
    w.written()
}

/// Scatter(v): `send` is read at the root only; `uniform` for Scatter.
pub(crate) unsafe fn scatter(
    c: &Communicator,
    send: Option<Layout>,
    recv: Arg,
    root: c_int,
    uniform: bool,
    now: bool,
) -> CResult<Written> {
    check_root(c, root)?;
    let here = in_place(recv.p) && c.rank() == root;
    if let Some(t) = objects::custom_of(recv.dtype, here, send.as_ref())? {
        return Ok(Written::Plan(objects::scatter(c, t, send, recv, root)));
    }
    let mut w = Writer::new_for(c, now);
    let at_root = c.rank() == root;
    let here = in_place(recv.p) && at_root;
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let blocks = match send.filter(|_| at_root) {
            Some(l) => Some(w.blocks(&l, Flow::In, None)?),
            None => None,
        };
        let mine = if here { None } else { Some(w.output(recv)?) };
        coll::scatter(&mut w.b, blocks.as_deref(), mine, root, uniform);
    }
    w.written()
}

pub(crate) unsafe fn allgather(
    c: &Communicator,
    send: Arg,
    recv: Layout,
    now: bool,
) -> CResult<Written> {
    if let Some(t) = objects::custom_of(send.dtype, in_place(send.p), Some(&recv))? {
        return Ok(Written::Plan(objects::allgather(c, t, send, recv)));
    }
    let mut w = Writer::new_for(c, now);
    let here = in_place(send.p);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let blocks = w.blocks(&recv, Flow::Out, here.then_some(c.rank() as usize))?;
        let mine = if here { None } else { Some(w.input(send)?) };
        coll::allgather(&mut w.b, mine, &blocks);
    }
    w.written()
}

/// MPI_Allgather of a type that is not custom, not in place: `recv.count` elements per block.
pub(crate) unsafe fn allgather_equal(
    c: &Communicator,
    send: Arg,
    recv: Arg,
    now: bool,
) -> CResult<Written> {
    let mut w = Writer::new_for(c, now);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let blocks = w.array(recv, c.size() as usize, Flow::Out)?;
        let mine = w.input(send)?;
        coll::allgather(&mut w.b, Some(mine), &blocks);
    }
    w.written()
}

/// MPI_Alltoall of types that are not custom, not in place: `count` elements per block.
pub(crate) unsafe fn alltoall_equal(
    c: &Communicator,
    send: Arg,
    recv: Arg,
    now: bool,
) -> CResult<Written> {
    let n = c.size() as usize;
    let mut w = Writer::new_for(c, now);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let out = w.array(send, n, Flow::In)?;
        let inc = w.array(recv, n, Flow::Out)?;
        coll::alltoall(&mut w.b, &out, &inc, true);
    }
    w.written()
}

/// Alltoall(v,w); `send` `None`: in place, every block sent from the receive layout.
/// `uniform`: MPI_Alltoall (every block of every member has one size).
pub(crate) unsafe fn alltoall(
    c: &Communicator,
    send: Option<Layout>,
    recv: Layout,
    uniform: bool,
    now: bool,
) -> CResult<Written> {
    let first = send.as_ref().map_or(MPI_DATATYPE_NULL, |s| s.dtypes[0]);
    if let Some(t) = objects::custom_of(first, send.is_none(), Some(&recv))? {
        return objects::alltoall(c, t, send, recv).map(Written::Plan);
    }
    let mut w = Writer::new_for(c, now);
    // SAFETY: MPI's rules for the buffers.
    unsafe {
        let (out, inc) = match send {
            Some(send) => (
                w.blocks(&send, Flow::In, None)?,
                w.blocks(&recv, Flow::Out, None)?,
            ),
            None => {
                let inc = w.blocks(&recv, Flow::InOut, None)?;
                let out: Each<Buf> = inc
                    .iter()
                    .map(|&b| {
                        let copy = w.b.temp(b.len());
                        w.b.copy(b, copy);
                        copy
                    })
                    .collect();
                (out, inc)
            }
        };
        coll::alltoall(&mut w.b, &out, &inc, uniform);
    }
    w.written()
}
