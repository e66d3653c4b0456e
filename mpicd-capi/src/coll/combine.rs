//! The reduction a collective applies, from its C op and datatype, as the core combines
//! operands ([`mpicd::schedule::Reduction`]); those of predefined ops on predefined types are
//! made once per thread.

use crate::abi::*;
use crate::blocks::Elem;
use crate::errors::CResult;
use crate::reductions::Reduction;

/// Handle values below this are predefined handles (the standard ABI's layout): their meaning
/// never changes.
const PREDEFINED_END: usize = 0x1000;

thread_local! {
    /// The reductions of predefined ops on predefined types made so far, by handle values:
    /// made once, shared by the calls after.
    static PREDEFINED_REDUCTIONS: std::cell::RefCell<Vec<(usize, usize, mpicd::schedule::Reduction)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The reduction `op` performs on `dtype`, as the core applies it.
pub(super) fn reduction(op: MPI_Op, dtype: MPI_Datatype) -> CResult<mpicd::schedule::Reduction> {
    let key = (op as usize, dtype as usize);
    let predefined = key.0 < PREDEFINED_END && key.1 < PREDEFINED_END;
    let known = |cache: &Vec<(usize, usize, mpicd::schedule::Reduction)>| {
        let hit = cache.iter().find(|(o, d, _)| (*o, *d) == key);
        hit.map(|(_, _, r)| r.clone())
    };
    if predefined {
        let hit = PREDEFINED_REDUCTIONS.try_with(|c| c.try_borrow().ok().and_then(|c| known(&c)));
        if let Ok(Some(r)) = hit {
            return Ok(r);
        }
    }
    let made = make_reduction(op, dtype)?;
    if predefined {
        let _ = PREDEFINED_REDUCTIONS.try_with(|c| {
            if let Ok(mut c) = c.try_borrow_mut() {
                if c.len() < 32 {
                    c.push((key.0, key.1, made.clone()));
                }
            }
        });
    }
    Ok(made)
}

fn make_reduction(op: MPI_Op, dtype: MPI_Datatype) -> CResult<mpicd::schedule::Reduction> {
    let elem = Elem::of(dtype)?;
    let red = Reduction::of(op, dtype, &elem)?;
    let order = red.order();
    Ok(mpicd::schedule::Reduction {
        combine: red.into_combine(),
        order,
        unit: elem.packed(1)?.max(1),
    })
}
