//! Spare region vectors: the arrays of [`Region`](super::Region)s dropped whole (no clone left),
//! kept on their thread for the next received regions of the same element type and length.
//!
//! A receiver that gets a message of thousands of regions after another, and drops the value
//! decoded before, would otherwise free thousands of vectors and allocate as many again; glibc
//! then trims the freed heap and the new vectors fault their pages in afresh (measured: 64
//! messages of 8192 regions of 1 KiB in flight spent more time in page faults and `calloc`
//! than in moving the data). A spare vector is handed out with the values of its last use:
//! every bit pattern is a valid number, and the message overwrites them all.
//!
//! Only vectors of at least [`SPARE_MIN`] bytes are kept, at most [`SPARE_BYTES`] per thread.

use crate::datatype::ElementType;
use std::any::Any;
use std::cell::RefCell;
use std::sync::Arc;

/// Vectors smaller than this are left to the allocator.
pub(super) const SPARE_MIN: usize = 512;
/// The most bytes of vectors kept per thread.
pub(super) const SPARE_BYTES: usize = 1 << 30;

/// A shared vector `Arc<Vec<T>>`, its `T` erased.
pub(super) type AnyVec = Arc<dyn Any + Send + Sync>;

/// A kept vector and the bytes it holds.
type Kept = (AnyVec, usize);

#[derive(Default)]
struct Spare {
    /// The vectors kept (with the bytes each holds), by element type and length: a message's
    /// regions have few shapes.
    shapes: Vec<(ElementType, usize, Vec<Kept>)>,
    bytes: usize,
}

thread_local! {
    static SPARE: RefCell<Spare> = RefCell::new(Spare::default());
}

/// Keeps `data`, a vector of `len` elements of `elem` holding `bytes` bytes (its capacity),
/// that nothing else shares, if it is large enough and this thread has room; frees it
/// otherwise.
pub(super) fn keep(elem: ElementType, len: usize, bytes: usize, data: AnyVec) {
    if bytes < SPARE_MIN {
        return;
    }
    // After this thread's storage is gone (thread exit), the vector is simply freed.
    let _ = SPARE.try_with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
            return;
        };
        if s.bytes + bytes > SPARE_BYTES {
            return;
        }
        s.bytes += bytes;
        match s
            .shapes
            .iter_mut()
            .find(|(e, l, _)| *e == elem && *l == len)
        {
            Some((_, _, kept)) => kept.push((data, bytes)),
            None => s.shapes.push((elem, len, vec![(data, bytes)])),
        }
    });
}

/// A kept vector of `len` elements of `elem` (`bytes` bytes of them), if there is one.
pub(super) fn take(elem: ElementType, len: usize, bytes: usize) -> Option<AnyVec> {
    if bytes < SPARE_MIN {
        return None;
    }
    SPARE
        .try_with(|s| {
            let mut s = s.try_borrow_mut().ok()?;
            let (_, _, kept) = s
                .shapes
                .iter_mut()
                .find(|(e, l, _)| *e == elem && *l == len)?;
            let (data, held) = kept.pop()?;
            s.bytes -= held;
            Some(data)
        })
        .ok()
        .flatten()
}

/// Frees the vectors this thread keeps.
pub(super) fn release() {
    let all = SPARE.try_with(|s| s.try_borrow_mut().map(|mut s| std::mem::take(&mut *s)));
    drop(all);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_vectors_come_back_by_shape() {
        release();
        let v: AnyVec = Arc::new(vec![7i32; 256]);
        keep(ElementType::I32, 256, 1024, v);
        assert!(take(ElementType::I32, 255, 1020).is_none());
        assert!(take(ElementType::U32, 256, 1024).is_none());
        let back = take(ElementType::I32, 256, 1024).expect("kept");
        assert_eq!(back.downcast::<Vec<i32>>().ok().map(|v| v[3]), Some(7));
        assert!(take(ElementType::I32, 256, 1024).is_none());
        keep(ElementType::I32, 4, 16, Arc::new(vec![0i32; 4])); // too small: freed
        assert!(take(ElementType::I32, 4, 16).is_none());
    }
}
