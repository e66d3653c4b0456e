/* coll_mismatch.c: collectives whose counts differ between rank 0 and the others (an erroneous
 * program, which mpicd must turn into errors, never a hang) under MPI_ERRORS_RETURN: every
 * reduction, allgather, all-to-all, scatter and broadcast, with pairs of lengths on either side
 * of the node's area (one member takes the shared memory, another messages: each waited for the
 * other before, mpicd/src/schedule/node/watch.rs) and across UCX's protocols. Every call
 * returns; at least one member reports the mismatch (the members agree on it after the call, by
 * point-to-point messages, not by a collective of the same kind); the collectives after it
 * still give the right results. One rank has nothing to mismatch: it runs the equal counts.
 *
 * Where the members share no area (MPICD_COLL_NODE=0, the tcp runs), every collective goes by
 * messages: the member that sees the mismatch tells the others, which fail too instead of
 * waiting for it to forward a message (a broadcast's tree) or for messages of the algorithm
 * their counts chose (an allreduce, scan or allgather): at 3 ranks, 24 of the 54 cases hung
 * before (mpicd/src/engine/abort.rs). Each case runs blocking, then non-blocking (started and
 * waited for: a plan's run, where an allreduce, allgather or bcast at 3 ranks hung too). */
#include "check.h"

enum op { ALLREDUCE, REDUCE, SCAN, EXSCAN, REDUCE_SCATTER_BLOCK, ALLGATHER, ALLTOALL, SCATTER, BCAST };
static const char *names[] = {"allreduce", "reduce", "scan", "exscan", "reduce_scatter_block",
                              "allgather", "alltoall", "scatter", "bcast"};

static int rank, size;

/* One collective, blocking or not (then started and waited for). */
static int call(enum op op, int nonblocking, int *s, int *r, int count) {
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request q = MPI_REQUEST_NULL;
    int rc = MPI_ERR_OTHER;
/* The blocking call, or its non-blocking twin (the same arguments and &q). */
#define EITHER(blocking, twin, ...) \
    rc = nonblocking ? MPI_##twin(__VA_ARGS__, &q) : MPI_##blocking(__VA_ARGS__); \
    break
    switch (op) {
    case ALLREDUCE: EITHER(Allreduce, Iallreduce, s, r, count, MPI_INT, MPI_SUM, w);
    case REDUCE: EITHER(Reduce, Ireduce, s, r, count, MPI_INT, MPI_SUM, 0, w);
    case SCAN: EITHER(Scan, Iscan, s, r, count, MPI_INT, MPI_SUM, w);
    case EXSCAN: EITHER(Exscan, Iexscan, s, r, count, MPI_INT, MPI_SUM, w);
    case REDUCE_SCATTER_BLOCK:
        EITHER(Reduce_scatter_block, Ireduce_scatter_block, s, r, count, MPI_INT, MPI_SUM, w);
    case ALLGATHER: EITHER(Allgather, Iallgather, s, count, MPI_INT, r, count, MPI_INT, w);
    case ALLTOALL: EITHER(Alltoall, Ialltoall, s, count, MPI_INT, r, count, MPI_INT, w);
    case SCATTER: EITHER(Scatter, Iscatter, s, count, MPI_INT, r, count, MPI_INT, 0, w);
    case BCAST: EITHER(Bcast, Ibcast, s, count, MPI_INT, 0, w);
    }
#undef EITHER
    if (rc == MPI_SUCCESS && nonblocking) rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
    return rc;
}

/* Whether any rank failed: gathered at rank 0 and sent back, by point-to-point. */
static int any_failed(int failed) {
    int any = failed;
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            int f;
            OK(MPI_Recv(&f, 1, MPI_INT, r, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            any |= f;
        }
        for (int r = 1; r < size; r++) OK(MPI_Send(&any, 1, MPI_INT, r, 78, MPI_COMM_WORLD));
    } else {
        OK(MPI_Send(&failed, 1, MPI_INT, 0, 77, MPI_COMM_WORLD));
        OK(MPI_Recv(&any, 1, MPI_INT, 0, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    return any;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    /* Bytes at rank 0, bytes elsewhere. */
    const long pairs[][2] = {{8, 1 << 20}, {1 << 20, 8}, {65536, 4 << 20}, {4 << 20, 65536},
                             {8, 65536}, {65536, 8}};
    const int npairs = (int)(sizeof pairs / sizeof pairs[0]);
    long most = (long)size * (4 << 20);
    int *s = calloc((size_t)most / 4, 4), *r = calloc((size_t)most / 4, 4);
    CHECK(s && r);
    for (int nb = 0; nb < 2; nb++)
    for (int op = ALLREDUCE; op <= BCAST && size > 1; op++) {
        for (int k = 0; k < npairs; k++) {
            const char *how = nb ? "non-blocking " : "";
            if (rank == 0)
                fprintf(stderr, "coll_mismatch: %s%s, %ld B at rank 0, %ld B elsewhere\n", how,
                        names[op], pairs[k][0], pairs[k][1]);
            long bytes = pairs[k][rank == 0 ? 0 : 1];
            int rc = call((enum op)op, nb, s, r, (int)(bytes / 4));
            if (!any_failed(rc != MPI_SUCCESS)) {
                fprintf(stderr, "[rank %d] %s%s of %ld B at rank 0, %ld B elsewhere: no rank failed\n",
                        rank, how, names[op], pairs[k][0], pairs[k][1]);
                CHECK(0);
            }
            if (rc != MPI_SUCCESS) {
                int cls;
                OK(MPI_Error_class(rc, &cls));
                CHECK(cls != MPI_SUCCESS);
            }
            /* What comes after works. */
            OK(MPI_Barrier(MPI_COMM_WORLD));
            int x = rank + 1, sum = 0;
            OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            CHECK(sum == size * (size + 1) / 2);
        }
    }
    /* The same collectives with equal counts still work, on either side of the area. */
    for (long bytes = 8; bytes <= (4 << 20); bytes *= 64) {
        int count = (int)(bytes / 4);
        for (int i = 0; i < count; i++) s[i] = rank + i;
        OK(MPI_Allreduce(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < count; i++) CHECK(r[i] == size * (size - 1) / 2 + size * i);
        OK(MPI_Reduce(s, r, count, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
        if (rank == 0)
            for (int i = 0; i < count; i++) CHECK(r[i] == size * (size - 1) / 2 + size * i);
        OK(MPI_Scan(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < count; i++) CHECK(r[i] == rank * (rank + 1) / 2 + (rank + 1) * i);
    }
    free(s);
    free(r);
    if (rank == 0) printf("coll_mismatch: all checks passed\n");
    MPI_Finalize();
    return 0;
}
