/* rma_copy.c: puts and gets of many sizes (1 B to 20 KiB, around the sizes the mapped path
 * copies its own way) between buffers and window displacements of every alignment: each rank
 * puts a pattern into the next rank's window, flushes, gets it back into a buffer at another
 * offset, and checks every byte, and that the bytes around the copy are untouched. */
#include "check.h"
#include <string.h>

#define WIN_BYTES (64 * 1024)

static unsigned char pattern(size_t i, int seed) { return (unsigned char)(i * 31 + seed * 7 + 1); }

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    unsigned char *base;
    MPI_Win win;
    OK(MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    memset(base, 0, WIN_BYTES);
    unsigned char *src = malloc(WIN_BYTES), *dst = malloc(WIN_BYTES);
    const size_t sizes[] = {1, 8, 100, 2048, 2049, 2050, 4095, 4096, 4100, 8192, 12345, 16383,
                            16384, 16385, 20480};
    const size_t offs[] = {0, 1, 8, 16, 33, 63};
    int next = (rank + 1) % size, seed = 0;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock_all(0, win));
    for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++) {
        for (size_t b = 0; b < sizeof offs / sizeof *offs; b++) {
            size_t n = sizes[a], so = offs[b], disp = offs[(b + 2) % 6] + 64,
                   dof = offs[(b + 4) % 6];
            seed++;
            for (size_t i = 0; i < n; i++) src[so + i] = pattern(i, seed);
            OK(MPI_Put(src + so, (int)n, MPI_BYTE, next, (MPI_Aint)disp, (int)n, MPI_BYTE, win));
            OK(MPI_Win_flush(next, win));
            memset(dst, 0xee, n + dof + 64);
            OK(MPI_Get(dst + dof, (int)n, MPI_BYTE, next, (MPI_Aint)disp, (int)n, MPI_BYTE, win));
            OK(MPI_Win_flush(next, win));
            for (size_t i = 0; i < dof; i++) CHECK(dst[i] == 0xee);
            for (size_t i = 0; i < n; i++) CHECK(dst[dof + i] == pattern(i, seed));
            for (size_t i = 0; i < 64; i++) CHECK(dst[dof + n + i] == 0xee);
        }
    }
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    free(src);
    free(dst);
    OK(MPI_Win_free(&win));
    test_finish(rank, "rma_copy");
}
