//! Decoding a datatype: MPI_Type_get_envelope and MPI_Type_get_contents, with their `_c`
//! variants, for every combiner. The arguments come from the core type's
//! `mpicd::Constructor`, laid out as the standard's tables of combiners say: a type made by a
//! large-count (`_c`) constructor returns its counts, displacements and bounds as large counts
//! (and the non-`_c` calls refuse it with MPI_ERR_TYPE), any other as integers and addresses.
//!
//! A predefined type (the pair types too) is MPI_COMBINER_NAMED and has no contents
//! (MPI_ERR_TYPE). The datatypes returned are the predefined handles themselves, and for a
//! derived type a new handle to the same core type, which the caller frees: committed, and of
//! the large-count kind, as a live handle of that type is, else as the decoded type is.

use super::insert_derived_as;
use super::{is_predefined, predefined::predefined_handle, with_created, Created, TYPES};
use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{out, require};
use crate::errors::{fail, run, CResult};
use mpicd::{Constructor, Datatype, Distribution, Order, DISTRIBUTE_DFLT_DARG};
use std::ffi::c_int;

/// The arguments a type was made with.
struct Contents {
    combiner: c_int,
    ints: Vec<i64>,
    addrs: Vec<i64>,
    counts: Vec<i64>,
    types: Vec<Datatype>,
}

impl Contents {
    /// A predefined type's: no arguments.
    fn named() -> Contents {
        Contents {
            combiner: MPI_COMBINER_NAMED,
            ints: Vec::new(),
            addrs: Vec::new(),
            counts: Vec::new(),
            types: Vec::new(),
        }
    }
}

/// A derived handle's core type, whether it is committed and whether it was made by a `_c`
/// constructor; `None` for a predefined (named) type.
fn lookup(h: MPI_Datatype) -> CResult<Option<(Datatype, bool, bool)>> {
    if is_predefined(h) {
        return Ok(None);
    }
    with_created(h, |e| match &e.created {
        Created::Derived { ty, committed } => Ok(Some((ty.clone(), *committed, e.large))),
        Created::Custom(_) => Err(fail(
            MPI_ERR_TYPE,
            "a custom datatype has no envelope or contents (it is not made by a type constructor)",
        )),
    })?
}

fn order_code(o: Order) -> i64 {
    match o {
        Order::C => MPI_ORDER_C as i64,
        Order::Fortran => MPI_ORDER_FORTRAN as i64,
    }
}

fn distribution_code(d: Distribution) -> i64 {
    (match d {
        Distribution::None => MPI_DISTRIBUTE_NONE,
        Distribution::Block => MPI_DISTRIBUTE_BLOCK,
        Distribution::Cyclic => MPI_DISTRIBUTE_CYCLIC,
    }) as i64
}

fn darg_code(d: i64) -> i64 {
    if d == DISTRIBUTE_DFLT_DARG {
        MPI_DISTRIBUTE_DFLT_DARG as i64
    } else {
        d
    }
}

fn wide(v: &[u64]) -> impl Iterator<Item = i64> + '_ {
    v.iter().map(|&x| x as i64)
}

/// The contents of a derived type; `large` when it was made by a `_c` constructor.
fn contents(t: &Datatype, large: bool) -> Contents {
    use Constructor as C;
    let mut c = Contents::named();
    // Integer arguments that become large counts in a `_c` type.
    let ints_or_counts = |c: &mut Contents, v: Vec<i64>| {
        if large {
            c.counts.extend(v)
        } else {
            c.ints.extend(v)
        }
    };
    match t.constructor() {
        C::Basic(_) => {}
        C::Dup(old) => {
            c.combiner = MPI_COMBINER_DUP;
            c.types.push(old.clone());
        }
        C::Contiguous { count, old } => {
            c.combiner = MPI_COMBINER_CONTIGUOUS;
            ints_or_counts(&mut c, vec![*count as i64]);
            c.types.push(old.clone());
        }
        C::Vector {
            count,
            blocklength,
            stride,
            old,
        } => {
            c.combiner = MPI_COMBINER_VECTOR;
            ints_or_counts(&mut c, vec![*count as i64, *blocklength as i64, *stride]);
            c.types.push(old.clone());
        }
        C::Hvector {
            count,
            blocklength,
            stride,
            old,
        } => {
            c.combiner = MPI_COMBINER_HVECTOR;
            ints_or_counts(&mut c, vec![*count as i64, *blocklength as i64]);
            if large {
                c.counts.push(*stride)
            } else {
                c.addrs.push(*stride)
            }
            c.types.push(old.clone());
        }
        C::Indexed {
            blocklengths,
            displacements,
            old,
        } => {
            c.combiner = MPI_COMBINER_INDEXED;
            let mut v = vec![blocklengths.len() as i64];
            v.extend(wide(blocklengths));
            v.extend(displacements);
            ints_or_counts(&mut c, v);
            c.types.push(old.clone());
        }
        C::Hindexed {
            blocklengths,
            displacements,
            old,
        } => {
            c.combiner = MPI_COMBINER_HINDEXED;
            let mut v = vec![blocklengths.len() as i64];
            v.extend(wide(blocklengths));
            ints_or_counts(&mut c, v);
            if large {
                c.counts.extend(displacements)
            } else {
                c.addrs.extend(displacements)
            }
            c.types.push(old.clone());
        }
        C::IndexedBlock {
            blocklength,
            displacements,
            old,
        } => {
            c.combiner = MPI_COMBINER_INDEXED_BLOCK;
            let mut v = vec![displacements.len() as i64, *blocklength as i64];
            v.extend(displacements);
            ints_or_counts(&mut c, v);
            c.types.push(old.clone());
        }
        C::HindexedBlock {
            blocklength,
            displacements,
            old,
        } => {
            c.combiner = MPI_COMBINER_HINDEXED_BLOCK;
            ints_or_counts(
                &mut c,
                vec![displacements.len() as i64, *blocklength as i64],
            );
            if large {
                c.counts.extend(displacements)
            } else {
                c.addrs.extend(displacements)
            }
            c.types.push(old.clone());
        }
        C::Struct {
            blocklengths,
            displacements,
            types,
        } => {
            c.combiner = MPI_COMBINER_STRUCT;
            let mut v = vec![blocklengths.len() as i64];
            v.extend(wide(blocklengths));
            ints_or_counts(&mut c, v);
            if large {
                c.counts.extend(displacements)
            } else {
                c.addrs.extend(displacements)
            }
            c.types.extend(types.iter().cloned());
        }
        C::Subarray {
            sizes,
            subsizes,
            starts,
            order,
            old,
        } => {
            c.combiner = MPI_COMBINER_SUBARRAY;
            c.ints.push(sizes.len() as i64);
            let arrays = wide(sizes).chain(wide(subsizes)).chain(wide(starts));
            if large {
                c.ints.push(order_code(*order));
                c.counts.extend(arrays);
            } else {
                c.ints.extend(arrays);
                c.ints.push(order_code(*order));
            }
            c.types.push(old.clone());
        }
        C::Darray {
            size,
            rank,
            gsizes,
            distribs,
            dargs,
            psizes,
            order,
            old,
        } => {
            c.combiner = MPI_COMBINER_DARRAY;
            c.ints
                .extend([*size as i64, *rank as i64, gsizes.len() as i64]);
            if large {
                c.counts.extend(wide(gsizes));
            } else {
                c.ints.extend(wide(gsizes));
            }
            c.ints
                .extend(distribs.iter().map(|&d| distribution_code(d)));
            c.ints.extend(dargs.iter().map(|&d| darg_code(d)));
            c.ints.extend(psizes.iter().map(|&p| p as i64));
            c.ints.push(order_code(*order));
            c.types.push(old.clone());
        }
        C::Resized { lb, extent, old } => {
            c.combiner = MPI_COMBINER_RESIZED;
            if large {
                c.counts.extend([*lb, *extent])
            } else {
                c.addrs.extend([*lb, *extent])
            }
            c.types.push(old.clone());
        }
    }
    c
}

/// The contents of a type from `MPI_Type_create_f90_*`: its F90 combiner and arguments.
fn f90_contents(h: MPI_Datatype) -> Option<Contents> {
    let (combiner, ints) = super::fortran::f90_args(h)?;
    Some(Contents {
        combiner,
        ints,
        ..Contents::named()
    })
}

/// The contents of any handle: a predefined type's are empty, of combiner NAMED.
fn envelope_of(h: MPI_Datatype) -> CResult<Contents> {
    if let Some(c) = f90_contents(h) {
        return Ok(c);
    }
    Ok(match lookup(h)? {
        Some((ty, _, large)) => contents(&ty, large),
        None => Contents::named(),
    })
}

/// The decoded contents of a derived handle, with its committed and large-count marks.
fn decode(h: MPI_Datatype) -> CResult<(Contents, bool, bool)> {
    if let Some(c) = f90_contents(h) {
        return Ok((c, true, false));
    }
    match lookup(h)? {
        Some((ty, committed, large)) => Ok((contents(&ty, large), committed, large)),
        None => Err(fail(
            MPI_ERR_TYPE,
            "a predefined datatype has no contents (its combiner is MPI_COMBINER_NAMED)",
        )),
    }
}

/// A handle for a datatype returned by MPI_Type_get_contents.
fn handle_for(t: &Datatype, parent_committed: bool, parent_large: bool) -> MPI_Datatype {
    if let Some(h) = predefined_handle(t) {
        return h;
    }
    let live = TYPES.find_map(|e| match &e.created {
        Created::Derived { ty, committed } if ty.same(t) => Some((*committed, e.large)),
        _ => None,
    });
    let (committed, large) = live.unwrap_or((parent_committed, parent_large));
    insert_derived_as(t.clone(), committed, large)
}

/// Checks a room of `max` for `n` values at `ptr`.
fn room<T>(ptr: *mut T, max: i64, n: usize, what: &str) -> CResult<()> {
    if max < n as i64 {
        return Err(fail(
            MPI_ERR_ARG,
            format!("{what}: room for {max}, the datatype has {n}"),
        ));
    }
    if n > 0 {
        require(ptr, what)?;
    }
    Ok(())
}

/// Writes `v` to the C array at `ptr`, each value converted by `conv`.
///
/// # Safety
/// `ptr` must have room for `v.len()` values (checked against `max_*` by [`room`]).
unsafe fn fill<T>(ptr: *mut T, v: &[i64], conv: impl Fn(i64) -> T) {
    for (i, &x) in v.iter().enumerate() {
        // SAFETY: as the caller promises.
        unsafe { ptr.add(i).write(conv(x)) };
    }
}

fn to_int(v: &[i64]) -> CResult<Vec<c_int>> {
    v.iter()
        .map(|&x| {
            c_int::try_from(x).map_err(|_| {
                fail(
                    MPI_ERR_TYPE,
                    format!("argument {x} does not fit an int: use MPI_Type_get_contents_c"),
                )
            })
        })
        .collect()
}

fn refuse_large(c: &Contents, call: &str) -> CResult<()> {
    if !c.counts.is_empty() {
        return Err(fail(
            MPI_ERR_TYPE,
            format!("the datatype was made by a large-count constructor: use {call}_c"),
        ));
    }
    Ok(())
}

/// The envelope of a type: how many integers, addresses and datatypes its constructor took,
/// and which constructor (MPI_COMBINER_NAMED for a predefined type).
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_envelope(
    datatype: MPI_Datatype,
    num_integers: *mut c_int,
    num_addresses: *mut c_int,
    num_datatypes: *mut c_int,
    combiner: *mut c_int,
) -> c_int {
    run("Type_get_envelope", default_errh(), |_| {
        let c = envelope_of(datatype)?;
        refuse_large(&c, "MPI_Type_get_envelope")?;
        let n = |v: usize| c_int::try_from(v).map_err(|_| fail(MPI_ERR_TYPE, "too many arguments"));
        out(num_integers, n(c.ints.len())?)?;
        out(num_addresses, n(c.addrs.len())?)?;
        out(num_datatypes, n(c.types.len())?)?;
        out(combiner, c.combiner)
    })
}

/// [`MPI_Type_get_envelope`] with MPI_Counts and the number of large counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_envelope_c(
    datatype: MPI_Datatype,
    num_integers: *mut MPI_Count,
    num_addresses: *mut MPI_Count,
    num_large_counts: *mut MPI_Count,
    num_datatypes: *mut MPI_Count,
    combiner: *mut c_int,
) -> c_int {
    run("Type_get_envelope_c", default_errh(), |_| {
        let c = envelope_of(datatype)?;
        out(num_integers, c.ints.len() as MPI_Count)?;
        out(num_addresses, c.addrs.len() as MPI_Count)?;
        out(num_large_counts, c.counts.len() as MPI_Count)?;
        out(num_datatypes, c.types.len() as MPI_Count)?;
        out(combiner, c.combiner)
    })
}

/// The arguments a derived type was made with (sizes from [`MPI_Type_get_envelope`]). The
/// derived datatypes returned are new handles the caller frees.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_contents(
    datatype: MPI_Datatype,
    max_integers: c_int,
    max_addresses: c_int,
    max_datatypes: c_int,
    array_of_integers: *mut c_int,
    array_of_addresses: *mut MPI_Aint,
    array_of_datatypes: *mut MPI_Datatype,
) -> c_int {
    run("Type_get_contents", default_errh(), |_| {
        let (c, committed, large) = decode(datatype)?;
        refuse_large(&c, "MPI_Type_get_contents")?;
        let ints = to_int(&c.ints)?;
        room(
            array_of_integers,
            max_integers as i64,
            ints.len(),
            "array_of_integers",
        )?;
        room(
            array_of_addresses,
            max_addresses as i64,
            c.addrs.len(),
            "array_of_addresses",
        )?;
        room(
            array_of_datatypes,
            max_datatypes as i64,
            c.types.len(),
            "array_of_datatypes",
        )?;
        // SAFETY: each array has room for its values (checked above).
        unsafe {
            fill(array_of_integers, &c.ints, |x| x as c_int);
            fill(array_of_addresses, &c.addrs, |x| x as MPI_Aint);
            for (i, t) in c.types.iter().enumerate() {
                array_of_datatypes
                    .add(i)
                    .write(handle_for(t, committed, large));
            }
        }
        Ok(())
    })
}

/// [`MPI_Type_get_contents`] with MPI_Count sizes and the large counts.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_contents_c(
    datatype: MPI_Datatype,
    max_integers: MPI_Count,
    max_addresses: MPI_Count,
    max_large_counts: MPI_Count,
    max_datatypes: MPI_Count,
    array_of_integers: *mut c_int,
    array_of_addresses: *mut MPI_Aint,
    array_of_large_counts: *mut MPI_Count,
    array_of_datatypes: *mut MPI_Datatype,
) -> c_int {
    run("Type_get_contents_c", default_errh(), |_| {
        let (c, committed, large) = decode(datatype)?;
        to_int(&c.ints)?;
        room(
            array_of_integers,
            max_integers,
            c.ints.len(),
            "array_of_integers",
        )?;
        room(
            array_of_addresses,
            max_addresses,
            c.addrs.len(),
            "array_of_addresses",
        )?;
        room(
            array_of_large_counts,
            max_large_counts,
            c.counts.len(),
            "array_of_large_counts",
        )?;
        room(
            array_of_datatypes,
            max_datatypes,
            c.types.len(),
            "array_of_datatypes",
        )?;
        // SAFETY: each array has room for its values (checked above).
        unsafe {
            fill(array_of_integers, &c.ints, |x| x as c_int);
            fill(array_of_addresses, &c.addrs, |x| x as MPI_Aint);
            fill(array_of_large_counts, &c.counts, |x| x as MPI_Count);
            for (i, t) in c.types.iter().enumerate() {
                array_of_datatypes
                    .add(i)
                    .write(handle_for(t, committed, large));
            }
        }
        Ok(())
    })
}
