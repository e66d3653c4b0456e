//! Process topologies (MPI-4.1 chapter 8): the Cartesian grid, the graph and the distributed
//! graph a communicator may carry, as pure data with the standard's arithmetic on them
//! (MPI_Dims_create's balanced factoring, coordinates and ranks, shifts, sub-grids, and the
//! ordered neighbour lists of the neighbourhood collectives). It knows no communicator and no
//! C value: callers check their arguments against it (ranks in range, coordinates of the right
//! length) and keep a communicator's topology beside it.

/// The topology a communicator carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Topology {
    Cart(Cart),
    Graph(Graph),
    DistGraph(DistGraph),
}

/// A Cartesian grid: rank r sits at the row-major coordinates of r in `dims`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cart {
    pub dims: Vec<i32>,
    pub periods: Vec<bool>,
}

/// A graph over ranks 0..index.len(): node i's neighbours are
/// `edges[index[i - 1]..index[i]]` (from 0 for node 0), as MPI_Graph_create gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    pub index: Vec<i32>,
    pub edges: Vec<i32>,
}

/// This process's part of a distributed graph: the ranks it receives from and sends to, in
/// order, with their weights when the graph is weighted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DistGraph {
    pub sources: Vec<i32>,
    pub source_weights: Vec<i32>,
    pub destinations: Vec<i32>,
    pub destination_weights: Vec<i32>,
    pub weighted: bool,
}

/// A neighbour: a rank, or none (MPI_PROC_NULL: a non-periodic grid's edge).
pub type Neighbor = Option<i32>;

impl Cart {
    /// The number of grid points: the product of the dimensions (`None` on overflow).
    pub fn size(&self) -> Option<i32> {
        self.dims.iter().try_fold(1i32, |p, &d| p.checked_mul(d))
    }

    /// The coordinates of `rank` (a rank of the grid).
    pub fn coords(&self, rank: i32) -> Vec<i32> {
        let mut rest = rank;
        let mut coords = vec![0; self.dims.len()];
        for (c, &d) in coords.iter_mut().zip(&self.dims).rev() {
            if d > 0 {
                *c = rest % d;
                rest /= d;
            }
        }
        coords
    }

    /// The rank at `coords` (one per dimension); a coordinate outside a periodic dimension
    /// wraps, outside a non-periodic one gives `None`.
    pub fn rank(&self, coords: &[i32]) -> Option<i32> {
        let mut rank = 0i32;
        for ((&c, &d), &periodic) in coords.iter().zip(&self.dims).zip(&self.periods) {
            let c = match periodic {
                true if d > 0 => c.rem_euclid(d),
                _ if (0..d).contains(&c) => c,
                _ => return None,
            };
            rank = rank.checked_mul(d)?.checked_add(c)?;
        }
        Some(rank)
    }

    /// MPI_Cart_shift: the (source, destination) of `rank` along dimension `dim` by `disp`.
    pub fn shift(&self, rank: i32, dim: usize, disp: i32) -> (Neighbor, Neighbor) {
        let at = self.coords(rank);
        let moved = |by: i32| {
            let mut c = at.clone();
            c[dim] = c[dim].checked_add(by)?;
            self.rank(&c)
        };
        (disp.checked_neg().and_then(moved), moved(disp))
    }

    /// The grid of the dimensions `keep` marks, for the sub-grid `rank` belongs to.
    pub fn sub(&self, keep: &[bool]) -> Cart {
        let pick = |v: &[i32]| -> Vec<i32> {
            v.iter()
                .zip(keep)
                .filter(|(_, &k)| k)
                .map(|(&x, _)| x)
                .collect()
        };
        let periods = self
            .periods
            .iter()
            .zip(keep)
            .filter(|(_, &k)| k)
            .map(|(&p, _)| p)
            .collect();
        Cart {
            dims: pick(&self.dims),
            periods,
        }
    }

    /// What identifies `rank`'s sub-grid among those `keep` cuts (its coordinates in the
    /// dropped dimensions, as one number) and its rank in it.
    pub fn sub_color_key(&self, rank: i32, keep: &[bool]) -> (i32, i32) {
        let coords = self.coords(rank);
        let (mut color, mut key) = (0i32, 0i32);
        for ((&c, &d), &k) in coords.iter().zip(&self.dims).zip(keep) {
            let acc = if k { &mut key } else { &mut color };
            *acc = acc.wrapping_mul(d).wrapping_add(c);
        }
        (color, key)
    }
}

impl Graph {
    /// The neighbours of node `rank` (none for a rank outside the graph).
    pub fn neighbors(&self, rank: i32) -> &[i32] {
        let r = rank as usize;
        if rank < 0 || r >= self.index.len() {
            return &[];
        }
        let start = if r == 0 {
            0
        } else {
            self.index[r - 1] as usize
        };
        let end = self.index[r] as usize;
        self.edges.get(start..end).unwrap_or(&[])
    }
}

impl Topology {
    /// The neighbours of `rank` a neighbourhood collective receives from (block i of the
    /// receive buffer from the i-th) and sends to (block i of the send buffer to the i-th).
    pub fn neighbors(&self, rank: i32) -> (Vec<Neighbor>, Vec<Neighbor>) {
        match self {
            Topology::Cart(c) => {
                let all: Vec<Neighbor> = (0..c.dims.len())
                    .flat_map(|d| {
                        let (s, t) = c.shift(rank, d, 1);
                        [s, t]
                    })
                    .collect();
                (all.clone(), all)
            }
            Topology::Graph(g) => {
                let all: Vec<Neighbor> = g.neighbors(rank).iter().map(|&r| Some(r)).collect();
                (all.clone(), all)
            }
            Topology::DistGraph(d) => (
                d.sources.iter().map(|&r| Some(r)).collect(),
                d.destinations.iter().map(|&r| Some(r)).collect(),
            ),
        }
    }

    /// The order in which a neighbourhood collective sends its blocks, so that two messages
    /// between the same pair of processes match in the order the receiver expects them: in a
    /// grid, per dimension, the block for the destination (which the neighbour receives as
    /// from its source, first) before the block for the source.
    pub fn send_order(&self, n: usize) -> Vec<usize> {
        match self {
            Topology::Cart(_) => (0..n).map(|i| i ^ 1).collect(),
            _ => (0..n).collect(),
        }
    }
}

/// MPI_Dims_create: fills the zero entries of `dims` so that the product of all entries is
/// `nnodes`, as close to each other as possible, in non-increasing order. An error says why
/// it cannot: a negative entry, or `nnodes` not a multiple of the given entries' product.
pub fn dims_create(nnodes: i32, dims: &mut [i32]) -> Result<(), String> {
    if nnodes <= 0 {
        return Err(format!(
            "the number of nodes must be positive, not {nnodes}"
        ));
    }
    if let Some(d) = dims.iter().find(|&&d| d < 0) {
        return Err(format!("negative dimension {d}"));
    }
    let given: i64 = dims.iter().filter(|&&d| d > 0).map(|&d| d as i64).product();
    let free = dims.iter().filter(|&&d| d == 0).count();
    if nnodes as i64 % given != 0 {
        return Err(format!(
            "{nnodes} nodes are not a multiple of the given dimensions' product {given}"
        ));
    }
    let rest = nnodes as i64 / given;
    if free == 0 {
        return match rest {
            1 => Ok(()),
            _ => Err(format!(
                "the dimensions' product {given} is not the number of nodes {nnodes}"
            )),
        };
    }
    let made = balanced(rest, free);
    let mut next = made.into_iter();
    for d in dims.iter_mut().filter(|d| **d == 0) {
        *d = next.next().unwrap_or(1) as i32;
    }
    Ok(())
}

/// The factoring of `m` into `k` non-increasing factors that MPICH chooses (so that programs
/// see the same grids as there): first, from the largest down, primes that divide `m` once and
/// exceed the square root of what is left take a dimension each (all but one dimension at
/// most); the rest is factored so that its largest and smallest factors are closest, and among
/// equally close factorings the one whose smallest factors are largest (compared from the
/// smallest up) wins.
fn balanced(m: i64, k: usize) -> Vec<i64> {
    let mut fixed = Vec::new();
    let mut rest = m;
    let primes = prime_factors(m);
    let mut distinct = primes.clone();
    distinct.dedup();
    for &p in distinct.iter().skip(1).rev() {
        let once = primes.iter().filter(|&&q| q == p).count() == 1;
        if fixed.len() + 1 >= k || !once || p * p <= rest {
            break;
        }
        fixed.push(p);
        rest /= p;
    }
    let k = k - fixed.len();
    let mut divs: Vec<i64> = (1..)
        .take_while(|d| d * d <= rest)
        .filter(|d| rest % d == 0)
        .flat_map(|d| [d, rest / d])
        .collect();
    divs.sort_unstable();
    divs.dedup();
    let mut search = Search {
        divs,
        cur: Vec::with_capacity(k),
        best: None,
    };
    search.run(rest, k, rest);
    let made = search.best.unwrap_or_else(|| {
        let mut v = vec![1; k];
        if let Some(first) = v.first_mut() {
            *first = rest;
        }
        v
    });
    fixed.extend(made);
    fixed
}

/// The prime factors of `m`, smallest first, with their multiplicity.
fn prime_factors(mut m: i64) -> Vec<i64> {
    let mut out = Vec::new();
    let mut p = 2;
    while p * p <= m {
        while m % p == 0 {
            out.push(p);
            m /= p;
        }
        p += 1;
    }
    if m > 1 {
        out.push(m);
    }
    out
}

/// The state of [`balanced`]'s search: the divisors of the number, the factors chosen so far
/// (largest first) and the best factoring found.
struct Search {
    divs: Vec<i64>,
    cur: Vec<i64>,
    best: Option<Vec<i64>>,
}

/// The spread of a non-increasing factoring.
fn spread(v: &[i64]) -> i64 {
    match (v.first(), v.last()) {
        (Some(a), Some(b)) => a - b,
        _ => 0,
    }
}

impl Search {
    /// The spread of the best factoring so far.
    fn bound(&self) -> i64 {
        self.best.as_deref().map_or(i64::MAX, spread)
    }

    /// Keeps the factoring in `cur` if it beats the best one.
    fn offer(&mut self) {
        let better = match &self.best {
            None => true,
            Some(b) => {
                let (s, t) = (spread(&self.cur), spread(b));
                s < t || (s == t && self.cur.iter().rev().cmp(b.iter().rev()).is_gt())
            }
        };
        if better {
            self.best = Some(self.cur.clone());
        }
    }

    /// Factors `m` into `k` more factors of at most `max` each.
    fn run(&mut self, m: i64, k: usize, max: i64) {
        if k == 0 {
            if m == 1 {
                self.offer();
            }
            return;
        }
        if k == 1 {
            if m <= max {
                self.cur.push(m);
                if self.cur[0] - m <= self.bound() {
                    self.offer();
                }
                self.cur.pop();
            }
            return;
        }
        // The largest of k factors of m is at least m's k-th root.
        let at_least = |f: i64| {
            (0..k)
                .try_fold(1i64, |p, _| p.checked_mul(f))
                .map_or(true, |p| p >= m)
        };
        let cands: Vec<i64> = self
            .divs
            .iter()
            .copied()
            .filter(|&f| f <= max && m % f == 0 && at_least(f))
            .collect();
        for f in cands {
            let top = self.cur.first().copied().unwrap_or(f);
            // The smallest factor is at most f, so the spread at least top - f; for the
            // first factor, at least f minus the (k-1)-th root of what remains.
            let least = match self.cur.is_empty() {
                true => f - ((m / f) as f64).powf(1.0 / (k - 1) as f64).floor() as i64 - 1,
                false => top - f,
            };
            if least > self.bound() {
                continue;
            }
            self.cur.push(f);
            self.run(m / f, k - 1, f);
            self.cur.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(n: i32, given: &[i32]) -> Vec<i32> {
        let mut d = given.to_vec();
        dims_create(n, &mut d).unwrap();
        d
    }

    #[test]
    fn dims_are_balanced_and_non_increasing() {
        assert_eq!(dims(6, &[0, 0]), [3, 2]);
        assert_eq!(dims(16, &[0, 0]), [4, 4]);
        assert_eq!(dims(24, &[0, 0, 0]), [4, 3, 2]);
        assert_eq!(dims(7, &[0, 0, 0]), [7, 1, 1]);
        assert_eq!(dims(12, &[0, 3, 0]), [2, 3, 2]);
        assert_eq!(dims(1, &[]), Vec::<i32>::new());
        // MPICH's choices among equally spread grids (its topo/baddims.h).
        assert_eq!(dims(883008, &[0; 5]), [73, 14, 12, 9, 8]);
        assert_eq!(dims(228072, &[0; 3]), [86, 52, 51]);
        assert_eq!(dims(72, &[0; 2]), [9, 8]);
        assert_eq!(dims(98784, &[0; 5]), [14, 14, 9, 8, 7]);
        assert!(dims_create(10, &mut [3, 0]).is_err());
        assert!(dims_create(6, &mut [2, 2]).is_err());
        assert!(dims_create(6, &mut [-1, 0]).is_err());
    }

    #[test]
    fn cart_coords_ranks_and_shifts() {
        let c = Cart {
            dims: vec![2, 3],
            periods: vec![false, true],
        };
        assert_eq!(c.size(), Some(6));
        assert_eq!(c.coords(4), [1, 1]);
        assert_eq!(c.rank(&[1, 1]), Some(4));
        assert_eq!(c.rank(&[1, 4]), Some(4));
        assert_eq!(c.rank(&[2, 0]), None);
        assert_eq!(c.shift(4, 0, 1), (Some(1), None));
        assert_eq!(c.shift(4, 1, 1), (Some(3), Some(5)));
        assert_eq!(c.shift(3, 1, -1), (Some(4), Some(5)));
        let (s, t) = Topology::Cart(c.clone()).neighbors(0);
        assert_eq!(s, [None, Some(3), Some(2), Some(1)]);
        assert_eq!(s, t);
        assert_eq!(c.sub_color_key(4, &[false, true]), (1, 1));
        assert_eq!(c.sub(&[false, true]).dims, [3]);
    }

    #[test]
    fn graph_neighbors() {
        let g = Graph {
            index: vec![2, 3, 4],
            edges: vec![1, 2, 0, 0],
        };
        assert_eq!(g.neighbors(0), [1, 2]);
        assert_eq!(g.neighbors(2), [0]);
        assert!(g.neighbors(3).is_empty());
    }
}
