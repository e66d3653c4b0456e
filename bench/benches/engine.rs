//! CPU costs of mpicd's custom datatype engine without a network: a singleton (no launcher)
//! sends messages to itself, so what is measured is the engine (plan, pack dispatch, stream,
//! regions, matching) and UCX's self transport (a memcpy), never a wire.
//!
//! Groups (all through the public API; the wire plan is internal, so it is exercised through the
//! region counts and sizes that make it choose differently):
//! - `overhead`: per-message cost of 8 bytes sent contiguously, as a custom packed part, as a
//!   custom region, and through the serde bridge;
//! - `pack-dispatch`: a 256 KiB packed part whose pack callback writes at most `chunk` bytes per
//!   call: the cost of one callback dispatch, against a contiguous 256 KiB message;
//! - `regions`: 1 MiB in regions of 64 B .. 1 MiB (custom), against manual packing of the same
//!   regions into one contiguous message;
//! - `region-count`: 1 KiB regions, 1 .. 16384 of them: the per-region cost;
//! - `wire-plan`: 1 MiB in regions just below, at and above the zero-copy threshold
//!   (`CustomConfig::zcopy_threshold`, 32 KiB by default): coalesced into the stream or sent
//!   zero-copy.
//!
//! - `derived-pack`: packing 1 MiB of a strided vector (blocks of 8 B .. 4 KiB, every other
//!   block) with the derived-datatype walker, against a memcpy of 1 MiB (the limit).
//!
//! - `reduce`: the predefined reductions on 1 MiB, against a typed loop (the limit).
//!
//! `cargo bench -p mpicd-bench` runs them; `cargo bench -p mpicd-bench -- --test` runs each
//! once (a smoke test).

use criterion::{BenchmarkId, Criterion, Throughput};
use mpicd::{
    Communicator, CustomConfig, CustomRecv, CustomSend, RecvParts, SendMode, SendParts, SerdeExt,
};

const TAG: i32 = 5;

/// A message of equal byte regions.
struct Regions(Vec<Vec<u8>>);

impl CustomSend for Regions {
    fn parts(&self) -> mpicd::Result<SendParts<'_>> {
        Ok(SendParts::new().regions(self.0.iter().map(|r| &r[..])))
    }
}

impl CustomRecv for Regions {
    fn parts(&mut self) -> mpicd::Result<RecvParts<'_>> {
        Ok(RecvParts::new().regions(self.0.iter_mut().map(|r| &mut r[..])))
    }
}

/// A packed part of `bytes` bytes produced at most `chunk` bytes per pack call.
struct Packed {
    data: Vec<u8>,
    chunk: usize,
}

impl CustomSend for Packed {
    fn parts(&self) -> mpicd::Result<SendParts<'_>> {
        let (data, chunk) = (&self.data[..], self.chunk);
        Ok(SendParts::new().packed(data.len(), move |offset, dst| {
            let at = offset as usize;
            let n = dst.len().min(chunk).min(data.len() - at);
            dst[..n].copy_from_slice(&data[at..at + n]);
            Ok(n)
        }))
    }
}

impl CustomRecv for Packed {
    fn parts(&mut self) -> mpicd::Result<RecvParts<'_>> {
        let data = &mut self.data[..];
        Ok(RecvParts::new().packed(data.len(), move |offset, src| {
            let at = offset as usize;
            data[at..at + src.len()].copy_from_slice(src);
            Ok(())
        }))
    }
}

fn custom_self<S: CustomSend, R: CustomRecv>(w: &Communicator, out: &S, inc: &mut R) {
    mpicd::scope(|s| {
        let r = w.irecv_custom(s, inc, 0, TAG).expect("irecv_custom");
        w.send_custom(out, 0, TAG).expect("send_custom");
        r.wait().expect("wait");
    });
}

fn contiguous_self(w: &Communicator, out: &[u8], inc: &mut [u8]) {
    mpicd::scope(|s| {
        let r = w.irecv(s, inc, 0, TAG).expect("irecv");
        w.send(out, 0, TAG).expect("send");
        r.wait().expect("wait");
    });
}

/// The C library's path: a request outside any scope, then a blocking send.
fn contiguous_raw_self(w: &Communicator, out: &[u8], inc: &mut [u8]) {
    // SAFETY: the request is waited for before `inc`'s borrow ends.
    let r = unsafe { w.irecv_raw(inc.as_mut_ptr(), inc.len(), 0, TAG) }.expect("irecv_raw");
    w.send(out, 0, TAG).expect("send");
    r.wait().expect("wait");
}

/// Blocking calls only: the send completes at once (a short eager message), then the receive
/// takes it from the unexpected queue.
fn contiguous_blocking_self(w: &Communicator, out: &[u8], inc: &mut [u8]) {
    w.send(out, 0, TAG).expect("send");
    w.recv(inc, 0, TAG).expect("recv");
}

/// A window of 64 receives and 64 sends, completed together (osu_mbw_mr's pattern).
fn contiguous_window_self(w: &Communicator, out: &[u8], inc: &mut [u8]) {
    let len = out.len();
    let mut reqs = Vec::with_capacity(2 * WINDOW);
    for chunk in inc.chunks_mut(len) {
        // SAFETY: every request is completed by wait_all before the borrows end.
        reqs.push(unsafe { w.irecv_raw(chunk.as_mut_ptr(), len, 0, TAG) }.expect("irecv_raw"));
    }
    for _ in 0..WINDOW {
        // SAFETY: as above.
        reqs.push(
            unsafe { w.isend_raw(out.as_ptr(), len, 0, TAG, SendMode::Standard) }
                .expect("isend_raw"),
        );
    }
    mpicd::wait_all(&mut reqs).expect("wait_all");
}

const WINDOW: usize = 64;

fn overhead(c: &mut Criterion, w: &Communicator) {
    let mut g = c.benchmark_group("overhead");
    g.throughput(Throughput::Elements(1));
    let out = [7u8; 8];
    let mut inc = [0u8; 8];
    g.bench_function("contiguous-8B", |b| {
        b.iter(|| contiguous_self(w, &out, &mut inc))
    });
    g.bench_function("contiguous-raw-8B", |b| {
        b.iter(|| contiguous_raw_self(w, &out, &mut inc))
    });
    g.bench_function("contiguous-blocking-8B", |b| {
        b.iter(|| contiguous_blocking_self(w, &out, &mut inc))
    });
    let mut window = vec![0u8; 8 * WINDOW];
    g.throughput(Throughput::Elements(WINDOW as u64));
    g.bench_function("contiguous-window64-8B", |b| {
        b.iter(|| contiguous_window_self(w, &out, &mut window))
    });
    g.throughput(Throughput::Elements(1));
    let packed = Packed {
        data: vec![7; 8],
        chunk: usize::MAX,
    };
    let mut packed_in = Packed {
        data: vec![0; 8],
        chunk: usize::MAX,
    };
    g.bench_function("custom-packed-8B", |b| {
        b.iter(|| custom_self(w, &packed, &mut packed_in))
    });
    let region = vec![7u8; 8];
    let mut region_in = vec![0u8; 8];
    g.bench_function("custom-region-8B", |b| {
        b.iter(|| custom_self(w, &region, &mut region_in))
    });
    let value = 7u64;
    g.bench_function("serde-8B", |b| {
        b.iter(|| {
            let r = w.isend_serde(&value, 0, TAG).expect("isend_serde");
            let got: u64 = w.recv_serde(0, TAG).expect("recv_serde");
            r.wait().expect("wait");
            assert_eq!(got, value);
        })
    });
    g.finish();
    assert_eq!(inc, out);
    assert_eq!(packed_in.data, packed.data);
    assert_eq!(region_in, region);
}

fn pack_dispatch(c: &mut Criterion, w: &Communicator) {
    const BYTES: usize = 256 << 10;
    let mut g = c.benchmark_group("pack-dispatch");
    g.throughput(Throughput::Bytes(BYTES as u64));
    let out = vec![3u8; BYTES];
    let mut inc = vec![0u8; BYTES];
    g.bench_function("contiguous", |b| {
        b.iter(|| contiguous_self(w, &out, &mut inc))
    });
    for chunk in [64usize, 1024, 16 << 10, BYTES] {
        let msg = Packed {
            data: vec![3; BYTES],
            chunk,
        };
        let mut back = Packed {
            data: vec![0; BYTES],
            chunk,
        };
        g.bench_with_input(BenchmarkId::new("custom-chunk", chunk), &chunk, |b, _| {
            b.iter(|| custom_self(w, &msg, &mut back))
        });
        assert_eq!(back.data, msg.data);
    }
    g.finish();
}

fn regions(c: &mut Criterion, w: &Communicator) {
    const TOTAL: usize = 1 << 20;
    let mut g = c.benchmark_group("regions");
    g.throughput(Throughput::Bytes(TOTAL as u64));
    for size in [64usize, 1024, 16 << 10, 64 << 10, TOTAL] {
        let count = TOTAL / size;
        let msg = Regions((0..count).map(|i| vec![i as u8; size]).collect());
        let mut back = Regions(vec![vec![0u8; size]; count]);
        g.bench_with_input(BenchmarkId::new("custom", size), &size, |b, _| {
            b.iter(|| custom_self(w, &msg, &mut back))
        });
        assert_eq!(back.0, msg.0);
        let mut scratch = vec![0u8; TOTAL];
        let mut scratch_in = vec![0u8; TOTAL];
        g.bench_with_input(BenchmarkId::new("manual-pack", size), &size, |b, _| {
            b.iter(|| {
                for (dst, r) in scratch.chunks_exact_mut(size).zip(&msg.0) {
                    dst.copy_from_slice(r);
                }
                contiguous_self(w, &scratch, &mut scratch_in);
                for (src, r) in scratch_in.chunks_exact(size).zip(back.0.iter_mut()) {
                    r.copy_from_slice(src);
                }
            })
        });
    }
    g.finish();
}

fn region_count(c: &mut Criterion, w: &Communicator) {
    let mut g = c.benchmark_group("region-count");
    for count in [1usize, 16, 256, 4096, 16384] {
        g.throughput(Throughput::Elements(count as u64));
        let msg = Regions((0..count).map(|i| vec![i as u8; 1024]).collect());
        let mut back = Regions(vec![vec![0u8; 1024]; count]);
        g.bench_with_input(BenchmarkId::new("custom-1KiB", count), &count, |b, _| {
            b.iter(|| custom_self(w, &msg, &mut back))
        });
        assert_eq!(back.0, msg.0);
    }
    g.finish();
}

fn wire_plan(c: &mut Criterion, w: &Communicator) {
    const TOTAL: usize = 1 << 20;
    let threshold = CustomConfig::from_env()
        .map(|c| c.zcopy_threshold)
        .unwrap_or(32 << 10);
    let mut g = c.benchmark_group("wire-plan");
    for size in [threshold / 2, threshold - 8, threshold, threshold * 2] {
        let count = TOTAL / size;
        g.throughput(Throughput::Bytes((count * size) as u64));
        let msg = Regions((0..count).map(|i| vec![i as u8; size]).collect());
        let mut back = Regions(vec![vec![0u8; size]; count]);
        g.bench_with_input(BenchmarkId::new("region-bytes", size), &size, |b, _| {
            b.iter(|| custom_self(w, &msg, &mut back))
        });
        assert_eq!(back.0, msg.0);
    }
    g.finish();
}

fn derived_pack(c: &mut Criterion) {
    const TOTAL: usize = 1 << 20;
    let mut g = c.benchmark_group("derived-pack");
    g.throughput(Throughput::Bytes(TOTAL as u64));
    let src = vec![7u8; 2 * TOTAL];
    let mut dst = vec![0u8; TOTAL];
    g.bench_function("memcpy", |b| b.iter(|| dst.copy_from_slice(&src[..TOTAL])));
    let byte = mpicd::Datatype::of(mpicd::ElementType::U8);
    for block in [8usize, 64, 512, 4096] {
        let count = (TOTAL / block) as u64;
        let ty =
            mpicd::Datatype::vector(count, block as u64, 2 * block as i64, &byte).expect("vector");
        let buf = mpicd::TypedBuf::new(src.as_ptr(), 1, &ty);
        g.bench_with_input(BenchmarkId::new("vector-block", block), &block, |b, _| {
            // SAFETY: the vector's type map lies inside `src` (2 * TOTAL bytes).
            b.iter(|| unsafe { buf.pack(0, &mut dst) })
        });
    }
    g.finish();
}

/// `reduce`: the predefined reductions on 1 MiB (MPI_SUM of doubles and ints, MPI_MAX of
/// doubles, MPI_BAND of bytes), against the same sum as a loop over typed slices (the limit).
fn reduce(c: &mut Criterion) {
    use mpicd::collective::{reduce_local, ReduceOp};
    use mpicd::ElementType;
    const TOTAL: usize = 1 << 20;
    let mut g = c.benchmark_group("reduce");
    g.throughput(Throughput::Bytes(TOTAL as u64));
    let (mut x, y) = (vec![1.5f64; TOTAL / 8], vec![0.25f64; TOTAL / 8]);
    g.bench_function("f64-sum-typed-loop", |b| {
        b.iter(|| x.iter_mut().zip(&y).for_each(|(a, b)| *a += *b))
    });
    let (mut acc, inc) = (vec![1u8; TOTAL], vec![2u8; TOTAL]);
    for (name, op, elem) in [
        ("f64-sum", ReduceOp::Sum, ElementType::F64),
        ("f64-max", ReduceOp::Max, ElementType::F64),
        ("i32-sum", ReduceOp::Sum, ElementType::I32),
        ("byte-band", ReduceOp::Band, ElementType::Byte),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| reduce_local(op, elem, &mut acc, &inc).expect("reduce"))
        });
    }
    g.finish();
}

fn main() {
    let mpi = mpicd::init().expect("mpicd init (singleton)");
    let w = mpi.world();
    let mut c = Criterion::default().configure_from_args();
    overhead(&mut c, &w);
    pack_dispatch(&mut c, &w);
    regions(&mut c, &w);
    region_count(&mut c, &w);
    wire_plan(&mut c, &w);
    derived_pack(&mut c);
    reduce(&mut c);
    c.final_summary();
    drop(w);
    mpi.finalize().expect("finalize");
}
