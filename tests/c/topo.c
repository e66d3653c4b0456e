/* topo.c: process topologies on any number of ranks: MPI_Dims_create, Cartesian grids (create,
 * coordinates, ranks, shifts, sub-grids, map, dup keeping the topology, processes left out),
 * graphs and distributed graphs (both constructors, weights), MPI_Topo_test, and the
 * neighbourhood collectives (allgather(v), alltoall(v,w)) in their blocking, non-blocking and
 * persistent forms on a periodic ring, a non-periodic grid and a distributed graph, with the
 * data each block must hold, MPI_PROC_NULL neighbours' blocks left untouched, and the error
 * classes of bad calls. */
#include "check.h"
#include <string.h>

static void check_dims(void) {
    int d[3] = {0, 0, 0};
    OK(MPI_Dims_create(24, 3, d));
    CHECK(d[0] == 4 && d[1] == 3 && d[2] == 2);
    int e[2] = {0, 3};
    OK(MPI_Dims_create(12, 2, e));
    CHECK(e[0] == 4 && e[1] == 3);
    int f[2] = {0, 0};
    OK(MPI_Dims_create(7, 2, f));
    CHECK(f[0] == 7 && f[1] == 1);
    int g[2] = {5, 0};
    FAILS(MPI_Dims_create(12, 2, g), MPI_ERR_DIMS);
    FAILS(MPI_Dims_create(4, -1, g), MPI_ERR_DIMS);
}

/* A periodic ring of every process: neighbours, shifts and the neighbour collectives. */
static void check_ring(int rank, int size) {
    int dims[1] = {size}, periods[1] = {1};
    MPI_Comm ring;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    OK(MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN));
    int kind = -1, nd = -1, src, dst;
    OK(MPI_Topo_test(ring, &kind));
    CHECK(kind == MPI_CART);
    OK(MPI_Cartdim_get(ring, &nd));
    CHECK(nd == 1);
    OK(MPI_Cart_shift(ring, 0, 1, &src, &dst));
    CHECK(src == (rank - 1 + size) % size && dst == (rank + 1) % size);
    OK(MPI_Cart_shift(ring, 0, -2, &src, &dst));
    CHECK(src == (rank + 2) % size && dst == ((rank - 2) % size + size) % size);

    /* Allgather: block 0 from the source, block 1 from the destination. */
    int mine = 100 + rank, got[2] = {-1, -1};
    OK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, ring));
    CHECK(got[0] == 100 + (rank - 1 + size) % size && got[1] == 100 + (rank + 1) % size);

    /* Alltoall: what the source sent to its destination lands in block 0. */
    int out[2] = {rank * 10 + 0, rank * 10 + 1}, in[2] = {-1, -1};
    OK(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, ring));
    int s = (rank - 1 + size) % size, d = (rank + 1) % size;
    CHECK(in[0] == s * 10 + 1 && in[1] == d * 10 + 0);

    /* Non-blocking and persistent forms. */
    MPI_Request req;
    in[0] = in[1] = -1;
    OK(MPI_Ineighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, ring, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(in[0] == s * 10 + 1 && in[1] == d * 10 + 0);
    OK(MPI_Neighbor_allgather_init(&mine, 1, MPI_INT, got, 1, MPI_INT, ring, MPI_INFO_NULL, &req));
    for (int round = 0; round < 3; round++) {
        mine = 1000 * round + rank;
        got[0] = got[1] = -1;
        OK(MPI_Start(&req));
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(got[0] == 1000 * round + s && got[1] == 1000 * round + d);
    }
    OK(MPI_Request_free(&req));

    /* Dup keeps the topology. */
    MPI_Comm dup;
    OK(MPI_Comm_dup(ring, &dup));
    OK(MPI_Topo_test(dup, &kind));
    CHECK(kind == MPI_CART);
    OK(MPI_Comm_free(&dup));
    OK(MPI_Comm_free(&ring));
}

/* A non-periodic 2-D grid of the first rows*cols processes. */
static void check_grid(int rank, int size) {
    int dims[2] = {0, 0}, periods[2] = {0, 0};
    int n = size >= 4 ? 4 : size;
    OK(MPI_Dims_create(n, 2, dims));
    MPI_Comm grid;
    int mapped = -1;
    OK(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &mapped));
    CHECK(mapped == (rank < n ? rank : MPI_UNDEFINED));
    OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &grid));
    if (rank >= n) {
        CHECK(grid == MPI_COMM_NULL);
        return;
    }
    OK(MPI_Comm_set_errhandler(grid, MPI_ERRORS_RETURN));
    int gd[2], gp[2], gc[2], r = -1, c[2];
    OK(MPI_Cart_get(grid, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 0 && gp[1] == 0);
    CHECK(gc[0] == rank / dims[1] && gc[1] == rank % dims[1]);
    OK(MPI_Cart_rank(grid, gc, &r));
    CHECK(r == rank);
    OK(MPI_Cart_coords(grid, n - 1, 2, c));
    CHECK(c[0] == dims[0] - 1 && c[1] == dims[1] - 1);
    int bad[2] = {dims[0], 0};
    FAILS(MPI_Cart_rank(grid, bad, &r), MPI_ERR_ARG);
    FAILS(MPI_Cart_coords(grid, n, 2, c), MPI_ERR_RANK);
    FAILS(MPI_Cart_shift(grid, 2, 1, &r, &r), MPI_ERR_ARG);

    /* Neighbours per dimension: source then destination; MPI_PROC_NULL blocks untouched. */
    int nb[4];
    for (int k = 0; k < 2; k++) OK(MPI_Cart_shift(grid, k, 1, &nb[2 * k], &nb[2 * k + 1]));
    double out[4], in[4];
    for (int i = 0; i < 4; i++) {
        out[i] = rank * 100 + i;
        in[i] = -7;
    }
    OK(MPI_Neighbor_alltoall(out, 1, MPI_DOUBLE, in, 1, MPI_DOUBLE, grid));
    for (int i = 0; i < 4; i++) {
        if (nb[i] == MPI_PROC_NULL)
            CHECK(in[i] == -7);
        else
            CHECK(in[i] == nb[i] * 100 + (i ^ 1));
    }
    /* Alltoallv: the blocks of a pair of opposite neighbours have the same count (2 in
     * dimension 0, 4 in dimension 1). */
    int sc[4], sd[4], rc[4], rd[4], at = 0;
    for (int i = 0; i < 4; i++) sc[i] = rc[i] = (i | 1) + 1;
    at = 0;
    for (int i = 0; i < 4; i++) {
        sd[i] = rd[i] = at;
        at += sc[i];
    }
    int sbig[16], rbig[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < sc[i]; j++) sbig[sd[i] + j] = rank * 1000 + i * 10 + j;
    for (int i = 0; i < 16; i++) rbig[i] = -1;
    OK(MPI_Neighbor_alltoallv(sbig, sc, sd, MPI_INT, rbig, rc, rd, MPI_INT, grid));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < rc[i]; j++)
            CHECK(rbig[rd[i] + j] == (nb[i] == MPI_PROC_NULL ? -1 : nb[i] * 1000 + (i ^ 1) * 10 + j));

    /* Rows: keep dimension 1. */
    int keep[2] = {0, 1}, sr = -1, ss = -1, kind = -1;
    MPI_Comm row;
    OK(MPI_Cart_sub(grid, keep, &row));
    OK(MPI_Comm_rank(row, &sr));
    OK(MPI_Comm_size(row, &ss));
    CHECK(sr == rank % dims[1] && ss == dims[1]);
    OK(MPI_Topo_test(row, &kind));
    CHECK(kind == MPI_CART);
    int nd = -1;
    OK(MPI_Cartdim_get(row, &nd));
    CHECK(nd == 1);
    OK(MPI_Comm_free(&row));
    OK(MPI_Comm_free(&grid));
}

/* A graph: a star around node 0, and a distributed ring made both ways. */
static void check_graphs(int rank, int size) {
    int index[64], edges[128], e = 0;
    for (int i = 0; i < size; i++) {
        if (i == 0)
            for (int j = 1; j < size; j++) edges[e++] = j;
        else
            edges[e++] = 0;
        index[i] = e;
    }
    MPI_Comm star;
    OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &star));
    OK(MPI_Comm_set_errhandler(star, MPI_ERRORS_RETURN));
    int kind = -1, nn = -1, ne = -1, cnt = -1, nbrs[64];
    OK(MPI_Topo_test(star, &kind));
    CHECK(kind == MPI_GRAPH);
    OK(MPI_Graphdims_get(star, &nn, &ne));
    CHECK(nn == size && ne == e);
    int gi[64], ge[128];
    OK(MPI_Graph_get(star, 64, 128, gi, ge));
    CHECK(memcmp(gi, index, size * sizeof(int)) == 0 && memcmp(ge, edges, e * sizeof(int)) == 0);
    OK(MPI_Graph_neighbors_count(star, 0, &cnt));
    CHECK(cnt == size - 1);
    OK(MPI_Graph_neighbors(star, rank, 64, nbrs));
    FAILS(MPI_Graph_neighbors_count(star, size, &cnt), MPI_ERR_RANK);
    FAILS(MPI_Cartdim_get(star, &cnt), MPI_ERR_TOPOLOGY);
    /* Allgather on the star: node 0 hears everyone, the others hear node 0. */
    int mine = rank + 1, got[64];
    OK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, star));
    if (rank == 0)
        for (int j = 1; j < size; j++) CHECK(got[j - 1] == j + 1);
    else
        CHECK(got[0] == 1);
    OK(MPI_Comm_free(&star));

    /* A directed ring: receive from rank - 1, send to rank + 1, weights 7. */
    int from = (rank - 1 + size) % size, to = (rank + 1) % size, w = 7;
    MPI_Comm adj, made;
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &from, &w, 1, &to, &w, MPI_INFO_NULL, 0,
                                      &adj));
    /* The same graph, each process naming the edge into its successor. */
    int one = 1;
    OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &one, &to, MPI_UNWEIGHTED, MPI_INFO_NULL,
                             0, &made));
    int indeg, outdeg, weighted, s[2], sw[2], d[2], dw[2];
    OK(MPI_Topo_test(adj, &kind));
    CHECK(kind == MPI_DIST_GRAPH);
    OK(MPI_Dist_graph_neighbors_count(adj, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == 1 && weighted == 1);
    OK(MPI_Dist_graph_neighbors(adj, 1, s, sw, 1, d, dw));
    CHECK(s[0] == from && d[0] == to && sw[0] == 7 && dw[0] == 7);
    OK(MPI_Dist_graph_neighbors_count(made, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == 1 && weighted == 0);
    OK(MPI_Dist_graph_neighbors(made, 1, s, MPI_UNWEIGHTED, 1, d, MPI_UNWEIGHTED));
    CHECK(s[0] == from && d[0] == to);

    /* Allgatherv and alltoallw along the ring. */
    double val[3] = {rank, rank + 0.5, rank + 0.25}, rv[4] = {-1, -1, -1, -1};
    int rc = 3, rdisp = 1;
    OK(MPI_Neighbor_allgatherv(val, 3, MPI_DOUBLE, rv, &rc, &rdisp, MPI_DOUBLE, made));
    CHECK(rv[0] == -1 && rv[1] == from && rv[2] == from + 0.5 && rv[3] == from + 0.25);
    MPI_Datatype vec;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    int sv[3] = {rank, -5, rank * 3}, rw[2] = {-1, -1};
    int sc1 = 1, rc2 = 2;
    MPI_Aint zero = 0;
    MPI_Datatype ity = MPI_INT;
    MPI_Request req;
    OK(MPI_Ineighbor_alltoallw(sv, &sc1, &zero, &vec, rw, &rc2, &zero, &ity, adj, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(rw[0] == from && rw[1] == from * 3);
    OK(MPI_Type_free(&vec));
    OK(MPI_Comm_free(&adj));
    OK(MPI_Comm_free(&made));
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    CHECK(size <= 64);
    check_dims();
    int kind = -1, x;
    OK(MPI_Topo_test(MPI_COMM_WORLD, &kind));
    CHECK(kind == MPI_UNDEFINED);
    FAILS(MPI_Cartdim_get(MPI_COMM_WORLD, &x), MPI_ERR_TOPOLOGY);
    FAILS(MPI_Neighbor_allgather(&x, 1, MPI_INT, &x, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
    int big[1] = {size + 1}, per[1] = {0};
    MPI_Comm none = MPI_COMM_SELF;
    FAILS(MPI_Cart_create(MPI_COMM_WORLD, 1, big, per, 0, &none), MPI_ERR_ARG);
    CHECK(none == MPI_COMM_NULL); /* the null handle, never what was there */
    check_ring(rank, size);
    check_grid(rank, size);
    check_graphs(rank, size);
    test_finish(rank, "topo");
}
