//! Error classes, codes and their text: the predefined classes (each its own code, their text
//! in `errors.rs`), the classes and codes a program adds (`MPI_Add_error_class`,
//! `MPI_Add_error_code`, `MPI_Add_error_string` and MPI 4.1's `MPI_Remove_error_class`,
//! `_code`, `_string`), `MPI_Error_class`, `MPI_Error_string` and the value of the
//! `MPI_LASTUSEDCODE` attribute ([`last_used_code`]).
//!
//! An added class or code takes the value one past the largest one in use (one past
//! MPI_ERR_LASTCODE for the first), so processes that add them in the same order get the same values;
//! they are local to the process, as the standard allows. Values up to MPI_ERR_LASTCODE are
//! predefined: each is its own class (a custom datatype callback may return any of them).

use crate::abi::*;
use crate::comms::default_errh;
use crate::env::{check_live, out};
use crate::errors::{fail, last_detail, predefined_class_name, run, write_c_string, CResult};
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, CStr};
use std::sync::{Mutex, MutexGuard};

/// An added error class (`class` is its own value) or code (`class` is its class).
struct Added {
    class: c_int,
    string: Option<String>,
    /// Codes of this class still in use (classes only).
    codes: usize,
}

static ADDED: Mutex<BTreeMap<c_int, Added>> = Mutex::new(BTreeMap::new());

fn added() -> MutexGuard<'static, BTreeMap<c_int, Added>> {
    ADDED.lock().unwrap_or_else(|p| p.into_inner())
}

/// The largest error code or class in use: the value of the `MPI_LASTUSEDCODE` attribute.
pub(crate) fn last_used_code() -> c_int {
    added()
        .last_key_value()
        .map_or(MPI_ERR_LASTCODE, |(&k, _)| k)
}

/// [`last_used_code`] by address, as `MPI_Comm_get_attr` hands attribute values out: the
/// address of an int holding the value now. An int handed out is never written again: a value
/// that changed since the last call gets a new one (leaked; one per change that is read).
pub(crate) fn last_used_code_ref() -> &'static c_int {
    static PUBLISHED: Mutex<Option<&'static c_int>> = Mutex::new(None);
    let now = last_used_code();
    let mut published = PUBLISHED.lock().unwrap_or_else(|p| p.into_inner());
    match *published {
        Some(v) if *v == now => v,
        _ => {
            let v: &'static c_int = Box::leak(Box::new(now));
            *published = Some(v);
            v
        }
    }
}

/// The class of `code`, or None if it is not an error code.
fn class_of(code: c_int) -> Option<c_int> {
    match code {
        0..=MPI_ERR_LASTCODE => Some(code),
        _ => added().get(&code).map(|a| a.class),
    }
}

/// What to say about `code` when it ends the job: its class's name, or what the program
/// added it as, with its string.
pub(crate) fn describe(code: c_int) -> String {
    if let Some(name) = predefined_class_name(code) {
        return name.to_string();
    }
    let added = added();
    let Some(a) = added.get(&code) else {
        return format!("error code {code}, unknown to mpicd");
    };
    let what = if a.class == code {
        format!("error class {code} added by the program")
    } else {
        format!(
            "error code {code} of class {} added by the program",
            a.class
        )
    };
    match &a.string {
        Some(s) => format!("{what}: {}", s.trim_end()),
        None => what,
    }
}

/// Stores a new class or code of class `class` under the next free value.
fn add(class: Option<c_int>) -> CResult<c_int> {
    let mut added = added();
    let value = match added.last_key_value() {
        None => MPI_ERR_LASTCODE + 1,
        Some((&k, _)) => k
            .checked_add(1)
            .ok_or_else(|| fail(MPI_ERR_OTHER, "no error code value left"))?,
    };
    if let Some(c) = class {
        if let Some(a) = added.get_mut(&c) {
            a.codes += 1;
        }
    }
    added.insert(
        value,
        Added {
            class: class.unwrap_or(value),
            string: None,
            codes: 0,
        },
    );
    Ok(value)
}

/// Fails with MPI_ERR_ARG unless `value` was added by the program.
fn check_added(value: c_int, what: &str) -> CResult<()> {
    if value <= MPI_ERR_LASTCODE {
        return Err(fail(
            MPI_ERR_ARG,
            format!("{what} {value} is predefined (not above MPI_ERR_LASTCODE)"),
        ));
    }
    if !added().contains_key(&value) {
        return Err(fail(
            MPI_ERR_ARG,
            format!("{what} {value} was not added by MPI_Add_error_class or _code"),
        ));
    }
    Ok(())
}

/// A new error class, above MPI_ERR_LASTCODE and every class and code in use.
#[no_mangle]
pub unsafe extern "C" fn MPI_Add_error_class(errorclass: *mut c_int) -> c_int {
    run("Add_error_class", default_errh(), |_| {
        check_live()?;
        if errorclass.is_null() {
            return Err(fail(MPI_ERR_ARG, "null errorclass"));
        }
        out(errorclass, add(None)?)
    })
}

/// A new error code of class `errorclass` (a predefined class or one the program added).
#[no_mangle]
pub unsafe extern "C" fn MPI_Add_error_code(errorclass: c_int, errorcode: *mut c_int) -> c_int {
    run("Add_error_code", default_errh(), |_| {
        check_live()?;
        if errorcode.is_null() {
            return Err(fail(MPI_ERR_ARG, "null errorcode"));
        }
        let is_class = match errorclass {
            1..=MPI_ERR_LASTCODE => predefined_class_name(errorclass).is_some(),
            _ => added()
                .get(&errorclass)
                .is_some_and(|a| a.class == errorclass),
        };
        if !is_class {
            return Err(fail(
                MPI_ERR_ARG,
                format!("{errorclass} is not an error class"),
            ));
        }
        out(errorcode, add(Some(errorclass))?)
    })
}

/// Sets the text `MPI_Error_string` gives for an error class or code the program added (at
/// most MPI_MAX_ERROR_STRING - 1 bytes); a second call replaces it.
#[no_mangle]
pub unsafe extern "C" fn MPI_Add_error_string(errorcode: c_int, string: *const c_char) -> c_int {
    run("Add_error_string", default_errh(), |_| {
        check_live()?;
        if string.is_null() {
            return Err(fail(MPI_ERR_ARG, "null string"));
        }
        // SAFETY: non-null; MPI requires a NUL-terminated string.
        let text = unsafe { CStr::from_ptr(string) };
        if text.to_bytes().len() >= MPI_MAX_ERROR_STRING as usize {
            return Err(fail(
                MPI_ERR_ARG,
                "string longer than MPI_MAX_ERROR_STRING - 1 bytes",
            ));
        }
        check_added(errorcode, "error code")?;
        let text = text.to_string_lossy().into_owned();
        if let Some(a) = added().get_mut(&errorcode) {
            a.string = Some(text);
        }
        Ok(())
    })
}

/// Removes an error class the program added; its codes and its string must have been removed
/// first.
#[no_mangle]
pub unsafe extern "C" fn MPI_Remove_error_class(errorclass: c_int) -> c_int {
    run("Remove_error_class", default_errh(), |_| {
        check_live()?;
        check_added(errorclass, "error class")?;
        let mut added = added();
        match added.get(&errorclass) {
            Some(a) if a.class != errorclass => Err(fail(
                MPI_ERR_ARG,
                format!("{errorclass} is an error code, not a class"),
            )),
            Some(a) if a.codes > 0 => Err(fail(
                MPI_ERR_ARG,
                format!("error class {errorclass} still has {} codes", a.codes),
            )),
            Some(a) if a.string.is_some() => Err(fail(
                MPI_ERR_ARG,
                format!("error class {errorclass} still has a string"),
            )),
            _ => {
                added.remove(&errorclass);
                Ok(())
            }
        }
    })
}

/// Removes an error code the program added; its string must have been removed first.
#[no_mangle]
pub unsafe extern "C" fn MPI_Remove_error_code(errorcode: c_int) -> c_int {
    run("Remove_error_code", default_errh(), |_| {
        check_live()?;
        check_added(errorcode, "error code")?;
        let mut added = added();
        let class = match added.get(&errorcode) {
            Some(a) if a.class == errorcode => {
                return Err(fail(
                    MPI_ERR_ARG,
                    format!("{errorcode} is an error class, not a code"),
                ))
            }
            Some(a) if a.string.is_some() => {
                return Err(fail(
                    MPI_ERR_ARG,
                    format!("error code {errorcode} still has a string"),
                ))
            }
            Some(a) => a.class,
            None => return Err(fail(MPI_ERR_ARG, "error code removed meanwhile")),
        };
        added.remove(&errorcode);
        if let Some(c) = added.get_mut(&class) {
            c.codes = c.codes.saturating_sub(1);
        }
        Ok(())
    })
}

/// Removes the string of an error class or code the program added.
#[no_mangle]
pub unsafe extern "C" fn MPI_Remove_error_string(errorcode: c_int) -> c_int {
    run("Remove_error_string", default_errh(), |_| {
        check_live()?;
        check_added(errorcode, "error code")?;
        match added().get_mut(&errorcode).and_then(|a| a.string.take()) {
            Some(_) => Ok(()),
            None => Err(fail(
                MPI_ERR_ARG,
                format!("error code {errorcode} has no string"),
            )),
        }
    })
}

/// Text of an error code: for a predefined class, its name and, if the last failure on this
/// thread had this code, its details; for a class or code the program added, the string it
/// gave (empty if none). Any other value fails with MPI_ERR_ARG.
#[no_mangle]
pub unsafe extern "C" fn MPI_Error_string(
    errorcode: c_int,
    string: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    run("Error_string", default_errh(), |_| {
        if string.is_null() || resultlen.is_null() {
            return Err(fail(MPI_ERR_ARG, "null string or resultlen"));
        }
        let text = match errorcode {
            0..=MPI_ERR_LASTCODE => {
                let name = crate::errors::class_name(errorcode);
                let mut text = name.to_string();
                if let Some(detail) = last_detail(errorcode) {
                    // The detail may open with the class's words ("invalid argument: ..."):
                    // they are said once.
                    let said = name.split_once(": ").map_or("", |(_, words)| words);
                    let rest = detail
                        .strip_prefix(said)
                        .and_then(|r| r.strip_prefix(": "))
                        .unwrap_or(&detail);
                    text.push_str(": ");
                    text.push_str(rest);
                }
                text
            }
            _ => added()
                .get(&errorcode)
                .map(|a| a.string.clone().unwrap_or_default())
                .ok_or_else(|| fail(MPI_ERR_ARG, format!("invalid error code {errorcode}")))?,
        };
        // SAFETY: MPI requires MPI_MAX_ERROR_STRING bytes at `string`.
        let n = unsafe { write_c_string(string, MPI_MAX_ERROR_STRING as usize, &text) };
        out(resultlen, n as c_int)
    })
}

/// The class of an error code: a predefined class is its own (so is a custom datatype
/// callback's own code up to MPI_ERR_LASTCODE); a code the program added has the class it was
/// added to. Any other value fails with MPI_ERR_ARG.
#[no_mangle]
pub unsafe extern "C" fn MPI_Error_class(errorcode: c_int, errorclass: *mut c_int) -> c_int {
    run("Error_class", default_errh(), |_| {
        if errorclass.is_null() {
            return Err(fail(MPI_ERR_ARG, "null errorclass"));
        }
        let class = class_of(errorcode)
            .ok_or_else(|| fail(MPI_ERR_ARG, format!("invalid error code {errorcode}")))?;
        out(errorclass, class)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_values_follow_the_largest_and_map_to_their_class() {
        assert_eq!(last_used_code(), MPI_ERR_LASTCODE);
        let class = add(None).unwrap();
        assert_eq!(class, MPI_ERR_LASTCODE + 1);
        let code = add(Some(class)).unwrap();
        let arg_code = add(Some(MPI_ERR_ARG)).unwrap();
        assert_eq!((code, arg_code), (class + 1, class + 2));
        assert_eq!(class_of(class), Some(class));
        assert_eq!(class_of(code), Some(class));
        assert_eq!(class_of(arg_code), Some(MPI_ERR_ARG));
        assert_eq!(class_of(MPI_ERR_TAG), Some(MPI_ERR_TAG));
        assert_eq!(class_of(-1), None);
        assert_eq!(class_of(arg_code + 1), None);
        assert_eq!(added().get(&class).map(|a| a.codes), Some(1));
        assert_eq!(last_used_code(), arg_code);
        let published = last_used_code_ref();
        assert_eq!(*published, arg_code);
        assert!(std::ptr::eq(published, last_used_code_ref()));
        assert!(describe(code).contains(&format!("of class {class}")));
        assert!(describe(MPI_ERR_RANK).starts_with("MPI_ERR_RANK"));
        added().clear();
        assert_eq!(*last_used_code_ref(), MPI_ERR_LASTCODE);
        assert_eq!(*published, arg_code, "a value handed out never changes");
    }
}
