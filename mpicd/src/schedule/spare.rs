//! The temporaries of collectives run directly ([`super::direct`]), kept per thread for the
//! next collectives: no heap allocation per call once warm, and no fresh pages to fault in.

use std::cell::RefCell;

thread_local! {
    /// Temporaries of this thread's collectives run directly, kept for the next ones (no heap
    /// allocation per call once warm).
    static SPARE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// How many temporaries are kept for reuse, and their most bytes together: long ones too, whose
/// fresh pages would otherwise fault in at every call.
const SPARES: usize = 8;
const SPARE_BYTES: usize = 16 << 20;

/// A temporary of `len` bytes, reused if one is spare (its contents are then what the last
/// user left: initialized bytes, of no meaning): the shortest that is long enough, else the
/// last.
pub(super) fn take_temp(len: usize) -> Vec<u8> {
    let spare = SPARE
        .try_with(|s| {
            let mut s = s.try_borrow_mut().ok()?;
            let fits = (0..s.len())
                .filter(|&i| s[i].len() >= len)
                .min_by_key(|&i| s[i].len());
            match fits {
                Some(i) => Some(s.swap_remove(i)),
                None => s.pop(),
            }
        })
        .ok()
        .flatten();
    match spare {
        Some(mut v) => {
            if v.len() >= len {
                v.truncate(len);
            } else {
                v.resize(len, 0);
            }
            v
        }
        None => vec![0u8; len],
    }
}

/// Keeps a temporary for reuse, within [`SPARES`] and [`SPARE_BYTES`] (of memory held: a
/// temporary cut short keeps its allocation).
pub(super) fn give_back(v: Vec<u8>) {
    if v.is_empty() || v.capacity() > SPARE_BYTES {
        return;
    }
    let _ = SPARE.try_with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            let kept: usize = s.iter().map(Vec::capacity).sum();
            if s.len() < SPARES && kept + v.capacity() <= SPARE_BYTES {
                s.push(v);
            }
        }
    });
}
