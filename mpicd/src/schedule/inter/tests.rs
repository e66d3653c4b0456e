//! The inter-communicator plans of both groups at 1-5 members each, every root, run together in
//! memory by [`super::super::sim`] and checked against the results computed directly; the
//! reductions with a commutative sum and a non-commutative product of 2x2 matrices (which must
//! combine in rank order).

use super::super::{sim, Buf, Builder, Plan, Reduction, Step, Xfer};
use super::Root;
use crate::group::Group;
use crate::reduction::Order;
use crate::route::Route;
use std::sync::Arc;

const SIZES: std::ops::RangeInclusive<i32> = 1..=5;

/// Group A's members are 0..a, group B's a..a+b in the simulation.
#[derive(Clone, Copy)]
struct Pair {
    a: i32,
    b: i32,
}

impl Pair {
    fn all() -> impl Iterator<Item = Pair> {
        SIZES.flat_map(|a| SIZES.map(move |b| Pair { a, b }))
    }

    fn total(self) -> i32 {
        self.a + self.b
    }

    /// Member `m`'s group size, its rank there and the other group's size.
    fn place(self, m: i32) -> (i32, i32, i32) {
        match m < self.a {
            true => (self.a, m, self.b),
            false => (self.b, m - self.a, self.a),
        }
    }

    /// The simulation's number of the process member `m`'s plan names `peer`.
    fn global(self, m: i32, peer: i32) -> i32 {
        let (local, _, _) = self.place(m);
        let (first_local, first_remote) = if m < self.a { (0, self.a) } else { (self.a, 0) };
        match peer < local {
            true => first_local + peer,
            false => first_remote + peer - local,
        }
    }

    fn builder(self, m: i32) -> Builder {
        let (local, rank, remote) = self.place(m);
        let group = Group::from_members((0..(local + remote) as u32).collect());
        let route = Route {
            context: 0,
            group: Arc::new(group),
        };
        Builder::inter(route, local, rank, 0)
    }

    /// Runs member m's plan `plans[m]`, its peers renumbered as the simulation numbers them.
    fn run(self, plans: Vec<Arc<Plan>>) {
        let plans: Vec<Arc<Plan>> = plans
            .into_iter()
            .enumerate()
            .map(|(m, p)| renumber(p, |peer| self.global(m as i32, peer)))
            .collect();
        sim::run(&plans).expect("the plans run");
    }
}

/// `plan` with every peer renamed by `f`.
fn renumber(plan: Arc<Plan>, f: impl Fn(i32) -> i32) -> Arc<Plan> {
    let Ok(mut plan) = Arc::try_unwrap(plan) else {
        panic!("a plan just built has one owner");
    };
    for step in &mut plan.steps {
        if let Step::Exchange(xfers) | Step::Post(xfers) = step {
            for x in xfers {
                match x {
                    Xfer::Send { to, .. } | Xfer::SendObject { to, .. } => *to = f(*to),
                    Xfer::Recv { from, .. } | Xfer::RecvObject { from, .. } => *from = f(*from),
                }
            }
        }
    }
    Arc::new(plan)
}

fn raw(b: &mut Builder, v: &mut [u8]) -> Buf {
    // SAFETY: every vector outlives the simulated run that uses it.
    unsafe { b.raw(v.as_mut_ptr(), v.len()) }
}

/// Distinct bytes for simulation member `m`.
fn data(m: i32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (m as usize * 29 + i * 7 + 3) as u8)
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

/// 2x2 matrices of u8, multiplied modulo 256: associative, not commutative.
fn matrix_product() -> Reduction {
    Reduction {
        combine: Arc::new(|acc: &mut [u8], inc: &[u8]| {
            for (x, y) in acc.chunks_exact_mut(4).zip(inc.chunks_exact(4)) {
                let m = |i: usize, j: usize| {
                    x[2 * i]
                        .wrapping_mul(y[j])
                        .wrapping_add(x[2 * i + 1].wrapping_mul(y[2 + j]))
                };
                let p = [m(0, 0), m(0, 1), m(1, 0), m(1, 1)];
                x.copy_from_slice(&p);
            }
            Ok(())
        }),
        order: Order::Ranks,
        unit: 4,
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

/// The simulation numbers of member `m`'s group and of the other group.
fn groups(p: Pair, m: i32) -> (std::ops::Range<i32>, std::ops::Range<i32>) {
    match m < p.a {
        true => (0..p.a, p.a..p.total()),
        false => (p.a..p.total(), 0..p.a),
    }
}

#[test]
fn barrier_completes() {
    for p in Pair::all() {
        let plans = (0..p.total())
            .map(|m| {
                let mut b = p.builder(m);
                super::barrier(&mut b);
                b.finish()
            })
            .collect();
        p.run(plans);
    }
}

#[test]
fn bcast_reaches_the_other_group() {
    for p in Pair::all() {
        for root in 0..p.total() {
            let len = 13;
            let mut bufs: Vec<Vec<u8>> = (0..p.total())
                .map(|m| match m == root {
                    true => data(m, len),
                    false => vec![0; len],
                })
                .collect();
            let (root_group, _) = groups(p, root);
            let plans = bufs
                .iter_mut()
                .enumerate()
                .map(|(m, v)| {
                    let m = m as i32;
                    let mut b = p.builder(m);
                    let buf = raw(&mut b, v);
                    let side = match () {
                        _ if m == root => Root::Here,
                        _ if root_group.contains(&m) => Root::Idle,
                        _ => Root::Remote(p.place(root).1),
                    };
                    super::bcast(&mut b, buf, side);
                    b.finish()
                })
                .collect();
            p.run(plans);
            for m in 0..p.total() {
                let expected = match !root_group.contains(&m) || m == root {
                    true => data(root, len),
                    false => vec![0; len],
                };
                assert_eq!(bufs[m as usize], expected, "{} {} root {root}", p.a, p.b);
            }
        }
    }
}

#[test]
fn reduce_and_allreduce_combine_the_other_group_in_order() {
    for red in [sum(), matrix_product()] {
        for p in Pair::all() {
            let len = 8;
            let sends: Vec<Vec<u8>> = (0..p.total()).map(|m| data(m, len)).collect();
            let of = |g: std::ops::Range<i32>| -> Vec<u8> {
                let ops: Vec<Vec<u8>> = g.map(|m| sends[m as usize].clone()).collect();
                fold(&red, &ops)
            };
            for root in 0..p.total() {
                let mut sends = sends.clone();
                let mut recvs = vec![vec![0u8; len]; p.total() as usize];
                let (root_group, _) = groups(p, root);
                let plans = sends
                    .iter_mut()
                    .zip(recvs.iter_mut())
                    .enumerate()
                    .map(|(m, (s, r))| {
                        let m = m as i32;
                        let mut b = p.builder(m);
                        b.reduce_with(red.clone());
                        let (s, r) = (raw(&mut b, s), raw(&mut b, r));
                        let side = match () {
                            _ if m == root => Root::Here,
                            _ if root_group.contains(&m) => Root::Idle,
                            _ => Root::Remote(p.place(root).1),
                        };
                        let buf = if side == Root::Here { r } else { s };
                        super::reduce(&mut b, buf, side);
                        b.finish()
                    })
                    .collect();
                p.run(plans);
                let (_, other) = groups(p, root);
                assert_eq!(recvs[root as usize], of(other));
            }
            let mut sends = sends.clone();
            let mut recvs = vec![vec![0u8; len]; p.total() as usize];
            let plans = sends
                .iter_mut()
                .zip(recvs.iter_mut())
                .enumerate()
                .map(|(m, (s, r))| {
                    let mut b = p.builder(m as i32);
                    b.reduce_with(red.clone());
                    let (s, r) = (raw(&mut b, s), raw(&mut b, r));
                    super::allreduce(&mut b, s, r);
                    b.finish()
                })
                .collect();
            p.run(plans);
            for m in 0..p.total() {
                assert_eq!(recvs[m as usize], of(groups(p, m).1), "{} {}", p.a, p.b);
            }
        }
    }
}

#[test]
fn reduce_scatter_scatters_the_other_groups_reduction() {
    for red in [sum(), matrix_product()] {
        for p in Pair::all() {
            // Both vectors hold 4 * a * b bytes; A's members get 4b each, B's 4a.
            let total = 4 * (p.a * p.b) as usize;
            let count = |m: i32| 4 * groups(p, m).1.len();
            let sends: Vec<Vec<u8>> = (0..p.total()).map(|m| data(m, total)).collect();
            let mut inputs = sends.clone();
            let mut recvs: Vec<Vec<u8>> = (0..p.total()).map(|m| vec![0; count(m)]).collect();
            let plans = inputs
                .iter_mut()
                .zip(recvs.iter_mut())
                .enumerate()
                .map(|(m, (s, r))| {
                    let m = m as i32;
                    let mut b = p.builder(m);
                    b.reduce_with(red.clone());
                    let (s, r) = (raw(&mut b, s), raw(&mut b, r));
                    let counts = vec![count(m); groups(p, m).0.len()];
                    super::reduce_scatter(&mut b, s, r, &counts);
                    b.finish()
                })
                .collect();
            p.run(plans);
            for m in 0..p.total() {
                let (mine, other) = groups(p, m);
                let ops: Vec<Vec<u8>> = other.map(|o| sends[o as usize].clone()).collect();
                let all = fold(&red, &ops);
                let (rank, n) = ((m - mine.start) as usize, count(m));
                assert_eq!(recvs[m as usize], all[rank * n..(rank + 1) * n]);
            }
        }
    }
}

#[test]
fn gather_and_scatter_move_blocks_of_any_length() {
    // Member m's block is m + 1 bytes long.
    let len = |m: i32| m as usize + 1;
    for p in Pair::all() {
        for root in 0..p.total() {
            let (root_group, other) = groups(p, root);
            let side = |m: i32| match () {
                _ if m == root => Root::Here,
                _ if root_group.contains(&m) => Root::Idle,
                _ => Root::Remote(p.place(root).1),
            };
            // Gather: the root's blocks are the other group's, in rank order.
            let mut mine: Vec<Vec<u8>> = (0..p.total()).map(|m| data(m, len(m))).collect();
            let mut at_root: Vec<Vec<u8>> = other.clone().map(|o| vec![0; len(o)]).collect();
            let mut plans = Vec::new();
            for (m, v) in mine.iter_mut().enumerate() {
                let m = m as i32;
                let mut b = p.builder(m);
                let buf = raw(&mut b, v);
                let blocks: Vec<Buf> = match m == root {
                    true => at_root.iter_mut().map(|x| raw(&mut b, x)).collect(),
                    false => Vec::new(),
                };
                super::gather(&mut b, buf, &blocks, side(m));
                plans.push(b.finish());
            }
            p.run(plans);
            let expected: Vec<Vec<u8>> = other.clone().map(|o| data(o, len(o))).collect();
            assert_eq!(at_root, expected);

            // Scatter: the other group's member gets the root's block of its rank.
            let mut blocks: Vec<Vec<u8>> = other.clone().map(|o| data(100 + o, len(o))).collect();
            let mut got: Vec<Vec<u8>> = (0..p.total()).map(|m| vec![0; len(m)]).collect();
            let mut plans = Vec::new();
            for (m, v) in got.iter_mut().enumerate() {
                let m = m as i32;
                let mut b = p.builder(m);
                let buf = raw(&mut b, v);
                let bl: Vec<Buf> = match m == root {
                    true => blocks.iter_mut().map(|x| raw(&mut b, x)).collect(),
                    false => Vec::new(),
                };
                super::scatter(&mut b, &bl, buf, side(m));
                plans.push(b.finish());
            }
            p.run(plans);
            for o in other {
                assert_eq!(got[o as usize], data(100 + o, len(o)));
            }
        }
    }
}

#[test]
fn allgather_and_alltoall_exchange_between_the_groups() {
    for p in Pair::all() {
        // Allgather: member m's block (m + 2 bytes) reaches every member of the other group.
        let len = |m: i32| m as usize + 2;
        let mut mine: Vec<Vec<u8>> = (0..p.total()).map(|m| data(m, len(m))).collect();
        let mut got: Vec<Vec<Vec<u8>>> = (0..p.total())
            .map(|m| groups(p, m).1.map(|o| vec![0; len(o)]).collect())
            .collect();
        let plans = mine
            .iter_mut()
            .zip(got.iter_mut())
            .enumerate()
            .map(|(m, (v, g))| {
                let mut b = p.builder(m as i32);
                let buf = raw(&mut b, v);
                let blocks: Vec<Buf> = g.iter_mut().map(|x| raw(&mut b, x)).collect();
                super::allgather(&mut b, buf, &blocks);
                b.finish()
            })
            .collect();
        p.run(plans);
        for m in 0..p.total() {
            let expected: Vec<Vec<u8>> = groups(p, m).1.map(|o| data(o, len(o))).collect();
            assert_eq!(got[m as usize], expected);
        }

        // Alltoall: m's block for o is (m, o)'s data, 1 + (m + o) % 3 bytes long.
        let pair_len = |m: i32, o: i32| 1 + ((m + o) % 3) as usize;
        let block = |m: i32, o: i32| data(m * 10 + o, pair_len(m, o));
        let mut send: Vec<Vec<Vec<u8>>> = (0..p.total())
            .map(|m| groups(p, m).1.map(|o| block(m, o)).collect())
            .collect();
        let mut recv: Vec<Vec<Vec<u8>>> = (0..p.total())
            .map(|m| groups(p, m).1.map(|o| vec![0; pair_len(o, m)]).collect())
            .collect();
        let plans = send
            .iter_mut()
            .zip(recv.iter_mut())
            .enumerate()
            .map(|(m, (s, r))| {
                let mut b = p.builder(m as i32);
                let s: Vec<Buf> = s.iter_mut().map(|x| raw(&mut b, x)).collect();
                let r: Vec<Buf> = r.iter_mut().map(|x| raw(&mut b, x)).collect();
                super::alltoall(&mut b, &s, &r);
                b.finish()
            })
            .collect();
        p.run(plans);
        for m in 0..p.total() {
            let expected: Vec<Vec<u8>> = groups(p, m).1.map(|o| block(o, m)).collect();
            assert_eq!(recv[m as usize], expected);
        }
    }
}
