//! Info objects: (key, value) string pairs that give hints to the calls that take them
//! (`MPI_Info`). Keys and values are byte strings checked against MPI's limits here; keys keep
//! the order in which they were first set, which is how `MPI_Info_get_nthkey` numbers them.

use crate::error::{Error, Result};

/// The longest key, in bytes (a C buffer of `MPI_MAX_INFO_KEY` = 256 bytes holds it and its
/// NUL; the standard asks for at most 255).
pub const MAX_KEY: usize = 255;
/// The longest value, in bytes (a C buffer of `MPI_MAX_INFO_VAL` = 1024 bytes holds it and its
/// NUL).
pub const MAX_VALUE: usize = 1023;

/// An ordered set of (key, value) pairs, each key at most once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Info {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
}

/// Fails unless `key` is a key MPI accepts: 1 to [`MAX_KEY`] bytes.
fn check_key(key: &[u8]) -> Result<()> {
    if key.is_empty() {
        return Err(Error::InvalidInfoKey("the key is empty".into()));
    }
    if key.len() > MAX_KEY {
        return Err(Error::InvalidInfoKey(format!(
            "a key of {} bytes is longer than {MAX_KEY}",
            key.len()
        )));
    }
    Ok(())
}

impl Info {
    /// An info object without keys.
    pub fn new() -> Info {
        Info::default()
    }

    /// The info of how this process was started (`MPI_INFO_ENV`, `MPI_Info_create_env`): the
    /// command (`args[0]`), its arguments (`argv`, separated by spaces) and the working
    /// directory (`wdir`), for those that are known and fit.
    pub fn environment(args: &[Vec<u8>]) -> Info {
        let mut info = Info::new();
        if let Some(command) = args.first() {
            let _ = info.set("command", command);
        }
        if args.len() > 1 {
            let _ = info.set("argv", args[1..].join(&b' '));
        }
        if let Ok(dir) = std::env::current_dir() {
            let _ = info.set("wdir", dir.as_os_str().as_encoded_bytes());
        }
        info
    }

    /// Sets `key` to `value`, replacing the value it had.
    pub fn set(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let (key, value) = (key.as_ref(), value.as_ref());
        check_key(key)?;
        if value.len() > MAX_VALUE {
            return Err(Error::InvalidInfoValue(format!(
                "a value of {} bytes is longer than {MAX_VALUE}",
                value.len()
            )));
        }
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value.to_vec(),
            None => self.entries.push((key.to_vec(), value.to_vec())),
        }
        Ok(())
    }

    /// The value of `key`, if it is set.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<&[u8]>> {
        let key = key.as_ref();
        check_key(key)?;
        Ok(self
            .entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_slice()))
    }

    /// Removes `key`; [`Error::InfoNoKey`] if it is not set.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        check_key(key)?;
        let at = self
            .entries
            .iter()
            .position(|(k, _)| k == key)
            .ok_or_else(|| {
                Error::InfoNoKey(format!("'{}' is not set", String::from_utf8_lossy(key)))
            })?;
        self.entries.remove(at);
        Ok(())
    }

    /// Number of keys set.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True without keys.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Key number `n` (from 0, in the order the keys were first set).
    pub fn nth_key(&self, n: i32) -> Result<&[u8]> {
        usize::try_from(n)
            .ok()
            .and_then(|i| self.entries.get(i))
            .map(|(k, _)| k.as_slice())
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "key number {n} of an info object with {} keys",
                    self.len()
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order_and_values_are_replaced() {
        let mut info = Info::new();
        info.set("b", "1").unwrap();
        info.set("a", "2").unwrap();
        info.set("b", "3").unwrap();
        assert_eq!(info.len(), 2);
        assert_eq!(info.nth_key(0).unwrap(), b"b");
        assert_eq!(info.nth_key(1).unwrap(), b"a");
        assert!(matches!(info.nth_key(2), Err(Error::InvalidArgument(_))));
        assert!(matches!(info.nth_key(-1), Err(Error::InvalidArgument(_))));
        assert_eq!(info.get("b").unwrap(), Some(&b"3"[..]));
        assert_eq!(info.get("c").unwrap(), None);
        info.delete("b").unwrap();
        assert!(matches!(info.delete("b"), Err(Error::InfoNoKey(_))));
        assert_eq!(info.nth_key(0).unwrap(), b"a");
        let copy = info.clone();
        info.set("", "x").unwrap_err();
        assert_eq!(copy, info);
    }

    #[test]
    fn limits_are_checked() {
        let mut info = Info::new();
        let key = "k".repeat(MAX_KEY);
        info.set(&key, "v".repeat(MAX_VALUE)).unwrap();
        info.set(&key, "").unwrap();
        let long_key = "k".repeat(MAX_KEY + 1);
        assert!(matches!(
            info.set(&long_key, "v"),
            Err(Error::InvalidInfoKey(_))
        ));
        assert!(matches!(info.get(&long_key), Err(Error::InvalidInfoKey(_))));
        assert!(matches!(info.set("", "v"), Err(Error::InvalidInfoKey(_))));
        let long_value = "v".repeat(MAX_VALUE + 1);
        assert!(matches!(
            info.set("k", long_value),
            Err(Error::InvalidInfoValue(_))
        ));
        assert_eq!(Error::InvalidInfoKey(String::new()).class(), 31);
        assert_eq!(Error::InfoNoKey(String::new()).class(), 32);
        assert_eq!(Error::InvalidInfoValue(String::new()).class(), 33);
    }

    #[test]
    fn the_environment_names_the_command() {
        let args = vec![b"prog".to_vec(), b"-x".to_vec(), b"7".to_vec()];
        let env = Info::environment(&args);
        assert_eq!(env.get("command").unwrap(), Some(&b"prog"[..]));
        assert_eq!(env.get("argv").unwrap(), Some(&b"-x 7"[..]));
        assert!(env.get("wdir").unwrap().is_some());
        assert_eq!(Info::environment(&[]).get("command").unwrap(), None);
    }
}
