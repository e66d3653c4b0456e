/* coll_long.c: broadcasts and gathers of long blocks, which the members copy straight from
 * each other's memory (mpicd/src/schedule/node/bodies.rs). Where every member has a core of its
 * own (1-2 ranks on this machine):
 * - a broadcast's root copies the last 1/p of each reader's buffer (whole cache lines) while
 *   the readers copy the rest, from 32 KiB on (elsewhere the readers copy it all);
 * - a gather's givers write their blocks into the root's buffer while the root copies its own
 *   (elsewhere the root reads them).
 * Lengths straddle 32 KiB and do not divide evenly; every member is root in turn; collectives
 * run back to back, so that a member leaves for the next while others may still copy; a
 * derived type (every other int) takes the plan's path beside them; gathers and broadcasts
 * whose counts differ between the root and the others (an erroneous program), on either side
 * of the ways' bounds, fail where the data arrives (the root of a gather, the readers of a
 * broadcast) and never hang, and the collectives after them still work. Every byte of every result is checked, and a root's
 * buffer must come back unchanged. */
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
    /* Gathers, in place and not: rank r's block of round k is bytes of_byte(i, r, k). */
    const long blocks[] = {4097, 65536 + 13, 1000003};
    unsigned char *mine = malloc(1000003);
    CHECK(mine);
    for (int k = 0; k < 6 * 3; k++) {
        int root = k % size, in_place = (k / 3) % 2 && rank == root;
        long len = blocks[k % 3];
        unsigned char *all = k % 2 ? other : buf, *at = all + (long)rank * len;
        CHECK(len * size <= 4 << 20);
        for (long i = 0; i < len * size; i++) all[i] = 0xEE;
        for (long i = 0; i < len; i++) (in_place ? at : mine)[i] = byte_of(i, rank, k);
        OK(MPI_Gather(in_place ? MPI_IN_PLACE : mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE,
                      root, MPI_COMM_WORLD));
        if (rank == root)
            for (int r = 0; r < size; r++)
                for (long i = 0; i < len; i++) CHECK(all[(long)r * len + i] == byte_of(i, r, k));
        if (!in_place)
            for (long i = 0; i < len; i++) CHECK(mine[i] == byte_of(i, rank, k));
    }
    /* Counts that differ between the root and a giver fail at the root (never silently, never
     * a hang; a giver whose block went as a message succeeds, one whose block the root would
     * have read in place may fail), and the collectives after it still work. */
    if (size > 1) {
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        /* Pairs of lengths on either side of the ways' bounds (through the node's area up to
         * 32 KiB, read in place past it; the root's share of a broadcast from 32 KiB), so that
         * the members may take different ways and wait for each other: each member that sees
         * the mismatch fails, and none waits for ever. */
        const long pairs[][2] = {{65536, 65536 + 64}, {65536, 8}, {8, 65536}, {65536, 16384},
                                 {16384, 65536}, {200000, 65536}};
        for (int k = 0; k < (int)(sizeof pairs / sizeof pairs[0]); k++) {
            long root_len = pairs[k][0], other_len = pairs[k][1];
            long len = rank == 0 ? root_len : other_len;
            int rc = MPI_Gather(mine, (int)len, MPI_BYTE, buf, (int)root_len, MPI_BYTE, 0,
                                MPI_COMM_WORLD);
            if (rank == 0) CHECK(rc != MPI_SUCCESS);
            rc = MPI_Bcast(other, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
            if (rank != 0) CHECK(rc != MPI_SUCCESS);
            /* The collectives after it work. */
            one(buf, 65536, k % size, 99 + k);
        }
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    }
    free(mine);
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
    if (rank == 0) printf("coll_long: all checks passed\n");
    MPI_Finalize();
    return 0;
}
