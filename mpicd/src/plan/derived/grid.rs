//! Types that select part of an n-dimensional array: [`Datatype::subarray`] and
//! [`Datatype::darray`] (the block of a distributed array one process owns). Both are built as
//! the standard defines them, from vector, indexed and resized types, so their plan, bounds and
//! type map are those of that equivalent type.

use super::{Constructor, Datatype};
use crate::error::{Error, Result};

/// Storage order of an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Row-major: the last index varies fastest.
    C,
    /// Column-major: the first index varies fastest.
    Fortran,
}

/// How one dimension of a distributed array is spread over the processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distribution {
    None,
    Block,
    Cyclic,
}

/// The distribution argument that asks for the default block size.
pub const DISTRIBUTE_DFLT_DARG: i64 = -49767;

fn bad(msg: String) -> Error {
    Error::InvalidArgument(msg)
}

/// Dimension indices from the fastest-varying to the slowest.
fn fastest_first(n: usize, order: Order) -> Vec<usize> {
    match order {
        Order::Fortran => (0..n).collect(),
        Order::C => (0..n).rev().collect(),
    }
}

impl Datatype {
    /// The `subsizes` block starting at `starts` of an array of `sizes` elements of `old`; the
    /// extent is the whole array's.
    ///
    /// A halo exchange along a ring: each rank's 6 x 8 grid has a one-cell halo; its last
    /// interior column goes to the next rank's left halo.
    ///
    /// ```no_run
    /// use mpicd::{Datatype, ElementType, Order};
    /// let f64_t = Datatype::of(ElementType::F64);
    /// let column = |at| Datatype::subarray(&[6, 8], &[4, 1], &[1, at], Order::C, &f64_t);
    /// let (last_interior, left_halo) = (column(6)?, column(0)?);
    /// assert_eq!((left_halo.size(), left_halo.extent()), (4 * 8, 6 * 8 * 8));
    /// let mpi = mpicd::init()?;
    /// let world = mpi.world();
    /// let (rank, size) = (world.rank(), world.size());
    /// let grid = vec![rank as f64; 6 * 8];
    /// let mut next_grid = grid.clone();
    /// mpicd::scope(|s| {
    ///     let from = (rank + size - 1) % size;
    ///     let r = world.irecv_typed(s, &mut next_grid, 1, &left_halo, from, 0)?;
    ///     world.isend_typed(s, &grid, 1, &last_interior, (rank + 1) % size, 0)?.wait()?;
    ///     r.wait()
    /// })?;
    /// # Ok::<(), mpicd::Error>(())
    /// ```
    pub fn subarray(
        sizes: &[u64],
        subsizes: &[u64],
        starts: &[u64],
        order: Order,
        old: &Datatype,
    ) -> Result<Datatype> {
        let n = sizes.len();
        if n == 0 || subsizes.len() != n || starts.len() != n {
            return Err(bad(format!(
                "subarray of {n} dimensions with {} subsizes and {} starts",
                subsizes.len(),
                starts.len()
            )));
        }
        for i in 0..n {
            if sizes[i] == 0 || subsizes[i] > sizes[i] || starts[i] > sizes[i] - subsizes[i] {
                return Err(bad(format!(
                    "dimension {i}: a subarray of {} from {} is outside an array of {}",
                    subsizes[i], starts[i], sizes[i]
                )));
            }
        }
        let ext = old.extent();
        let (mut t, mut stride, mut offset) = (old.clone(), ext, 0i64);
        for i in fastest_first(n, order) {
            t = Datatype::hvector(subsizes[i], 1, stride, &t)?;
            offset = offset
                .checked_add(stride.checked_mul(starts[i] as i64).ok_or_else(too_large)?)
                .ok_or_else(too_large)?;
            stride = stride.checked_mul(sizes[i] as i64).ok_or_else(too_large)?;
        }
        let placed = Datatype::hindexed(&[1], &[offset], &t)?;
        let eq = Datatype::resized(&placed, 0, stride)?;
        let ctor = Constructor::Subarray {
            sizes: sizes.to_vec(),
            subsizes: subsizes.to_vec(),
            starts: starts.to_vec(),
            order,
            old: old.clone(),
        };
        Ok(Datatype::standing_for(eq, ctor))
    }

    /// The part of a `gsizes` array of `old`, distributed over a `psizes` process grid (ranks
    /// in row-major order) by `distribs` and `dargs`, that process `rank` of `size` owns.
    #[allow(clippy::too_many_arguments)]
    pub fn darray(
        size: u32,
        rank: u32,
        gsizes: &[u64],
        distribs: &[Distribution],
        dargs: &[i64],
        psizes: &[u32],
        order: Order,
        old: &Datatype,
    ) -> Result<Datatype> {
        let n = gsizes.len();
        if n == 0 || distribs.len() != n || dargs.len() != n || psizes.len() != n {
            return Err(bad("darray arguments of different lengths".into()));
        }
        let procs: u64 = psizes.iter().map(|&p| p as u64).product();
        if procs != size as u64 || rank >= size {
            return Err(bad(format!(
                "a process grid of {procs} for {size} processes (rank {rank})"
            )));
        }
        // Coordinates of `rank` in the row-major process grid.
        let mut coords = vec![0u64; n];
        let mut r = rank as u64;
        for i in (0..n).rev() {
            coords[i] = r % psizes[i] as u64;
            r /= psizes[i] as u64;
        }
        let ext = old.extent();
        let (mut t, mut stride) = (old.clone(), ext);
        for i in fastest_first(n, order) {
            let (lens, starts) =
                local_blocks(gsizes[i], distribs[i], dargs[i], psizes[i], coords[i])
                    .map_err(|e| bad(format!("dimension {i}: {e}")))?;
            let displs: Vec<i64> = starts.iter().map(|&s| s as i64 * stride).collect();
            let unit = Datatype::resized(&t, 0, stride)?;
            t = Datatype::hindexed(&lens, &displs, &unit)?;
            stride = stride.checked_mul(gsizes[i] as i64).ok_or_else(too_large)?;
        }
        let eq = Datatype::resized(&t, 0, stride)?;
        let ctor = Constructor::Darray {
            size,
            rank,
            gsizes: gsizes.to_vec(),
            distribs: distribs.to_vec(),
            dargs: dargs.to_vec(),
            psizes: psizes.to_vec(),
            order,
            old: old.clone(),
        };
        Ok(Datatype::standing_for(eq, ctor))
    }
}

fn too_large() -> Error {
    bad("array larger than 2^63 bytes".into())
}

/// The blocks (lengths, starting indices) of one dimension of `g` elements that coordinate `c`
/// of `p` processes owns.
fn local_blocks(
    g: u64,
    d: Distribution,
    darg: i64,
    p: u32,
    c: u64,
) -> std::result::Result<(Vec<u64>, Vec<u64>), String> {
    let p = p as u64;
    match d {
        Distribution::None => {
            if p != 1 {
                return Err(format!("not distributed, over {p} processes"));
            }
            Ok((vec![g], vec![0]))
        }
        Distribution::Block => {
            let b = if darg == DISTRIBUTE_DFLT_DARG {
                g.div_ceil(p)
            } else if darg > 0 && (darg as u64).saturating_mul(p) >= g {
                darg as u64
            } else {
                return Err(format!(
                    "block size {darg} for {g} elements over {p} processes"
                ));
            };
            let start = (c * b).min(g);
            let len = b.min(g - start);
            Ok((vec![len], vec![start]))
        }
        Distribution::Cyclic => {
            let k = if darg == DISTRIBUTE_DFLT_DARG {
                1
            } else if darg > 0 {
                darg as u64
            } else {
                return Err(format!("cyclic block size {darg}"));
            };
            let (mut lens, mut starts) = (Vec::new(), Vec::new());
            let mut s = c * k;
            while s < g {
                lens.push(k.min(g - s));
                starts.push(s);
                s += p * k;
            }
            Ok((lens, starts))
        }
    }
}
