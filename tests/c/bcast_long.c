/* bcast_long.c: broadcasts of long buffers, which the readers copy straight from the root's
 * memory (mpicd/src/schedule/node/bodies.rs, bcast_single_copy). Where every member has a core
 * of its own (1-2 ranks on this machine) the root copies the last 1/p of each reader's buffer
 * (whole cache lines) while the readers copy the rest, from 32 KiB on; elsewhere the readers
 * copy it all. Lengths straddle 32 KiB and do not divide evenly; every member is root in turn;
 * broadcasts run back to back, so that a root leaves for the next while its readers may still
 * copy; a derived type (every other int) takes the plan's path beside them. Every byte of every
 * reader's buffer is checked, and the root's buffer must come back unchanged. */
#include "check.h"
#include <string.h>

static int rank, size;

/* Byte i of the broadcast from `root` of round k. */
static unsigned char byte_of(long i, int root, int k) {
    return (unsigned char)((i * 31 + root * 7 + k * 3) % 253);
}

static void one(unsigned char *buf, long len, int root, int k) {
    for (long i = 0; i < len; i++) buf[i] = rank == root ? byte_of(i, root, k) : 0xEE;
    OK(MPI_Bcast(buf, (int)len, MPI_BYTE, root, MPI_COMM_WORLD));
    for (long i = 0; i < len; i++) CHECK(buf[i] == byte_of(i, root, k));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const long lens[] = {32767, 32768, 32769, 65536 + 13, 1000003, 4 << 20};
    const int n = (int)(sizeof lens / sizeof lens[0]);
    unsigned char *buf = malloc(4 << 20), *other = malloc(4 << 20);
    CHECK(buf && other);
    for (int k = 0; k < 4 * n; k++) {
        int root = k % size;
        long len = lens[k % n];
        /* Two buffers in turn: a reader still copying the last broadcast's buffer would see
         * this one's bytes change under it. */
        one(k % 2 ? other : buf, len, root, k);
    }
    /* A derived type (every other int of 2 * count) beside the bytes: its own path. */
    int count = 100000;
    MPI_Datatype every_other;
    OK(MPI_Type_vector(count, 1, 2, MPI_INT, &every_other));
    OK(MPI_Type_commit(&every_other));
    int *ints = (int *)buf;
    for (int i = 0; i < 2 * count; i++) ints[i] = rank == 0 ? i : (i % 2 ? -5 : -1);
    OK(MPI_Bcast(ints, 1, every_other, 0, MPI_COMM_WORLD));
    for (int i = 0; i < 2 * count; i++) CHECK(ints[i] == (i % 2 ? (rank == 0 ? i : -5) : i));
    OK(MPI_Type_free(&every_other));
    free(buf);
    free(other);
    if (rank == 0) printf("bcast_long: all checks passed\n");
    MPI_Finalize();
    return 0;
}
