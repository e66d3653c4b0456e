/* ulfm_solver.c: why ULFM matters. An iterative computation over a vector spread across the
 * ranks keeps an in-memory checkpoint (each rank's block, and a copy of its left neighbour's
 * block); one rank is killed (SIGKILL, like `kill -9`) in the middle; the survivors notice the
 * failure, revoke the communicator (MPIX_Comm_revoke) so that every survivor stops where it
 * waits, shrink it (MPIX_Comm_shrink), rebuild the vector from the checkpoints,
 * spread it over themselves, roll back and finish, with the right answer.
 *
 * The computation: x_i starts at i and each iteration makes it x_i / 2 + 1; the sum over the
 * vector after K iterations is sum_i 2 + (i - 2) / 2^K, which rank 0 checks at the end.
 *
 * Usage: ulfm_solver [VICTIM] (default: the last rank; -1: nobody dies). Prints
 * "ulfm_solver: all checks passed" from the first survivor. */
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 1200
#define ITERATIONS 40
#define KILL_AT 17

static int lo(int rank, int size) { return (int)((long)N * rank / size); }

static void fail(const char *what, int rc) {
    fprintf(stderr, "ulfm_solver: %s failed (error %d)\n", what, rc);
    exit(1);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int rank, size, world_rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    world_rank = rank;
    int victim = argc > 1 ? atoi(argv[1]) : size - 1;

    /* Rank r owns x[lo(r)..lo(r+1)); `mine` is a full-length array (only the own part used),
     * `saved` the checkpoint of the own part, `buddy` the checkpoint of the left neighbour's. */
    double *x = calloc(N, sizeof *x), *saved = calloc(N, sizeof *x);
    double *buddy = calloc(N, sizeof *x), *rebuilt = calloc(N, sizeof *x);
    for (int i = 0; i < N; i++) x[i] = i;
    int recoveries = 0;
    for (int it = 0; it < ITERATIONS;) {
        int a = lo(rank, size), b = lo(rank + 1, size);
        int left = (rank + size - 1) % size, right = (rank + 1) % size;
        int la = lo(left, size), lb = lo(left + 1, size);
        /* Checkpoint: the own block here, and a copy at the right neighbour. */
        memcpy(saved + a, x + a, (size_t)(b - a) * sizeof *x);
        int rc = MPI_Sendrecv(x + a, b - a, MPI_DOUBLE, right, it, buddy + la, lb - la,
                              MPI_DOUBLE, left, it, comm, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && world_rank == victim && it == KILL_AT) {
            fflush(stdout);
            raise(SIGKILL); /* as `kill -9` */
        }
        double local = 0, total = 0;
        for (int i = a; i < b; i++) {
            x[i] = x[i] / 2 + 1;
            local += x[i];
        }
        if (rc == MPI_SUCCESS) rc = MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
        if (rc == MPI_SUCCESS) {
            it++;
            continue;
        }
        /* A member failed: shrink to the survivors, rebuild the vector as it was at the start
         * of iteration `it` from the checkpoints (each element comes from exactly one
         * survivor: its owner, or the owner's right neighbour if the owner died), spread it
         * over the survivors, and do iteration `it` again. */
        int eclass;
        MPI_Error_class(rc, &eclass);
        if (eclass != MPIX_ERR_PROC_FAILED && eclass != MPIX_ERR_REVOKED) fail("iteration", rc);
        /* Whoever saw the failure first stops the others, wherever they wait (the ULFM idiom:
         * a survivor exchanging with a live neighbour would not see it otherwise). */
        if ((rc = MPIX_Comm_revoke(comm)) != MPI_SUCCESS) fail("MPIX_Comm_revoke", rc);
        MPI_Group old_group, failed;
        MPI_Comm_group(comm, &old_group);
        MPI_Comm smaller;
        if ((rc = MPIX_Comm_shrink(comm, &smaller)) != MPI_SUCCESS) fail("MPIX_Comm_shrink", rc);
        MPI_Comm_set_errhandler(smaller, MPI_ERRORS_RETURN);
        MPIX_Comm_get_failed(comm, &failed);
        int left_dead = 0, nfailed = 0;
        MPI_Group_size(failed, &nfailed);
        int *failed_ranks = malloc(sizeof(int) * (size_t)(nfailed + 1));
        int *in_old = malloc(sizeof(int) * (size_t)(nfailed + 1));
        for (int k = 0; k < nfailed; k++) failed_ranks[k] = k;
        MPI_Group_translate_ranks(failed, nfailed, failed_ranks, old_group, in_old);
        for (int k = 0; k < nfailed; k++) left_dead |= in_old[k] == left;
        memset(rebuilt, 0, N * sizeof *rebuilt);
        memcpy(rebuilt + a, saved + a, (size_t)(b - a) * sizeof *x);
        if (left_dead) memcpy(rebuilt + la, buddy + la, (size_t)(lb - la) * sizeof *x);
        /* Every survivor must restart from the same iteration. */
        int restart = it, lowest = 0, highest = 0;
        MPI_Allreduce(&restart, &lowest, 1, MPI_INT, MPI_MIN, smaller);
        MPI_Allreduce(&restart, &highest, 1, MPI_INT, MPI_MAX, smaller);
        if (lowest != highest) fail("agreeing on the iteration to restart", -1);
        if ((rc = MPI_Allreduce(MPI_IN_PLACE, rebuilt, N, MPI_DOUBLE, MPI_SUM, smaller)) !=
            MPI_SUCCESS)
            fail("rebuilding the vector", rc);
        memcpy(x, rebuilt, N * sizeof *x);
        MPI_Group_free(&failed);
        MPI_Group_free(&old_group);
        free(failed_ranks);
        free(in_old);
        MPI_Comm_free(&comm);
        comm = smaller;
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        recoveries++;
        if (rank == 0)
            printf("ulfm_solver: a rank failed at iteration %d; %d survivors go on\n", it, size);
    }
    /* The answer, gathered on rank 0 of the survivors. */
    int a = lo(rank, size), b = lo(rank + 1, size);
    double local = 0, total = 0, expected = 0;
    for (int i = a; i < b; i++) local += x[i];
    int rc = MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    if (rc != MPI_SUCCESS) fail("the final reduction", rc);
    for (int i = 0; i < N; i++) expected += 2 + (i - 2) / pow(2, ITERATIONS);
    if (rank == 0) {
        int want = victim >= 0 && victim < size + recoveries ? 1 : 0;
        if (fabs(total - expected) > 1e-9 * expected || recoveries != want) {
            fprintf(stderr, "ulfm_solver: sum %.12f, expected %.12f; %d recoveries, expected %d\n",
                    total, expected, recoveries, want);
            exit(1);
        }
        printf("ulfm_solver: sum %.9f as expected after %d recoveries\n", total, recoveries);
        printf("ulfm_solver: all checks passed\n");
    }
    MPI_Comm_free(&comm);
    free(x);
    free(saved);
    free(buddy);
    free(rebuilt);
    MPI_Finalize();
    return 0;
}
