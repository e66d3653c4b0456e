//! The custom serialization datatype across ranks: pack-only, region-only and mixed types, partial
//! pack callbacks and odd fragment boundaries, empty messages, thousands of small regions, dynamic
//! receives, matched probes, wildcards, many operations in flight, self-sends, callback failures on
//! either side, truncation, the lifetime of per-operation state, and receives of the wrong kind
//! (a contiguous receive of a custom message and the reverse: a type error, the sender
//! completes, the order of the two kinds is kept). Every case checks the data that arrived.
//!
//! The engine is configured with small, odd sizes (set below before `mpicd::init`, unless already
//! set in the environment) so that messages of a few hundred KiB cross many fragment boundaries;
//! `mpi_custom_memory` and `mpi_serde` exercise the default 256 KiB fragments.
// mpi-test: ranks=2,4 modes=shm,tcp,remote

#[macro_use]
#[path = "../common/mod.rs"]
mod common;
mod data;
mod failures;
mod mismatch;
mod states;
mod types;

use common::CaseResult;
use data::*;
use failures::*;
use mismatch::*;
use mpicd::{Communicator, CustomRecv, CustomSend, Error, Request, Scope};
use types::{gen_vec, ragged, Collected, Generated};

/// A named test case, as `common::run` takes them.
type Case<'a> = (&'a str, &'a dyn Fn(&Communicator) -> CaseResult);

// ----- configuration -----

/// Stream bytes in the lead message used by this program, also when a body follows: small and
/// odd, so that the lead's end, and with it UCX's fragment boundaries in the body message, fall
/// at odd offsets.
const TEST_ENV: &[(&str, &str)] = &[("MPICD_INLINE_BYTES", "777"), ("MPICD_INLINE_SPLIT", "777")];

/// The step between the stream offsets [`stream_point`] names: odd, so that points fall
/// everywhere relative to UCX's fragments of the body.
const STEP: usize = 4099;

fn config() -> mpicd::CustomConfig {
    mpicd::CustomConfig::from_env().expect("MPICD_* configuration")
}

/// Stream offset `i` steps into the body (0 is the body's first byte, just after the lead).
fn stream_point(i: u64) -> u64 {
    config().inline_bytes as u64 + i * STEP as u64
}

fn next_prev(w: &Communicator) -> (i32, i32) {
    let (rank, size) = (w.rank(), w.size());
    ((rank + 1) % size, (rank + size - 1) % size)
}

// ----- helpers -----

/// The outcome of one operation.
type Outcome = mpicd::Result<mpicd::Status>;

/// Waits for all and returns each outcome (wait_all stops at the first error). Requests are
/// completed together: waiting on one while another of this process must progress could hang.
fn wait_each(mut reqs: Vec<Request<'_>>) -> Vec<Outcome> {
    let mut out: Vec<Outcome> = (0..reqs.len())
        .map(|_| Err(Error::InvalidRequest))
        .collect();
    while !reqs.iter().all(Request::is_inactive) {
        match mpicd::wait_some(&mut reqs) {
            Ok(done) => {
                for (i, outcome) in done {
                    out[i] = outcome;
                }
            }
            Err(e) => {
                out.iter_mut().for_each(|o| *o = Err(e.clone()));
                break;
            }
        }
    }
    out
}

/// Starts a receive and a send in one scope (`post` gives their requests, the receive first)
/// and completes them together: their outcomes.
fn pair<'a>(
    post: impl for<'s> FnOnce(&'s Scope<'a>) -> mpicd::Result<[Request<'s>; 2]>,
) -> mpicd::Result<Vec<Outcome>> {
    mpicd::scope(|s| Ok(wait_each(post(s)?.into())))
}

/// Receives a custom value from `prev` into `inc` while sending `out` to `next`, both
/// non-blocking and completed together: the outcomes, the receive's first.
fn exchange_each<S: CustomSend + ?Sized, R: CustomRecv + ?Sized>(
    w: &Communicator,
    out: &S,
    inc: &mut R,
    tag: i32,
) -> mpicd::Result<Vec<Outcome>> {
    let (next, prev) = next_prev(w);
    pair(|s| {
        Ok([
            w.irecv_custom(s, inc, prev, tag)?,
            w.isend_custom(s, out, next, tag)?,
        ])
    })
}

/// Exchanges `ragged(rank + seed, lens)` around the ring, received into `inc` (which a
/// dynamic receive resizes): the receive's status, and whether `ragged(prev + seed, lens)`
/// arrived.
fn ragged_exchange(
    w: &Communicator,
    seed: u64,
    lens: &[usize],
    inc: &mut Vec<Vec<i32>>,
    tag: i32,
) -> mpicd::Result<(mpicd::Status, bool)> {
    let (_, prev) = next_prev(w);
    let st = exchange(w, &ragged(w.rank() as u64 + seed, lens), inc, tag)?;
    Ok((st, *inc == ragged(prev as u64 + seed, lens)))
}

/// Checks that the receive of a pair (see [`pair`]) on `tag` was truncated, naming the message
/// it matched (the previous rank's), and that its send succeeded.
fn check_truncated(w: &Communicator, tag: i32, outcome: &[Outcome], what: &str) -> CaseResult {
    let (_, prev) = next_prev(w);
    let matched = Some(mpicd::Envelope { source: prev, tag });
    check!(
        matches!(&outcome[0], Err(Error::Truncated { matched: m, .. }) if *m == matched),
        "{what} got {:?}",
        outcome[0]
    );
    check!(outcome[1].is_ok(), "sender got {:?}", outcome[1]);
    Ok(())
}

/// [`exchange_each`] that fails with the first error: the receive's status.
fn exchange<S: CustomSend + ?Sized, R: CustomRecv + ?Sized>(
    w: &Communicator,
    out: &S,
    inc: &mut R,
    tag: i32,
) -> mpicd::Result<mpicd::Status> {
    let mut outcome = exchange_each(w, out, inc, tag)?.into_iter();
    let received = outcome.next().unwrap_or(Err(Error::InvalidRequest))?;
    outcome.next().unwrap_or(Err(Error::InvalidRequest))?;
    Ok(received)
}

/// After a failed exchange, a plain custom message on the same tag must arrive intact.
fn follow_up_arrives(w: &Communicator, tag: i32, seed: u64) -> CaseResult {
    let (_, prev) = next_prev(w);
    let out = Generated::new(seed * 16 + w.rank() as u64, 3000);
    let mut inc = Collected::with_capacity(3000);
    let st = exchange(w, &out, &mut inc, tag)?;
    check!(
        st.source == prev && st.bytes == Some(3000),
        "follow-up status {st:?}"
    );
    check!(
        inc.data == gen_vec(seed * 16 + prev as u64, 3000),
        "follow-up message on tag {tag} damaged"
    );
    Ok(())
}

fn main() {
    for (name, value) in TEST_ENV {
        if std::env::var_os(name).is_none() {
            std::env::set_var(name, value);
        }
    }
    let mpi = mpicd::init().expect("init");
    let world = mpi.world();
    if world.rank() == 0 {
        println!("  custom config: {:?}", config());
    }
    let cases: Vec<Case> = vec![
        (
            "pack-only, partial packs, odd fragment boundaries",
            &pack_only,
        ),
        ("region-only (coalesced and zero-copy)", &region_only),
        (
            "receiver regions longer than the sender's",
            &receiver_regions_longer,
        ),
        ("mixed: struct-vec records", &mixed_struct_vec),
        (
            "3000 regions of mixed sizes and a 5 MiB one",
            &regions_in_many_steps,
        ),
        ("empty message", &empty_message),
        (
            "thousands of small regions, small and large mixed",
            &many_small_regions,
        ),
        (
            "zero-copy regions beyond the window, fixed-shape receives",
            &zero_copy_window,
        ),
        ("dynamic Vec<Vec<i32>> receive", &dynamic_vec_vec),
        ("matched probe reports the shape", &matched_probe_shape),
        ("ANY_SOURCE custom receives", &any_source),
        ("32 custom operations in flight", &many_in_flight),
        ("custom send to self", &to_self),
        ("custom exchange in a ring", &ring_exchange),
        (
            "sender callback fails before data",
            &sender_fails_before_data,
        ),
        (
            "sender callback fails after data flowed",
            &sender_fails_after_data,
        ),
        ("receiver callback fails", &receiver_fails),
        ("truncation never writes past the buffers", &truncation),
        ("state made and freed once per operation", &state_freed_once),
        (
            "independent progress of custom operations",
            &independent_progress,
        ),
        (
            "contiguous receive of a custom message: type error, sender completes",
            &contiguous_receive_of_custom,
        ),
        (
            "custom receive of a contiguous message: type error",
            &custom_receive_of_contiguous,
        ),
        (
            "contiguous and custom messages keep their order",
            &kinds_keep_their_order,
        ),
        (
            "matched receive of the wrong kind: type error",
            &matched_kind_mismatch,
        ),
        (
            "a mismatched receive drains without being waited on",
            &mismatch_progresses_independently,
        ),
    ];
    let ok = common::run(&world, &cases);
    common::finish(mpi, ok)
}
