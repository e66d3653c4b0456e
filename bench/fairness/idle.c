/* idle.c: how much CPU a rank burns while blocked. Rank 0 sleeps SECONDS (default 10) and then
 * sends one message to every other rank, which waits for it in MPI_Recv (WAIT "recv", the
 * default), or enters an MPI_Barrier where the others wait (WAIT "barrier"). Each waiting rank's
 * CPU time (user + system) over that wait is gathered, and rank 0 prints
 * "RESULT idle ranks=N seconds=S cpu_max=C cpu_mean=M". Plain MPI: built with either mpicc.
 * Usage: idle [SECONDS [recv|barrier]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, x = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int seconds = argc > 1 ? atoi(argv[1]) : 10;
    int barrier = argc > 2 && strcmp(argv[2], "barrier") == 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double c0 = cpu_seconds(), t0 = MPI_Wtime();
    if (rank == 0)
        sleep((unsigned)seconds);
    if (barrier) {
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (rank == 0) {
        for (int r = 1; r < size; r++) MPI_Send(&x, 1, MPI_INT, r, 0, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    double cpu = rank == 0 ? 0.0 : cpu_seconds() - c0, wall = MPI_Wtime() - t0;
    double max = 0, sum = 0;
    MPI_Reduce(&cpu, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&cpu, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("RESULT idle ranks=%d seconds=%.2f cpu_max=%.3f cpu_mean=%.3f\n", size, wall, max,
               size > 1 ? sum / (size - 1) : 0.0);
    MPI_Finalize();
    return 0;
}
