//! Element kernels of the reductions that the core does not compute: products of complex
//! numbers and the predefined ops on 128-bit integers (Fortran's INTEGER16 and LOGICAL16).

use mpicd::collective::ReduceOp;

/// `acc[i] = acc[i] op inc[i]` on 128-bit integers (wrapping, as the smaller Fortran integers
/// reduce; the logical ops give 1 or 0).
#[allow(clippy::manual_is_multiple_of)] // is_multiple_of is newer than the workspace's MSRV
pub(super) fn wide(op: ReduceOp, acc: &mut [u8], inc: &[u8]) -> mpicd::Result<()> {
    if acc.len() % 16 != 0 {
        return Err(mpicd::Error::InvalidArgument(
            "128-bit integer buffers of whole elements".into(),
        ));
    }
    let value = |p: &[u8]| i128::from_ne_bytes(p.try_into().unwrap_or([0; 16]));
    for (a, b) in acc.chunks_exact_mut(16).zip(inc.chunks_exact(16)) {
        let (x, y) = (value(a), value(b));
        let r = match op {
            ReduceOp::Sum => x.wrapping_add(y),
            ReduceOp::Prod => x.wrapping_mul(y),
            ReduceOp::Max => x.max(y),
            ReduceOp::Min => x.min(y),
            ReduceOp::Band => x & y,
            ReduceOp::Bor => x | y,
            ReduceOp::Bxor => x ^ y,
            ReduceOp::Land => (x != 0 && y != 0) as i128,
            ReduceOp::Lor => (x != 0 || y != 0) as i128,
            ReduceOp::Lxor => ((x != 0) != (y != 0)) as i128,
        };
        a.copy_from_slice(&r.to_ne_bytes());
    }
    Ok(())
}

/// Complex products of pairs of parts of `N` bytes.
#[allow(clippy::manual_is_multiple_of)] // is_multiple_of is newer than the workspace's MSRV
pub(super) fn complex_prod<const N: usize>(
    acc: &mut [u8],
    inc: &[u8],
    from: fn([u8; N]) -> f64,
    to: fn(f64) -> [u8; N],
) -> mpicd::Result<()> {
    if acc.len() % (2 * N) != 0 {
        return Err(mpicd::Error::InvalidArgument(
            "complex buffers of whole numbers".into(),
        ));
    }
    let part = |p: &[u8], i: usize| {
        let mut w = [0u8; N];
        w.copy_from_slice(&p[i * N..(i + 1) * N]);
        from(w)
    };
    for (a, b) in acc.chunks_exact_mut(2 * N).zip(inc.chunks_exact(2 * N)) {
        let (ar, ai, br, bi) = (part(a, 0), part(a, 1), part(b, 0), part(b, 1));
        a[..N].copy_from_slice(&to(ar * br - ai * bi));
        a[N..].copy_from_slice(&to(ar * bi + ai * br));
    }
    Ok(())
}
