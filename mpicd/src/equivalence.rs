//! Rust types as derived datatypes: the [`Equivalence`] trait (a type and the [`Datatype`]
//! that describes its bytes), its implementations for the primitive numbers and arrays, the
//! [`equivalence!`](crate::equivalence!) macro that derives it for a struct from its fields,
//! and the safe point-to-point calls over slices of such values (`send_values`,
//! `recv_values`, their scoped non-blocking forms, `Message::recv_values`).
//!
//! A slice of `T` travels as `len` instances of `T`'s datatype, stepping by
//! `size_of::<T>()`: one message of the fields' bytes, in the order the datatype lists them.
//! Padding is never read by a send (the walker copies only the bytes the type map names) and
//! never written by a receive, and a struct whose fields leave no padding goes in place, as one
//! contiguous run. The message matches any receive of the same type signature (a receive of
//! plain elements, another layout, a matched probe).
//!
//! ```no_run
//! use mpicd::Equivalence;
//!
//! #[derive(Clone, Copy, Debug, Default, PartialEq)]
//! #[repr(C)]
//! struct Particle {
//!     id: u8,         // 7 bytes of padding follow: they never travel
//!     pos: [f64; 3],
//!     mass: f32,
//! }
//! mpicd::equivalence!(Particle { id, pos, mass });
//!
//! let mpi = mpicd::init()?;
//! let world = mpi.world();
//! assert_eq!(Particle::equivalent_datatype().size(), 1 + 24 + 4);
//! if world.rank() == 0 {
//!     let ps = [Particle { id: 1, pos: [0.5; 3], mass: 2.0 }; 8];
//!     world.send_values(&ps, 1, 0)?;
//! } else if world.rank() == 1 {
//!     let mut ps = [Particle::default(); 8];
//!     let status = world.recv_values(&mut ps, 0, 0)?;
//!     assert_eq!(status.count_values::<Particle>(), Some(8));
//!     // Non-blocking: the buffer is lent to a scope, which completes the receive.
//!     mpicd::scope(|s| world.irecv_values(s, &mut ps[..4], 0, 1)?.wait())?;
//! }
//! mpi.finalize()?;
//! # Ok::<(), mpicd::Error>(())
//! ```

use crate::datatype::ElementType;
use crate::plan::derived::Datatype;
use std::marker::PhantomData;
use std::mem::size_of;

mod calls;
#[cfg(test)]
mod tests;

/// A type whose values travel as the bytes its [`Datatype`] describes.
///
/// Implement it with [`equivalence!`](crate::equivalence!) for a struct; it is implemented for
/// the primitive numbers, `usize`/`isize`, arrays of `Equivalence` types, `()` and
/// [`PhantomData`]. Not for `bool`, `char`, references, enums or `NonZero*`: a receive writes
/// whatever bytes arrive, and those types have bit patterns that are not values.
///
/// # Safety
/// An implementation promises, for [`Equivalence::equivalent_datatype`] placed at the start of
/// a value of `Self`:
/// - its lower bound is 0 and its extent is `size_of::<Self>()`;
/// - every byte its type map names lies inside the value and is initialized in every value of
///   `Self` (never padding, never inside a `MaybeUninit`), and is not inside an `UnsafeCell`;
/// - writing any bytes to the bytes it names leaves a valid `Self`: every field it covers
///   accepts every bit pattern, and `Self` has no invariant linking those bytes.
///
/// A type map need not cover every field: the bytes it leaves out do not travel.
pub unsafe trait Equivalence: Sized {
    /// The datatype of one value.
    fn equivalent_datatype() -> Datatype;
}

macro_rules! primitive_equivalence {
    ($($t:ty => $e:ident),* $(,)?) => {
        $(
            // SAFETY: a primitive number: no padding, every bit pattern a value, and the
            // element type's size is the Rust type's (checked in the tests).
            unsafe impl Equivalence for $t {
                fn equivalent_datatype() -> Datatype {
                    Datatype::of(ElementType::$e)
                }
            }
        )*
    };
}

primitive_equivalence!(i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32,
                       i64 => I64, u64 => U64, f32 => F32, f64 => F64);
#[cfg(target_pointer_width = "64")]
primitive_equivalence!(isize => I64, usize => U64);
#[cfg(target_pointer_width = "32")]
primitive_equivalence!(isize => I32, usize => U32);

/// A type of size 0: no bytes, extent 0.
fn empty() -> Datatype {
    Datatype::structure(&[], &[], &[]).expect("an empty struct is a datatype")
}

// SAFETY: the empty type map names no byte; size and extent 0.
unsafe impl Equivalence for () {
    fn equivalent_datatype() -> Datatype {
        empty()
    }
}

// SAFETY: as for `()`.
unsafe impl<T: ?Sized> Equivalence for PhantomData<T> {
    fn equivalent_datatype() -> Datatype {
        empty()
    }
}

// SAFETY: `N` consecutive elements, each `size_of::<T>()` (T's extent, by T's contract) after
// the previous, which is how an array lays them out; each element's bytes are as T promises.
unsafe impl<T: Equivalence, const N: usize> Equivalence for [T; N] {
    fn equivalent_datatype() -> Datatype {
        let elements = Datatype::contiguous(N as u64, &T::equivalent_datatype());
        elements
            .and_then(|t| Datatype::resized(&t, 0, size_of::<Self>() as i64))
            .expect("an array of datatypes is a datatype")
    }
}

/// Implements [`Equivalence`] for a struct from its fields: each field's offset
/// (`std::mem::offset_of!`) and type (which must implement `Equivalence`), with the struct's
/// size as extent. Every field must be named, once (tuple structs name them `0`, `1`, ...);
/// the order given is the order of the message's bytes, which sender and receiver share.
///
/// Works for any non-generic struct with named or numbered fields, `#[repr(C)]` or not (the
/// message carries the fields in the listed order, whatever the layout); not for packed
/// structs, unions or enums (they do not compile). Invoke it only where the struct's fields
/// carry no invariant beyond their own types: a receive writes any bytes to them.
///
/// ```
/// use mpicd::Equivalence;
///
/// #[repr(C)]
/// struct Cell {
///     kind: u8,
///     value: f64,
///     neighbours: [i32; 4],
/// }
/// mpicd::equivalence!(Cell { kind, value, neighbours });
///
/// let ty = Cell::equivalent_datatype();
/// assert_eq!(ty.size(), 1 + 8 + 16); // the data, not the padding
/// assert_eq!(ty.extent(), std::mem::size_of::<Cell>() as i64);
/// ```
///
/// A field whose type is not `Equivalence` (here `bool`) is refused:
///
/// ```compile_fail,E0277
/// struct Flagged { on: bool, value: f64 }
/// mpicd::equivalence!(Flagged { on, value });
/// ```
///
/// and so is a field left out:
///
/// ```compile_fail
/// struct Point { x: f64, y: f64 }
/// mpicd::equivalence!(Point { x });
/// ```
#[macro_export]
macro_rules! equivalence {
    ($name:ident { $($field:tt),* $(,)? }) => {
        // SAFETY: each field's type implements `Equivalence` (`field_type` requires it), its
        // datatype is placed at the field's offset, the struct's bytes outside the fields are
        // never named, and the extent is the struct's size. The pattern below names every field
        // once, so none is left out.
        unsafe impl $crate::Equivalence for $name {
            fn equivalent_datatype() -> $crate::Datatype {
                #[allow(dead_code)]
                fn every_field_once(value: &$name) {
                    let $name { $($field: _),* } = value;
                }
                static TYPE: ::std::sync::OnceLock<$crate::Datatype> = ::std::sync::OnceLock::new();
                TYPE.get_or_init(|| {
                    $crate::equivalence::struct_type(
                        ::std::mem::size_of::<$name>(),
                        &[$((
                            ::std::mem::offset_of!($name, $field),
                            $crate::equivalence::field_type(|v: &$name| &v.$field),
                        )),*],
                    )
                })
                .clone()
            }
        }
    };
}

/// The datatype of the field `field` projects to (used by [`equivalence!`](crate::equivalence!)).
#[doc(hidden)]
pub fn field_type<S, F: Equivalence>(field: fn(&S) -> &F) -> Datatype {
    let _ = field;
    F::equivalent_datatype()
}

/// A struct of `size` bytes whose fields are at the given offsets, with the given datatypes
/// (used by [`equivalence!`](crate::equivalence!)).
#[doc(hidden)]
pub fn struct_type(size: usize, fields: &[(usize, Datatype)]) -> Datatype {
    let lengths = vec![1; fields.len()];
    let offsets: Vec<i64> = fields.iter().map(|(at, _)| *at as i64).collect();
    let types: Vec<Datatype> = fields.iter().map(|(_, t)| t.clone()).collect();
    Datatype::structure(&lengths, &offsets, &types)
        .and_then(|t| Datatype::resized(&t, 0, size as i64))
        .expect("a struct's fields make a datatype")
}
