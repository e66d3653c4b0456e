//! Rust types as derived datatypes: the [`Equivalence`] trait (a type and the [`Datatype`]
//! that describes its bytes), its implementations for the primitive numbers and arrays, the
//! [`equivalence!`](crate::equivalence!) macro that derives it for a struct from its fields,
//! and the safe point-to-point calls over slices of such values (`send_values`,
//! `recv_values`, their scoped non-blocking forms and [`Message::recv_values`]).
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

use crate::comm::{Communicator, SendMode};
use crate::datatype::ElementType;
use crate::error::{Error, Result};
use crate::message::Message;
use crate::plan::derived::{Datatype, TypedBuf};
use crate::request::{Request, Scope};
use crate::status::Status;
use crate::typed::check_within;
use std::marker::PhantomData;
use std::mem::size_of;

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

/// `T`'s datatype, checked against `T`'s size, and that `len` values of it fit their slice.
fn datatype_of<T: Equivalence>(len: usize) -> Result<Datatype> {
    let ty = T::equivalent_datatype();
    if ty.extent() != size_of::<T>() as i64 || ty.lb() != 0 {
        return Err(Error::InvalidArgument(format!(
            "the datatype of {} has lower bound {} and extent {}, not 0 and its size {}",
            std::any::type_name::<T>(),
            ty.lb(),
            ty.extent(),
            size_of::<T>()
        )));
    }
    check_within(&ty, len as u64, size_of::<T>() * len)?;
    Ok(ty)
}

/// The values of `buf` as a derived-typed buffer.
fn values<T: Equivalence>(buf: &[T]) -> Result<TypedBuf> {
    let ty = datatype_of::<T>(buf.len())?;
    Ok(TypedBuf::new(buf.as_ptr().cast(), buf.len() as u64, &ty))
}

/// The values of `buf` as a derived-typed buffer to receive into (its address from the
/// exclusive borrow).
fn values_mut<T: Equivalence>(buf: &mut [T]) -> Result<TypedBuf> {
    let ty = datatype_of::<T>(buf.len())?;
    let at: *mut u8 = buf.as_mut_ptr().cast();
    Ok(TypedBuf::new(at, buf.len() as u64, &ty))
}

impl Communicator {
    /// Sends the values of `buf` as one message (standard mode).
    pub fn send_values<T: Equivalence>(&self, buf: &[T], dest: i32, tag: i32) -> Result<()> {
        self.send_values_in(buf, dest, tag, SendMode::Standard)
    }

    /// Sends the values of `buf` and returns once the receiver has matched the message.
    pub fn ssend_values<T: Equivalence>(&self, buf: &[T], dest: i32, tag: i32) -> Result<()> {
        self.send_values_in(buf, dest, tag, SendMode::Synchronous)
    }

    /// Sends one value.
    pub fn send_value<T: Equivalence>(&self, value: &T, dest: i32, tag: i32) -> Result<()> {
        self.send_values(std::slice::from_ref(value), dest, tag)
    }

    fn send_values_in<T: Equivalence>(
        &self,
        buf: &[T],
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<()> {
        let typed = values(buf)?;
        // SAFETY: the type map is inside `buf` and names only initialized bytes (T's
        // contract); the request is waited for (or, on unwinding, dropped, which waits too)
        // before the borrow ends.
        let posted = unsafe { self.post_send_typed(typed, dest, tag, mode) }?;
        Request::posted(&self.shared, posted).wait().map(drop)
    }

    /// Receives at most `buf.len()` values into `buf`; [`Status::count_values`] tells how many
    /// arrived. A longer message fails with [`Error::Truncated`].
    pub fn recv_values<T: Equivalence>(
        &self,
        buf: &mut [T],
        source: i32,
        tag: i32,
    ) -> Result<Status> {
        let typed = values_mut(buf)?;
        // SAFETY: the type map is inside `buf`, whose values stay valid whatever bytes land
        // (T's contract); the request is waited for before the exclusive borrow ends.
        let posted = unsafe { self.post_recv_typed(typed, source, tag) }?;
        Request::posted(&self.shared, posted).wait()
    }

    /// Receives one value.
    pub fn recv_value<T: Equivalence>(
        &self,
        value: &mut T,
        source: i32,
        tag: i32,
    ) -> Result<Status> {
        self.recv_values(std::slice::from_mut(value), source, tag)
    }

    /// Starts a standard-mode send of the values of `buf` in `scope` (see [`crate::scope`]).
    ///
    /// The buffer cannot be changed until the scope has returned:
    ///
    /// ```compile_fail,E0506
    /// let mpi = mpicd::init()?;
    /// let world = mpi.world();
    /// let mut buf = [1.5f64; 4];
    /// mpicd::scope(|s| {
    ///     let r = world.isend_values(s, &buf, 0, 0)?;
    ///     buf[0] = 2.5; // refused: the send may still be reading it
    ///     r.wait()
    /// })?;
    /// # Ok::<(), mpicd::Error>(())
    /// ```
    pub fn isend_values<'s, 'a, T: Equivalence>(
        &self,
        scope: &'s Scope<'a>,
        buf: &'a [T],
        dest: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        self.isend_values_in(scope, buf, dest, tag, SendMode::Standard)
    }

    /// Starts a synchronous send of the values of `buf` in `scope`.
    pub fn issend_values<'s, 'a, T: Equivalence>(
        &self,
        scope: &'s Scope<'a>,
        buf: &'a [T],
        dest: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        self.isend_values_in(scope, buf, dest, tag, SendMode::Synchronous)
    }

    fn isend_values_in<'s, 'a, T: Equivalence>(
        &self,
        scope: &'s Scope<'a>,
        buf: &'a [T],
        dest: i32,
        tag: i32,
        mode: SendMode,
    ) -> Result<Request<'s>> {
        let typed = values(buf)?;
        // SAFETY: the type map is inside `buf` and names only initialized bytes; `buf` is
        // borrowed for the scope's 'a, and the scope completes the operation before it
        // returns, even if the request is forgotten.
        let posted = unsafe { self.post_send_typed(typed, dest, tag, mode) }?;
        Ok(scope.request(&self.shared, posted))
    }

    /// Posts a receive of at most `buf.len()` values into `buf` in `scope`.
    ///
    /// The buffer is lent to the scope: it cannot be read, written or dropped until the scope
    /// has returned, when the receive is complete (or cancelled, if its request was forgotten):
    ///
    /// ```compile_fail,E0503
    /// let mpi = mpicd::init()?;
    /// let world = mpi.world();
    /// let mut buf = [0u32; 4];
    /// mpicd::scope(|s| {
    ///     let r = world.irecv_values(s, &mut buf, 0, 0)?;
    ///     let early = buf[0]; // refused: the receive may be writing it
    ///     r.wait()
    /// })?;
    /// # Ok::<(), mpicd::Error>(())
    /// ```
    pub fn irecv_values<'s, 'a, T: Equivalence>(
        &self,
        scope: &'s Scope<'a>,
        buf: &'a mut [T],
        source: i32,
        tag: i32,
    ) -> Result<Request<'s>> {
        let typed = values_mut(buf)?;
        // SAFETY: the type map is inside `buf`, borrowed exclusively for the scope's 'a, and
        // the scope completes (or cancels) the receive before it returns.
        let posted = unsafe { self.post_recv_typed(typed, source, tag) }?;
        Ok(scope.request(&self.shared, posted))
    }
}

impl Message {
    /// Receives the message into at most `buf.len()` values.
    pub fn recv_values<T: Equivalence>(mut self, buf: &mut [T]) -> Result<Status> {
        let typed = values_mut(buf)?;
        // SAFETY: as in `Communicator::recv_values`.
        let posted = unsafe { self.post_into(typed) }?;
        Request::posted(self.shared(), posted).wait()
    }

    /// Starts receiving the message into at most `buf.len()` values, in `scope`.
    pub fn irecv_values<'s, 'a, T: Equivalence>(
        mut self,
        scope: &'s Scope<'a>,
        buf: &'a mut [T],
    ) -> Result<Request<'s>> {
        let typed = values_mut(buf)?;
        // SAFETY: as in `Communicator::irecv_values`.
        let posted = unsafe { self.post_into(typed) }?;
        Ok(scope.request(self.shared(), posted))
    }
}

impl Status {
    /// Number of whole values of `T` in the message (its bytes over the size of `T`'s
    /// datatype, which leaves out padding).
    pub fn count_values<T: Equivalence>(&self) -> Option<u64> {
        self.count_of(&T::equivalent_datatype())
    }
}
