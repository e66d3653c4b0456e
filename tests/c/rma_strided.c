/* rma_strided.c: one-sided calls whose target data is strided (a vector type of 65536 ints, one
 * in every two) on a window of user memory (MPI_Win_create: not mapped by the other processes,
 * so every access goes through UCX's remote memory access, many small ones per call). Each
 * rank puts into, gets from and accumulates into the next rank's window, in fence epochs and
 * in a lock_all epoch, and checks every element: thousands of operations in flight per call
 * fill the target's shared-memory FIFO, and the rest wait in UCX's pending queue. (At 4 ranks
 * on 2 cores such epochs took 2-4 s each while a target blocked in MPI_Win_fence slept; the
 * time is measured by `make bench-rma`, not here.) Works with any number of ranks (a singleton
 * targets itself). */
#include "check.h"
#include <string.h>

#define COUNT 65536
#define EPOCHS 6

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int *mem = calloc(2 * COUNT, sizeof(int)), *src = malloc(COUNT * sizeof(int));
    int *back = malloc(COUNT * sizeof(int));
    CHECK(mem && src && back);
    MPI_Win win;
    OK(MPI_Win_create(mem, 2 * COUNT * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                      &win));
    MPI_Datatype every_other;
    OK(MPI_Type_vector(COUNT, 1, 2, MPI_INT, &every_other));
    OK(MPI_Type_commit(&every_other));

    for (int e = 0; e < EPOCHS; e++) {
        /* Put: element i of the next rank's even slots becomes this rank's pattern. */
        for (int i = 0; i < COUNT; i++) src[i] = rank * 1000000 + e * 100000 + i;
        OK(MPI_Win_fence(0, win));
        OK(MPI_Put(src, COUNT, MPI_INT, next, 0, 1, every_other, win));
        OK(MPI_Win_fence(0, win));
        for (int i = 0; i < COUNT; i++) {
            CHECK(mem[2 * i] == prev * 1000000 + e * 100000 + i);
            CHECK(mem[2 * i + 1] == e); /* the odd slots: untouched by the put */
        }
        /* Get it back from the next rank; then accumulate 1 into its odd slots. */
        memset(back, 0, COUNT * sizeof(int));
        OK(MPI_Get(back, COUNT, MPI_INT, next, 0, 1, every_other, win));
        OK(MPI_Win_fence(0, win));
        for (int i = 0; i < COUNT; i++) CHECK(back[i] == src[i]);
        for (int i = 0; i < COUNT; i++) src[i] = 1;
        OK(MPI_Win_lock_all(0, win));
        OK(MPI_Accumulate(src, COUNT, MPI_INT, next, 1, 1, every_other, MPI_SUM, win));
        OK(MPI_Win_unlock_all(win));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
        for (int i = 0; i < COUNT; i++) CHECK(mem[2 * i + 1] == e + 1);
        OK(MPI_Win_unlock(rank, win));
    }

    OK(MPI_Type_free(&every_other));
    OK(MPI_Win_free(&win));
    free(mem);
    free(src);
    free(back);
    if (rank == 0) printf("rma_strided: all checks passed\n");
    MPI_Finalize();
    return 0;
}
