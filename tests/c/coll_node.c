/* coll_node.c: blocking collectives back to back, every result checked, so that members run
 * ahead of each other: a member that leaves a rooted collective early (a reduce's non-root, a
 * broadcast's root) starts the next one while the others still read the last. Through the
 * node's shared memory (mpicd/src/schedule/node) a slot must not be overwritten before every
 * reader is done with it. At 3-4 ranks on 2 cores the members' waits there yield the core and,
 * past 100 us, nap (MPICD_WAIT resolved to sleep); at 1-2 they spin (the run's shm mode; its
 * tcp mode sets MPICD_COLL_NODE=0: messages). The
 * sizes straddle MPICD_COLL_NODE (128 KiB): both paths alternate on one communicator, and an
 * allreduce past it goes through the node's memory in pieces. Also:
 * MPI_IN_PLACE, non-commutative user ops in rank order, derived and predefined types meeting
 * in one collective, a collective whose arguments fail on
 * one member only (no effect there: its make-up call pairs with the others'), a dup'd communicator beside WORLD, and counts
 * that differ between members (an error where the data arrives). */
#include "check.h"
#include <string.h>

static int rank, size;

/* 2x2 matrix product, not commutative: the reduction must be in rank order. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    long *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        long c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof c);
    }
}

/* Concatenation of decimal digits, associative and not commutative. */
static void cat(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    long *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        long p = 10;
        while (p <= b[i]) p *= 10;
        b[i] += a[i] * p;
    }
}

enum { N_MAX = 40000 };

static void round_of(MPI_Comm comm, int k, int n, MPI_Op mat, MPI_Op cat_op, MPI_Datatype m2) {
    int root = k % size;
    static long a[N_MAX], b[N_MAX * 4], c[N_MAX * 4];
    /* Reduce to a root, then a broadcast from another: non-roots run ahead. */
    for (int i = 0; i < n; i++) a[i] = rank + k + i;
    OK(MPI_Reduce(a, b, n, MPI_LONG, MPI_SUM, root, comm));
    if (rank == root)
        for (int i = 0; i < n; i++) CHECK(b[i] == (long)size * (k + i) + (long)size * (size - 1) / 2);
    int from = (k + 1) % size;
    for (int i = 0; i < n; i++) a[i] = rank == from ? k * 3 + i : -1;
    OK(MPI_Bcast(a, n, MPI_LONG, from, comm));
    for (int i = 0; i < n; i++) CHECK(a[i] == k * 3 + i);
    /* Allreduce in place, and with separate buffers. */
    for (int i = 0; i < n; i++) b[i] = rank * i + k;
    OK(MPI_Allreduce(MPI_IN_PLACE, b, n, MPI_LONG, MPI_MAX, comm));
    for (int i = 0; i < n; i++) CHECK(b[i] == (long)(size - 1) * i + k);
    /* A non-commutative op: the product of the members' matrices [[2, x], [0, 1]] in rank
     * order is [[2^p, sum of 2^r x_r], [0, 1]] (in the other order the weights reverse). */
    long m[4] = {2, rank + k % 3, 0, 1}, p[4];
    OK(MPI_Allreduce(m, p, 1, m2, mat, comm));
    long sum = 0;
    for (int r = 0; r < size; r++) sum += (1L << r) * (r + k % 3);
    CHECK(p[0] == 1L << size && p[1] == sum && p[2] == 0 && p[3] == 1);
    /* A non-commutative op on a predefined type: the members' digits in rank order, in every
     * element (past MPICD_COLL_NODE, in every piece). */
    long digits = 0;
    for (int r = 0; r < size; r++) digits = digits * 10 + r + 1;
    for (int i = 0; i < n; i++) a[i] = rank + 1;
    OK(MPI_Allreduce(a, b, n, MPI_LONG, cat_op, comm));
    for (int i = 0; i < n; i++) CHECK(b[i] == digits);
    /* Scans. */
    long s = rank + k, si = 0, se = -7;
    OK(MPI_Scan(&s, &si, 1, MPI_LONG, MPI_SUM, comm));
    CHECK(si == (long)rank * (rank + 1) / 2 + (long)(rank + 1) * k);
    OK(MPI_Exscan(&s, &se, 1, MPI_LONG, MPI_SUM, comm));
    if (rank > 0) CHECK(se == (long)rank * (rank - 1) / 2 + (long)rank * k);
    /* Gather and scatter of equal blocks, allgather, alltoall. */
    int blk = n / size > 0 ? n / size : 1;
    for (int i = 0; i < blk; i++) a[i] = rank * 100000 + k + i;
    OK(MPI_Gather(a, blk, MPI_LONG, b, blk, MPI_LONG, root, comm));
    if (rank == root)
        for (int r = 0; r < size; r++)
            for (int i = 0; i < blk; i++) CHECK(b[r * blk + i] == r * 100000 + k + i);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < blk; i++) c[r * blk + i] = rank == root ? r * 7 + k + i : -1;
    OK(MPI_Scatter(c, blk, MPI_LONG, a, blk, MPI_LONG, root, comm));
    for (int i = 0; i < blk; i++) CHECK(a[i] == rank * 7 + k + i);
    for (int i = 0; i < blk; i++) a[i] = rank * 1000 + k + i;
    OK(MPI_Allgather(a, blk, MPI_LONG, b, blk, MPI_LONG, comm));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < blk; i++) CHECK(b[r * blk + i] == r * 1000 + k + i);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < blk; i++) c[r * blk + i] = rank * 10000 + r * 100 + k + i;
    OK(MPI_Alltoall(c, blk, MPI_LONG, b, blk, MPI_LONG, comm));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < blk; i++) CHECK(b[r * blk + i] == r * 10000 + rank * 100 + k + i);
    /* Reduce_scatter_block. */
    for (int i = 0; i < blk * size; i++) c[i] = i + rank;
    OK(MPI_Reduce_scatter_block(c, b, blk, MPI_LONG, MPI_SUM, comm));
    for (int i = 0; i < blk; i++)
        CHECK(b[i] == (long)size * (rank * blk + i) + (long)size * (size - 1) / 2);
    /* The same bytes as a derived type on odd ranks and as MPI_LONG on even ones: a plan
     * builder's node collective and the short way from the C arguments meet in one call. */
    long q[8], g[8 * 4];
    for (int i = 0; i < 8; i++) q[i] = rank == from ? k * 5 + i : -1;
    OK(rank % 2 ? MPI_Bcast(q, 2, m2, from, comm) : MPI_Bcast(q, 8, MPI_LONG, from, comm));
    for (int i = 0; i < 8; i++) CHECK(q[i] == k * 5 + i);
    for (int i = 0; i < 4; i++) q[i] = rank * 10 + i;
    OK(rank % 2 ? MPI_Allgather(q, 1, m2, g, 1, m2, comm)
                : MPI_Allgather(q, 4, MPI_LONG, g, 4, MPI_LONG, comm));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < 4; i++) CHECK(g[r * 4 + i] == r * 10 + i);
    OK(MPI_Barrier(comm));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Op mat, cat_op;
    OK(MPI_Op_create(matmul, 0, &mat));
    OK(MPI_Op_create(cat, 0, &cat_op));
    MPI_Datatype m2;
    OK(MPI_Type_contiguous(4, MPI_LONG, &m2));
    OK(MPI_Type_commit(&m2));
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    /* Spinning ranks share 2 cores at 3-4 ranks: fewer rounds there. */
    int rounds = size <= 2 ? 3000 : 60;
    const int sizes[] = {1, 3, 64, 2048, 8192, N_MAX};
    for (int k = 0; k < rounds; k++) {
        int n = sizes[k % 6];
        round_of(k % 2 ? dup : MPI_COMM_WORLD, k, n, mat, cat_op, m2);
        if (k % 500 == 7) {
            /* Fails at the root only (its send and receive buffers alias: MPI_ERR_BUFFER)
             * before it begins, so it has no effect there: the root's make-up call pairs with
             * the others' call, and the collectives after it still match. */
            long x[4] = {rank, rank, rank, rank}, sum[4] = {0};
            int rc = MPI_Reduce(x, rank == 0 ? x : NULL, 4, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
            CHECK(rank == 0 ? rc == MPI_ERR_BUFFER : rc == MPI_SUCCESS);
            if (rc != MPI_SUCCESS) OK(MPI_Reduce(x, sum, 4, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
            if (rank == 0)
                for (int i = 0; i < 4; i++) CHECK(sum[i] == (long)size * (size - 1) / 2);
        }
    }
    /* Counts that differ between root and receivers (an erroneous program) fail where the data
     * arrives, never silently: through the node's memory each slot carries its length. */
    long y[8] = {0};
    int rc = MPI_Bcast(y, rank == 0 ? 4 : 8, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank != 0) CHECK(rc != MPI_SUCCESS);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Comm_free(&dup));
    OK(MPI_Type_free(&m2));
    OK(MPI_Op_free(&mat));
    OK(MPI_Op_free(&cat_op));
    if (rank == 0) printf("coll_node: all checks passed\n");
    MPI_Finalize();
    return 0;
}
