//! The datatypes of [`Equivalence`] types against Rust's own layout: sizes, extents, offsets,
//! and the bytes they pack and place (never padding).

use super::calls::{datatype_of, values, values_mut};
use super::*;
use crate::error::Error;
use crate::plan::derived::TypedBuf;
use crate::status::Status;
use std::mem::offset_of;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
struct Padded {
    a: u8,
    b: f64,
    c: u16,
}
crate::equivalence!(Padded { a, b, c });

#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
struct Outer {
    tag: i32,
    inner: Padded,
    pair: [Padded; 2],
    small: [u8; 3],
}
crate::equivalence!(Outer {
    tag,
    inner,
    pair,
    small
});

/// A tuple struct, default layout, fields listed out of declaration order.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Tuple(u16, f32, i8);
crate::equivalence!(Tuple { 2, 0, 1 });

/// No padding: travels in place.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
struct Dense {
    x: f64,
    y: f64,
    id: [u32; 2],
}
crate::equivalence!(Dense { x, y, id });

mod elsewhere {
    /// A struct with a marker field, in another module (a visible struct and fields).
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    pub struct Marked {
        pub v: i64,
        pub m: std::marker::PhantomData<u8>,
    }
    crate::equivalence!(Marked { v, m });
}

/// `ty`'s size, lower bound, extent, true lower bound, true extent.
fn bounds(ty: &Datatype) -> (u64, i64, i64, i64, i64) {
    (
        ty.size(),
        ty.lb(),
        ty.extent(),
        ty.true_lb(),
        ty.true_extent(),
    )
}

/// The bytes of `values` the type map names, in order (packed through the walker).
fn pack<T: Equivalence>(vals: &[T]) -> Vec<u8> {
    let buf = values(vals).expect("values fit");
    let mut out = vec![0u8; buf.packed_size() as usize];
    // SAFETY: the type map is inside `vals` and names initialized bytes only.
    let n = unsafe { buf.pack(0, &mut out) };
    assert_eq!(n, out.len());
    out
}

/// Places `packed` into `values` through the walker, in pieces of 3 bytes.
fn unpack<T: Equivalence>(vals: &mut [T], packed: &[u8]) {
    let buf = values_mut(vals).expect("values fit");
    for (i, piece) in packed.chunks(3).enumerate() {
        // SAFETY: the type map is inside `vals`; T accepts any bytes there.
        unsafe { buf.unpack(i as u64 * 3, piece) };
    }
}

#[test]
fn primitives_are_their_element_types() {
    fn check<T: Equivalence>() {
        let ty = T::equivalent_datatype();
        let n = size_of::<T>() as i64;
        assert_eq!(
            bounds(&ty),
            (n as u64, 0, n, 0, n),
            "{}",
            std::any::type_name::<T>()
        );
        assert_eq!(ty.contiguous_at(7), Some(0));
    }
    check::<i8>();
    check::<u8>();
    check::<i16>();
    check::<u16>();
    check::<i32>();
    check::<u32>();
    check::<i64>();
    check::<u64>();
    check::<f32>();
    check::<f64>();
    check::<isize>();
    check::<usize>();
    assert_eq!(bounds(&<()>::equivalent_datatype()), (0, 0, 0, 0, 0));
}

#[test]
fn arrays_are_contiguous_with_the_array_size_as_extent() {
    let ty = <[f32; 3]>::equivalent_datatype();
    assert_eq!(bounds(&ty), (12, 0, 12, 0, 12));
    assert_eq!(ty.elements(), 3);
    assert_eq!(ty.contiguous_at(4), Some(0));
    let ty = <[[u16; 2]; 3]>::equivalent_datatype();
    assert_eq!(bounds(&ty), (12, 0, 12, 0, 12));
    let ty = <[Padded; 2]>::equivalent_datatype();
    assert_eq!(bounds(&ty), (22, 0, 48, 0, 42));
    assert_eq!(ty.runs(), 4, "a, then b and c (adjacent), per element");
    assert_eq!(bounds(&<[u8; 0]>::equivalent_datatype()), (0, 0, 0, 0, 0));
}

#[test]
fn a_padded_struct_names_its_fields_only() {
    assert_eq!(
        (
            size_of::<Padded>(),
            offset_of!(Padded, b),
            offset_of!(Padded, c)
        ),
        (24, 8, 16)
    );
    let ty = Padded::equivalent_datatype();
    assert_eq!(bounds(&ty), (11, 0, 24, 0, 18));
    assert_eq!(
        (ty.elements(), ty.runs(), ty.contiguous_at(1)),
        (3, 2, None)
    );
    let v = [
        Padded { a: 1, b: 2.5, c: 3 },
        Padded {
            a: 4,
            b: -1.0,
            c: 0xBEEF,
        },
    ];
    let mut want = Vec::new();
    for p in &v {
        want.push(p.a);
        want.extend_from_slice(&p.b.to_ne_bytes());
        want.extend_from_slice(&p.c.to_ne_bytes());
    }
    assert_eq!(pack(&v), want);
    let mut back = [Padded::default(); 2];
    unpack(&mut back, &want);
    assert_eq!(back, v);
}

#[test]
fn a_receive_never_writes_padding() {
    // Memory for two `Padded`s, every byte 0xEE; the struct's type placed over it.
    let mut mem = [0xEEEE_EEEE_EEEE_EEEEu64; 6];
    let ty = datatype_of::<Padded>(2).expect("fits");
    let buf = TypedBuf::new(mem.as_mut_ptr().cast::<u8>(), 2, &ty);
    let packed: Vec<u8> = (1..=22).collect();
    // SAFETY: 2 instances of a 24-byte extent stay inside the 48 bytes of `mem`.
    unsafe { buf.unpack(0, &packed) };
    let bytes: Vec<u8> = mem.iter().flat_map(|w| w.to_ne_bytes()).collect();
    // The offsets of a, b and c inside one `Padded`: the data bytes, in packed order.
    let data: Vec<usize> = [0].into_iter().chain(8..18).collect();
    for (k, value) in bytes.chunks(24).enumerate() {
        for (i, byte) in value.iter().enumerate() {
            match data.iter().position(|&d| d == i) {
                Some(j) => assert_eq!(*byte, packed[k * 11 + j], "data byte {i} of value {k}"),
                None => assert_eq!(*byte, 0xEE, "padding byte {i} of value {k} was written"),
            }
        }
    }
}

#[test]
fn a_nested_struct_places_inner_structs_at_their_offsets() {
    let ty = Outer::equivalent_datatype();
    assert_eq!(
        bounds(&ty),
        (4 + 11 * 3 + 3, 0, size_of::<Outer>() as i64, 0, 83)
    );
    assert_eq!(
        (
            offset_of!(Outer, inner),
            offset_of!(Outer, pair),
            offset_of!(Outer, small)
        ),
        (8, 32, 80)
    );
    assert_eq!(ty.elements(), 1 + 3 * 3 + 3);
    let v: Vec<Outer> = (0..5)
        .map(|i| Outer {
            tag: -i,
            inner: Padded {
                a: i as u8,
                b: i as f64 * 0.5,
                c: 7 * i as u16,
            },
            pair: [
                Padded { a: 9, b: 1.0, c: 2 },
                Padded {
                    a: 8,
                    b: -2.0,
                    c: i as u16,
                },
            ],
            small: [i as u8, 1, 2],
        })
        .collect();
    let packed = pack(&v);
    assert_eq!(packed.len(), 5 * 40);
    assert_eq!(&packed[..4], &0i32.to_ne_bytes());
    assert_eq!(
        packed[40 + 4],
        1,
        "the second value's inner.a follows its tag"
    );
    let mut back = vec![Outer::default(); 5];
    unpack(&mut back, &packed);
    assert_eq!(back, v);
}

#[test]
fn fields_travel_in_the_listed_order_whatever_the_layout() {
    let ty = Tuple::equivalent_datatype();
    assert_eq!(ty.size(), 7);
    assert_eq!(ty.extent(), size_of::<Tuple>() as i64);
    let v = [Tuple(0x0102, 1.5, -3)];
    let mut want = vec![(-3i8) as u8];
    want.extend_from_slice(&0x0102u16.to_ne_bytes());
    want.extend_from_slice(&1.5f32.to_ne_bytes());
    assert_eq!(pack(&v), want);
    let mut back = [Tuple::default()];
    unpack(&mut back, &want);
    assert_eq!(back, v);
}

#[test]
fn a_struct_without_padding_is_one_run() {
    let ty = Dense::equivalent_datatype();
    assert_eq!(bounds(&ty), (24, 0, 24, 0, 24));
    assert_eq!(ty.contiguous_at(1000), Some(0));
    let ty = elsewhere::Marked::equivalent_datatype();
    assert_eq!(bounds(&ty), (8, 0, 8, 0, 8));
    assert_eq!(ty.contiguous_at(3), Some(0));
}

#[test]
fn the_struct_type_is_made_once_and_statuses_count_values() {
    let (a, b) = (Padded::equivalent_datatype(), Padded::equivalent_datatype());
    assert_eq!(bounds(&a), bounds(&b));
    let status = Status {
        bytes: Some(33),
        ..Status::empty()
    };
    assert_eq!(status.count_values::<Padded>(), Some(3));
    assert_eq!(status.count_values::<[Padded; 2]>(), None);
    assert_eq!(status.count_of(&Datatype::of(ElementType::U8)), Some(33));
    assert_eq!(status.count_values::<()>(), Some(0));
}

/// An implementation that breaks the contract's extent is refused by the safe calls.
struct Wrong(u32);

// SAFETY: deliberately wrong extent, only ever given to `datatype_of`, which must refuse it.
unsafe impl Equivalence for Wrong {
    fn equivalent_datatype() -> Datatype {
        let t = Datatype::of(ElementType::U32);
        Datatype::resized(&t, 0, 8).expect("resized")
    }
}

#[test]
fn a_datatype_whose_extent_is_not_the_size_is_refused() {
    let _ = Wrong(0).0;
    assert!(matches!(
        datatype_of::<Wrong>(1),
        Err(Error::InvalidArgument(_))
    ));
    assert!(datatype_of::<Padded>(3).is_ok());
}

#[test]
fn datatypes_can_be_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<Datatype>();
}
