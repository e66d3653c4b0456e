/* agree_crash.c: a ULFM agreement whose coordinator crashes half-way through announcing its
 * decision. Rank 0 (the coordinator: the lowest live member) exits like a crash before it sends
 * the decision to the K-th member (MPICD_FAULT_AGREE_EXIT=K, set for rank 0 only), having told
 * K-1; the members it told pass the decision on before they return, so every survivor returns
 * with the same flag: the AND of all four when rank 0 told anyone (it voted too), else the AND
 * of the three survivors, decided by the next coordinator. Then the survivors shrink and check
 * that they agree.
 *
 * Usage: agree_crash K (4 ranks, K >= 1). Prints "agree_crash: all checks passed" from the
 * first survivor. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void fail(const char *what, int rc) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fprintf(stderr, "agree_crash: %s failed: %s\n", what, text);
    exit(1);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        if (rank == 0) fprintf(stderr, "agree_crash: needs 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *k = argc > 1 ? argv[1] : "1";
    if (rank == 0) setenv("MPICD_FAULT_AGREE_EXIT", k, 1);
    /* Bits: rank r clears bit r+1; all keep bit 0. The AND of all is 0x1, of ranks 1-3 0x3. */
    int flag = 0x1f & ~(1 << (rank + 1));
    int rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    /* Only survivors get here; rank 0 failed after the decision, which names no failure. */
    if (rc != MPI_SUCCESS) {
        int cls;
        MPI_Error_class(rc, &cls);
        if (cls != MPIX_ERR_PROC_FAILED) fail("MPIX_Comm_agree", rc);
    }
    int expected = atoi(k) > 1 ? 0x1 : 0x3;
    if (flag != expected) {
        fprintf(stderr, "agree_crash: rank %d agreed on %#x, expected %#x\n", rank, flag, expected);
        return 1;
    }
    MPI_Comm alive;
    if ((rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &alive)) != MPI_SUCCESS) fail("shrink", rc);
    int n, flags[4] = {0};
    MPI_Comm_size(alive, &n);
    if ((rc = MPI_Allgather(&flag, 1, MPI_INT, flags, 1, MPI_INT, alive)) != MPI_SUCCESS)
        fail("MPI_Allgather", rc);
    for (int i = 0; i < n; i++)
        if (flags[i] != flag) {
            fprintf(stderr, "agree_crash: survivors disagree (%#x, %#x)\n", flags[i], flag);
            return 1;
        }
    int r;
    MPI_Comm_rank(alive, &r);
    if (n != 3) {
        fprintf(stderr, "agree_crash: %d survivors, expected 3\n", n);
        return 1;
    }
    if (r == 0) printf("agree_crash: all checks passed (coordinator crashed before decision %s)\n", k);
    MPI_Comm_free(&alive);
    MPI_Finalize();
    return 0;
}
