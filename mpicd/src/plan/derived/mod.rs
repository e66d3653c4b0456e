//! Derived datatypes: MPI's type constructors (contiguous, vector, indexed, struct, subarray,
//! darray, resized, dup) over basic elements, their bounds (lower bound, extent, true extent),
//! size and element counts as the MPI standard defines them, and the flat plan each compiles
//! into ([`layout`]): runs of (displacement, length) in the type map's order, adjacent runs
//! merged, repetitions kept as loops, so that a vector of 10^8 blocks is one loop, never a list
//! of 10^8 entries. [`walk`] moves the bytes of `count` instances between memory and a packed
//! stream from any offset, which is how a derived type travels: as one message whose bytes are
//! its type signature's, so that it matches any receive of the same signature.

mod build;
mod elements;
mod grid;
pub(crate) mod layout;
#[cfg(test)]
mod random_tests;
#[cfg(test)]
mod tests;
pub(crate) mod walk;

use build::{same_len, scaled, Parts};
pub use grid::{Distribution, Order, DISTRIBUTE_DFLT_DARG};
use layout::{Builder, Layout};
pub use walk::TypedBuf;

use crate::datatype::ElementType;
use crate::error::{Error, Result};
use std::sync::Arc;

/// A basic element: the leaf of every datatype. `id` names it for the layer above (the C
/// library uses the predefined handle's value); the core only needs its size and alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Basic {
    pub id: usize,
    pub size: usize,
    pub align: usize,
    /// Basic elements it counts as (2 for MPI's pair types such as `MPI_2INT`).
    pub parts: usize,
}

impl Basic {
    /// The basic element of a primitive element type (`id` is its wire code).
    pub const fn element(e: ElementType) -> Basic {
        Basic {
            id: e.code() as usize,
            size: e.size(),
            align: e.size(),
            parts: 1,
        }
    }
}

/// How a datatype was made: the constructor and its arguments (what `MPI_Type_get_contents`
/// returns).
#[derive(Debug, Clone)]
pub enum Constructor {
    Basic(Basic),
    Contiguous {
        count: u64,
        old: Datatype,
    },
    /// `stride` in elements of `old`'s extent.
    Vector {
        count: u64,
        blocklength: u64,
        stride: i64,
        old: Datatype,
    },
    /// `stride` in bytes.
    Hvector {
        count: u64,
        blocklength: u64,
        stride: i64,
        old: Datatype,
    },
    /// Displacements in elements of `old`'s extent.
    Indexed {
        blocklengths: Vec<u64>,
        displacements: Vec<i64>,
        old: Datatype,
    },
    /// Displacements in bytes.
    Hindexed {
        blocklengths: Vec<u64>,
        displacements: Vec<i64>,
        old: Datatype,
    },
    IndexedBlock {
        blocklength: u64,
        displacements: Vec<i64>,
        old: Datatype,
    },
    HindexedBlock {
        blocklength: u64,
        displacements: Vec<i64>,
        old: Datatype,
    },
    Struct {
        blocklengths: Vec<u64>,
        displacements: Vec<i64>,
        types: Vec<Datatype>,
    },
    Subarray {
        sizes: Vec<u64>,
        subsizes: Vec<u64>,
        starts: Vec<u64>,
        order: Order,
        old: Datatype,
    },
    Darray {
        size: u32,
        rank: u32,
        gsizes: Vec<u64>,
        distribs: Vec<Distribution>,
        dargs: Vec<i64>,
        psizes: Vec<u32>,
        order: Order,
        old: Datatype,
    },
    Resized {
        lb: i64,
        extent: i64,
        old: Datatype,
    },
    Dup(Datatype),
}

/// What a type's basic elements are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leaves {
    /// No elements at all.
    Empty,
    /// All elements are of this one basic type.
    One(Basic),
    Mixed,
}

impl Leaves {
    fn join(self, other: Leaves) -> Leaves {
        match (self, other) {
            (Leaves::Empty, x) | (x, Leaves::Empty) => x,
            (Leaves::One(a), Leaves::One(b)) if a == b => Leaves::One(a),
            _ => Leaves::Mixed,
        }
    }
}

struct Inner {
    ctor: Constructor,
    /// Bytes of data in one instance.
    size: u64,
    lb: i64,
    extent: i64,
    true_lb: i64,
    true_ub: i64,
    /// The largest alignment of its basic elements.
    align: usize,
    /// Bounds set explicitly (by `resized`, or a constructor the standard defines through it)
    /// somewhere inside: a struct then adds no alignment padding.
    explicit: bool,
    /// Basic elements in one instance.
    elements: u64,
    leaves: Leaves,
    layout: Arc<Layout>,
    /// For a subarray or darray: the equivalent type built from the other constructors, as the
    /// standard defines it (its plan, bounds and type map are this type's).
    expansion: Option<Datatype>,
}

/// A datatype: a basic element or a derived type, shared (cloning is cheap; a type stays
/// alive while any type built on it or any operation using it does).
#[derive(Clone)]
pub struct Datatype(Arc<Inner>);

impl std::fmt::Debug for Datatype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Datatype")
            .field("size", &self.0.size)
            .field("lb", &self.0.lb)
            .field("extent", &self.0.extent)
            .field("runs", &self.0.layout.len())
            .finish()
    }
}

impl Datatype {
    /// A basic element.
    pub fn basic(b: Basic) -> Result<Datatype> {
        if b.size == 0 || b.align == 0 {
            return Err(Error::InvalidArgument("a basic element of size 0".into()));
        }
        let mut layout = Builder::default();
        layout.run(0, b.size as u64);
        Ok(Datatype(Arc::new(Inner {
            ctor: Constructor::Basic(b),
            size: b.size as u64,
            lb: 0,
            extent: b.size as i64,
            true_lb: 0,
            true_ub: b.size as i64,
            align: b.align,
            explicit: false,
            elements: b.parts as u64,
            leaves: Leaves::One(b),
            layout: Arc::new(layout.finish()),
            expansion: None,
        })))
    }

    /// The basic type of a primitive element type.
    pub fn of(e: ElementType) -> Datatype {
        Datatype::basic(Basic::element(e)).expect("element types have a size")
    }

    /// `count` consecutive instances of `old`.
    pub fn contiguous(count: u64, old: &Datatype) -> Result<Datatype> {
        let mut p = Parts::new();
        p.block(old, count, 0)?;
        p.finish(
            Constructor::Contiguous {
                count,
                old: old.clone(),
            },
            false,
        )
    }

    /// `count` blocks of `blocklength` instances of `old`, `stride` extents of `old` apart.
    ///
    /// A column of a row-major matrix, sent from the matrix, received as plain elements:
    ///
    /// ```no_run
    /// use mpicd::{Datatype, ElementType};
    /// let (rows, cols) = (4u64, 6u64);
    /// let column = Datatype::vector(rows, 1, cols as i64, &Datatype::of(ElementType::F64))?;
    /// assert_eq!((column.size(), column.extent()), (4 * 8, (3 * 6 + 1) * 8));
    /// let mpi = mpicd::init()?;
    /// let world = mpi.world();
    /// if world.rank() == 0 {
    ///     let matrix: Vec<f64> = (0..rows * cols).map(|x| x as f64).collect();
    ///     world.send_typed(&matrix[2..], 1, &column, 1, 0)?; // column 2
    /// } else if world.rank() == 1 {
    ///     let mut col = [0.0f64; 4];
    ///     world.recv(&mut col, 0, 0)?;
    ///     assert_eq!(col, [2.0, 8.0, 14.0, 20.0]);
    /// }
    /// # Ok::<(), mpicd::Error>(())
    /// ```
    pub fn vector(count: u64, blocklength: u64, stride: i64, old: &Datatype) -> Result<Datatype> {
        let mut p = Parts::new();
        p.blocks(old, blocklength, 0, count, scaled(stride, old.0.extent)?)?;
        let ctor = Constructor::Vector {
            count,
            blocklength,
            stride,
            old: old.clone(),
        };
        p.finish(ctor, false)
    }

    /// [`Datatype::vector`] with the stride in bytes.
    pub fn hvector(count: u64, blocklength: u64, stride: i64, old: &Datatype) -> Result<Datatype> {
        let mut p = Parts::new();
        p.blocks(old, blocklength, 0, count, stride)?;
        let ctor = Constructor::Hvector {
            count,
            blocklength,
            stride,
            old: old.clone(),
        };
        p.finish(ctor, false)
    }

    /// Blocks of `blocklengths[i]` instances of `old` at `displacements[i]` extents of `old`.
    pub fn indexed(
        blocklengths: &[u64],
        displacements: &[i64],
        old: &Datatype,
    ) -> Result<Datatype> {
        same_len(blocklengths.len(), displacements.len())?;
        let mut p = Parts::new();
        for (&n, &d) in blocklengths.iter().zip(displacements) {
            p.block(old, n, scaled(d, old.0.extent)?)?;
        }
        let ctor = Constructor::Indexed {
            blocklengths: blocklengths.to_vec(),
            displacements: displacements.to_vec(),
            old: old.clone(),
        };
        p.finish(ctor, false)
    }

    /// [`Datatype::indexed`] with displacements in bytes.
    pub fn hindexed(
        blocklengths: &[u64],
        displacements: &[i64],
        old: &Datatype,
    ) -> Result<Datatype> {
        same_len(blocklengths.len(), displacements.len())?;
        let mut p = Parts::new();
        for (&n, &d) in blocklengths.iter().zip(displacements) {
            p.block(old, n, d)?;
        }
        let ctor = Constructor::Hindexed {
            blocklengths: blocklengths.to_vec(),
            displacements: displacements.to_vec(),
            old: old.clone(),
        };
        p.finish(ctor, false)
    }

    /// Blocks of `blocklength` instances of `old` at `displacements[i]` extents of `old`.
    pub fn indexed_block(
        blocklength: u64,
        displacements: &[i64],
        old: &Datatype,
    ) -> Result<Datatype> {
        let mut p = Parts::new();
        for &d in displacements {
            p.block(old, blocklength, scaled(d, old.0.extent)?)?;
        }
        let ctor = Constructor::IndexedBlock {
            blocklength,
            displacements: displacements.to_vec(),
            old: old.clone(),
        };
        p.finish(ctor, false)
    }

    /// [`Datatype::indexed_block`] with displacements in bytes.
    pub fn hindexed_block(
        blocklength: u64,
        displacements: &[i64],
        old: &Datatype,
    ) -> Result<Datatype> {
        let mut p = Parts::new();
        for &d in displacements {
            p.block(old, blocklength, d)?;
        }
        let ctor = Constructor::HindexedBlock {
            blocklength,
            displacements: displacements.to_vec(),
            old: old.clone(),
        };
        p.finish(ctor, false)
    }

    /// Blocks of `blocklengths[i]` instances of `types[i]` at byte displacements
    /// `displacements[i]`; the extent is padded to the largest alignment of its elements unless
    /// a part has explicit bounds.
    pub fn structure(
        blocklengths: &[u64],
        displacements: &[i64],
        types: &[Datatype],
    ) -> Result<Datatype> {
        same_len(blocklengths.len(), displacements.len())?;
        same_len(blocklengths.len(), types.len())?;
        let mut p = Parts::new();
        for ((&n, &d), t) in blocklengths.iter().zip(displacements).zip(types) {
            p.block(t, n, d)?;
        }
        let ctor = Constructor::Struct {
            blocklengths: blocklengths.to_vec(),
            displacements: displacements.to_vec(),
            types: types.to_vec(),
        };
        p.finish(ctor, true)
    }

    /// `old` with lower bound `lb` and extent `extent`.
    pub fn resized(old: &Datatype, lb: i64, extent: i64) -> Result<Datatype> {
        let o = &old.0;
        Ok(Datatype(Arc::new(Inner {
            ctor: Constructor::Resized {
                lb,
                extent,
                old: old.clone(),
            },
            lb,
            extent,
            explicit: true,
            layout: Arc::clone(&o.layout),
            ..o.copy()
        })))
    }

    /// A copy of `old` (same layout, bounds and contents, its own identity).
    pub fn dup(old: &Datatype) -> Datatype {
        let o = &old.0;
        Datatype(Arc::new(Inner {
            ctor: Constructor::Dup(old.clone()),
            layout: Arc::clone(&o.layout),
            ..o.copy()
        }))
    }

    /// True when both are the same type object (a clone of one another), not merely equal
    /// type maps: how the C layer recognizes a type it made (the predefined pair types).
    pub fn same(&self, other: &Datatype) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// How this type was made.
    pub fn constructor(&self) -> &Constructor {
        &self.0.ctor
    }

    /// Bytes of data in one instance (`MPI_Type_size`).
    pub fn size(&self) -> u64 {
        self.0.size
    }

    /// Lower bound (`MPI_Type_get_extent`).
    pub fn lb(&self) -> i64 {
        self.0.lb
    }

    /// Extent: the distance between consecutive instances.
    pub fn extent(&self) -> i64 {
        self.0.extent
    }

    /// The lowest byte of data (`MPI_Type_get_true_extent`).
    pub fn true_lb(&self) -> i64 {
        self.0.true_lb
    }

    /// The span from the lowest to one past the highest byte of data.
    pub fn true_extent(&self) -> i64 {
        self.0.true_ub - self.0.true_lb
    }

    /// Basic elements in one instance.
    pub fn elements(&self) -> u64 {
        self.0.elements
    }

    /// The one basic type all its elements are, if they are all of one.
    pub fn homogeneous(&self) -> Option<Basic> {
        match self.0.leaves {
            Leaves::One(b) => Some(b),
            _ => None,
        }
    }

    /// True for a predefined (basic) type.
    pub fn is_basic(&self) -> bool {
        matches!(self.0.ctor, Constructor::Basic(_))
    }

    /// Number of (displacement, length) runs of one instance in its compiled plan, loops
    /// unrolled (a measure of how scattered it is; never materialised).
    pub fn runs(&self) -> u64 {
        self.0.layout.run_count()
    }

    /// Whether `count` instances are one contiguous run of bytes; then the byte offset of that
    /// run from the buffer's start. (Such a message is sent and received in place.)
    pub fn contiguous_at(&self, count: u64) -> Option<i64> {
        let one = self.0.layout.single_run()?;
        if count <= 1 || one.1 as i64 == self.0.extent {
            Some(one.0)
        } else {
            None
        }
    }

    /// The type map as groups of consecutive instances of a type, in order (none for a basic
    /// type): what the type is made of, one level down.
    pub fn parts(&self) -> Vec<(u64, Datatype)> {
        use Constructor::*;
        match &self.0.ctor {
            Basic(_) => Vec::new(),
            Contiguous { count, old } => vec![(*count, old.clone())],
            Vector {
                count,
                blocklength,
                old,
                ..
            }
            | Hvector {
                count,
                blocklength,
                old,
                ..
            } => {
                vec![(count * blocklength, old.clone())]
            }
            Indexed {
                blocklengths, old, ..
            }
            | Hindexed {
                blocklengths, old, ..
            } => {
                vec![(blocklengths.iter().sum(), old.clone())]
            }
            IndexedBlock {
                blocklength,
                displacements,
                old,
            }
            | HindexedBlock {
                blocklength,
                displacements,
                old,
            } => {
                vec![(blocklength * displacements.len() as u64, old.clone())]
            }
            Struct {
                blocklengths,
                types,
                ..
            } => blocklengths
                .iter()
                .copied()
                .zip(types.iter().cloned())
                .collect(),
            Subarray { .. } | Darray { .. } => {
                self.0.expansion.iter().map(|e| (1, e.clone())).collect()
            }
            Resized { old, .. } | Dup(old) => vec![(1, old.clone())],
        }
    }

    /// The equivalent type of a subarray or darray.
    fn expansion(&self) -> Option<&Datatype> {
        self.0.expansion.as_ref()
    }

    /// `self`, made by `ctor` and standing for `expansion` (subarray, darray).
    fn standing_for(expansion: Datatype, ctor: Constructor) -> Datatype {
        let e = &expansion.0;
        Datatype(Arc::new(Inner {
            ctor,
            expansion: Some(expansion.clone()),
            ..e.copy()
        }))
    }

    pub(crate) fn layout(&self) -> &Layout {
        &self.0.layout
    }
}

impl Inner {
    /// Its computed properties, for a type that shares them (resized, dup).
    fn copy(&self) -> Inner {
        Inner {
            ctor: self.ctor.clone(),
            size: self.size,
            lb: self.lb,
            extent: self.extent,
            true_lb: self.true_lb,
            true_ub: self.true_ub,
            align: self.align,
            explicit: self.explicit,
            elements: self.elements,
            leaves: self.leaves,
            layout: Arc::clone(&self.layout),
            expansion: self.expansion.clone(),
        }
    }
}
