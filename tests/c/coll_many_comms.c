/* coll_many_comms.c: blocking collectives on many communicators alive at once, past the node
 * areas' budget per process (mpicd/src/schedule/node/setup.rs: 256 MiB in all; at 2 ranks an
 * area is about 2 MiB, at 4 about 4 MiB): the first communicators take the node's shared
 * memory, the later ones messages, and every result is right either way. Then all are freed,
 * which gives the budget back, and a new round of communicators takes the shared memory again.
 * Each allreduce is 64 KiB (an area's share) and checked; so is a bcast from the last rank. */
#include "check.h"
#include <stdlib.h>

enum { COMMS = 160, N = 8192 };

static int rank, size;

static void round_of(int k) {
    static MPI_Comm comms[COMMS];
    static long a[N], b[N];
    for (int c = 0; c < COMMS; c++) OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[c]));
    for (int c = 0; c < COMMS; c++) {
        for (int i = 0; i < N; i++) a[i] = rank * 3 + c + k + i;
        OK(MPI_Allreduce(a, b, N, MPI_LONG, MPI_SUM, comms[c]));
        for (int i = 0; i < N; i++)
            CHECK(b[i] == 3L * size * (size - 1) / 2 + (long)size * (c + k + i));
    }
    /* Every communicator again, now that all of them exist. */
    for (int c = 0; c < COMMS; c++) {
        long v = rank == size - 1 ? 1000L * c + k : -1;
        OK(MPI_Bcast(&v, 1, MPI_LONG, size - 1, comms[c]));
        CHECK(v == 1000L * c + k);
    }
    for (int c = 0; c < COMMS; c++) OK(MPI_Comm_free(&comms[c]));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int k = 0; k < 2; k++) round_of(k);
    if (rank == 0) printf("coll_many_comms: all checks passed\n");
    MPI_Finalize();
    return 0;
}
