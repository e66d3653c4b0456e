//! Tests of the external32 representation (`MPI_Pack_external` and its kin).

use super::*;

fn ext(h: MPI_Datatype) -> External {
    external(h as usize).expect("a predefined type")
}

#[test]
fn sizes_follow_the_standard_table() {
    let size = |h| ext(h).ext;
    assert_eq!(size(MPI_INT), 4);
    assert_eq!(size(MPI_LONG), 4);
    assert_eq!(size(MPI_UNSIGNED_LONG), 4);
    assert_eq!(size(MPI_WCHAR), 2);
    assert_eq!(size(MPI_LONG_LONG), 8);
    assert_eq!(size(MPI_AINT), 8);
    assert_eq!(size(MPI_LONG_DOUBLE), 16);
    assert_eq!(size(MPI_C_DOUBLE_COMPLEX), 16);
    assert_eq!(size(MPI_C_BOOL), 1);
    let pair = super::super::core_type(MPI_DOUBLE_INT).unwrap();
    assert_eq!(external_size(&pair).unwrap(), 12);
}

#[test]
fn integers_are_big_endian_and_resized() {
    let mut d = [0u8; 4];
    ext(MPI_INT).write(&(-2i32).to_ne_bytes(), &mut d);
    assert_eq!(d, [0xff, 0xff, 0xff, 0xfe]);
    ext(MPI_LONG).write(&(-5i64).to_ne_bytes(), &mut d);
    assert_eq!(d, [0xff, 0xff, 0xff, 0xfb]);
    let mut back = [0u8; 8];
    ext(MPI_LONG).read(&d, &mut back);
    assert_eq!(i64::from_ne_bytes(back), -5);
    ext(MPI_UNSIGNED_LONG).read(&[0xff, 0xff, 0xff, 0xfb], &mut back);
    assert_eq!(u64::from_ne_bytes(back), 0xffff_fffb);
    let mut f = [0u8; 8];
    ext(MPI_DOUBLE).write(&1.5f64.to_ne_bytes(), &mut f);
    assert_eq!(f, 1.5f64.to_be_bytes());
}

#[cfg(target_arch = "x86_64")]
#[test]
fn long_double_is_binary128() {
    // 1.0L in x87 format: significand 1 << 63, exponent 16383.
    let mut x87 = [0u8; 16];
    x87[..8].copy_from_slice(&(1u64 << 63).to_le_bytes());
    x87[8..10].copy_from_slice(&16383u16.to_le_bytes());
    let mut q = [0u8; 16];
    ext(MPI_LONG_DOUBLE).write(&x87, &mut q);
    assert_eq!(q[..2], [0x3f, 0xff]);
    assert!(q[2..].iter().all(|&b| b == 0));
    let mut back = [0u8; 16];
    ext(MPI_LONG_DOUBLE).read(&q, &mut back);
    assert_eq!(back, x87);
}
