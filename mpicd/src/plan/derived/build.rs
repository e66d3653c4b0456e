//! How a constructor computes a type: its blocks (`count` consecutive instances of a type at a
//! byte displacement, in type-map order) accumulate the bounds, size, element count,
//! alignment and plan that [`Parts::finish`] turns into a [`Datatype`].

use super::layout::{Builder, Layout};
use super::{Constructor, Datatype, Inner, Leaves};
use crate::error::{Error, Result};
use std::sync::Arc;

/// Lower and upper bounds, and the true bounds of the data, accumulated over blocks.
#[derive(Clone, Copy)]
pub(super) struct Bounds {
    lb: i128,
    ub: i128,
    /// True lower and upper bound: the lowest and one past the highest byte of data; `None`
    /// while there is no data (a block of a type of size 0 adds none, wherever it is placed).
    data: Option<(i128, i128)>,
}

impl Bounds {
    fn union(a: Option<Bounds>, b: Bounds) -> Bounds {
        match a {
            None => b,
            Some(a) => Bounds {
                lb: a.lb.min(b.lb),
                ub: a.ub.max(b.ub),
                data: match (a.data, b.data) {
                    (Some((l1, u1)), Some((l2, u2))) => Some((l1.min(l2), u1.max(u2))),
                    (x, None) | (None, x) => x,
                },
            },
        }
    }

    /// Bounds of `count > 0` consecutive `old`s at `disp`.
    fn block(old: &Datatype, count: u64, disp: i128) -> Bounds {
        let o = &old.0;
        let span = (count as i128 - 1) * o.extent as i128;
        let (lo, hi) = (span.min(0), span.max(0));
        Bounds {
            lb: disp + o.lb as i128 + lo,
            ub: disp + o.lb as i128 + o.extent as i128 + hi,
            data: (o.size > 0)
                .then(|| (disp + o.true_lb as i128 + lo, disp + o.true_ub as i128 + hi)),
        }
    }
}

fn fit(v: i128, what: &str) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::InvalidArgument(format!("{what} overflows 64 bits")))
}

fn mul(a: u64, b: u64) -> Result<u64> {
    a.checked_mul(b)
        .ok_or_else(|| Error::InvalidArgument("datatype larger than 2^64 bytes".into()))
}

/// The parts of a type under construction: each block is `count` consecutive instances of a
/// type at a byte displacement, in type-map order.
pub(super) struct Parts {
    layout: Builder,
    bounds: Option<Bounds>,
    size: u64,
    elements: u64,
    align: usize,
    explicit: bool,
    leaves: Leaves,
}

impl Parts {
    pub(super) fn new() -> Parts {
        Parts {
            layout: Builder::default(),
            bounds: None,
            size: 0,
            elements: 0,
            align: 1,
            explicit: false,
            leaves: Leaves::Empty,
        }
    }

    /// Adds `count` consecutive `old`s at byte displacement `disp`.
    pub(super) fn block(&mut self, old: &Datatype, count: u64, disp: i64) -> Result<()> {
        self.blocks(old, count, disp, 1, 0)
    }

    /// Adds `n` blocks of `count` consecutive `old`s, the first at `disp`, each `stride` bytes
    /// after the previous (a vector's blocks).
    pub(super) fn blocks(
        &mut self,
        old: &Datatype,
        count: u64,
        disp: i64,
        n: u64,
        stride: i64,
    ) -> Result<()> {
        if count == 0 || n == 0 {
            return Ok(());
        }
        let o = &old.0;
        let first = Bounds::block(old, count, disp as i128);
        let last = Bounds::block(old, count, disp as i128 + (n as i128 - 1) * stride as i128);
        self.bounds = Some(Bounds::union(Some(Bounds::union(self.bounds, first)), last));
        let total = mul(count, n)?;
        self.size = self
            .size
            .checked_add(mul(total, o.size)?)
            .ok_or_else(|| Error::InvalidArgument("datatype larger than 2^64 bytes".into()))?;
        self.elements = self
            .elements
            .saturating_add(total.saturating_mul(o.elements));
        self.align = self.align.max(o.align);
        self.explicit |= o.explicit;
        self.leaves = self.leaves.join(o.leaves);
        if n == 1 {
            self.layout.repeat(disp, count, o.extent, &o.layout);
        } else {
            let inner = Layout::repeated(&o.layout, count, o.extent);
            self.layout.repeat(disp, n, stride, &inner);
        }
        Ok(())
    }

    pub(super) fn finish(self, ctor: Constructor, pad: bool) -> Result<Datatype> {
        let b = self.bounds.unwrap_or(Bounds {
            lb: 0,
            ub: 0,
            data: None,
        });
        // A type without data has true bounds 0 and 0.
        let (tlb, tub) = b.data.unwrap_or((0, 0));
        let mut extent = b.ub - b.lb;
        if pad && !self.explicit && self.align > 1 {
            let a = self.align as i128;
            extent = (extent + a - 1) / a * a;
        }
        Ok(Datatype(Arc::new(Inner {
            ctor,
            size: self.size,
            lb: fit(b.lb, "lower bound")?,
            extent: fit(extent, "extent")?,
            true_lb: fit(tlb, "true lower bound")?,
            true_ub: fit(tub, "true upper bound")?,
            align: self.align,
            explicit: self.explicit,
            elements: self.elements,
            leaves: self.leaves,
            layout: Arc::new(self.layout.finish()),
            expansion: None,
        })))
    }
}

pub(super) fn same_len(a: usize, b: usize) -> Result<()> {
    if a != b {
        return Err(Error::InvalidArgument(format!(
            "{a} block lengths for {b} displacements"
        )));
    }
    Ok(())
}

pub(super) fn scaled(d: i64, extent: i64) -> Result<i64> {
    d.checked_mul(extent)
        .ok_or_else(|| Error::InvalidArgument("displacement overflows 64 bits".into()))
}
