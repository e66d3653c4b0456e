//! Derived datatypes across ranks: a matrix column against contiguous elements both ways,
//! slices of padded and nested structs through `Equivalence`, a subarray halo exchange on a
//! ring, strided vectors of 8 and 64 MiB and vectors of a few long runs, counts stepping by the extent of a resized type with
//! a negative lower bound, truncation, a matched probe received through a derived type,
//! synchronous sends, derived-typed messages among the other kinds, and the README's example.
//! Every case checks the data that arrived and the bytes that must not move.
//!
//! `layouts.rs` has the cases about where bytes go, `semantics.rs` those about how messages
//! behave (truncation, probes, modes, kinds, cancels).
// mpi-test: ranks=2,4 timeout=300 modes=shm,tcp,remote

#[macro_use]
#[path = "../common/mod.rs"]
mod common;
mod layouts;
mod semantics;

use common::CaseResult;
use layouts::*;
use mpicd::{Communicator, Datatype, ElementType};
use semantics::*;

/// The ring neighbours of this rank: (next, previous).
pub fn ring(w: &Communicator) -> (i32, i32) {
    let (rank, size) = (w.rank(), w.size());
    ((rank + 1) % size, (rank + size - 1) % size)
}

pub fn f64_type() -> Datatype {
    Datatype::of(ElementType::F64)
}

/// A value that names its origin: rank, and two indices.
pub fn val(rank: i32, i: usize, j: usize) -> f64 {
    rank as f64 * 1e6 + i as f64 * 1e3 + j as f64
}

pub const ROWS: usize = 300;
pub const COLS: usize = 70;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Particle {
    pub id: u8,
    pub pos: [f64; 3],
    pub charge: i16,
    pub mass: f32,
}
mpicd::equivalence!(Particle {
    id,
    pos,
    charge,
    mass
});

#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Cell {
    pub level: u16,
    pub centre: Particle,
    pub corners: [Particle; 2],
    pub flags: [u8; 3],
}
mpicd::equivalence!(Cell {
    level,
    centre,
    corners,
    flags
});

pub fn particle(rank: i32, k: usize) -> Particle {
    Particle {
        id: (k % 251) as u8,
        pos: [val(rank, k, 0), val(rank, k, 1), -(k as f64)],
        charge: (k as i16).wrapping_mul(7) - rank as i16,
        mass: k as f32 * 0.25,
    }
}

pub fn cell(rank: i32, k: usize) -> Cell {
    Cell {
        level: k as u16,
        centre: particle(rank, k),
        corners: [particle(rank, k + 1), particle(rank, 2 * k)],
        flags: [rank as u8, k as u8, 0xF0],
    }
}

/// The README's example of derived datatypes, as it is there (with `pub` added).
#[rustfmt::skip]
mod readme {
    use mpicd::{Datatype, Equivalence};

    #[derive(Clone, Copy, Default)]
    #[repr(C)]
    pub struct Particle { pub id: u8, pub pos: [f64; 3], pub mass: f32 } // padding never travels
    mpicd::equivalence!(Particle { id, pos, mass });    // offsets from offset_of!, extent = size

    pub fn exchange(world: &mpicd::Communicator, out: &[Particle], inc: &mut [Particle],
                    grid: &mut [f64]) -> mpicd::Result<()> {
        let next = (world.rank() + 1) % world.size();
        let prev = (world.rank() + world.size() - 1) % world.size();
        mpicd::scope(|s| {
            let r = world.irecv_values(s, inc, prev, 0)?;
            world.send_values(out, next, 0)?; // one message of 29-byte values
            let status = r.wait()?;
            assert_eq!(status.count_values::<Particle>(), Some(out.len() as u64));
            // Column 0 of a 10 x 10 grid, received in place from contiguous elements.
            let column = Datatype::vector(10, 1, 10, &f64::equivalent_datatype())?;
            let r = world.irecv_typed(s, grid, 1, &column, prev, 1)?;
            world.send(&[1.0f64; 10], next, 1)?;
            r.wait()
        })?;
        Ok(())
    }
}

fn readme_example(w: &Communicator) -> CaseResult {
    let prev = ring(w).1;
    let mine = |r: i32, k: usize| readme::Particle {
        id: k as u8,
        pos: [r as f64; 3],
        mass: 0.5,
    };
    let out: Vec<readme::Particle> = (0..3).map(|k| mine(w.rank(), k)).collect();
    let mut inc = vec![readme::Particle::default(); 3];
    let mut grid = vec![0.0f64; 100];
    readme::exchange(w, &out, &mut inc, &mut grid)?;
    for (k, p) in inc.iter().enumerate() {
        check!(
            (p.id, p.pos, p.mass) == (k as u8, [prev as f64; 3], 0.5),
            "particle {k}"
        );
    }
    check!(grid
        .iter()
        .enumerate()
        .all(|(k, x)| *x == if k % 10 == 0 { 1.0 } else { 0.0 }));
    Ok(())
}

fn main() {
    common::main(&[
        ("matrix column as vector <-> contiguous", &matrix_column),
        ("struct slices through Equivalence", &struct_slices),
        ("subarray halo exchange on a ring", &halo_exchange),
        ("strided vectors of 8 and 64 MiB", &large_vectors),
        (
            "count > 1 by the extent, negative lb",
            &count_steps_by_extent,
        ),
        ("truncation into a derived type", &truncation),
        ("matched probe into a derived type", &matched_probe),
        ("synchronous derived-typed sends", &synchronous),
        ("among other kinds, cancels, PROC_NULL", &kinds_and_cancels),
        ("the README's example", &readme_example),
    ])
}
