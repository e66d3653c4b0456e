/* rma_bench.c: one-sided latency and bandwidth between ranks 0 and 1 (plain MPI: built with
 * either mpicc). Rank 0 is the origin, in one passive-target epoch (MPI_Win_lock_all); rank 1
 * only waits in a barrier (the target takes no part, as passive target means). Each latency is
 * one operation followed by MPI_Win_flush, averaged over ITERS after WARMUP:
 *   put, get (8 B), accumulate (MPI_SUM, 8 B int64), fetch_and_op (MPI_SUM, int64),
 *   compare_and_swap (int64)
 * and each bandwidth WINDOW puts (or gets) of SIZE bytes (fewer when they would not fit the
 * 4 MiB window) then one flush, for SIZE from 8 B to 4 MiB, after one untimed round. Every
 * get and fetch checks the value it read. Prints
 *   RESULT <impl> <op> <bytes> <value>      (latency in us, bandwidth in MB/s, MB = 1e6 B)
 * Usage: rma_bench IMPL_NAME */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 2000
#define WARMUP 200
#define WINDOW 32
#define MAX_BYTES (4 << 20)

static void fail(const char *what) {
    fprintf(stderr, "rma_bench: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *impl = argc > 1 ? argv[1] : "mpi";
    if (size != 2) fail("needs 2 ranks");
    char *base;
    MPI_Win win;
    MPI_Win_allocate(MAX_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, MAX_BYTES);
    ((int64_t *)base)[0] = 7; /* what gets read */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char *buf = malloc(MAX_BYTES);
        memset(buf, 1, MAX_BYTES);
        int64_t one = 1, got = 0, cmp = 0, out = 0;
        MPI_Win_lock_all(0, win);
        const char *names[] = {"put", "get", "accumulate", "fetch_and_op", "compare_and_swap"};
        for (int op = 0; op < 5; op++) {
            double t0 = 0;
            for (int i = 0; i < WARMUP + ITERS; i++) {
                if (i == WARMUP) t0 = MPI_Wtime();
                switch (op) {
                case 0: MPI_Put(buf, 8, MPI_BYTE, 1, 64, 8, MPI_BYTE, win); break;
                case 1: MPI_Get(&got, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, win); break;
                case 2: MPI_Accumulate(&one, 1, MPI_INT64_T, 1, 8, 1, MPI_INT64_T, MPI_SUM, win); break;
                case 3: MPI_Fetch_and_op(&one, &got, MPI_INT64_T, 1, 16, MPI_SUM, win); break;
                default: MPI_Compare_and_swap(&one, &cmp, &out, MPI_INT64_T, 1, 24, win); break;
                }
                MPI_Win_flush(1, win);
                if (op == 1 && got != 7) fail("get read a wrong value");
                if (op == 3 && got != i) fail("fetch_and_op read a wrong value");
            }
            printf("RESULT %s %s_latency 8 %.3f\n", impl, names[op], (MPI_Wtime() - t0) / ITERS * 1e6);
        }
        MPI_Get(&got, 1, MPI_INT64_T, 1, 8, 1, MPI_INT64_T, win);
        MPI_Win_flush(1, win);
        if (got != WARMUP + ITERS) fail("accumulates lost updates");
        for (int op = 0; op < 2; op++) {
            static const int sizes[] = {8, 64, 512, 4096, 32768, 262144, 1 << 20, MAX_BYTES};
            for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
                int bytes = sizes[k];
                /* WINDOW operations per flush, fewer where they would not fit the window. */
                int ops = MAX_BYTES / bytes < WINDOW ? MAX_BYTES / bytes : WINDOW;
                int rounds = bytes >= (1 << 20) ? 20 : 100;
                /* One untimed round first (OSU's skip iterations): the first touch of each
                 * page of the window is not the communication's cost. */
                double t0 = 0;
                for (int r = -1; r < rounds; r++) {
                    if (r == 0) t0 = MPI_Wtime();
                    for (int w = 0; w < ops; w++) {
                        MPI_Aint disp = (MPI_Aint)w * bytes;
                        if (op == 0) MPI_Put(buf, bytes, MPI_BYTE, 1, disp, bytes, MPI_BYTE, win);
                        else MPI_Get(buf, bytes, MPI_BYTE, 1, disp, bytes, MPI_BYTE, win);
                    }
                    MPI_Win_flush(1, win);
                }
                double secs = MPI_Wtime() - t0;
                printf("RESULT %s %s_bandwidth %d %.1f\n", impl, op ? "get" : "put", bytes,
                       (double)bytes * ops * rounds / secs / 1e6);
            }
        }
        MPI_Win_unlock_all(win);
        free(buf);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
