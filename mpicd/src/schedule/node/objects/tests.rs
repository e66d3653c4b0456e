//! The records of node collectives of objects: written and read back, and refused when cut.

use super::*;
use crate::custom::parts::{pack_borrowed, unpack_borrowed};
use crate::custom::{CustomRecv, CustomSend};
use std::cell::UnsafeCell;

/// A value to send or receive into, as a collective's object.
struct Value<T>(UnsafeCell<T>);

// SAFETY: each test uses a value from one thread.
unsafe impl<T> Sync for Value<T> {}

impl<T: CustomSend + CustomRecv + Send> Object for Value<T> {
    fn pack(&self) -> Result<Box<dyn PackState>> {
        // SAFETY: the value outlives the state, which the test drops first.
        unsafe { pack_borrowed(&*self.0.get()) }
    }

    fn unpack(&self) -> Result<Box<dyn crate::plan::UnpackState>> {
        // SAFETY: as above; nothing else borrows the value meanwhile.
        Ok(unsafe { unpack_borrowed(&mut *self.0.get()) })
    }
}

fn value<T>(v: T) -> Value<T> {
    Value(UnsafeCell::new(v))
}

/// Writes the records of `objs` one after the other; the bytes and each one's range.
fn write_all(objs: &[&dyn Object]) -> (Vec<u8>, Vec<std::ops::Range<usize>>) {
    let (mut out, mut ranges) = (Vec::new(), Vec::new());
    for obj in objs {
        let p = Packing::new(*obj).unwrap();
        let start = out.len();
        out.resize(start + p.len(), 0);
        p.write(&mut out[start..]).unwrap();
        ranges.push(start..out.len());
    }
    (out, ranges)
}

#[test]
fn records_carry_shape_packed_part_and_regions() {
    // Regions of three lengths (three runs) and a packed part (their lengths).
    let rows = value(vec![vec![1.5f64; 3], vec![], vec![2.5; 1000], vec![3.5; 3]]);
    let bytes = value(vec![7u8; 13]);
    let (out, ranges) = write_all(&[&rows, &bytes]);
    assert!(ranges
        .iter()
        .all(|r| r.start % WORD == 0 && r.len() % WORD == 0));
    let (got_rows, got_bytes) = (value(Vec::<Vec<f64>>::new()), value(Vec::<u8>::new()));
    read(&out[ranges[0].clone()], &got_rows).unwrap();
    read(&out[ranges[1].clone()], &got_bytes).unwrap();
    // SAFETY: no state borrows them any more.
    unsafe {
        assert_eq!(*got_rows.0.get(), *rows.0.get());
        assert_eq!(*got_bytes.0.get(), *bytes.0.get());
    }
}

#[test]
fn a_cut_record_is_refused() {
    let v = value(vec![vec![1u32; 40]]);
    let (out, ranges) = write_all(&[&v]);
    let into = value(Vec::<Vec<u32>>::new());
    for cut in [0, WORD, 3 * WORD, ranges[0].end - 1] {
        assert!(read(&out[..cut], &into).is_err(), "cut at {cut}");
    }
}
