//! Measurements of the bridge's own work without a transport (ignored tests; run with
//! `cargo test --release -p mpicd --lib timing_ -- --ignored --nocapture`): encoding, packing
//! and decoding one double-vec message of 8 MiB, and decoding into objects not in cache.

use super::*;
use crate::custom::PackState;

#[test]
#[ignore]
fn timing_double_vec() {
    use std::time::Instant;
    let v: Vec<Vec<i32>> = (0..8192)
        .map(|i| (0..256).map(|j| i * 256 + j).collect())
        .collect();
    let mut place: Vec<Vec<i32>> = v.iter().map(|x| vec![0; x.len()]).collect();
    let flat: Vec<u8> = vec![1u8; 8 << 20];
    let mut dst: Vec<u8> = vec![0u8; 8 << 20];
    let (mut te, mut td, mut tc, mut tp) = (f64::MAX, f64::MAX, f64::MAX, f64::MAX);
    for _ in 0..30 {
        let t = Instant::now();
        let enc = encode(&v).unwrap();
        te = te.min(t.elapsed().as_secs_f64());
        let mut buf = SerdeBuffer::new();
        buf.packed = enc.bytes.clone();
        buf.expected = buf.packed.len();
        let t = Instant::now();
        let mut parts = enc.into_parts();
        let n = PackState::packed_size(&mut parts).unwrap();
        let mut off = 0u64;
        let mut frag = vec![0u8; 8192];
        while off < n {
            off += parts.pack(off, &mut frag).unwrap() as u64;
        }
        tp = tp.min(t.elapsed().as_secs_f64());
        drop(parts);
        let t = Instant::now();
        buf.decode_into(&mut place).unwrap();
        td = td.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        std::hint::black_box(&mut dst).copy_from_slice(std::hint::black_box(&flat));
        tc = tc.min(t.elapsed().as_secs_f64());
    }
    assert_eq!(place, v);
    eprintln!(
        "encode {:.3} ms, pack {:.3} ms, decode_into {:.3} ms, memcpy {:.3} ms",
        te * 1e3,
        tp * 1e3,
        td * 1e3,
        tc * 1e3
    );
}

#[test]
#[ignore]
fn timing_cold_places() {
    use std::time::Instant;
    const W: usize = 32;
    let v: Vec<Vec<i32>> = (0..8192)
        .map(|i| (0..256).map(|j| i * 256 + j).collect())
        .collect();
    let mut places: Vec<Vec<Vec<i32>>> = (0..W)
        .map(|_| v.iter().map(|x| vec![0; x.len()]).collect())
        .collect();
    let enc = encode(&v).unwrap().bytes;
    for round in 0..3 {
        let t = Instant::now();
        for p in places.iter_mut() {
            let mut b = SerdeBuffer::new();
            b.packed = pool::take(enc.len());
            b.packed.extend_from_slice(&enc);
            b.expected = enc.len();
            b.decode_into(p).unwrap();
        }
        let d = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        for p in places.iter_mut() {
            let mut b = pool::take(enc.len());
            b.extend_from_slice(&enc);
            let mut at = 1 + 2 + 1; // version, outer length varint (8192 = 2 bytes), layout
            for x in p.iter_mut() {
                at += 2 + 1; // inner length varint (256), layout byte
                let n = x.len() * 4;
                crate::datatype::bytes_of_mut(&mut x[..]).copy_from_slice(&b[at..at + n]);
                at += n;
            }
            pool::give(b);
        }
        let c = t.elapsed().as_secs_f64() * 1e3;
        eprintln!("round {round}: {W} x 8 MiB into cold places: decode_into {d:.1} ms, copy + memcpy per vector {c:.1} ms");
    }
    assert_eq!(places[0], v);
}
