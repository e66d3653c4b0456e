//! Attribute caching (MPI 4.1 section 7.7): the keyvals with their copy and delete callbacks,
//! and the attributes that objects carry, by keyval, in the order they were set. One store
//! serves every kind of object ([`Kind`]: communicators, datatypes, windows):
//! an object is named by its kind and handle value, which the handle tables never reuse.
//!
//! Keyvals are counted: each attribute using a keyval keeps it alive after
//! `MPI_*_free_keyval`, until the last such attribute is deleted. Callbacks always run with no
//! lock held, so they may call MPI, on the same object and keyval too (delete an attribute
//! from a delete callback, free the keyval...). The C calls are in [`comm`] (with the
//! predefined attributes and the deprecated MPI-1 forms), [`types`] and [`win`].

pub mod comm;
pub mod types;
pub mod win;

use crate::abi::*;
use crate::errors::{fail, CResult};
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard};

/// The kinds of object that carry attributes; a keyval serves one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    Comm,
    Datatype,
    Win,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Comm => "communicator",
            Kind::Datatype => "datatype",
            Kind::Win => "window",
        }
    }
}

/// An object that carries attributes: its kind and handle value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Object {
    kind: Kind,
    handle: usize,
}

impl Object {
    pub(crate) fn comm(h: MPI_Comm) -> Object {
        Object {
            kind: Kind::Comm,
            handle: h as usize,
        }
    }

    pub(crate) fn datatype(h: MPI_Datatype) -> Object {
        Object {
            kind: Kind::Datatype,
            handle: h as usize,
        }
    }

    pub(crate) fn win(h: MPI_Win) -> Object {
        Object {
            kind: Kind::Win,
            handle: h as usize,
        }
    }
}

type CommCopyFn = unsafe extern "C" fn(
    MPI_Comm,
    c_int,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_int,
) -> c_int;
type CommDeleteFn = unsafe extern "C" fn(MPI_Comm, c_int, *mut c_void, *mut c_void) -> c_int;
type TypeCopyFn = unsafe extern "C" fn(
    MPI_Datatype,
    c_int,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_int,
) -> c_int;
type TypeDeleteFn = unsafe extern "C" fn(MPI_Datatype, c_int, *mut c_void, *mut c_void) -> c_int;
type WinDeleteFn = unsafe extern "C" fn(MPI_Win, c_int, *mut c_void, *mut c_void) -> c_int;

/// The standard ABI's value of the `*_DUP_FN` callbacks (the `*_NULL_*_FN` ones are null).
const DUP_FN_SENTINEL: usize = 1;

/// What a keyval does when its object is duplicated.
#[derive(Clone, Copy)]
pub(crate) enum Copier {
    /// `MPI_*_NULL_COPY_FN`: the copy does not get the attribute.
    Null,
    /// `MPI_*_DUP_FN`: the copy gets the same value.
    Dup,
    Comm(CommCopyFn),
    Datatype(TypeCopyFn),
}

impl Copier {
    pub(crate) fn comm(f: MPI_Comm_copy_attr_function) -> Copier {
        match f {
            None => Copier::Null,
            Some(f) if f as usize == DUP_FN_SENTINEL => Copier::Dup,
            Some(f) => Copier::Comm(f),
        }
    }

    pub(crate) fn datatype(f: MPI_Type_copy_attr_function) -> Copier {
        match f {
            None => Copier::Null,
            Some(f) if f as usize == DUP_FN_SENTINEL => Copier::Dup,
            Some(f) => Copier::Datatype(f),
        }
    }
}

/// What a keyval does when an attribute is deleted.
#[derive(Clone, Copy)]
pub(crate) enum Deleter {
    /// `MPI_*_NULL_DELETE_FN`: nothing.
    Null,
    Comm(CommDeleteFn),
    Datatype(TypeDeleteFn),
    Win(WinDeleteFn),
}

impl Deleter {
    pub(crate) fn comm(f: MPI_Comm_delete_attr_function) -> Deleter {
        f.map_or(Deleter::Null, Deleter::Comm)
    }

    pub(crate) fn datatype(f: MPI_Type_delete_attr_function) -> Deleter {
        f.map_or(Deleter::Null, Deleter::Datatype)
    }

    pub(crate) fn win(f: MPI_Win_delete_attr_function) -> Deleter {
        f.map_or(Deleter::Null, Deleter::Win)
    }
}

/// Whether the user still holds a keyval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Life {
    Live,
    /// Freed by the user; it lives on while attributes use it.
    Freed,
}

struct Keyval {
    kind: Kind,
    copier: Copier,
    deleter: Deleter,
    /// The user's `extra_state` pointer, handed back to the callbacks.
    extra: usize,
    life: Life,
    /// The attributes that use it.
    uses: usize,
}

/// One attribute: its keyval and value (a `void *`).
type Attr = (c_int, usize);

struct Store {
    next: c_int,
    keyvals: BTreeMap<c_int, Keyval>,
    /// Each object's attributes, in the order they were set.
    attrs: BTreeMap<Object, Vec<Attr>>,
}

/// User keyvals start here, above the predefined attribute keys (`MPI_TAG_UB`...).
const FIRST_KEYVAL: c_int = 0x10000;

static STORE: Mutex<Store> = Mutex::new(Store {
    next: FIRST_KEYVAL,
    keyvals: BTreeMap::new(),
    attrs: BTreeMap::new(),
});

fn store() -> MutexGuard<'static, Store> {
    STORE.lock().unwrap_or_else(|p| p.into_inner())
}

impl Store {
    /// The keyval `k` of `kind` (live, or freed and still in use).
    fn keyval(&self, k: c_int, kind: Kind) -> CResult<&Keyval> {
        match self.keyvals.get(&k) {
            Some(kv) if kv.kind == kind => Ok(kv),
            Some(kv) => Err(fail(
                MPI_ERR_KEYVAL,
                format!(
                    "keyval {k} is a {} keyval, not a {} one",
                    kv.kind.name(),
                    kind.name()
                ),
            )),
            None => Err(fail(
                MPI_ERR_KEYVAL,
                format!(
                    "{k} is not a valid {} keyval (never created, or freed)",
                    kind.name()
                ),
            )),
        }
    }

    fn value(&self, obj: Object, k: c_int) -> Option<usize> {
        self.attrs
            .get(&obj)?
            .iter()
            .find(|(key, _)| *key == k)
            .map(|&(_, v)| v)
    }

    /// Takes attribute `k` off `obj` and lets go of its keyval; its value if it was there.
    fn detach(&mut self, obj: Object, k: c_int) -> Option<usize> {
        let list = self.attrs.get_mut(&obj)?;
        let at = list.iter().position(|(key, _)| *key == k)?;
        let (_, value) = list.remove(at);
        if list.is_empty() {
            self.attrs.remove(&obj);
        }
        if let Some(kv) = self.keyvals.get_mut(&k) {
            kv.uses -= 1;
            if kv.life == Life::Freed && kv.uses == 0 {
                self.keyvals.remove(&k);
            }
        }
        Some(value)
    }

    /// Appends attribute `k` = `value` to `obj` (the caller checked the keyval).
    fn attach(&mut self, obj: Object, k: c_int, value: usize) {
        if let Some(kv) = self.keyvals.get_mut(&k) {
            kv.uses += 1;
        }
        self.attrs.entry(obj).or_default().push((k, value));
    }
}

/// A new keyval of `kind`.
pub(crate) fn create_keyval(
    kind: Kind,
    copier: Copier,
    deleter: Deleter,
    extra_state: *mut c_void,
    keyval: *mut c_int,
) -> CResult<()> {
    crate::env::require(keyval, "keyval")?;
    let mut s = store();
    let k = s.next;
    s.next = k
        .checked_add(1)
        .ok_or_else(|| fail(MPI_ERR_OTHER, "out of keyvals"))?;
    s.keyvals.insert(
        k,
        Keyval {
            kind,
            copier,
            deleter,
            extra: extra_state as usize,
            life: Life::Live,
            uses: 0,
        },
    );
    crate::env::out(keyval, k)
}

/// Frees the keyval at `*keyval` (it lives on while attributes use it) and sets `*keyval` to
/// MPI_KEYVAL_INVALID. Freeing a keyval again while it lives on does nothing more.
pub(crate) fn free_keyval(kind: Kind, keyval: *mut c_int) -> CResult<()> {
    let k = crate::env::read_arg(keyval, "keyval")?;
    {
        let mut s = store();
        s.keyval(k, kind)?;
        if let Some(kv) = s.keyvals.get_mut(&k) {
            kv.life = Life::Freed;
            if kv.uses == 0 {
                s.keyvals.remove(&k);
            }
        }
    }
    crate::env::out(keyval, MPI_KEYVAL_INVALID)
}

/// Sets attribute `k` of `obj` to `value`. A value already there is deleted first (its delete
/// callback runs; if that fails, so does this call and the old value stays). The attribute
/// then counts as the most recently set.
pub(crate) fn set(obj: Object, k: c_int, value: *mut c_void) -> CResult<()> {
    let (old, deleter, extra) = {
        let s = store();
        let kv = s.keyval(k, obj.kind)?;
        if kv.life == Life::Freed {
            return Err(fail(MPI_ERR_KEYVAL, format!("keyval {k} was freed")));
        }
        (s.value(obj, k), kv.deleter, kv.extra)
    };
    if let Some(old) = old {
        call_delete(deleter, obj, k, old, extra)?;
    }
    let mut s = store();
    // The keyval may have been freed while the callback ran.
    if s.keyval(k, obj.kind)?.life == Life::Freed {
        return Err(fail(MPI_ERR_KEYVAL, format!("keyval {k} was freed")));
    }
    s.detach(obj, k);
    s.attach(obj, k, value as usize);
    Ok(())
}

/// The value of attribute `k` of `obj`, if set.
pub(crate) fn get(obj: Object, k: c_int) -> CResult<Option<*mut c_void>> {
    let s = store();
    s.keyval(k, obj.kind)?;
    Ok(s.value(obj, k).map(|v| v as *mut c_void))
}

/// Deletes attribute `k` of `obj` (nothing if it is not set): its delete callback runs first;
/// if that fails, so does this call and the attribute stays.
pub(crate) fn delete(obj: Object, k: c_int) -> CResult<()> {
    let (value, deleter, extra) = {
        let s = store();
        let kv = s.keyval(k, obj.kind)?;
        match s.value(obj, k) {
            Some(v) => (v, kv.deleter, kv.extra),
            None => return Ok(()),
        }
    };
    call_delete(deleter, obj, k, value, extra)?;
    store().detach(obj, k);
    Ok(())
}

/// Deletes every attribute of `obj`, the last set first (when it is freed). On a delete
/// callback's failure this stops and fails; the attributes not deleted yet stay.
pub(crate) fn delete_all(obj: Object) -> CResult<()> {
    loop {
        let next = {
            let s = store();
            let Some(&(k, value)) = s.attrs.get(&obj).and_then(|l| l.last()) else {
                return Ok(());
            };
            let kv = s.keyval(k, obj.kind)?;
            (k, value, kv.deleter, kv.extra)
        };
        let (k, value, deleter, extra) = next;
        call_delete(deleter, obj, k, value, extra)?;
        let mut s = store();
        // Only if the callback did not replace or delete it itself.
        if s.value(obj, k) == Some(value) {
            s.detach(obj, k);
        }
    }
}

/// Gives `to` (a new duplicate of `from`) the attributes of `from` that their copy callbacks
/// copy, in the same order. On a copy callback's failure this fails with its code; the caller
/// then deletes `to`'s attributes ([`delete_all`]) and frees it.
pub(crate) fn copy_all(from: Object, to: Object) -> CResult<()> {
    let attrs: Vec<Attr> = store().attrs.get(&from).cloned().unwrap_or_default();
    for (k, value) in attrs {
        let (copier, extra) = {
            let s = store();
            match s.keyval(k, from.kind) {
                Ok(kv) => (kv.copier, kv.extra),
                Err(_) => continue,
            }
        };
        if let Some(copied) = call_copy(copier, from, k, value, extra)? {
            let mut s = store();
            if s.keyvals.contains_key(&k) {
                s.detach(to, k);
                s.attach(to, k, copied);
            }
        }
    }
    Ok(())
}

/// Forgets every keyval and attribute, running no callback (the end of finalize).
pub(crate) fn clear() {
    let mut s = store();
    s.keyvals.clear();
    s.attrs.clear();
}

fn callback_failed(what: &str, k: c_int, code: c_int) -> crate::errors::Fail {
    fail(
        code,
        format!("the attribute {what} callback of keyval {k} returned error {code}"),
    )
}

/// Runs a copy callback on attribute `k` = `value` of `from`: the value the duplicate gets, if
/// any.
fn call_copy(
    copier: Copier,
    from: Object,
    k: c_int,
    value: usize,
    extra: usize,
) -> CResult<Option<usize>> {
    let mut out: *mut c_void = std::ptr::null_mut();
    let mut flag: c_int = 0;
    let out_ptr = &mut out as *mut *mut c_void as *mut c_void;
    let (extra, value) = (extra as *mut c_void, value as *mut c_void);
    let code = match copier {
        Copier::Null => return Ok(None),
        Copier::Dup => return Ok(Some(value as usize)),
        // SAFETY: a user callback of the right kind, given the object's handle, its own extra
        // state and pointers to a writable `void *` and `int`, as MPI specifies.
        Copier::Comm(f) => unsafe {
            f(from.handle as MPI_Comm, k, extra, value, out_ptr, &mut flag)
        },
        // SAFETY: as above.
        Copier::Datatype(f) => unsafe {
            f(
                from.handle as MPI_Datatype,
                k,
                extra,
                value,
                out_ptr,
                &mut flag,
            )
        },
    };
    if code != MPI_SUCCESS {
        return Err(callback_failed("copy", k, code));
    }
    Ok((flag != 0).then_some(out as usize))
}

/// Runs a delete callback on attribute `k` = `value` of `obj`.
fn call_delete(deleter: Deleter, obj: Object, k: c_int, value: usize, extra: usize) -> CResult<()> {
    let (extra, value) = (extra as *mut c_void, value as *mut c_void);
    let code = match deleter {
        Deleter::Null => MPI_SUCCESS,
        // SAFETY: a user callback of the right kind, given the object's handle, the value the
        // user set and its own extra state, as MPI specifies.
        Deleter::Comm(f) => unsafe { f(obj.handle as MPI_Comm, k, value, extra) },
        // SAFETY: as above.
        Deleter::Datatype(f) => unsafe { f(obj.handle as MPI_Datatype, k, value, extra) },
        // SAFETY: as above.
        Deleter::Win(f) => unsafe { f(obj.handle as MPI_Win, k, value, extra) },
    };
    if code != MPI_SUCCESS {
        return Err(callback_failed("delete", k, code));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static DELETED: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn count_delete(
        _: MPI_Datatype,
        _: c_int,
        _: *mut c_void,
        _: *mut c_void,
    ) -> c_int {
        DELETED.fetch_add(1, Ordering::SeqCst);
        MPI_SUCCESS
    }

    #[test]
    fn keyvals_live_while_attributes_use_them() {
        let obj = Object::datatype(0x3000_0000_9999 as MPI_Datatype);
        let mut k = 0;
        create_keyval(
            Kind::Datatype,
            Copier::Dup,
            Deleter::Datatype(count_delete),
            std::ptr::null_mut(),
            &mut k,
        )
        .unwrap();
        set(obj, k, 7 as *mut c_void).unwrap();
        set(obj, k, 8 as *mut c_void).unwrap();
        assert_eq!(DELETED.load(Ordering::SeqCst), 1);
        let mut copy = k;
        free_keyval(Kind::Datatype, &mut copy).unwrap();
        assert_eq!(copy, MPI_KEYVAL_INVALID);
        assert_eq!(get(obj, k).unwrap(), Some(8 as *mut c_void));
        assert_eq!(
            set(obj, k, 9 as *mut c_void).unwrap_err().code,
            MPI_ERR_KEYVAL
        );
        assert_eq!(
            get(Object::comm(MPI_COMM_SELF), k).unwrap_err().code,
            MPI_ERR_KEYVAL
        );
        delete_all(obj).unwrap();
        assert_eq!(DELETED.load(Ordering::SeqCst), 2);
        assert_eq!(get(obj, k).unwrap_err().code, MPI_ERR_KEYVAL);
    }
}
