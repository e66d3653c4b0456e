//! Group handles: the table (with `MPI_GROUP_EMPTY` at its predefined value, never stored),
//! and the group calls, which are local: size, rank, translation and comparison, the set
//! operations, inclusion and exclusion by ranks and by ranges, free, and `MPI_Comm_group`.
//! The group logic is the core's ([`mpicd::Group`]); an empty result is `MPI_GROUP_EMPTY`.
//! A group remembers the session it comes from (`MPI_Group_from_session_pset`, or a group or
//! communicator deriving from one), which a communicator made from it derives from.

use crate::abi::*;
use crate::comms::{default_errh, run_on};
use crate::env::{out, read_arg, require};
use crate::errors::{fail, run, CResult};
use crate::handles::{Table, GROUP_BASE};
use mpicd::{Comparison, Group, RankRange};
use std::ffi::c_int;
use std::sync::Arc;

/// A live group and the session (its handle value) it derives from, if any.
struct GroupEntry {
    group: Arc<Group>,
    session: Option<usize>,
}

static GROUPS: Table<GroupEntry> = Table::new(GROUP_BASE);

/// The group of a handle.
pub(crate) fn get(h: MPI_Group) -> CResult<Arc<Group>> {
    if h == MPI_GROUP_EMPTY {
        return Ok(Arc::new(Group::empty()));
    }
    if h == MPI_GROUP_NULL {
        return Err(fail(MPI_ERR_GROUP, "MPI_GROUP_NULL is not a group"));
    }
    GROUPS
        .with(h as usize, |g| Arc::clone(&g.group))
        .ok_or_else(|| fail(MPI_ERR_GROUP, "unknown or freed group"))
}

/// The session group `h` derives from (none for an invalid handle).
pub(crate) fn session_of(h: MPI_Group) -> Option<usize> {
    GROUPS.with(h as usize, |g| g.session).flatten()
}

/// A handle for `group`, deriving from `session`: `MPI_GROUP_EMPTY` if it has no members.
pub(crate) fn insert(group: Group, session: Option<usize>) -> MPI_Group {
    if group.is_empty() {
        MPI_GROUP_EMPTY
    } else {
        GROUPS.insert(GroupEntry {
            group: Arc::new(group),
            session,
        }) as MPI_Group
    }
}

/// Frees every group handle (finalize).
pub(crate) fn free_all() {
    drop(GROUPS.drain());
}

/// The `n` ints at `ptr` (none needed when `n` is 0).
///
/// # Safety
/// `ptr` is null or points to `n` readable ints.
unsafe fn ints<'a>(ptr: *const c_int, n: c_int, what: &str) -> CResult<&'a [c_int]> {
    let len = usize::try_from(n).map_err(|_| fail(MPI_ERR_ARG, format!("negative n {n}")))?;
    if len == 0 {
        return Ok(&[]);
    }
    require(ptr, what)?;
    // SAFETY: non-null, and MPI requires `n` readable ints at it.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Runs a group call under the default error handler (groups have none of their own).
fn run_group(name: &'static str, body: impl FnOnce() -> CResult<()>) -> c_int {
    run(name, default_errh(), |_| {
        crate::env::check_live()?;
        body()
    })
}

/// The group of `comm`'s members.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_group(comm: MPI_Comm, group: *mut MPI_Group) -> c_int {
    run_on("Comm_group", comm, |c| {
        require(group, "group")?;
        out(group, insert(c.group(), crate::comms::session_of(comm)))
    })
}

/// The number of members of `group`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_size(group: MPI_Group, size: *mut c_int) -> c_int {
    run_group("Group_size", || out(size, get(group)?.size()))
}

/// The calling process's rank in `group`, or MPI_UNDEFINED if it is not a member.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_rank(group: MPI_Group, rank: *mut c_int) -> c_int {
    run_group("Group_rank", || {
        let g = get(group)?;
        let me = crate::env::world_rank()?;
        out(rank, g.comm_rank(me).unwrap_or(MPI_UNDEFINED))
    })
}

/// The ranks in `group2` of the members of `group1` of ranks `ranks1`: MPI_UNDEFINED for those
/// not in `group2`, MPI_PROC_NULL for MPI_PROC_NULL.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_translate_ranks(
    group1: MPI_Group,
    n: c_int,
    ranks1: *const c_int,
    group2: MPI_Group,
    ranks2: *mut c_int,
) -> c_int {
    run_group("Group_translate_ranks", || {
        let (g1, g2) = (get(group1)?, get(group2)?);
        // SAFETY: MPI requires `n` ranks at `ranks1`.
        let from = unsafe { ints(ranks1, n, "ranks1") }?;
        let to = g1.translate(from, &g2)?;
        if !to.is_empty() {
            require(ranks2, "ranks2")?;
            // SAFETY: non-null, and MPI requires room for `n` ranks at `ranks2`.
            unsafe { std::ptr::copy_nonoverlapping(to.as_ptr(), ranks2, to.len()) };
        }
        Ok(())
    })
}

/// MPI_IDENT (same members, same order), MPI_SIMILAR (same members) or MPI_UNEQUAL.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_compare(
    group1: MPI_Group,
    group2: MPI_Group,
    result: *mut c_int,
) -> c_int {
    run_group("Group_compare", || {
        let (a, b) = (get(group1)?, get(group2)?);
        let verdict = match a.compare(&b) {
            Comparison::Ident => MPI_IDENT,
            Comparison::Similar => MPI_SIMILAR,
            Comparison::Unequal => MPI_UNEQUAL,
        };
        out(result, verdict)
    })
}

/// Runs a call that makes `*newgroup` from `group1` and `group2`.
fn combine(
    name: &'static str,
    group1: MPI_Group,
    group2: MPI_Group,
    newgroup: *mut MPI_Group,
    f: fn(&Group, &Group) -> Group,
) -> c_int {
    run_group(name, || {
        let (a, b) = (get(group1)?, get(group2)?);
        require(newgroup, "newgroup")?;
        let session = session_of(group1).or_else(|| session_of(group2));
        out(newgroup, insert(f(&a, &b), session))
    })
}

/// The members of `group1`, then those of `group2` not in `group1`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_union(
    group1: MPI_Group,
    group2: MPI_Group,
    newgroup: *mut MPI_Group,
) -> c_int {
    combine("Group_union", group1, group2, newgroup, Group::union)
}

/// The members of `group1` that are in `group2`, in `group1`'s order.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_intersection(
    group1: MPI_Group,
    group2: MPI_Group,
    newgroup: *mut MPI_Group,
) -> c_int {
    combine(
        "Group_intersection",
        group1,
        group2,
        newgroup,
        Group::intersection,
    )
}

/// The members of `group1` that are not in `group2`, in `group1`'s order.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_difference(
    group1: MPI_Group,
    group2: MPI_Group,
    newgroup: *mut MPI_Group,
) -> c_int {
    combine(
        "Group_difference",
        group1,
        group2,
        newgroup,
        Group::difference,
    )
}

/// Runs a call that makes `*newgroup` from `group` and `n` ranks: distinct, valid ranks of
/// `group` (MPI_ERR_RANK otherwise), at most as many as it has members (MPI_ERR_ARG).
fn by_ranks(
    name: &'static str,
    group: MPI_Group,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut MPI_Group,
    f: fn(&Group, &[i32]) -> mpicd::Result<Group>,
) -> c_int {
    run_group(name, || {
        let g = get(group)?;
        // SAFETY: MPI requires `n` ranks at `ranks`.
        let ranks = unsafe { ints(ranks, n, "ranks") }?;
        if n > g.size() {
            return Err(fail(
                MPI_ERR_ARG,
                format!("n = {n} ranks of a group of {}", g.size()),
            ));
        }
        require(newgroup, "newgroup")?;
        out(newgroup, insert(f(&g, ranks)?, session_of(group)))
    })
}

/// The members of ranks `ranks` of `group`, in that order.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_incl(
    group: MPI_Group,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut MPI_Group,
) -> c_int {
    by_ranks("Group_incl", group, n, ranks, newgroup, Group::incl)
}

/// `group` without the members of ranks `ranks`, in `group`'s order.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_excl(
    group: MPI_Group,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut MPI_Group,
) -> c_int {
    by_ranks("Group_excl", group, n, ranks, newgroup, Group::excl)
}

/// Runs a call that makes `*newgroup` from `group` and `n` (first, last, stride) triplets.
fn by_ranges(
    name: &'static str,
    group: MPI_Group,
    n: c_int,
    ranges: *const [c_int; 3],
    newgroup: *mut MPI_Group,
    f: fn(&Group, &[RankRange]) -> mpicd::Result<Group>,
) -> c_int {
    run_group(name, || {
        let g = get(group)?;
        let len = usize::try_from(n).map_err(|_| fail(MPI_ERR_ARG, format!("negative n {n}")))?;
        let ranges: &[RankRange] = if len == 0 {
            &[]
        } else {
            require(ranges, "ranges")?;
            // SAFETY: non-null, and MPI requires `n` triplets of ints at `ranges`.
            unsafe { std::slice::from_raw_parts(ranges, len) }
        };
        require(newgroup, "newgroup")?;
        out(newgroup, insert(f(&g, ranges)?, session_of(group)))
    })
}

/// The members of the ranks `first, first + stride, ...` up to `last` of each triplet of
/// `ranges`, in that order.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_range_incl(
    group: MPI_Group,
    n: c_int,
    ranges: *mut [c_int; 3],
    newgroup: *mut MPI_Group,
) -> c_int {
    by_ranges(
        "Group_range_incl",
        group,
        n,
        ranges,
        newgroup,
        Group::range_incl,
    )
}

/// `group` without the members of the ranks the triplets of `ranges` name.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_range_excl(
    group: MPI_Group,
    n: c_int,
    ranges: *mut [c_int; 3],
    newgroup: *mut MPI_Group,
) -> c_int {
    by_ranges(
        "Group_range_excl",
        group,
        n,
        ranges,
        newgroup,
        Group::range_excl,
    )
}

/// Frees a group and sets the handle to MPI_GROUP_NULL (communicators made from it are not
/// affected). MPI_GROUP_EMPTY may be freed, as every empty result is that handle.
#[no_mangle]
pub unsafe extern "C" fn MPI_Group_free(group: *mut MPI_Group) -> c_int {
    run_group("Group_free", || {
        let h = read_arg(group, "group")?;
        if h != MPI_GROUP_EMPTY && GROUPS.remove(h as usize).is_none() {
            return Err(fail(
                MPI_ERR_GROUP,
                if h == MPI_GROUP_NULL {
                    "MPI_GROUP_NULL cannot be freed"
                } else {
                    "unknown or already freed group"
                },
            ));
        }
        out(group, MPI_GROUP_NULL)
    })
}
