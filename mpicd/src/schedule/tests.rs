//! Every algorithm at 1-9 members, every root, several lengths, run in memory by [`super::sim`]
//! against the result computed directly; reductions with a commutative sum and with a
//! non-commutative product of 2x2 matrices (which must combine in rank order).

use super::algorithms as alg;
use super::few;
use super::scans;
use super::{sim, Buf, Builder, Plan, Reduction};
use crate::group::Group;
use crate::reduction::Order;
use crate::route::Route;
use std::sync::Arc;

const MEMBERS: std::ops::RangeInclusive<i32> = 1..=9;

fn builder(rank: i32, size: i32) -> Builder {
    let route = Route {
        context: 0,
        group: Arc::new(Group::from_members((0..size as u32).collect())),
    };
    Builder::new(route, rank, 0)
}

/// Raw memory of one member, lent to its plan.
fn raw(b: &mut Builder, v: &mut [u8]) -> Buf {
    // SAFETY: every vector outlives the simulated run that uses it.
    unsafe { b.raw(v.as_mut_ptr(), v.len()) }
}

fn run(plans: Vec<Arc<Plan>>) {
    sim::run(&plans).expect("the plans run");
}

/// Distinct bytes for member `r`.
fn data(r: i32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (r as usize * 37 + i * 11 + 1) as u8)
        .collect()
}

fn sum() -> Reduction {
    Reduction {
        combine: Arc::new(|acc: &mut [u8], inc: &[u8]| {
            acc.iter_mut()
                .zip(inc)
                .for_each(|(a, b)| *a = a.wrapping_add(*b));
            Ok(())
        }),
        order: Order::Any,
        unit: 1,
    }
}

/// 2x2 matrices of u32, multiplied (wrapping): associative, not commutative.
fn matrix_product() -> Reduction {
    Reduction {
        combine: Arc::new(|acc: &mut [u8], inc: &[u8]| {
            for (a, b) in acc.chunks_exact_mut(16).zip(inc.chunks_exact(16)) {
                let m = |s: &[u8]| -> Vec<u32> {
                    s.chunks(4)
                        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                        .collect()
                };
                let (x, y) = (m(a), m(b));
                let p = [
                    x[0].wrapping_mul(y[0])
                        .wrapping_add(x[1].wrapping_mul(y[2])),
                    x[0].wrapping_mul(y[1])
                        .wrapping_add(x[1].wrapping_mul(y[3])),
                    x[2].wrapping_mul(y[0])
                        .wrapping_add(x[3].wrapping_mul(y[2])),
                    x[2].wrapping_mul(y[1])
                        .wrapping_add(x[3].wrapping_mul(y[3])),
                ];
                for (d, v) in a.chunks_mut(4).zip(p) {
                    d.copy_from_slice(&v.to_le_bytes());
                }
            }
            Ok(())
        }),
        order: Order::Ranks,
        unit: 16,
    }
}

/// The reduction of `operands` in order.
fn fold(red: &Reduction, operands: &[Vec<u8>]) -> Vec<u8> {
    let mut acc = operands[0].clone();
    for o in &operands[1..] {
        (red.combine)(&mut acc, o).unwrap();
    }
    acc
}

#[test]
fn barrier_completes() {
    for size in MEMBERS {
        run((0..size)
            .map(|r| {
                let mut b = builder(r, size);
                alg::barrier(&mut b);
                b.finish()
            })
            .collect());
        run((0..size)
            .map(|r| {
                let mut b = builder(r, size);
                few::barrier_linear(&mut b);
                b.finish()
            })
            .collect());
        run((0..size)
            .map(|r| {
                let mut b = builder(r, size);
                few::barrier_fan(&mut b);
                b.finish()
            })
            .collect());
    }
}

#[test]
fn broadcasts_deliver_the_roots_bytes() {
    type Bcast = fn(&mut Builder, Buf, i32);
    let algorithms: [Bcast; 3] = [
        alg::bcast_binomial,
        alg::bcast_scatter_allgather,
        alg::bcast_linear,
    ];
    for size in MEMBERS {
        for root in 0..size {
            for len in [0, 1, 7, 100, 1000] {
                for f in algorithms {
                    let mut bufs: Vec<Vec<u8>> = (0..size)
                        .map(|r| {
                            if r == root {
                                data(r, len)
                            } else {
                                vec![0; len]
                            }
                        })
                        .collect();
                    let plans = bufs
                        .iter_mut()
                        .enumerate()
                        .map(|(r, v)| {
                            let mut b = builder(r as i32, size);
                            let buf = raw(&mut b, v);
                            f(&mut b, buf, root);
                            b.finish()
                        })
                        .collect();
                    run(plans);
                    assert!(
                        bufs.iter().all(|v| *v == data(root, len)),
                        "{size} {root} {len}"
                    );
                }
            }
        }
    }
}

/// Runs a reducing plan on every member: `make(b, send, recv)`, and returns the receive buffers.
fn reduce_all(
    size: i32,
    red: &Reduction,
    len: usize,
    make: impl Fn(&mut Builder, Buf, Buf),
) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let mut send: Vec<Vec<u8>> = (0..size).map(|r| data(r, len)).collect();
    let mut recv = vec![vec![0u8; len]; size as usize];
    let plans = send
        .iter_mut()
        .zip(recv.iter_mut())
        .enumerate()
        .map(|(r, (s, v))| {
            let mut b = builder(r as i32, size);
            b.reduce_with(red.clone());
            let (s, v) = (raw(&mut b, s), raw(&mut b, v));
            make(&mut b, s, v);
            b.finish()
        })
        .collect();
    run(plans);
    (send, recv)
}

#[test]
fn reductions_combine_in_rank_order() {
    for red in [sum(), matrix_product()] {
        for size in MEMBERS {
            let len = 48;
            let operands: Vec<Vec<u8>> = (0..size).map(|r| data(r, len)).collect();
            let all = fold(&red, &operands);
            for root in 0..size {
                let (_, recv) = reduce_all(size, &red, len, |b, s, v| {
                    alg::reduce_binomial(b, s, Some(v), root)
                });
                assert_eq!(recv[root as usize], all, "reduce {size} {root}");
            }
            for root in 0..size {
                let (_, recv) = reduce_all(size, &red, len, |b, s, v| {
                    few::reduce_linear(b, s, Some(v), root)
                });
                assert_eq!(recv[root as usize], all, "linear reduce {size} {root}");
            }
            let (_, recv) = reduce_all(size, &red, len, |b, s, v| {
                b.copy(s, v);
                alg::allreduce_recursive_doubling(b, v)
            });
            assert!(recv.iter().all(|v| *v == all), "allreduce {size}");
            let (_, recv) = reduce_all(size, &red, len, |b, s, v| {
                b.copy(s, v);
                few::allreduce_linear(b, v)
            });
            assert!(recv.iter().all(|v| *v == all), "linear allreduce {size}");
            // Reduce-scatter in one round: member r's block r, at the start of its buffer.
            let blocks: Vec<(usize, usize)> = (0..size as usize)
                .map(|i| (i * len / size as usize, len / size as usize))
                .collect();
            let (_, recv) = reduce_all(size, &red, len, |b, s, v| {
                let (_, n) = blocks[b.rank() as usize];
                few::reduce_scatter_linear(b, s, v.part(0, n), &blocks)
            });
            for (r, &(o, n)) in blocks.iter().enumerate() {
                let want = fold(
                    &red,
                    &operands
                        .iter()
                        .map(|x| x[o..o + n].to_vec())
                        .collect::<Vec<_>>(),
                );
                assert_eq!(recv[r][..n], want[..], "linear reduce-scatter {size} {r}");
            }
            if red.order == Order::Any {
                for len in [0, 3, 48, 101] {
                    let operands: Vec<Vec<u8>> = (0..size).map(|r| data(r, len)).collect();
                    let all = fold(&red, &operands);
                    let (_, recv) = reduce_all(size, &red, len, |b, s, v| {
                        b.copy(s, v);
                        alg::allreduce_ring(b, v)
                    });
                    assert!(recv.iter().all(|v| *v == all), "ring {size} {len}");
                    let (_, recv) = reduce_all(size, &red, len, |b, s, v| {
                        b.copy(s, v);
                        alg::allreduce_rabenseifner(b, v)
                    });
                    assert!(recv.iter().all(|v| *v == all), "rabenseifner {size} {len}");
                }
            }
            for (exclusive, chain) in [(false, false), (true, false), (false, true), (true, true)] {
                let (_, recv) = reduce_all(size, &red, len, |b, s, v| match chain {
                    true => scans::chain(b, s, v, exclusive),
                    false => scans::recursive_doubling(b, s, v, exclusive),
                });
                for (r, got) in recv.iter().enumerate() {
                    let upto = if exclusive { r } else { r + 1 };
                    if upto > 0 {
                        let want = fold(&red, &operands[..upto]);
                        assert_eq!(*got, want, "scan {size} {r} chain {chain}");
                    }
                }
            }
        }
    }
}

#[test]
fn ring_reduce_scatter_leaves_each_member_its_block() {
    let red = sum();
    for size in MEMBERS {
        let blocks: Vec<(usize, usize)> = {
            let mut off = 0;
            (0..size as usize)
                .map(|i| {
                    let n = (i * 7) % 5;
                    off += n;
                    (off - n, n)
                })
                .collect()
        };
        let len = blocks.iter().map(|b| b.1).sum();
        let operands: Vec<Vec<u8>> = (0..size).map(|r| data(r, len)).collect();
        let all = fold(&red, &operands);
        let (_, recv) = reduce_all(size, &red, len, |b, s, v| {
            b.copy(s, v);
            alg::reduce_scatter_ring(b, v, &blocks)
        });
        for (r, &(o, n)) in blocks.iter().enumerate() {
            assert_eq!(recv[r][o..o + n], all[o..o + n], "{size} {r}");
        }
    }
}

/// Block `i` of uneven lengths.
fn uneven(i: i32) -> usize {
    (i as usize * 5) % 7
}

/// Byte ranges of blocks laid end to end.
fn layout(lens: impl Iterator<Item = usize>) -> Vec<(usize, usize)> {
    let mut off = 0;
    lens.map(|n| {
        off += n;
        (off - n, n)
    })
    .collect()
}

#[test]
fn allgathers_collect_every_block() {
    type Allgather = fn(&mut Builder, &[Buf], Option<Buf>);
    let algorithms: [Allgather; 2] = [alg::allgather_linear, alg::allgather_ring];
    for size in MEMBERS {
        let ranges = layout((0..size).map(uneven));
        let total: usize = ranges.iter().map(|r| r.1).sum();
        let expected: Vec<u8> = (0..size).flat_map(|r| data(r, uneven(r))).collect();
        for (f, in_place) in algorithms.iter().flat_map(|f| [(f, true), (f, false)]) {
            // In place, each member's block is already in its slot; else it comes from `mine`.
            let mut mine: Vec<Vec<u8>> = (0..size).map(|r| data(r, uneven(r))).collect();
            let mut recv: Vec<Vec<u8>> = (0..size)
                .map(|r| {
                    let mut v = vec![0u8; total];
                    let (o, n) = ranges[r as usize];
                    if in_place {
                        v[o..o + n].copy_from_slice(&data(r, n));
                    }
                    v
                })
                .collect();
            let plans = recv
                .iter_mut()
                .zip(mine.iter_mut())
                .enumerate()
                .map(|(r, (v, m))| {
                    let mut b = builder(r as i32, size);
                    let all = raw(&mut b, v);
                    let m = raw(&mut b, m);
                    let blocks: Vec<Buf> = ranges.iter().map(|&(o, n)| all.part(o, n)).collect();
                    f(&mut b, &blocks, (!in_place).then_some(m));
                    b.finish()
                })
                .collect();
            run(plans);
            assert!(recv.iter().all(|v| *v == expected), "{size} {in_place}");
        }
    }
}

#[test]
fn gathers_and_scatters_move_every_block() {
    type Gather = fn(&mut Builder, Buf, Option<&[Buf]>, i32);
    type Scatter = fn(&mut Builder, Option<&[Buf]>, Buf, i32);
    let gathers: [Gather; 2] = [alg::gather_linear, alg::gather_binomial];
    let scatters: [Scatter; 2] = [alg::scatter_linear, alg::scatter_binomial];
    for size in MEMBERS {
        for root in 0..size {
            for n in [0, 1, 9] {
                let expected: Vec<u8> = (0..size).flat_map(|r| data(r, n)).collect();
                for (gather, scatter) in gathers.iter().zip(scatters) {
                    let mut mine: Vec<Vec<u8>> = (0..size).map(|r| data(r, n)).collect();
                    let mut all = vec![vec![0u8; n * size as usize]; size as usize];
                    let plans = mine
                        .iter_mut()
                        .zip(all.iter_mut())
                        .enumerate()
                        .map(|(r, (m, a))| {
                            let mut b = builder(r as i32, size);
                            let (m, a) = (raw(&mut b, m), raw(&mut b, a));
                            let blocks: Vec<Buf> =
                                (0..size as usize).map(|i| a.part(i * n, n)).collect();
                            gather(&mut b, m, Some(&blocks), root);
                            b.finish()
                        })
                        .collect();
                    run(plans);
                    assert_eq!(all[root as usize], expected, "gather {size} {root} {n}");
                    let mut got = vec![vec![0u8; n]; size as usize];
                    let plans = got
                        .iter_mut()
                        .zip(all.iter_mut())
                        .enumerate()
                        .map(|(r, (m, a))| {
                            let mut b = builder(r as i32, size);
                            let (m, a) = (raw(&mut b, m), raw(&mut b, a));
                            let blocks: Vec<Buf> =
                                (0..size as usize).map(|i| a.part(i * n, n)).collect();
                            scatter(&mut b, Some(&blocks), m, root);
                            b.finish()
                        })
                        .collect();
                    run(plans);
                    for (r, g) in got.iter().enumerate() {
                        assert_eq!(*g, data(r as i32, n), "scatter {size} {root} {n}");
                    }
                }
            }
        }
    }
}

#[test]
fn alltoalls_deliver_every_pair() {
    type Alltoall = fn(&mut Builder, &[Buf], &[Buf]);
    let algorithms: [Alltoall; 2] = [alg::alltoall_linear, alg::alltoall_pairwise];
    // Member s sends (s + d) % 4 bytes to member d.
    let len = |s: i32, d: i32| ((s + d) % 4) as usize;
    for size in MEMBERS {
        for f in algorithms {
            let mut send: Vec<Vec<u8>> = (0..size)
                .map(|s| {
                    (0..size)
                        .flat_map(|d| data(s * 10 + d, len(s, d)))
                        .collect()
                })
                .collect();
            let mut recv: Vec<Vec<u8>> = (0..size)
                .map(|d| vec![0u8; (0..size).map(|s| len(s, d)).sum()])
                .collect();
            let plans = send
                .iter_mut()
                .zip(recv.iter_mut())
                .enumerate()
                .map(|(r, (s, v))| {
                    let r = r as i32;
                    let mut b = builder(r, size);
                    let (s, v) = (raw(&mut b, s), raw(&mut b, v));
                    let out: Vec<Buf> = layout((0..size).map(|d| len(r, d)))
                        .into_iter()
                        .map(|(o, n)| s.part(o, n))
                        .collect();
                    let inc: Vec<Buf> = layout((0..size).map(|src| len(src, r)))
                        .into_iter()
                        .map(|(o, n)| v.part(o, n))
                        .collect();
                    f(&mut b, &out, &inc);
                    b.finish()
                })
                .collect();
            run(plans);
            for d in 0..size {
                let expected: Vec<u8> = (0..size)
                    .flat_map(|s| data(s * 10 + d, len(s, d)))
                    .collect();
                assert_eq!(recv[d as usize], expected, "{size} {d}");
            }
        }
    }
}

#[test]
fn split_keeps_whole_elements() {
    assert_eq!(alg::split(10, 1, 3), vec![(0, 4), (4, 3), (7, 3)]);
    assert_eq!(alg::split(48, 16, 2), vec![(0, 32), (32, 16)]);
    assert_eq!(alg::split(0, 4, 3), vec![(0, 0), (0, 0), (0, 0)]);
    assert_eq!(alg::split(5, 4, 2), vec![(0, 4), (4, 1)]);
}
