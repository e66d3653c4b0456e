//! The serde bridge's raw arrays across ranks: sequences of numbers (`Vec<f64>`, `Vec<u8>`,
//! nested `Vec<Vec<f32>>`, the vectors of a struct beside its strings) travel as little-endian
//! arrays instead of varints. Every case compares the value that arrived with the one sent:
//! sizes from empty to several fragments; a type whose `Serialize` transforms its value arrives
//! transformed; and `isend_serde` sends the value as it was at the call, even when the caller
//! changes or drops it before the send completes.
// mpi-test: ranks=2,4

#[path = "common/mod.rs"]
mod common;

use common::CaseResult;
use mpicd::custom::serde::{Serde, SerdeBuffer};
use mpicd::{Communicator, SerdeExt};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};

fn next_prev(w: &Communicator) -> (i32, i32) {
    let (rank, size) = (w.rank(), w.size());
    ((rank + 1) % size, (rank + size - 1) % size)
}

/// Sends `out` to the next rank (non-blocking send, `isend_serde`) and receives a `U` from the
/// previous one, completed together.
fn exchange<T: Serialize + ?Sized, U: DeserializeOwned>(
    w: &Communicator,
    out: &T,
    tag: i32,
) -> Result<U, Box<dyn std::error::Error>> {
    let (next, prev) = next_prev(w);
    let mut buffer = SerdeBuffer::new();
    mpicd::scope(|s| {
        let r = w.irecv_custom(s, &mut buffer, prev, tag)?;
        mpicd::wait_all(&mut [r, w.isend_serde(out, next, tag)?])
    })?;
    Ok(buffer.decode()?)
}

/// The sizes every array case runs: empty, below and at the raw threshold, across fragments.
const LENGTHS: [usize; 7] = [0, 1, 15, 16, 1000, 300_000, 1 << 21];

fn f64s(seed: i32, n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64 * 0.25 - seed as f64).collect()
}

fn vec_f64(w: &Communicator) -> CaseResult {
    let (_, prev) = next_prev(w);
    for n in LENGTHS {
        let got: Vec<f64> = exchange(w, &f64s(w.rank(), n), 1)?;
        check!(got == f64s(prev, n), "Vec<f64> of {n}");
    }
    // Blocking calls and Serde(&v) through send_custom carry the same encoding; the second
    // round receives into the first round's vector (recv_serde_into).
    let (next, prev) = next_prev(w);
    let v = f64s(w.rank(), 100_000);
    let mut got: Vec<f64> = Vec::new();
    for round in 0..2 {
        let recv = |got: &mut Vec<f64>| -> mpicd::Result<()> {
            if round == 0 {
                *got = w.recv_serde(prev, 2)?;
            } else {
                w.recv_serde_into(got, prev, 2)?;
            }
            Ok(())
        };
        if w.rank() % 2 == 0 {
            if round == 0 {
                w.send_serde(&v, next, 2)?;
            } else {
                w.send_custom(&Serde(&v[..]), next, 2)?;
            }
            recv(&mut got)?;
        } else {
            recv(&mut got)?;
            if round == 0 {
                w.send_serde(&v[..], next, 2)?;
            } else {
                w.send_custom(&Serde(&v), next, 2)?;
            }
        }
        check!(got == f64s(prev, 100_000), "round {round}");
    }
    Ok(())
}

fn vec_u8(w: &Communicator) -> CaseResult {
    let (_, prev) = next_prev(w);
    for n in LENGTHS {
        let got: Vec<u8> = exchange(w, &common::pattern(w.rank() as u64, n), 3)?;
        check!(got == common::pattern(prev as u64, n), "Vec<u8> of {n}");
    }
    Ok(())
}

fn nested(seed: i32, rows: usize) -> Vec<Vec<f32>> {
    (0..rows)
        .map(|r| {
            (0..(r * 37) % 700)
                .map(|i| (i as i32 * seed) as f32 / 7.0)
                .collect()
        })
        .collect()
}

fn nested_vectors(w: &Communicator) -> CaseResult {
    let (_, prev) = next_prev(w);
    for rows in [0, 1, 20, 3000] {
        let got: Vec<Vec<f32>> = exchange(w, &nested(w.rank() + 1, rows), 4)?;
        check!(got == nested(prev + 1, rows), "{rows} rows");
    }
    Ok(())
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Sample {
    name: String,
    tags: Vec<String>,
    values: Vec<f64>,
    ids: Vec<u64>,
    bytes: Vec<u8>,
    image: Vec<Vec<u16>>,
    empty: Vec<i32>,
    unit: Option<String>,
}

fn sample(seed: u64, n: usize) -> Sample {
    Sample {
        name: format!("sample {seed} ✓"),
        tags: (0..20).map(|i| format!("t{}", i * seed)).collect(),
        values: (0..n).map(|i| (i as f64).sqrt() * seed as f64).collect(),
        ids: (0..n as u64 / 2)
            .map(|i| i.wrapping_mul(u64::MAX / 3 + seed))
            .collect(),
        bytes: common::pattern(seed, n / 3),
        image: (0..64)
            .map(|r| vec![r as u16 ^ seed as u16; n / 64])
            .collect(),
        empty: Vec::new(),
        unit: (seed % 2 == 0).then(|| "even".into()),
    }
}

fn mixed_struct(w: &Communicator) -> CaseResult {
    let (_, prev) = next_prev(w);
    for n in [0, 100, 200_000] {
        let got: Sample = exchange(w, &sample(w.rank() as u64, n), 5)?;
        check!(got == sample(prev as u64, n), "Sample with {n} values");
    }
    Ok(())
}

/// Serializes as ten times its value plus one (the raw array holds what `Serialize` gave, not
/// the bytes in memory).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Scaled(i64);

impl Serialize for Scaled {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(self.0 * 10 + 1)
    }
}

fn transformed_values(w: &Communicator) -> CaseResult {
    let (_, prev) = next_prev(w);
    for n in [5, 16, 100_000] {
        let out: Vec<Scaled> = (0..n as i64).map(|i| Scaled(i - w.rank() as i64)).collect();
        let got: Vec<i64> = exchange(w, &out, 6)?;
        let want: Vec<i64> = (0..n as i64).map(|i| (i - prev as i64) * 10 + 1).collect();
        check!(got == want, "{n} transformed values");
    }
    Ok(())
}

fn isend_then_change_or_drop(w: &Communicator) -> CaseResult {
    let (next, prev) = next_prev(w);
    let n = 1 << 20;
    let mut buffers: Vec<SerdeBuffer> = (0..4).map(|_| SerdeBuffer::new()).collect();
    mpicd::scope(|s| {
        let mut reqs = Vec::new();
        for b in buffers.iter_mut() {
            reqs.push(w.irecv_custom(s, b, prev, 7)?);
        }
        // Changed in place, grown (its buffer moves), and dropped right after each call.
        let mut v = f64s(w.rank(), n);
        reqs.push(w.isend_serde(&v, next, 7)?);
        v.iter_mut().for_each(|x| *x = -1.0);
        reqs.push(w.isend_serde(&v, next, 7)?);
        v.extend(f64s(0, 3 * n));
        v.truncate(10);
        v.shrink_to_fit();
        let bytes = common::pattern(w.rank() as u64, n);
        reqs.push(w.isend_serde(&bytes, next, 7)?);
        drop(bytes);
        let nested = nested(w.rank() + 1, 2000);
        reqs.push(w.isend_serde(&nested, next, 7)?);
        drop(nested);
        let _garbage: Vec<Vec<u8>> = (0..64).map(|i| vec![i as u8; 1 << 16]).collect();
        mpicd::wait_all(&mut reqs)
    })?;
    let first: Vec<f64> = buffers[0].decode()?;
    check!(
        first == f64s(prev, n),
        "the value as it was at the first call"
    );
    let second: Vec<f64> = buffers[1].decode()?;
    check!(
        second == vec![-1.0; n],
        "the value as it was at the second call"
    );
    let bytes: Vec<u8> = buffers[2].decode()?;
    check!(
        bytes == common::pattern(prev as u64, n),
        "the dropped bytes"
    );
    let rows: Vec<Vec<f32>> = buffers[3].decode()?;
    check!(rows == nested(prev + 1, 2000), "the dropped nested vectors");
    Ok(())
}

fn main() {
    common::main(&[
        ("Vec<f64>, empty to 16 MiB", &vec_f64),
        ("Vec<u8>, empty to 2 MiB", &vec_u8),
        ("nested Vec<Vec<f32>>", &nested_vectors),
        ("a struct of strings and vectors", &mixed_struct),
        ("a Serialize that transforms its value", &transformed_values),
        (
            "isend_serde, then the value changed or dropped",
            &isend_then_change_or_drop,
        ),
    ])
}
