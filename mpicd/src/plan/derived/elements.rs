//! Counting a derived type's basic elements: how many whole ones the first bytes of a sequence
//! of instances hold (`MPI_Get_elements`), and the bytes the first elements take
//! (`MPI_Status_set_elements`), walking the type map one level at a time ([`Datatype::parts`]).

use super::{Constructor, Datatype};

impl Datatype {
    /// Basic elements in the first `bytes` bytes of a sequence of instances (`MPI_Get_elements`:
    /// a partial basic element is not counted).
    pub fn elements_in(&self, bytes: u64) -> u64 {
        let o = &self.0;
        if o.size == 0 {
            return 0;
        }
        let whole = bytes / o.size;
        let rest = bytes % o.size;
        whole.saturating_mul(o.elements)
            + if rest == 0 {
                0
            } else {
                self.elements_in_one(rest)
            }
    }

    /// Basic elements in the first `bytes` (< size) bytes of one instance.
    fn elements_in_one(&self, mut bytes: u64) -> u64 {
        let mut n = 0;
        for (count, old) in self.parts() {
            let s = old.size();
            if s == 0 {
                continue;
            }
            let group = count.saturating_mul(s);
            if bytes >= group {
                n += count * old.elements();
                bytes -= group;
                continue;
            }
            n += (bytes / s) * old.elements();
            let rest = bytes % s;
            return n + match old.constructor() {
                Constructor::Basic(b) if b.parts > 1 => rest / (s / b.parts as u64),
                Constructor::Basic(_) => 0,
                _ => old.elements_in_one(rest),
            };
        }
        n
    }

    /// Bytes of data the first `n` basic elements of a sequence of instances take (the inverse
    /// of [`Datatype::elements_in`], for `MPI_Status_set_elements`); saturating.
    pub fn bytes_of_elements(&self, n: u64) -> u64 {
        let o = &self.0;
        if o.elements == 0 {
            return 0;
        }
        (n / o.elements).saturating_mul(o.size) + self.bytes_of_elements_in_one(n % o.elements)
    }

    /// Bytes the first `n` (< elements) basic elements of one instance take.
    fn bytes_of_elements_in_one(&self, mut n: u64) -> u64 {
        let mut bytes = 0;
        for (count, old) in self.parts() {
            let e = old.elements();
            if e == 0 {
                continue;
            }
            if n >= count.saturating_mul(e) {
                bytes += count * old.size();
                n -= count * e;
                continue;
            }
            bytes += (n / e) * old.size();
            let rest = n % e;
            return bytes
                + match old.constructor() {
                    Constructor::Basic(b) => rest * (old.size() / b.parts.max(1) as u64),
                    _ => old.bytes_of_elements_in_one(rest),
                };
        }
        bytes
    }
}
