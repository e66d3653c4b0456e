/* coll_root_mismatch.c: rooted collectives (bcast, reduce, gather, scatter) whose members name
 * different roots (an erroneous program) under MPI_ERRORS_RETURN, where the members share the
 * node's area: every call returns (before, at 3 ranks, 5 of 8 such cases hung), and the
 * collectives after it give the right results. A member that waits for one that named another
 * root fails with an error (its record of the collective carries its root:
 * mpicd/src/schedule/node/record.rs): a gather's lone root always does; a member that waits
 * for nobody (a broadcast's root) returns. Sizes through the area, read in place, and by messages (a reduction past the
 * area: mpicd/src/schedule/node/watch.rs); three ways to disagree.
 *
 * Without an area (MPICD_COLL_NODE=0, the tcp runs) roots that differ are not detected (the
 * README says so: as with Open MPI, such a program may hang), so the cases are skipped there. */
#include "check.h"

#include <string.h>

enum op { BCAST, REDUCE, GATHER, SCATTER };
static const char *names[] = {"bcast", "reduce", "gather", "scatter"};

static int rank, size;

/* The root this rank names in pattern `pat`: 0 says 0 and the others 1; the last says 0 and
 * the others the last; even ranks 0 and odd ranks 1 (at 2 ranks each names itself). */
static int root_of(int pat) {
    switch (pat) {
    case 0: return rank == 0 ? 0 : 1;
    case 1: return rank == size - 1 ? 0 : size - 1;
    default: return rank % 2;
    }
}

static int call(enum op op, int *s, int *r, int count, int root) {
    MPI_Comm w = MPI_COMM_WORLD;
    switch (op) {
    case BCAST: return MPI_Bcast(s, count, MPI_INT, root, w);
    case REDUCE: return MPI_Reduce(s, r, count, MPI_INT, MPI_SUM, root, w);
    case GATHER: return MPI_Gather(s, count, MPI_INT, r, count, MPI_INT, root, w);
    case SCATTER: return MPI_Scatter(s, count, MPI_INT, r, count, MPI_INT, root, w);
    }
    return MPI_ERR_OTHER;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const char *node = getenv("MPICD_COLL_NODE");
    int area = !(node && strcmp(node, "0") == 0);
    const long sizes[] = {8, 4096, 65536, 1 << 20, 8 << 20};
    long most = (long)size * (8 << 20);
    int *s = calloc((size_t)most / 4, 4), *r = calloc((size_t)most / 4, 4);
    CHECK(s && r);
    int cases = 0, failed = 0;
    /* The members agree on the area at their first collective. */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int pat = 0; pat < 3 && area && size > 1; pat++)
        for (int op = BCAST; op <= SCATTER; op++)
            for (int k = 0; k < (int)(sizeof sizes / sizeof sizes[0]); k++) {
                int count = (int)(sizes[k] / 4);
                if (rank == 0)
                    fprintf(stderr, "coll_root_mismatch: %s of %ld B, roots pattern %d\n",
                            names[op], sizes[k], pat);
                int rc = call((enum op)op, s, r, count, root_of(pat));
                if (rc != MPI_SUCCESS) {
                    /* Arguments that differ: a wait that met another root or another way
                     * (MPI_ERR_ARG), or a message longer than this member's (its counts are
                     * the root's elsewhere: MPI_ERR_TRUNCATE). */
                    int cls;
                    OK(MPI_Error_class(rc, &cls));
                    if (cls != MPI_ERR_ARG && cls != MPI_ERR_TRUNCATE)
                        fprintf(stderr, "[rank %d] %s of %ld B, pattern %d: error class %d\n",
                                rank, names[op], sizes[k], pat, cls);
                    CHECK(cls == MPI_ERR_ARG || cls == MPI_ERR_TRUNCATE);
                }
                /* A gather's root waits for every member's block: rank 0, the only one that
                 * names root 0 in pattern 0, never gets the others' (they give theirs to
                 * root 1), so it must fail, never return or hang. */
                if (op == GATHER && pat == 0 && rank == 0) CHECK(rc != MPI_SUCCESS);
                /* What comes after works. */
                int x = rank + 1, sum = 0;
                OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
                CHECK(sum == size * (size + 1) / 2);
                int mine = rc != MPI_SUCCESS, any = 0;
                OK(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
                cases++;
                failed += any;
            }
    /* How many failed depends on who waited for whom (a member that found what it waits for
     * published already does not look at roots). */
    if (rank == 0 && cases > 0)
        fprintf(stderr, "coll_root_mismatch: %d of %d cases failed on some member\n", failed, cases);
    /* The same collectives with one root work. */
    for (int k = 0; k < (int)(sizeof sizes / sizeof sizes[0]); k++) {
        int count = (int)(sizes[k] / 4);
        for (int i = 0; i < count; i++) s[i] = rank + i;
        OK(MPI_Reduce(s, r, count, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD));
        if (rank == size - 1)
            for (int i = 0; i < count; i++) CHECK(r[i] == size * (size - 1) / 2 + size * i);
        OK(MPI_Bcast(r, count, MPI_INT, size - 1, MPI_COMM_WORLD));
        for (int i = 0; i < count; i++) CHECK(r[i] == size * (size - 1) / 2 + size * i);
    }
    free(s);
    free(r);
    if (rank == 0) printf("coll_root_mismatch: all checks passed\n");
    MPI_Finalize();
    return 0;
}
