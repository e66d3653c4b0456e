//! The README's Rust example, kept compiling and passing.
// mpi-test: ranks=2

use mpicd::{CustomRecv, CustomSend, RecvParts, Result, SendParts, ANY_SOURCE};

/// The paper's struct-vec: scalars worth packing, an array worth sending as a region.
#[repr(C)]
struct StructVec {
    a: i32,
    b: i32,
    c: i32,
    d: f64,
    data: Vec<i32>,
}

impl CustomSend for StructVec {
    fn parts(&self) -> Result<SendParts<'_>> {
        let mut head = [0u8; 20];
        head[..4].copy_from_slice(&self.a.to_le_bytes());
        head[4..8].copy_from_slice(&self.b.to_le_bytes());
        head[8..12].copy_from_slice(&self.c.to_le_bytes());
        head[12..].copy_from_slice(&self.d.to_le_bytes());
        Ok(SendParts::new()
            .packed(20, move |offset, dst| {
                let n = dst.len().min(20 - offset as usize);
                dst[..n].copy_from_slice(&head[offset as usize..offset as usize + n]);
                Ok(n)
            })
            .region(&self.data[..]))
    }
}

impl CustomRecv for StructVec {
    fn resize(&mut self, shape: &mpicd::Shape) -> Result<()> {
        // Dynamic receive: the sender's region length arrives with the message.
        self.data
            .resize(shape.region(0).map_or(0, |r| r.len()) as usize, 0);
        Ok(())
    }
    fn parts(&mut self) -> Result<RecvParts<'_>> {
        let StructVec { a, b, c, d, data } = self;
        let mut head = [0u8; 20];
        Ok(RecvParts::new()
            .packed(20, move |offset, src| {
                // Pieces arrive in order and may be split anywhere: decode once all are in.
                let end = offset as usize + src.len();
                head[offset as usize..end].copy_from_slice(src);
                if end == 20 {
                    let word = |i: usize| [head[i], head[i + 1], head[i + 2], head[i + 3]];
                    (*a, *b, *c) = (
                        i32::from_le_bytes(word(0)),
                        i32::from_le_bytes(word(4)),
                        i32::from_le_bytes(word(8)),
                    );
                    *d = f64::from_le_bytes(
                        [word(12), word(16)].concat().try_into().unwrap_or_default(),
                    );
                }
                Ok(())
            })
            .region(&mut data[..]))
    }
}

fn main() -> Result<()> {
    let mpi = mpicd::init()?;
    let world = mpi.world();
    if world.rank() == 0 {
        // Contiguous messages of primitives, blocking and non-blocking.
        world.send(&[1.0f64, 2.0, 3.0], 1, 0)?;
        let v = StructVec {
            a: 1,
            b: 2,
            c: 3,
            d: 4.5,
            data: (0..2048).collect(),
        };
        world.send_custom(&v, 1, 1)?;
        // A Vec<Vec<T>> travels as regions, in one message.
        world.send_custom(&vec![vec![1, 2, 3], vec![], vec![4]], 1, 2)?;
    } else if world.rank() == 1 {
        // A non-blocking receive borrows its buffer inside a scope, which completes it.
        let mut x = [0f64; 3];
        let status = mpicd::scope(|s| world.irecv(s, &mut x, 0, 0)?.wait())?;
        assert_eq!((status.count::<f64>(), x), (Some(3), [1.0, 2.0, 3.0]));
        let mut v = StructVec {
            a: 0,
            b: 0,
            c: 0,
            d: 0.0,
            data: Vec::new(),
        };
        world.recv_custom(&mut v, 0, 1)?;
        assert_eq!((v.a, v.b, v.c, v.d), (1, 2, 3, 4.5));
        assert!(v.data.iter().copied().eq(0..2048));
        // The receiver does not know the shape: one receive, no size message.
        let mut ragged: Vec<Vec<i32>> = Vec::new();
        world.recv_custom(&mut ragged, ANY_SOURCE, 2)?;
        assert_eq!(ragged, vec![vec![1, 2, 3], vec![], vec![4]]);
    }
    mpi.finalize()
}
