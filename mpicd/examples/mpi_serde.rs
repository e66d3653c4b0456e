//! The serde bridge across ranks: nested structs, strings, maps and enums, encoded `Vec<f64>`
//! payloads and `Region` payloads (zero-copy), blocking and non-blocking calls, `Serde(&value)`
//! through `send_custom`, matched probes, wildcards, and type mismatches. Every case compares the
//! value that arrived with the one that was sent. Runs with the default engine configuration
//! (256 KiB fragments), so large encodings cross fragment boundaries of the default size.
// mpi-test: ranks=2,4

#[path = "common/mod.rs"]
mod common;

use common::CaseResult;
use mpicd::custom::serde::{Region, Serde, SerdeBuffer};
use mpicd::{Communicator, Error, MessageSerdeExt, SerdeExt, ANY_SOURCE};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Kind {
    Leaf,
    Weighted(f64),
    Named { name: String, level: u8 },
    Children(Vec<Node>),
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Node {
    id: u32,
    label: String,
    kind: Kind,
    attrs: BTreeMap<String, String>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Document {
    title: String,
    version: (u16, u16, u16),
    owner: Option<String>,
    root: Node,
    index: HashMap<String, Vec<u64>>,
    scores: Vec<f64>,
    flags: Vec<bool>,
    unicode: String,
}

fn node(seed: u64, depth: u32) -> Node {
    let kind = match (seed + depth as u64) % 4 {
        _ if depth == 0 => Kind::Leaf,
        0 => Kind::Weighted(seed as f64 / 7.0),
        1 => Kind::Named {
            name: format!("n{seed}-{depth}"),
            level: depth as u8,
        },
        _ => Kind::Children((0..3).map(|i| node(seed * 3 + i, depth - 1)).collect()),
    };
    Node {
        id: (seed as u32).wrapping_mul(2654435761) ^ depth,
        label: "x".repeat((seed % 17) as usize),
        kind,
        attrs: (0..(seed % 5))
            .map(|i| (format!("key{i}"), format!("value {seed}/{i}")))
            .collect(),
    }
}

fn document(seed: u64, scores: usize) -> Document {
    Document {
        title: format!("document {seed}"),
        version: (1, seed as u16, 3),
        owner: (seed % 2 == 0).then(|| format!("rank-{seed}")),
        root: node(seed, 4),
        index: (0..20)
            .map(|i| (format!("w{i}"), (0..i).map(|k| k * seed).collect()))
            .collect(),
        scores: (0..scores)
            .map(|i| (i as f64).sqrt() + seed as f64)
            .collect(),
        flags: (0..33).map(|i| (i + seed) % 3 == 0).collect(),
        unicode: "ÿ → λ ∀ 🚀".repeat(seed as usize % 4 + 1),
    }
}

/// Large payloads as regions: never encoded, sent zero-copy (or coalesced when small).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Frame {
    step: u64,
    name: String,
    field: Region<f64>,
    mask: Region<u8>,
    small: Region<i32>,
    layers: Vec<Region<f32>>,
    meta: BTreeMap<u32, String>,
}

fn frame(seed: u64, n: usize) -> Frame {
    Frame {
        step: seed,
        name: format!("frame {seed}"),
        field: (0..n).map(|i| i as f64 * 0.5 + seed as f64).collect(),
        mask: (0..n / 3).map(|i| (i as u64 ^ seed) as u8).collect(),
        small: Region::new(vec![seed as i32; 3]),
        layers: (0..4)
            .map(|l| {
                (0..l * 10_000)
                    .map(|i| (i + l) as f32 - seed as f32)
                    .collect()
            })
            .collect(),
        meta: (0..5).map(|i| (i, format!("m{i}"))).collect(),
    }
}

fn next_prev(w: &Communicator) -> (i32, i32) {
    let (rank, size) = (w.rank(), w.size());
    ((rank + 1) % size, (rank + size - 1) % size)
}

/// Sends `out` to the next rank and receives from the previous one, completed together.
fn exchange<T: Serialize + serde::de::DeserializeOwned>(
    w: &Communicator,
    out: &T,
    tag: i32,
) -> Result<(T, mpicd::Status), Box<dyn std::error::Error>> {
    let (next, prev) = next_prev(w);
    let mut buffer = SerdeBuffer::new();
    let status = mpicd::scope(|s| {
        let r = w.irecv_custom(s, &mut buffer, prev, tag)?;
        mpicd::wait_all(&mut [r, w.isend_serde(out, next, tag)?])
    })?
    .remove(0);
    Ok((buffer.decode()?, status))
}

fn nested_round_trip(w: &Communicator) -> CaseResult {
    let (_, prev) = next_prev(w);
    // Encoded Vec<f64> payloads from tiny to several default fragments.
    for (i, scores) in [0usize, 10, 5000, 200_000].into_iter().enumerate() {
        let out = document(w.rank() as u64 * 10 + i as u64, scores);
        let (got, st) = exchange(w, &out, 1)?;
        check!(st.source == prev && st.tag == 1, "{st:?}");
        check!(
            got == document(prev as u64 * 10 + i as u64, scores),
            "document with {scores} scores arrived different"
        );
    }
    // Plain std types.
    let map: BTreeMap<String, Vec<(i8, Option<char>)>> = (0..100)
        .map(|i| {
            (
                format!("{i:03}"),
                vec![(i as i8, char::from_u32(0x3b1 + i)); i as usize % 7],
            )
        })
        .collect();
    let (got, _) = exchange(w, &map, 2)?;
    check!(got == map, "BTreeMap arrived different");
    let (got, _) = exchange(w, &String::from("just a string"), 2)?;
    check!(got == "just a string");
    let ((), st) = exchange(w, &(), 2)?;
    check!(st.source == prev, "{st:?}");
    Ok(())
}

fn region_payloads(w: &Communicator) -> CaseResult {
    let (_, prev) = next_prev(w);
    for n in [0usize, 7, 3000, 1 << 20] {
        let out = frame(w.rank() as u64 + 1, n);
        let (got, st) = exchange(w, &out, 3)?;
        check!(
            got == frame(prev as u64 + 1, n),
            "frame with {n}-element regions arrived different"
        );
        // The status counts the regions' bytes and the (small) encoding.
        let region_bytes = (n * 8 + n / 3 + 12 + 4 * (10_000 + 20_000 + 30_000)) as u64;
        let total = st.bytes.ok_or("no size")?;
        check!(
            total >= region_bytes && total < region_bytes + 1000,
            "{total} bytes for {region_bytes} bytes of regions"
        );
    }
    Ok(())
}

fn blocking_calls(w: &Communicator) -> CaseResult {
    if w.rank() == 0 {
        w.send_serde(&document(5, 100_000), 1, 4)?;
        w.send_custom(&Serde(&frame(6, 200_000)), 1, 4)?;
        let v: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
        w.send_serde(&v[..], 1, 4)?; // an unsized slice, received as a Vec
    } else if w.rank() == 1 {
        let d: Document = w.recv_serde(0, 4)?;
        check!(d == document(5, 100_000));
        let mut buffer = SerdeBuffer::new();
        let st = w.recv_custom(&mut buffer, 0, 4)?;
        check!(st.source == 0);
        let f: Frame = buffer.decode()?;
        check!(f == frame(6, 200_000));
        let (v, st) = w.recv_serde_with_status::<Vec<String>>(0, 4)?;
        check!(st.tag == 4 && v.len() == 1000 && v[999] == "999");
    }
    Ok(())
}

fn matched_probe(w: &Communicator) -> CaseResult {
    let (next, prev) = next_prev(w);
    let out = frame(w.rank() as u64, 50_000);
    let s = w.isend_serde(&out, next, 5)?;
    let (msg, st) = w.mprobe(prev, 5)?;
    check!(st.kind == mpicd::MessageKind::Custom);
    let shape = msg.shape()?.ok_or("no shape")?;
    // field, mask, small, then the four layers.
    check!(
        shape.region_count() == 7,
        "{} regions",
        shape.region_count()
    );
    let (first, second) = (
        shape.region(0).ok_or("no region 0")?,
        shape.region(1).ok_or("no region 1")?,
    );
    check!(first.len() == 50_000 && first.elem == mpicd::ElementType::F64);
    check!(second.elem == mpicd::ElementType::U8);
    check!(shape.packed_bytes > 0 && shape.packed_bytes < 200);
    // Received through the matched message while the send is still pending: completed together.
    let mut buffer = SerdeBuffer::new();
    mpicd::scope(|scope| mpicd::wait_all(&mut [msg.irecv_custom(scope, &mut buffer)?, s]))?;
    check!(buffer.decode::<Frame>()? == frame(prev as u64, 50_000));

    // Message::recv_serde, for a small message (its send completes on its own).
    let small = document(w.rank() as u64, 3);
    let s = w.isend_serde(&small, next, 6)?;
    let (msg, _) = w.mprobe(prev, 6)?;
    let (got, st) = msg.recv_serde::<Document>()?;
    s.wait()?;
    check!(st.source == prev && got == document(prev as u64, 3));
    Ok(())
}

fn any_source(w: &Communicator) -> CaseResult {
    if w.rank() == 0 {
        let mut seen = vec![false; w.size() as usize];
        for _ in 1..w.size() {
            let (d, st) = w.recv_serde_with_status::<Document>(ANY_SOURCE, 7)?;
            let src = st.source as usize;
            check!(!seen[src], "two messages from {src}");
            seen[src] = true;
            check!(d == document(src as u64 * 3, 1000), "document from {src}");
        }
    } else {
        w.send_serde(&document(w.rank() as u64 * 3, 1000), 0, 7)?;
    }
    Ok(())
}

fn many_in_flight(w: &Communicator) -> CaseResult {
    let (next, prev) = next_prev(w);
    let n = 32;
    let mut buffers: Vec<SerdeBuffer> = (0..n).map(|_| SerdeBuffer::new()).collect();
    mpicd::scope(|s| {
        let mut reqs = Vec::new();
        for b in buffers.iter_mut() {
            reqs.push(w.irecv_custom(s, b, prev, 8)?);
        }
        for i in 0..n {
            let value = (i, frame(w.rank() as u64 * 100 + i as u64, i * 997));
            reqs.push(w.isend_serde(&value, next, 8)?); // encoded now: `value` may go
        }
        mpicd::wait_all(&mut reqs)
    })?;
    for (i, b) in buffers.iter_mut().enumerate() {
        let (k, f): (usize, Frame) = b.decode()?;
        check!(k == i, "message {k} arrived as number {i}");
        check!(
            f == frame(prev as u64 * 100 + i as u64, i * 997),
            "message {i}"
        );
    }
    Ok(())
}

fn type_mismatch_is_an_error(w: &Communicator) -> CaseResult {
    let (next, prev) = next_prev(w);
    let mut buffer = SerdeBuffer::new();
    mpicd::scope(|s| {
        let r = w.irecv_custom(s, &mut buffer, prev, 9)?;
        mpicd::wait_all(&mut [r, w.isend_serde(&frame(1, 10), next, 9)?])
    })?;
    let e = buffer.decode::<Document>();
    check!(
        matches!(e, Err(Error::InvalidDatatype(_))),
        "a Frame decoded as a Document: {e:?}"
    );
    // The next message is fine.
    let (got, _) = exchange(w, &42u64, 9)?;
    check!(got == 42);
    Ok(())
}

fn main() {
    common::main(&[
        (
            "nested structs, strings, maps, enums, Vec<f64>",
            &nested_round_trip,
        ),
        (
            "Region payloads (zero-copy and coalesced)",
            &region_payloads,
        ),
        (
            "blocking send_serde / recv_serde / Serde(&v)",
            &blocking_calls,
        ),
        ("matched probe of a serde message", &matched_probe),
        ("ANY_SOURCE serde receives", &any_source),
        ("32 serde messages in flight", &many_in_flight),
        ("type mismatch is an error", &type_mismatch_is_an_error),
    ])
}
