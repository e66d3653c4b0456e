//! The paper's Rust evaluation (section V.A) on mpicd: OSU-style latency (ping-pong: warm-up,
//! then timed round trips; half a round trip reported) and bandwidth (a window of 64 non-blocking
//! sends, then a 4-byte acknowledgement) of the double-vec, struct-vec, struct-simple and
//! struct-simple-no-gap types, message sizes in powers of two, for the methods
//!
//! - `custom`: the custom datatype engine (scalars packed by a callback, arrays as regions);
//! - `packed`: manual packing into a byte buffer, one contiguous message, manual unpacking;
//! - `serde`: the serde bridge (`send_serde`/`isend_serde`, received into the same object
//!   each time with `recv_serde_into`/`decode_into`, as `custom` receives);
//! - `serde-region` (double-vec): the serde bridge with each sub-vector a `Region`;
//! - `bytes`: one contiguous message of the same payload, nothing to pack (mpicd's limit);
//!
//! interleaved size by size, so that the machine's noise falls on all of them alike. Every
//! method's received data is checked against the test pattern at every size (the receivers are
//! zeroed first). The `memory` test measures the peak RSS (VmHWM) that one custom exchange adds
//! on each rank, beside a contiguous exchange of the same size and the engine's bound.
//!
//! Usage: datatypes -k KIND -t latency|bandwidth|memory [-m METHOD,...] [--min BYTES]
//!        [--max BYTES] [-s SUBVEC_BYTES] [--smoke] [--target SECS] [--reps N]
//! Output: `RESULT <method> <kind>.<test> <bytes> <value>` with value in µs (latency), MB/s
//! (bandwidth, MB = 1e6 bytes of payload: the structs' gaps are not counted) or bytes (memory).
//! Run on 2 ranks.

use mpicd::custom::serde::SerdeBuffer;
use mpicd::{Communicator, CustomConfig, Error, Request, Result, SerdeExt};
use mpicd_bench::messages::{
    double_vec, BenchMessage, StructSimple, StructSimpleNoGap, StructVec, Structs,
};
use mpicd_bench::shared::{
    flag, kind_and_test, option, peak_rss, report, reset_peak_rss, run_sizes, secs, value, Kind,
    Schedule, SUBVEC_BYTES, WINDOW,
};
use std::time::Instant;

const TAG: i32 = 1;
const ACK: i32 = 2;
const AGREE: i32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    Custom,
    Packed,
    Serde,
    SerdeRegion,
    Bytes,
}

impl Method {
    fn parse(s: &str) -> Option<Method> {
        Some(match s {
            "custom" => Method::Custom,
            "packed" => Method::Packed,
            "serde" => Method::Serde,
            "serde-region" => Method::SerdeRegion,
            "bytes" => Method::Bytes,
            _ => return None,
        })
    }
    fn name(self) -> &'static str {
        match self {
            Method::Custom => "custom",
            Method::Packed => "packed",
            Method::Serde => "serde",
            Method::SerdeRegion => "serde-region",
            Method::Bytes => "bytes",
        }
    }
}

/// Everything one (method, size) measurement needs on one rank.
struct Bench<'w, M: BenchMessage> {
    w: &'w Communicator,
    peer: i32,
    method: Method,
    /// The message (the test pattern), on both ranks: rank 0 sends it; rank 1 compares with it.
    msg: M,
    alt: Option<M::Alt>,
    /// Receive objects: one for the ping-pong, WINDOW for the bandwidth window.
    recv: Vec<M>,
    alt_recv: Vec<Option<M::Alt>>,
    /// Byte buffers: packed messages (send side) and received ones.
    send_bufs: Vec<Vec<u8>>,
    recv_bufs: Vec<Vec<u8>>,
    /// The `bytes` method's payload (a test pattern of its own).
    payload: Vec<u8>,
}

fn byte_pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| value(i) as u8).collect()
}

fn check(ok: bool, what: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "verification failed: {what}"
        )))
    }
}

impl<'w, M: BenchMessage> Bench<'w, M> {
    /// `sends` and `recvs`: how many messages this rank has in flight in each direction (1 and 1
    /// for the ping-pong; WINDOW and 0, or 0 and WINDOW, for the bandwidth window).
    fn new(
        w: &'w Communicator,
        method: Method,
        msg: M,
        payload: usize,
        sends: usize,
        recvs: usize,
    ) -> Self {
        let alt = if method == Method::SerdeRegion {
            msg.alt()
        } else {
            None
        };
        let slots = recvs.max(1);
        let (send_bufs, recv_bufs) = match method {
            Method::Packed => (
                vec![Vec::new(); sends],
                vec![vec![0u8; msg.packed_len()]; recvs],
            ),
            Method::Bytes => (Vec::new(), vec![vec![0u8; payload]; recvs]),
            _ => (Vec::new(), Vec::new()),
        };
        Bench {
            w,
            peer: 1 - w.rank(),
            method,
            recv: (0..slots).map(|_| msg.blank()).collect(),
            alt_recv: (0..slots).map(|_| None).collect(),
            alt,
            send_bufs,
            recv_bufs,
            payload: if method == Method::Bytes {
                byte_pattern(payload)
            } else {
                Vec::new()
            },
            msg,
        }
    }

    /// Zeroes the receive side before a verified exchange.
    fn clear(&mut self) {
        for r in &mut self.recv {
            *r = self.msg.blank();
        }
        for a in &mut self.alt_recv {
            *a = None;
        }
        for b in &mut self.recv_bufs {
            b.fill(0);
        }
    }

    /// Whether receive slot `k` holds the message.
    fn received_ok(&self, k: usize) -> bool {
        match self.method {
            Method::SerdeRegion => self.alt_recv[k].is_some() && self.alt_recv[k] == self.alt,
            Method::Bytes => self.recv_bufs[k] == self.payload,
            _ => self.recv[k] == self.msg,
        }
    }

    // ----- blocking send and receive of one message (the ping-pong) -----

    /// Sends the message (rank 0) or what slot 0 received (rank 1).
    fn send_one(&mut self) -> Result<()> {
        let (w, peer) = (self.w, self.peer);
        let echo = w.rank() == 1;
        match self.method {
            Method::Custom => {
                let m = if echo { &self.recv[0] } else { &self.msg };
                w.send_custom(m, peer, TAG)
            }
            Method::Packed => {
                let m = if echo { &self.recv[0] } else { &self.msg };
                m.pack(&mut self.send_bufs[0]);
                w.send(&self.send_bufs[0][..], peer, TAG)
            }
            Method::Serde => {
                let m = if echo { &self.recv[0] } else { &self.msg };
                w.send_serde(m, peer, TAG)
            }
            Method::SerdeRegion => {
                let m = if echo { &self.alt_recv[0] } else { &self.alt };
                w.send_serde(m.as_ref().expect("serde-region form"), peer, TAG)
            }
            Method::Bytes => {
                let b = if echo {
                    &self.recv_bufs[0]
                } else {
                    &self.payload
                };
                w.send(&b[..], peer, TAG)
            }
        }
    }

    /// Receives into slot 0.
    fn recv_one(&mut self) -> Result<()> {
        let (w, peer) = (self.w, self.peer);
        match self.method {
            Method::Custom => w.recv_custom(&mut self.recv[0], peer, TAG).map(drop),
            Method::Packed => {
                w.recv(&mut self.recv_bufs[0][..], peer, TAG)?;
                check(self.recv[0].unpack(&self.recv_bufs[0]), "unpack")
            }
            Method::Serde => w.recv_serde_into(&mut self.recv[0], peer, TAG).map(drop),
            Method::SerdeRegion => {
                self.alt_recv[0] = Some(w.recv_serde(peer, TAG)?);
                Ok(())
            }
            Method::Bytes => w.recv(&mut self.recv_bufs[0][..], peer, TAG).map(drop),
        }
    }

    fn round_trip(&mut self) -> Result<()> {
        if self.w.rank() == 0 {
            self.send_one()?;
            self.recv_one()
        } else {
            self.recv_one()?;
            self.send_one()
        }
    }

    // ----- the bandwidth window -----

    /// Rank 0: WINDOW non-blocking sends of the message, then the acknowledgement.
    fn send_window(&mut self) -> Result<()> {
        let (w, peer) = (self.w, self.peer);
        let (method, msg, send_bufs) = (self.method, &self.msg, &mut self.send_bufs);
        let (alt, payload) = (self.alt.as_ref(), &self.payload);
        mpicd::scope(|s| {
            let mut reqs: Vec<Request<'_>> = Vec::with_capacity(WINDOW);
            match method {
                Method::Custom => {
                    for _ in 0..WINDOW {
                        reqs.push(w.isend_custom(s, msg, peer, TAG)?);
                    }
                }
                Method::Packed => {
                    // Pack one message, start its send, pack the next: packing overlaps the
                    // sends.
                    for buf in send_bufs.iter_mut() {
                        msg.pack(buf);
                        let buf: &Vec<u8> = buf;
                        reqs.push(w.isend(s, &buf[..], peer, TAG)?);
                    }
                }
                Method::Serde => {
                    for _ in 0..WINDOW {
                        reqs.push(w.isend_serde(msg, peer, TAG)?);
                    }
                }
                Method::SerdeRegion => {
                    let alt = alt.expect("serde-region form");
                    for _ in 0..WINDOW {
                        reqs.push(w.isend_serde(alt, peer, TAG)?);
                    }
                }
                Method::Bytes => {
                    for _ in 0..WINDOW {
                        reqs.push(w.isend(s, &payload[..], peer, TAG)?);
                    }
                }
            }
            mpicd::wait_all(&mut reqs)
        })?;
        let mut ack = [0u8; 4];
        w.recv(&mut ack, peer, ACK).map(drop)
    }

    /// Rank 1: WINDOW non-blocking receives into distinct objects, each finished (unpacked or
    /// decoded) as soon as it is complete, in order; then the acknowledgement.
    fn recv_window(&mut self) -> Result<()> {
        let (w, peer) = (self.w, self.peer);
        match self.method {
            Method::Custom => {
                let recv = &mut self.recv;
                mpicd::scope(|s| {
                    let mut reqs = recv
                        .iter_mut()
                        .map(|r| w.irecv_custom(s, r, peer, TAG))
                        .collect::<Result<Vec<_>>>()?;
                    mpicd::wait_all(&mut reqs)
                })?;
            }
            Method::Packed | Method::Bytes => {
                let mut reqs = Vec::with_capacity(WINDOW);
                for b in self.recv_bufs.iter_mut() {
                    // SAFETY: each buffer outlives its request (all are waited for below or
                    // dropped, which waits, before the buffers are touched again).
                    reqs.push(unsafe { w.irecv_raw(b.as_mut_ptr(), b.len(), peer, TAG)? });
                }
                for (k, req) in reqs.into_iter().enumerate() {
                    req.wait()?;
                    if self.method == Method::Packed {
                        check(self.recv[k].unpack(&self.recv_bufs[k]), "unpack")?;
                    }
                }
            }
            Method::Serde | Method::SerdeRegion => {
                let mut bufs: Vec<SerdeBuffer> = (0..WINDOW).map(|_| SerdeBuffer::new()).collect();
                let base = bufs.as_mut_ptr();
                let (method, recv, alt_recv) = (self.method, &mut self.recv, &mut self.alt_recv);
                mpicd::scope(|s| {
                    let mut reqs = Vec::with_capacity(WINDOW);
                    for k in 0..WINDOW {
                        // SAFETY: distinct elements of `bufs`, which outlives the scope; each
                        // is touched again only after its request completed.
                        reqs.push(w.irecv_custom(s, unsafe { &mut *base.add(k) }, peer, TAG)?);
                    }
                    for (k, req) in reqs.into_iter().enumerate() {
                        req.wait()?;
                        // SAFETY: the receive into this element is complete (its state, which
                        // borrowed the element, is gone).
                        let buf = unsafe { &mut *base.add(k) };
                        if method == Method::Serde {
                            // Into the same object each time, as the custom method receives.
                            buf.decode_into(&mut recv[k])?;
                        } else {
                            alt_recv[k] = Some(buf.decode()?);
                        }
                    }
                    Ok::<_, mpicd::Error>(())
                })?;
            }
        }
        w.send(&[0u8; 4], peer, ACK)
    }

    fn window(&mut self) -> Result<()> {
        if self.w.rank() == 0 {
            self.send_window()
        } else {
            self.recv_window()
        }
    }
}

/// Rank 0's iteration count, given to rank 1.
fn agree(w: &Communicator, n: usize) -> Result<usize> {
    let mut v = [n as u64];
    if w.rank() == 0 {
        w.send(&v, 1, AGREE)?;
    } else {
        w.recv(&mut v, 0, AGREE)?;
    }
    Ok(v[0] as usize)
}

fn timed(mut f: impl FnMut() -> Result<()>, n: usize) -> Result<f64> {
    let start = Instant::now();
    for _ in 0..n {
        f()?;
    }
    Ok(secs(start))
}

/// Latency of one method at one size: µs for half a round trip, after a verified round trip.
fn latency<M: BenchMessage>(b: &mut Bench<'_, M>, schedule: &Schedule) -> Result<f64> {
    let w = b.w;
    let per = schedule.measure(|n| timed(|| b.round_trip(), n), |n| agree(w, n))?;
    b.clear();
    b.round_trip()?;
    check(b.received_ok(0), "ping-pong")?;
    Ok(per * 1e6 / 2.0)
}

/// Bandwidth of one method at one size (MB/s of payload), after a verified window.
fn bandwidth<M: BenchMessage>(
    b: &mut Bench<'_, M>,
    schedule: &Schedule,
    payload: usize,
) -> Result<f64> {
    let w = b.w;
    let per = schedule.measure(|n| timed(|| b.window(), n), |n| agree(w, n))?;
    b.clear();
    b.window()?;
    if w.rank() == 1 {
        for k in 0..WINDOW {
            check(b.received_ok(k), "bandwidth window")?;
        }
    }
    Ok((WINDOW * payload) as f64 / per / 1e6)
}

/// The extra peak RSS of a few round trips of `method` at this size, on this rank. One round
/// trip first touches the objects (a zeroed vector is not resident until written), then the
/// peak is reset to the current RSS and three more round trips are measured. Run it with
/// `MALLOC_MMAP_THRESHOLD_=65536` (bench/run-all.sh does): glibc then maps every allocation of
/// 64 KiB or more afresh and unmaps it when freed, so buffers freed by the first round trip are
/// not silently reused from the heap and the engine's large allocations are all counted.
fn memory<M: BenchMessage>(b: &mut Bench<'_, M>) -> Result<Option<usize>> {
    agree(b.w, 0)?;
    b.round_trip()?;
    agree(b.w, 0)?;
    if !reset_peak_rss() {
        return Ok(None);
    }
    let before = peak_rss().unwrap_or(0);
    for _ in 0..3 {
        b.round_trip()?;
    }
    let after = peak_rss().unwrap_or(0);
    check(b.received_ok(0), "memory round trip")?;
    Ok(Some(after.saturating_sub(before)))
}

struct Options {
    kind: Kind,
    test: String,
    methods: Vec<Method>,
    sizes: Vec<usize>,
    subvec: usize,
    schedule: Schedule,
}

/// Runs the test for every size and method of a kind whose messages `make` builds.
fn run_kind<M: BenchMessage>(
    w: &Communicator,
    o: &Options,
    make: impl Fn(usize) -> M,
) -> Result<()> {
    let kind = o.kind.name();
    let config = CustomConfig::from_env()?;
    for &size in &o.sizes {
        let payload = o.kind.payload(size);
        if o.test == "memory" && w.rank() == 0 {
            // The engine's bound for this message: its fixed part plus its region list.
            let bound = config.memory_bound_for(&make(size).parts()?.shape());
            report("bound", &format!("{kind}.memory"), size, bound as f64);
        }
        for &method in &o.methods {
            let (sends, recvs) = match (o.test.as_str(), w.rank()) {
                ("bandwidth", 0) => (WINDOW, 0),
                ("bandwidth", _) => (0, WINDOW),
                _ => (1, 1),
            };
            let mut b = Bench::new(w, method, make(size), payload, sends, recvs);
            let name = method.name();
            match o.test.as_str() {
                "latency" => {
                    let v = latency(&mut b, &o.schedule)?;
                    if w.rank() == 0 {
                        report(name, &format!("{kind}.latency"), size, v);
                    }
                }
                "bandwidth" => {
                    let v = bandwidth(&mut b, &o.schedule, payload)?;
                    if w.rank() == 0 {
                        report(name, &format!("{kind}.bandwidth"), size, v);
                    }
                }
                _ => {
                    let mine = memory(&mut b)?;
                    let mut theirs = [mine.unwrap_or(0) as u64];
                    if w.rank() == 1 {
                        w.send(&theirs, 0, AGREE)?;
                    } else {
                        w.recv(&mut theirs, 1, AGREE)?;
                        if let Some(m) = mine {
                            report(name, &format!("{kind}.memory-rank0"), size, m as f64);
                            report(
                                name,
                                &format!("{kind}.memory-rank1"),
                                size,
                                theirs[0] as f64,
                            );
                            let peak = m.max(theirs[0] as usize);
                            report(name, &format!("{kind}.memory"), size, peak as f64);
                        } else {
                            eprintln!("memory: /proc/self/clear_refs not writable; no result");
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (kind, test) = kind_and_test(&args, &["latency", "bandwidth", "memory"]);
    let smoke = flag(&args, "--smoke");
    let default_methods = match (kind, test.as_str()) {
        (_, "memory") => "custom,bytes",
        (Kind::DoubleVec, _) => "custom,packed,serde,serde-region,bytes",
        _ => "custom,packed,serde,bytes",
    };
    let methods: Vec<Method> = option(&args, "-m", default_methods.to_string())
        .split(',')
        .map(|m| {
            Method::parse(m).unwrap_or_else(|| {
                eprintln!("unknown method {m}");
                std::process::exit(2)
            })
        })
        .filter(|m| *m != Method::SerdeRegion || kind == Kind::DoubleVec)
        .collect();
    let default_max = match test.as_str() {
        "latency" => 4 << 20,
        "bandwidth" => 8 << 20,
        _ => 64 << 20,
    };
    let o = Options {
        kind,
        sizes: run_sizes(&args, kind, smoke, default_max),
        subvec: option(&args, "-s", SUBVEC_BYTES),
        schedule: Schedule::of_test(&args, &test, smoke),
        test,
        methods,
    };

    let mpi = mpicd::init().expect("mpicd init");
    let w = mpi.world();
    if w.size() != 2 {
        eprintln!("datatypes needs exactly 2 ranks (got {})", w.size());
        std::process::exit(2);
    }
    // Connect and warm up the path before any measurement (and before memory baselines).
    let warm = vec![1u8; 64];
    let mut warm_in = vec![0u8; 64];
    let peer = 1 - w.rank();
    w.sendrecv(&warm, peer, 9, &mut warm_in, peer, 9)
        .expect("warm-up");

    let subvec = o.subvec;
    let result = match kind {
        Kind::DoubleVec => run_kind(&w, &o, |size| double_vec(size, subvec)),
        Kind::StructVec => run_kind(&w, &o, |size| {
            Structs::<StructVec>::pattern(kind.count(size))
        }),
        Kind::StructSimple => run_kind(&w, &o, |size| {
            Structs::<StructSimple>::pattern(kind.count(size))
        }),
        Kind::StructSimpleNoGap => run_kind(&w, &o, |size| {
            Structs::<StructSimpleNoGap>::pattern(kind.count(size))
        }),
    };
    if let Err(e) = result {
        let (name, rank) = (kind.name(), w.rank());
        eprintln!("datatypes {name} {} on rank {rank}: {e}", o.test);
        let _ = mpi.abort(1, "benchmark failed");
        std::process::exit(1);
    }
    mpi.finalize().expect("finalize");
}
