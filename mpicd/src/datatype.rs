//! Element types: the primitive types mpicd moves, their sizes and wire codes, and the
//! [`Primitive`] trait that lets a slice of them be sent as contiguous bytes.

/// A primitive element type. Counts in mpicd are counts of these elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ElementType {
    Byte = 0,
    I8 = 1,
    U8 = 2,
    I16 = 3,
    U16 = 4,
    I32 = 5,
    U32 = 6,
    I64 = 7,
    U64 = 8,
    F32 = 9,
    F64 = 10,
}

impl ElementType {
    /// Every element type, in wire-code order.
    pub const ALL: [ElementType; 11] = [
        ElementType::Byte,
        ElementType::I8,
        ElementType::U8,
        ElementType::I16,
        ElementType::U16,
        ElementType::I32,
        ElementType::U32,
        ElementType::I64,
        ElementType::U64,
        ElementType::F32,
        ElementType::F64,
    ];

    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            ElementType::Byte | ElementType::I8 | ElementType::U8 => 1,
            ElementType::I16 | ElementType::U16 => 2,
            ElementType::I32 | ElementType::U32 | ElementType::F32 => 4,
            ElementType::I64 | ElementType::U64 | ElementType::F64 => 8,
        }
    }

    /// The wire code of this type.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The type with wire code `code`, if any.
    pub fn from_code(code: u8) -> Option<ElementType> {
        ElementType::ALL.get(code as usize).copied()
    }
}

/// A plain value type whose bytes can be sent as they are: no padding, no pointers, every bit
/// pattern valid.
///
/// # Safety
/// Implementors must have no padding and accept any bit pattern (the receiver writes raw bytes).
pub unsafe trait Primitive: Copy + Send + Sync + 'static {
    /// The element type this Rust type is.
    const TYPE: ElementType;
}

macro_rules! primitives {
    ($($t:ty => $e:ident),* $(,)?) => {
        $(
            // SAFETY: a primitive number type: no padding, every bit pattern valid.
            unsafe impl Primitive for $t {
                const TYPE: ElementType = ElementType::$e;
            }
        )*
    };
}

primitives!(i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, i64 => I64,
            u64 => U64, f32 => F32, f64 => F64);

/// The bytes of a slice of primitives.
pub fn bytes_of<T: Primitive>(s: &[T]) -> &[u8] {
    // SAFETY: T is a Primitive (no padding), so every byte of the slice is initialized.
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const u8, std::mem::size_of_val(s)) }
}

/// The bytes of a mutable slice of primitives.
pub fn bytes_of_mut<T: Primitive>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: T is a Primitive: no padding, and any bytes written make a valid T.
    unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut u8, std::mem::size_of_val(s)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_sizes_match_rust() {
        for t in ElementType::ALL {
            assert_eq!(ElementType::from_code(t.code()), Some(t));
        }
        assert_eq!(ElementType::from_code(11), None);
        assert_eq!(ElementType::F64.size(), std::mem::size_of::<f64>());
        assert_eq!(<u16 as Primitive>::TYPE.size(), 2);
    }
}
