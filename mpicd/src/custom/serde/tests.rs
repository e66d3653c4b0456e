//! Tests of the bridge without a transport: values through the encoder, a simulated engine and
//! the decoder.

use super::*;
use crate::custom::parts::RecvAdapter;
use crate::custom::RegionShape;
use crate::custom::{PackState, UnpackState};
use ::serde::{Deserialize, Serialize, Serializer};
use std::collections::{BTreeMap, HashMap};

/// Moves `value` through the bridge as the engine would (packed part in 7-byte pieces,
/// regions copied into the receiver's buffers), without a transport.
fn through_bridge<T: Serialize + ?Sized, U: DeserializeOwned>(value: &T) -> Result<U> {
    received(value)?.decode()
}

/// The receiver's buffer once `value` has arrived in it.
pub(super) fn received<T: Serialize + ?Sized>(value: &T) -> Result<SerdeBuffer> {
    arrived(encode(value)?, 7)
}

/// The receiver's buffer once an encoding has arrived in it, its packed part in pieces of
/// `piece` bytes.
pub(super) fn arrived(sent: Encoded, piece: usize) -> Result<SerdeBuffer> {
    let mut sent = sent.into_parts();
    let packed_bytes = sent.packed_size()?;
    let regions = PackState::regions(&mut sent)?;
    let shape = Shape::new(
        packed_bytes,
        regions.iter().map(|r| RegionShape {
            bytes: r.bytes as u64,
            elem: r.elem,
        }),
    );
    let mut buffer = SerdeBuffer::new();
    {
        let mut recv = RecvAdapter::new(&mut buffer);
        recv.resize(&shape)?;
        assert!(recv.packed_capacity()? >= packed_bytes);
        let mut offset = 0u64;
        let mut buf = vec![0u8; piece];
        while offset < packed_bytes {
            let want = (packed_bytes - offset).min(piece as u64) as usize;
            let n = sent.pack(offset, &mut buf[..want])?;
            recv.unpack(offset, &buf[..n])?;
            offset += n as u64;
        }
        let mine = UnpackState::regions(&mut recv)?;
        assert_eq!(mine.len(), regions.len());
        for (from, to) in regions.iter().zip(&mine) {
            assert_eq!(from.bytes, to.bytes);
            assert_eq!(from.elem, to.elem);
            // SAFETY: both regions are valid for `bytes` bytes and do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(from.ptr, to.ptr, from.bytes) };
        }
    }
    drop(sent);
    Ok(buffer)
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
enum Shape3 {
    Empty,
    Circle(f64),
    Rect { w: u32, h: u32 },
    Poly(Vec<(i32, i32)>),
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Inner {
    name: String,
    tags: Vec<String>,
    shape: Shape3,
    weight: Option<f32>,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Outer {
    id: u64,
    inner: Vec<Inner>,
    by_name: BTreeMap<String, Inner>,
    counts: HashMap<u16, i64>,
    samples: Vec<f64>,
    big: Region<f64>,
    bytes: Region<u8>,
    nested: Vec<Region<i32>>,
    unit: (),
    text: String,
}

fn outer() -> Outer {
    let inner = |i: u32| Inner {
        name: format!("inner {i} ✓"),
        tags: (0..i).map(|t| "t".repeat(t as usize)).collect(),
        shape: match i % 4 {
            0 => Shape3::Empty,
            1 => Shape3::Circle(i as f64 / 3.0),
            2 => Shape3::Rect { w: i, h: i * 2 },
            _ => Shape3::Poly(vec![(1, -1), (i as i32, 7)]),
        },
        weight: (i % 2 == 0).then_some(i as f32),
    };
    Outer {
        id: u64::MAX - 3,
        inner: (0..6).map(inner).collect(),
        by_name: (0..4).map(|i| (format!("k{i}"), inner(i + 10))).collect(),
        counts: (0..50).map(|i| (i, -(i as i64) * 1000)).collect(),
        samples: (0..1000).map(|i| i as f64 * 0.1).collect(),
        big: (0..100_000).map(|i| i as f64).collect(),
        bytes: Region::new(b"raw bytes".to_vec()),
        nested: vec![
            Region::new(vec![1, 2, 3]),
            Region::default(),
            Region::new(vec![-9; 5000]),
        ],
        unit: (),
        text: String::new(),
    }
}

#[test]
fn nested_structs_strings_maps_enums_round_trip() {
    let v = outer();
    let back: Outer = through_bridge(&v).unwrap();
    assert_eq!(back, v);
}

#[test]
fn regions_are_not_encoded() {
    let v = outer();
    let enc = encode(&v).unwrap();
    assert_eq!(enc.regions.len(), 5);
    // The 100 000 f64 of `big` are not in the encoding; the 1000 of `samples` are.
    assert!(
        enc.bytes.len() < 20_000,
        "encoded {} bytes",
        enc.bytes.len()
    );
    assert!(enc.bytes.len() > 8000);
}

#[test]
fn plain_values_and_empty_encodings() {
    let s: String = through_bridge("hello, world").unwrap();
    assert_eq!(s, "hello, world");
    let u: () = through_bridge(&()).unwrap();
    assert_eq!(u, ());
    let v: Vec<Shape3> = through_bridge(&vec![Shape3::Empty; 3]).unwrap();
    assert_eq!(v, vec![Shape3::Empty; 3]);
    let r: Region<u16> = through_bridge(&Region::<u16>::default()).unwrap();
    assert!(r.is_empty());
}

#[test]
fn mismatches_are_errors() {
    // A string read as an integer: bytes left over.
    let e = through_bridge::<_, u8>(&"abc".to_string()).unwrap_err();
    assert!(matches!(e, Error::InvalidDatatype(_)), "{e}");
    // A Region<f64> read as a Region<i32>: element types differ.
    let e = through_bridge::<_, Region<i32>>(&Region::new(vec![1.0f64])).unwrap_err();
    assert!(e.to_string().contains("F64"), "{e}");
    // Regions the type does not claim.
    let e = through_bridge::<_, u64>(&(7u64, Region::new(vec![1u8]))).unwrap_err();
    assert!(matches!(e, Error::InvalidDatatype(_)), "{e}");
    // Fewer regions than the type wants: the sender encoded a plain Vec.
    let e = through_bridge::<_, Region<u8>>(&vec![1u8, 2]).unwrap_err();
    assert!(e.to_string().contains("fewer regions"), "{e}");
}

#[test]
fn region_is_a_plain_sequence_outside_the_bridge() {
    let r = Region::new(vec![1i32, -2, 3]);
    let direct = postcard::to_allocvec(&r).unwrap();
    assert_eq!(direct, postcard::to_allocvec(&vec![1i32, -2, 3]).unwrap());
    let back: Region<i32> = postcard::from_bytes(&direct).unwrap();
    assert_eq!(back, r);
    // Nothing leaks into the bridge's thread-local state.
    assert!(ENCODING.with(|e| e.borrow().is_none()));
    assert!(DECODING.with(|d| d.borrow().is_none()));
}

#[test]
fn sending_shares_and_writing_copies() {
    let mut r = Region::new(vec![5u32; 4]);
    let parts = encode(&r).unwrap().into_parts();
    let before = r.as_ptr();
    r[0] = 6; // the send still holds the array: this copies
    assert_ne!(r.as_ptr(), before);
    drop(parts);
    r[1] = 7; // no longer shared: in place
    assert_eq!(&r[..], &[6, 7, 5, 5]);
    assert_eq!(r.into_vec(), vec![6, 7, 5, 5]);
}

// ----- raw arrays --------------------------------------------------------------------------------

/// The value's packed part (version byte included).
fn packed_of<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    encode(value).unwrap().bytes
}

#[test]
fn number_sequences_are_raw_little_endian_arrays() {
    let v: Vec<f64> = (0..1000).map(|i| i as f64 * 0.5 - 7.0).collect();
    let packed = packed_of(&v);
    // Version, varint 1000 (2 bytes), layout, 8000 bytes.
    assert_eq!(packed.len(), 1 + 2 + 1 + 8000);
    assert_eq!(packed[0], format::VERSION);
    assert_eq!(packed[3], format::Kind::F64 as u8);
    assert_eq!(&packed[4..12], &v[0].to_le_bytes());
    assert_eq!(through_bridge::<_, Vec<f64>>(&v).unwrap(), v);
    // A slice arrives as a Vec; every integer kind and both float kinds round-trip.
    let bytes: Vec<u8> = (0..=255).collect();
    assert_eq!(packed_of(&bytes[..]).len(), 1 + 2 + 1 + 256);
    assert_eq!(through_bridge::<_, Vec<u8>>(&bytes[..]).unwrap(), bytes);
    macro_rules! round_trip {
        ($($t:ty),*) => {$({
            let v: Vec<$t> = (0..100).map(|i| <$t>::MAX - i as $t).collect();
            assert_eq!(through_bridge::<_, Vec<$t>>(&v).unwrap(), v, stringify!($t));
            let v: Vec<$t> = (0..100).map(|i| <$t>::MIN + i as $t).collect();
            assert_eq!(through_bridge::<_, Vec<$t>>(&v).unwrap(), v, stringify!($t));
        })*};
    }
    round_trip!(u8, i8, u16, i16, u32, i32, u64, i64);
    let odd = vec![f32::NAN, -0.0, f32::INFINITY, f32::MIN_POSITIVE, 1e-45];
    let odd: Vec<f32> = odd.into_iter().cycle().take(40).collect();
    let back: Vec<f32> = through_bridge(&odd).unwrap();
    assert!(back
        .iter()
        .zip(&odd)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
}

#[test]
fn nested_vectors_and_mixed_structs() {
    let nested: Vec<Vec<f32>> = (0..50)
        .map(|i| (0..i * 7).map(|j| (i * j) as f32 / 3.0).collect())
        .collect();
    assert_eq!(through_bridge::<_, Vec<Vec<f32>>>(&nested).unwrap(), nested);

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Mixed {
        name: String,
        values: Vec<f64>,
        labels: Vec<String>,
        counts: Vec<u32>,
        grid: Vec<Vec<i16>>,
        pairs: Vec<(u8, String)>,
        empty: Vec<i64>,
        note: Option<String>,
    }
    let m = Mixed {
        name: "mixed ✓".into(),
        values: (0..300).map(|i| i as f64).collect(),
        labels: (0..20).map(|i| format!("l{i}")).collect(),
        counts: vec![7; 17],
        grid: vec![vec![-1; 16], vec![], vec![3; 15], vec![4; 40]],
        pairs: (0..18).map(|i| (i, "p".repeat(i as usize))).collect(),
        empty: vec![],
        note: Some("n".into()),
    };
    assert_eq!(through_bridge::<_, Mixed>(&m).unwrap(), m);
}

#[test]
fn zero_length_and_short_sequences() {
    let empty: Vec<f64> = Vec::new();
    // Version and a zero length: no layout byte.
    assert_eq!(packed_of(&empty), vec![format::VERSION, 0]);
    assert_eq!(through_bridge::<_, Vec<f64>>(&empty).unwrap(), empty);
    let short = vec![1u32, 300, 70000];
    // Below RAW_MIN the elements are postcard's varints.
    assert_eq!(
        packed_of(&short),
        vec![format::VERSION, 3, 1, 0xac, 0x02, 0xf0, 0xa2, 0x04]
    );
    let empties: Vec<Vec<u8>> = vec![Vec::new(); 20];
    assert_eq!(
        through_bridge::<_, Vec<Vec<u8>>>(&empties).unwrap(),
        empties
    );
    let arr = [5u64; format::RAW_MIN];
    assert_eq!(
        through_bridge::<_, [u64; format::RAW_MIN]>(&arr).unwrap(),
        arr
    );
}

/// Serializes as twice its value plus one: what arrives is what `Serialize` said, not the bytes
/// in memory.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Doubled(f64);

impl Serialize for Doubled {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_f64(self.0 * 2.0 + 1.0)
    }
}

/// A newtype with derived impls: transparent, its number goes raw.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
struct Meters(u32);

#[test]
fn transformed_values_arrive_transformed() {
    let v: Vec<Doubled> = (0..100).map(|i| Doubled(i as f64)).collect();
    let got: Vec<f64> = through_bridge(&v).unwrap();
    assert_eq!(
        got,
        (0..100).map(|i| i as f64 * 2.0 + 1.0).collect::<Vec<_>>()
    );
    // A value serialized from a temporary (not from memory the sequence points to).
    struct Squares(usize);
    impl Serialize for Squares {
        fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
            s.collect_seq((0..self.0).map(|i| (i * i) as u64))
        }
    }
    let got: Vec<u64> = through_bridge(&Squares(1000)).unwrap();
    assert_eq!(got, (0..1000).map(|i| (i * i) as u64).collect::<Vec<_>>());
    let m: Vec<Meters> = (0..50).map(Meters).collect();
    assert_eq!(packed_of(&m).len(), 1 + 1 + 1 + 200);
    assert_eq!(through_bridge::<_, Vec<Meters>>(&m).unwrap(), m);
}

/// Equal values (for tuples longer than 12, which have no `PartialEq`): equal postcard encodings.
fn assert_same<T: Serialize>(a: &T, b: &T) {
    assert_eq!(
        postcard::to_allocvec(a).unwrap(),
        postcard::to_allocvec(b).unwrap()
    );
}

#[test]
fn layout_changes_rewrite_the_numbers() {
    // Tuples of 16: fifteen numbers, then another kind or a string.
    type Tail<T> = (
        u32,
        u32,
        u32,
        u32,
        u32,
        u32,
        u32,
        u32,
        u32,
        u32,
        u32,
        u32,
        u32,
        u32,
        u32,
        T,
    );
    let t: Tail<String> = (
        1,
        2,
        300,
        4,
        5,
        6,
        7,
        8,
        9,
        10,
        11,
        12,
        13,
        14,
        70000,
        "end".into(),
    );
    assert_same(&through_bridge::<_, Tail<String>>(&t).unwrap(), &t);
    let t: Tail<f64> = (1, 2, 300, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 70000, 0.25);
    assert_same(&through_bridge::<_, Tail<f64>>(&t).unwrap(), &t);
    // Written as postcard would, after the layout byte.
    let mut expected = vec![format::VERSION, format::ENCODED];
    expected.extend(postcard::to_allocvec(&t).unwrap());
    assert_eq!(packed_of(&t), expected);
    // Regions as elements: each length raw, each region added once, also when the layout
    // changes after them.
    let rs: Vec<Region<i32>> = (0..20).map(|i| Region::new(vec![i; i as usize])).collect();
    let enc = encode(&rs).unwrap();
    assert_eq!(enc.regions.len(), 20);
    assert_eq!(enc.bytes[2], format::Kind::U64 as u8);
    assert_eq!(through_bridge::<_, Vec<Region<i32>>>(&rs).unwrap(), rs);
    let rt: Tail<Region<u8>> = (
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        9,
        Region::new(vec![1; 9]),
    );
    assert_eq!(encode(&rt).unwrap().regions.len(), 1);
    assert_same(&through_bridge::<_, Tail<Region<u8>>>(&rt).unwrap(), &rt);
}

#[test]
fn bad_encodings_are_errors() {
    let v: Vec<u16> = (0..40).collect();
    let mut bad = packed_of(&v);
    bad[0] = 1;
    let e = de::from_bytes::<Vec<u16>>(&bad).unwrap_err();
    assert!(e.0.contains("version"), "{e}");
    let mut bad = packed_of(&v);
    bad[2] = 99;
    assert!(de::from_bytes::<Vec<u16>>(&bad)
        .unwrap_err()
        .0
        .contains("layout"));
    let good = packed_of(&v);
    assert!(de::from_bytes::<Vec<u16>>(&good[..good.len() - 1]).is_err());
    assert!(de::from_bytes::<Vec<u16>>(&[]).is_err());
    // A huge announced length does not allocate: the input ends first.
    let e = de::from_bytes::<Vec<u64>>(&[format::VERSION, 0xff, 0xff, 0xff, 0xff, 0x0f, 7]);
    assert!(e.is_err());
    // A sequence whose Serialize lies about its length.
    struct Liar;
    impl Serialize for Liar {
        fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
            use ::serde::ser::SerializeSeq;
            let mut seq = s.serialize_seq(Some(20))?;
            for i in 0..19u8 {
                seq.serialize_element(&i)?;
            }
            seq.end()
        }
    }
    assert!(encode(&Liar).is_err());
    // Raw numbers read as another number type: converted when in range, an error otherwise.
    let small: Vec<u32> = (0..30).collect();
    assert_eq!(
        through_bridge::<_, Vec<u8>>(&small).unwrap(),
        (0..30).collect::<Vec<u8>>()
    );
    assert!(through_bridge::<_, Vec<u8>>(&vec![1000u32; 30]).is_err());
    assert!(through_bridge::<_, Vec<String>>(&vec![1u32; 30]).is_err());
}

#[test]
fn decode_into_reuses_the_place() {
    let rows: Vec<Vec<f32>> = (0..40).map(|i| vec![i as f32; 100 + i]).collect();
    let mut place: Vec<Vec<f32>> = (0..40).map(|_| Vec::with_capacity(200)).collect();
    let (outer, first) = (place.as_ptr(), place[0].as_ptr());
    received(&rows).unwrap().decode_into(&mut place).unwrap();
    assert_eq!(place, rows);
    assert_eq!((place.as_ptr(), place[0].as_ptr()), (outer, first));
    // Another shape: the place follows it.
    let fewer: Vec<Vec<f32>> = vec![vec![1.0; 3]; 2];
    received(&fewer).unwrap().decode_into(&mut place).unwrap();
    assert_eq!(place, fewer);
    let e = received(&"text")
        .unwrap()
        .decode_into(&mut place)
        .unwrap_err();
    assert!(matches!(e, Error::InvalidDatatype(_)), "{e}");
}
