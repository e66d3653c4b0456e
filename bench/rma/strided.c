/* strided.c: fence epochs of one-sided calls on strided target data, the case where one call
 * is thousands of small transfers: rank 0 puts into, gets from or accumulates (MPI_SUM) into
 * rank 1's window of user memory (MPI_Win_create) through a vector type of 65536 ints, one in
 * every two, while every rank waits in MPI_Win_fence. Run at more ranks than cores, it shows
 * whether a target blocked in the fence serves the calls. Prints, per operation, from rank 0:
 *   RESULT IMPL strided_OP_epoch_latency 262144 MICROSECONDS
 * (the best of 5 epochs; 262144 = the bytes moved). Usage: mpirun -n N strided [IMPL] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define COUNT 65536
#define EPOCHS 5

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *impl = argc > 1 ? argv[1] : "mpi";
    if (size < 2) {
        fprintf(stderr, "strided: needs 2 ranks or more\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int *mem = calloc(2 * COUNT, sizeof(int)), *src = malloc(COUNT * sizeof(int));
    for (int i = 0; i < COUNT; i++) src[i] = i;
    MPI_Win win;
    MPI_Win_create(mem, 2 * COUNT * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Datatype every_other;
    MPI_Type_vector(COUNT, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    const char *ops[] = {"put", "get", "accumulate"};
    for (int op = 0; op < 3; op++) {
        double best = 1e30;
        MPI_Win_fence(0, win);
        for (int e = 0; e < EPOCHS; e++) {
            double t = MPI_Wtime();
            if (rank == 0) {
                if (op == 0) MPI_Put(src, COUNT, MPI_INT, 1, 0, 1, every_other, win);
                if (op == 1) MPI_Get(src, COUNT, MPI_INT, 1, 0, 1, every_other, win);
                if (op == 2) MPI_Accumulate(src, COUNT, MPI_INT, 1, 0, 1, every_other, MPI_SUM, win);
            }
            MPI_Win_fence(0, win);
            t = MPI_Wtime() - t;
            best = t < best ? t : best;
        }
        if (rank == 0)
            printf("RESULT %s strided_%s_epoch_latency %d %.1f\n", impl, ops[op],
                   (int)(COUNT * sizeof(int)), best * 1e6);
    }
    MPI_Type_free(&every_other);
    MPI_Win_free(&win);
    free(mem);
    free(src);
    MPI_Finalize();
    return 0;
}
