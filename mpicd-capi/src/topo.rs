//! The Cartesian topology calls (MPI_Dims_create, MPI_Cart_*, MPI_Cartdim_get) and
//! MPI_Topo_test, with the helpers the graph calls (`topo_graph.rs`) share: a communicator's
//! topology lives in its handle entry (`comms::CommEntry::topo`, kept by MPI_Comm_dup), the
//! arithmetic in [`mpicd::topology`]. A new topology's communicator is a split of the old one
//! that keeps the ranks' order (`reorder` is accepted and ignored); processes beyond the
//! topology's size get MPI_COMM_NULL.

use crate::abi::*;
use crate::comms::{self, insert_with, run_on, COMMS};
use crate::env::{new_comm_out, out, require};
use crate::errors::{fail, run, CResult};
use mpicd::topology::{dims_create, Cart, Neighbor, Topology};
use mpicd::Communicator;
use std::ffi::c_int;
use std::sync::Arc;

/// The topology of `comm`, if it has one.
pub(crate) fn topology(comm: MPI_Comm) -> Option<Arc<Topology>> {
    COMMS.with(comm as usize, |e| e.topo.clone()).flatten()
}

/// The Cartesian grid of `comm` (MPI_ERR_TOPOLOGY if it has none).
fn cart(comm: MPI_Comm) -> CResult<Cart> {
    match topology(comm).as_deref() {
        Some(Topology::Cart(c)) => Ok(c.clone()),
        _ => Err(fail(
            MPI_ERR_TOPOLOGY,
            "the communicator has no Cartesian topology",
        )),
    }
}

/// `n` entries of a C array (MPI_ERR_ARG if it is null and `n` > 0).
///
/// # Safety
/// `p` must hold `n` readable entries when `n` > 0.
pub(crate) unsafe fn array<T: Copy>(p: *const T, n: usize, what: &str) -> CResult<Vec<T>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    require(p, what)?;
    // SAFETY: the caller's promise: `n` entries at a non-null `p`.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }.to_vec())
}

/// Writes `values` to the C array at `p` (MPI_ERR_ARG if it is null and there are values).
///
/// # Safety
/// `p` must have room for `values.len()` entries when there are any.
pub(crate) unsafe fn write_array<T: Copy>(p: *mut T, values: &[T], what: &str) -> CResult<()> {
    if values.is_empty() {
        return Ok(());
    }
    require(p, what)?;
    // SAFETY: the caller's promise: room for `values.len()` entries at a non-null `p`.
    unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), p, values.len()) };
    Ok(())
}

/// A count argument as a length (MPI_ERR_ARG if negative).
pub(crate) fn length(n: c_int, what: &str) -> CResult<usize> {
    usize::try_from(n).map_err(|_| fail(MPI_ERR_ARG, format!("negative {what} {n}")))
}

/// A topology needs an intra-communicator.
pub(crate) fn require_intra(c: &Communicator, call: &str) -> CResult<()> {
    match c.is_inter() {
        true => Err(fail(
            MPI_ERR_COMM,
            format!("{call} needs an intra-communicator"),
        )),
        false => Ok(()),
    }
}

/// The communicator of the first `n` processes of `c`, carrying `topo` (collective);
/// MPI_COMM_NULL for the others.
pub(crate) fn make(c: &Communicator, old: MPI_Comm, n: i32, topo: Topology) -> CResult<MPI_Comm> {
    let color = if c.rank() < n { 0 } else { mpicd::UNDEFINED };
    Ok(match c.split(color, c.rank())? {
        Some(made) => insert_with(made, old, Some(Arc::new(topo))),
        None => MPI_COMM_NULL,
    })
}

/// A rank argument as MPI_PROC_NULL or a rank.
pub(crate) fn c_rank(n: Neighbor) -> c_int {
    n.unwrap_or(MPI_PROC_NULL)
}

/// A grid from C arguments, checked (MPI_ERR_DIMS for a negative count or dimension).
unsafe fn grid(ndims: c_int, dims: *const c_int, periods: *const c_int) -> CResult<Cart> {
    if ndims < 0 {
        return Err(fail(
            MPI_ERR_DIMS,
            format!("negative number of dimensions {ndims}"),
        ));
    }
    // SAFETY: MPI requires `ndims` entries in each array.
    let (dims, periods) = unsafe {
        (
            array(dims, ndims as usize, "dims")?,
            array(periods, ndims as usize, "periods")?,
        )
    };
    if let Some(d) = dims.iter().find(|&&d| d <= 0) {
        return Err(fail(MPI_ERR_DIMS, format!("dimension {d} is not positive")));
    }
    Ok(Cart {
        dims,
        periods: periods.iter().map(|&p| p != 0).collect(),
    })
}

/// The grid's size, at most `c`'s.
fn grid_size(c: &Communicator, g: &Cart) -> CResult<i32> {
    match g.size() {
        Some(n) if n <= c.size() => Ok(n),
        _ => Err(fail(
            MPI_ERR_ARG,
            format!(
                "the grid {:?} has more points than the {} processes",
                g.dims,
                c.size()
            ),
        )),
    }
}

/// Fills the zero entries of `dims` with a balanced factoring of `nnodes`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
    run("Dims_create", comms::default_errh(), |_| {
        crate::env::check_live()?;
        if ndims < 0 {
            return Err(fail(
                MPI_ERR_DIMS,
                format!("negative number of dimensions {ndims}"),
            ));
        }
        // SAFETY: MPI requires `ndims` entries at `dims`.
        let mut d = unsafe { array(dims, ndims as usize, "dims") }?;
        dims_create(nnodes, &mut d).map_err(|e| fail(MPI_ERR_DIMS, e))?;
        // SAFETY: as above.
        unsafe { write_array(dims, &d, "dims") }
    })
}

/// A communicator of the first product-of-`dims` processes of `comm_old` carrying a
/// Cartesian grid (collective); the others get MPI_COMM_NULL.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_create(
    comm_old: MPI_Comm,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    reorder: c_int,
    comm_cart: *mut MPI_Comm,
) -> c_int {
    let _ = reorder;
    run_on("Cart_create", comm_old, |c| {
        new_comm_out(comm_cart, "comm_cart")?;
        require_intra(&c, "MPI_Cart_create")?;
        // SAFETY: MPI's rules for the arrays.
        let g = unsafe { grid(ndims, dims, periods) }?;
        let n = grid_size(&c, &g)?;
        out(comm_cart, make(&c, comm_old, n, Topology::Cart(g))?)
    })
}

/// The rank this process would have in a grid of `dims` (MPI_UNDEFINED beyond its size).
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_map(
    comm: MPI_Comm,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    run_on("Cart_map", comm, |c| {
        require_intra(&c, "MPI_Cart_map")?;
        // SAFETY: MPI's rules for the arrays.
        let g = unsafe { grid(ndims, dims, periods) }?;
        let n = grid_size(&c, &g)?;
        out(
            newrank,
            if c.rank() < n {
                c.rank()
            } else {
                MPI_UNDEFINED
            },
        )
    })
}

/// The number of dimensions of `comm`'s grid.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cartdim_get(comm: MPI_Comm, ndims: *mut c_int) -> c_int {
    run_on("Cartdim_get", comm, |_| {
        out(ndims, cart(comm)?.dims.len() as c_int)
    })
}

/// The grid's dimensions and periodicity, and this process's coordinates (`maxdims` entries
/// each at most).
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_get(
    comm: MPI_Comm,
    maxdims: c_int,
    dims: *mut c_int,
    periods: *mut c_int,
    coords: *mut c_int,
) -> c_int {
    run_on("Cart_get", comm, |c| {
        let g = cart(comm)?;
        let n = length(maxdims, "maxdims")?.min(g.dims.len());
        let p: Vec<c_int> = g.periods.iter().map(|&p| p as c_int).collect();
        let at = g.coords(c.rank());
        // SAFETY: MPI requires `maxdims` entries in each array.
        unsafe {
            write_array(dims, &g.dims[..n], "dims")?;
            write_array(periods, &p[..n], "periods")?;
            write_array(coords, &at[..n], "coords")
        }
    })
}

/// The rank at `coords` (wrapped in periodic dimensions).
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_rank(
    comm: MPI_Comm,
    coords: *const c_int,
    rank: *mut c_int,
) -> c_int {
    run_on("Cart_rank", comm, |_| {
        let g = cart(comm)?;
        // SAFETY: MPI requires one coordinate per dimension.
        let at = unsafe { array(coords, g.dims.len(), "coords") }?;
        let r = g.rank(&at).ok_or_else(|| {
            fail(
                MPI_ERR_ARG,
                format!("coordinates {at:?} lie outside the grid {:?}", g.dims),
            )
        })?;
        out(rank, r)
    })
}

/// The coordinates of `rank` (`maxdims` entries at most).
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_coords(
    comm: MPI_Comm,
    rank: c_int,
    maxdims: c_int,
    coords: *mut c_int,
) -> c_int {
    run_on("Cart_coords", comm, |c| {
        let g = cart(comm)?;
        if !(0..c.size()).contains(&rank) {
            return Err(fail(MPI_ERR_RANK, format!("invalid rank {rank}")));
        }
        let n = length(maxdims, "maxdims")?;
        if n < g.dims.len() {
            return Err(fail(
                MPI_ERR_ARG,
                format!("maxdims {maxdims} is below the grid's dimensions"),
            ));
        }
        // SAFETY: MPI requires `maxdims` entries.
        unsafe { write_array(coords, &g.coords(rank), "coords") }
    })
}

/// The neighbours `disp` steps below and above this process along `direction`
/// (MPI_PROC_NULL off a non-periodic edge).
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_shift(
    comm: MPI_Comm,
    direction: c_int,
    disp: c_int,
    rank_source: *mut c_int,
    rank_dest: *mut c_int,
) -> c_int {
    run_on("Cart_shift", comm, |c| {
        let g = cart(comm)?;
        let d = usize::try_from(direction)
            .ok()
            .filter(|&d| d < g.dims.len())
            .ok_or_else(|| fail(MPI_ERR_ARG, format!("invalid direction {direction}")))?;
        let (s, t) = g.shift(c.rank(), d, disp);
        require(rank_source, "rank_source")?;
        require(rank_dest, "rank_dest")?;
        out(rank_source, c_rank(s))?;
        out(rank_dest, c_rank(t))
    })
}

/// The sub-grid of the dimensions `remain_dims` keeps that this process lies in (collective);
/// keeping none gives a 0-dimensional grid of this process alone.
#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_sub(
    comm: MPI_Comm,
    remain_dims: *const c_int,
    newcomm: *mut MPI_Comm,
) -> c_int {
    run_on("Cart_sub", comm, |c| {
        new_comm_out(newcomm, "newcomm")?;
        let g = cart(comm)?;
        // SAFETY: MPI requires one entry per dimension.
        let keep: Vec<bool> = unsafe { array(remain_dims, g.dims.len(), "remain_dims") }?
            .into_iter()
            .map(|k| k != 0)
            .collect();
        let (color, key) = g.sub_color_key(c.rank(), &keep);
        let sub = Topology::Cart(g.sub(&keep));
        let made = match c.split(color, key)? {
            Some(s) => insert_with(s, comm, Some(Arc::new(sub))),
            None => MPI_COMM_NULL,
        };
        out(newcomm, made)
    })
}

/// The kind of `comm`'s topology: MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH or MPI_UNDEFINED.
#[no_mangle]
pub unsafe extern "C" fn MPI_Topo_test(comm: MPI_Comm, status: *mut c_int) -> c_int {
    run_on("Topo_test", comm, |_| {
        let kind = match topology(comm).as_deref() {
            Some(Topology::Cart(_)) => MPI_CART,
            Some(Topology::Graph(_)) => MPI_GRAPH,
            Some(Topology::DistGraph(_)) => MPI_DIST_GRAPH,
            None => MPI_UNDEFINED,
        };
        out(status, kind)
    })
}
