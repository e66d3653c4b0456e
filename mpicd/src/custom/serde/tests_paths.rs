//! Tests of the bridge's fast paths, without a transport: raw arrays of every number kind
//! through the size-specialised encoder and decoder (fresh and in place, every length around
//! the thresholds, nested), the packed part received in order only, and the spare vectors of
//! dropped regions.

use super::tests::{arrived, received};
use super::*;
use crate::custom::parts::RecvAdapter;
use crate::custom::{RegionShape, UnpackState};
use crate::datatype::ElementType;
use ::serde::{Deserialize, Serialize};
use std::fmt::Debug;

/// Lengths around the raw-array threshold, odd ones, and more than one encoder run.
fn lengths<T>() -> Vec<usize> {
    let run = ser::RAW_RUN_BYTES / std::mem::size_of::<T>();
    vec![
        0,
        1,
        15,
        16,
        17,
        31,
        257,
        1001,
        run - 1,
        run,
        run + 1,
        2 * run + 3,
    ]
}

/// `Vec<T>` of `len` values from `make`, through the bridge fresh and in place (into a vector
/// of another length, and of the same length), and nested in a `Vec<Vec<T>>`.
fn round_trips<T>(make: impl Fn(usize) -> T)
where
    T: Serialize + for<'de> Deserialize<'de> + PartialEq + Debug + Clone,
{
    for len in lengths::<T>() {
        let v: Vec<T> = (0..len).map(&make).collect();
        let back: Vec<T> = received(&v).unwrap().decode().unwrap();
        assert_eq!(back, v, "fresh, {len} elements");
        for start in [len / 2 + 3, len] {
            let mut place: Vec<T> = (0..start).map(|i| make(i + 7)).collect();
            received(&v).unwrap().decode_into(&mut place).unwrap();
            assert_eq!(place, v, "in place from {start}, {len} elements");
        }
    }
    let nested: Vec<Vec<T>> = [0, 16, 3, 40, 0, 17]
        .iter()
        .map(|&n| (0..n).map(&make).collect())
        .collect();
    let back: Vec<Vec<T>> = received(&nested).unwrap().decode().unwrap();
    assert_eq!(back, nested);
    let mut place: Vec<Vec<T>> = vec![vec![make(1); 5]; 2];
    received(&nested).unwrap().decode_into(&mut place).unwrap();
    assert_eq!(place, nested);
}

#[test]
fn raw_arrays_of_every_kind_round_trip() {
    round_trips(|i| i as u8 ^ 0xa5);
    round_trips(|i| (i as i8).wrapping_mul(-3));
    round_trips(|i| (i as u16).wrapping_mul(40503));
    round_trips(|i| (i as i16).wrapping_mul(-12345));
    round_trips(|i| (i as u32).wrapping_mul(2654435761));
    round_trips(|i| (i as i32).wrapping_mul(-1640531535));
    round_trips(|i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    round_trips(|i| (i as i64).wrapping_mul(-0x61c8_8646_80b5_83eb));
    round_trips(|i| i as f32 * -0.5 + 0.25);
    round_trips(|i| i as f64 * 1e-3 - 7.0);
}

#[test]
fn raw_array_read_as_another_number_type_converts() {
    // Numbers read as a wider type (serde's conversions, range-checked); out of range fails.
    let small: Vec<u8> = (0..40).collect();
    let wide: Vec<u64> = received(&small).unwrap().decode().unwrap();
    assert_eq!(wide, (0..40).collect::<Vec<u64>>());
    let big: Vec<u32> = vec![300; 20];
    assert!(received(&big).unwrap().decode::<Vec<u8>>().is_err());
}

/// A number, or something else, as the elements of one sequence.
#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
#[serde(untagged)]
enum NumberOrText {
    Number(u8),
    Text(String),
}

#[test]
fn a_layout_change_after_a_whole_run_rewrites_it() {
    // More numbers than one encoder run, then a string: the raw array so far is rewritten in
    // postcard's encoding (untagged enums serialize as their content).
    let run = ser::RAW_RUN_BYTES;
    let mut v: Vec<NumberOrText> = (0..run + 5)
        .map(|i| NumberOrText::Number(i as u8))
        .collect();
    v.push(NumberOrText::Text("end".into()));
    let bytes = encode(&v).unwrap().bytes;
    let layout_at = 1 + postcard::to_allocvec(&(v.len() as u64)).unwrap().len();
    assert_eq!(bytes[layout_at], format::ENCODED);
}

#[test]
fn the_packed_part_is_received_in_order_and_whole() {
    let v: Vec<f64> = (0..1000).map(|i| i as f64).collect();
    let sent = encode(&v).unwrap();
    let bytes = sent.bytes.clone();
    let shape = Shape::new(bytes.len() as u64, std::iter::empty::<RegionShape>());
    // A gap, then a piece past the end: errors.
    let mut buffer = SerdeBuffer::new();
    {
        let mut recv = RecvAdapter::new(&mut buffer);
        recv.resize(&shape).unwrap();
        assert!(recv.unpack(8, &bytes[8..16]).is_err());
        recv.unpack(0, &bytes[..bytes.len() - 4]).unwrap();
        assert!(recv.unpack(bytes.len() as u64 - 4, &[0u8; 5]).is_err());
    }
    // Not received whole: decoding fails (and the buffer is empty afterwards).
    assert!(buffer.decode::<Vec<f64>>().is_err());
    assert!(buffer.decode::<Vec<f64>>().is_err());
    // The same buffer receives the next message whole.
    {
        let mut recv = RecvAdapter::new(&mut buffer);
        recv.resize(&shape).unwrap();
        for (i, piece) in bytes.chunks(333).enumerate() {
            recv.unpack(i as u64 * 333, piece).unwrap();
        }
    }
    assert_eq!(buffer.decode::<Vec<f64>>().unwrap(), v);
    drop(arrived(sent, 1 << 20).unwrap());
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Frames {
    name: String,
    frames: Vec<Region<i32>>,
    bytes: Region<u8>,
}

fn frames(seed: i32) -> Frames {
    Frames {
        name: format!("frames {seed}"),
        frames: (0..20)
            .map(|i| Region::new((0..256).map(|j| seed * 100_000 + i * 256 + j).collect()))
            .collect(),
        bytes: Region::new(vec![seed as u8; 4096]),
    }
}

#[test]
fn dropped_regions_are_received_into_again() {
    spare::release();
    let first: Frames = received(&frames(1)).unwrap().decode().unwrap();
    assert_eq!(first, frames(1));
    let kept = first.frames[3].as_ptr();
    // One region still shared by a clone: not kept when the value drops.
    let shared = first.frames[5].clone();
    drop(first);
    assert_eq!(shared[0], 100_000 + 5 * 256);
    // The next message's regions land in the kept vectors, every value overwritten.
    let second: Frames = received(&frames(2)).unwrap().decode().unwrap();
    assert_eq!(second, frames(2));
    assert!(second.frames.iter().any(|f| f.as_ptr() == kept));
    assert!(second.frames.iter().all(|f| f.as_ptr() != shared.as_ptr()));
    // into_vec takes the vector out: nothing is kept, nothing is freed twice.
    let v = second.bytes.clone().into_vec();
    assert_eq!(v, vec![2u8; 4096]);
    drop(second);
    release_buffers();
    assert_eq!(spare::take(ElementType::I32, 256, 1024).map(|_| ()), None);
}

#[test]
fn encoding_progresses_every_256_kib() {
    let v: Vec<Vec<f64>> = vec![vec![0.5; 1 << 10]; 128]; // 1 MiB of numbers
    let mut calls = 0;
    let mut count = || calls += 1;
    let encoded = encode_progressing(&v, Some(&mut count)).unwrap();
    assert_eq!(calls, encoded.bytes.len() / ser::PROGRESS_EVERY);
    let one: Vec<f64> = vec![1.5; 1 << 17]; // one sequence of 1 MiB: progress between runs
    let mut calls = 0;
    let mut count = || calls += 1;
    encode_progressing(&one, Some(&mut count)).unwrap();
    assert!(calls >= 3, "{calls} calls");
}

#[test]
fn progress_serializes_regions_outside_the_encoding() {
    // A region serialized by whatever progress runs is not taken into the message encoded.
    let value = frames(3);
    let mut inner = Vec::new();
    let mut other = || inner.push(encode(&Region::new(vec![9u8; 10])).unwrap().regions.len());
    let big: (&Frames, Vec<f64>) = (&value, vec![0.0; 1 << 16]);
    let encoded = encode_progressing(&big, Some(&mut other)).unwrap();
    assert_eq!(encoded.regions.len(), 21);
    assert!(!inner.is_empty() && inner.iter().all(|&n| n == 1));
}
