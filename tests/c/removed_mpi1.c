/* removed_mpi1.c: the MPI-1 functions that MPI-3.0 removed, which mpi.h still offers (macros
 * over their replacements) so that old programs build unchanged: MPI_Errhandler_create / _set /
 * _get, MPI_Address, MPI_Type_hvector / _hindexed / _struct, MPI_Type_extent / _lb / _ub. Each
 * must act as its replacement does: a handler set the old way is called, types made the old way
 * carry data between ranks, and a null output pointer is an error, not a crash. Runs on any
 * number of ranks. */
#include "check.h"

static int calls;

static void count_call(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    (void)code;
    calls++;
}

static void errhandlers(void) {
    MPI_Errhandler eh, got;
    OK(MPI_Errhandler_create(count_call, &eh));
    OK(MPI_Errhandler_set(MPI_COMM_WORLD, eh));
    OK(MPI_Errhandler_get(MPI_COMM_WORLD, &got));
    CHECK(got == eh);
    OK(MPI_Errhandler_free(&got));
    /* An invalid rank: the handler set the old way is called, and the call returns its error. */
    int x = 0;
    CHECK(MPI_Send(&x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD) != MPI_SUCCESS);
    CHECK(calls == 1);
    OK(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_free(&eh));
}

/* Three doubles in a struct of a char, a gap and an int, built from MPI_Address offsets. */
struct rec {
    char c;
    int i;
    double d[3];
};

static void types(int rank, int size) {
    struct rec r = {0};
    MPI_Aint base, at_i, at_d;
    OK(MPI_Address(&r, &base));
    OK(MPI_Address(&r.i, &at_i));
    OK(MPI_Address(&r.d, &at_d));
    int lens[3] = {1, 1, 3};
    MPI_Aint disps[3] = {0, at_i - base, at_d - base};
    MPI_Datatype kinds[3] = {MPI_CHAR, MPI_INT, MPI_DOUBLE};
    MPI_Datatype st, hv, hi;
    OK(MPI_Type_struct(3, lens, disps, kinds, &st));
    OK(MPI_Type_commit(&st));

    MPI_Aint extent, lb, ub;
    OK(MPI_Type_extent(st, &extent));
    OK(MPI_Type_lb(st, &lb));
    OK(MPI_Type_ub(st, &ub));
    CHECK(lb == 0);
    CHECK(extent == (MPI_Aint)sizeof(struct rec));
    CHECK(ub == lb + extent);

    /* Every other int of 8, as an hvector (stride in bytes) and as an hindexed type. */
    OK(MPI_Type_hvector(4, 1, 2 * sizeof(int), MPI_INT, &hv));
    MPI_Aint hd[4] = {0, 2 * sizeof(int), 4 * sizeof(int), 6 * sizeof(int)};
    int ones[4] = {1, 1, 1, 1};
    OK(MPI_Type_hindexed(4, ones, hd, MPI_INT, &hi));
    OK(MPI_Type_commit(&hv));
    OK(MPI_Type_commit(&hi));
    OK(MPI_Type_lb(hv, &lb));
    OK(MPI_Type_ub(hv, &ub));
    CHECK(lb == 0 && ub == 7 * (MPI_Aint)sizeof(int));

    /* Rank 0 broadcasts a record and a strided array; every rank checks both. */
    int ints[8];
    for (int k = 0; k < 8; k++)
        ints[k] = rank == 0 ? 100 + k : -1;
    r.c = rank == 0 ? 'q' : 0;
    r.i = rank == 0 ? 42 : 0;
    for (int k = 0; k < 3; k++)
        r.d[k] = rank == 0 ? 0.5 + k : 0;
    OK(MPI_Bcast(&r, 1, st, 0, MPI_COMM_WORLD));
    OK(MPI_Bcast(ints, 1, size > 1 ? hv : hi, 0, MPI_COMM_WORLD));
    CHECK(r.c == 'q' && r.i == 42 && r.d[0] == 0.5 && r.d[2] == 2.5);
    for (int k = 0; k < 8; k++)
        CHECK(ints[k] == (k % 2 == 0 ? 100 + k : rank == 0 ? 100 + k : -1));

    /* Null outputs are argument errors, as for MPI_Type_get_extent. */
    FAILS(MPI_Type_extent(st, NULL), MPI_ERR_ARG);
    FAILS(MPI_Type_lb(st, NULL), MPI_ERR_ARG);
    FAILS(MPI_Type_ub(st, NULL), MPI_ERR_ARG);
    FAILS(MPI_Address(&r, NULL), MPI_ERR_ARG);

    OK(MPI_Type_free(&st));
    OK(MPI_Type_free(&hv));
    OK(MPI_Type_free(&hi));
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    errhandlers();
    types(rank, size);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("removed_mpi1: all checks passed\n");
    MPI_Finalize();
    return 0;
}
