/* rma_passive.c: passive-target progress. Rank 1 (the target) makes a window, enters a barrier,
 * then sleeps 2 s outside MPI before the next barrier; meanwhile rank 0 runs a whole exclusive
 * epoch on it (lock, put, accumulate, get, unlock), which must end well within that sleep
 * (< 1 s): the target's side must not wait for the target to call MPI, whatever the transport
 * (over tcp, UCX serves remote memory access in software on the target, which mpicd's
 * background progress does for it). Rank 1 then checks what the epoch left. Both window
 * flavors that expose memory: MPI_Win_allocate and MPI_Win_create. Other ranks only take part
 * in the barriers; a singleton has nothing to check. */
#include "check.h"
#include <string.h>
#include <time.h>

#define N 4
#define SLEEP_S 2

/* Sleeps `s` seconds without calling MPI (restarted if a signal interrupts it). */
static void sleep_outside_mpi(int s) {
    struct timespec left = {s, 0};
    while (nanosleep(&left, &left) != 0) {
    }
}

static void passive_epoch(int rank, int use_create) {
    const char *flavor = use_create ? "MPI_Win_create" : "MPI_Win_allocate";
    int *mem = NULL, *owned = NULL;
    MPI_Win win;
    if (use_create) {
        owned = calloc(N, sizeof(int));
        CHECK(owned != NULL);
        mem = owned;
        OK(MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else {
        OK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                            &win));
    }
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    /* The target's initial values, written under a lock on itself. */
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (int i = 0; i < N; i++) mem[i] = 10 * (i + 1);
    OK(MPI_Win_unlock(rank, win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) sleep_outside_mpi(SLEEP_S);
    if (rank == 0) {
        int put = 7, add = 5, got = -1;
        double t0 = MPI_Wtime();
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        OK(MPI_Put(&put, 1, MPI_INT, 1, 0, 1, MPI_INT, win));
        OK(MPI_Accumulate(&add, 1, MPI_INT, 1, 1, 1, MPI_INT, MPI_SUM, win));
        OK(MPI_Get(&got, 1, MPI_INT, 1, 2, 1, MPI_INT, win));
        OK(MPI_Win_unlock(1, win));
        double took = MPI_Wtime() - t0;
        printf("rma_passive: %s: lock/put/accumulate/get/unlock on a sleeping target took "
               "%.3f s\n",
               flavor, took);
        fflush(stdout);
        CHECK(got == 30);
        CHECK(took < 1.0);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        CHECK(mem[0] == 7);
        CHECK(mem[1] == 25);
        CHECK(mem[2] == 30);
        CHECK(mem[3] == 40);
        OK(MPI_Win_unlock(1, win));
    }
    OK(MPI_Win_free(&win));
    free(owned);
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    if (size >= 2) {
        passive_epoch(rank, 0);
        passive_epoch(rank, 1);
    }
    test_finish(rank, "rma_passive");
    return 0;
}
