/* rma_atomic.c: the atomicity of one-sided calls under contention. Every rank hammers one
 * counter with MPI_Fetch_and_op (no update lost, every fetched value distinct), a
 * compare-and-swap spin lock and MPI_Win_lock(MPI_LOCK_EXCLUSIVE) guard a read-modify-write
 * done with plain get and put (no update lost), MPI_Accumulate with every predefined op
 * (SUM, PROD, MAX, MIN, LAND, LOR, LXOR, BAND, BOR, BXOR, REPLACE, MINLOC) on several types,
 * MPI_Get_accumulate with MPI_NO_OP, and the request-based accumulates. */
#include "check.h"
#include <string.h>

#define ROUNDS 50

static void counter(int rank, int size) {
    long *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    *mem = 0;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    long seen[ROUNDS];
    OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ROUNDS; i++) {
        long one = 1;
        OK(MPI_Fetch_and_op(&one, &seen[i], MPI_LONG, 0, 0, MPI_SUM, win));
        OK(MPI_Win_flush(0, win));
    }
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) CHECK(*mem == (long)ROUNDS * size);
    /* Every fetched value is distinct across ranks. */
    long *all = malloc(sizeof(long) * ROUNDS * size);
    OK(MPI_Allgather(seen, ROUNDS, MPI_LONG, all, ROUNDS, MPI_LONG, MPI_COMM_WORLD));
    char *hit = calloc(ROUNDS * size, 1);
    for (int i = 0; i < ROUNDS * size; i++) {
        CHECK(all[i] >= 0 && all[i] < ROUNDS * size && !hit[all[i]]);
        hit[all[i]] = 1;
    }
    free(all);
    free(hit);
    OK(MPI_Win_free(&win));
}

static void exclusive(int rank, int size) {
    int *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    mem[0] = mem[1] = 0;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* Non-atomic read-modify-write under an exclusive lock on the last rank. */
    int t = size - 1;
    for (int i = 0; i < ROUNDS; i++) {
        int v = -1;
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        OK(MPI_Get(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win));
        OK(MPI_Win_flush(t, win));
        v += 1;
        OK(MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win));
        OK(MPI_Win_unlock(t, win));
    }
    /* The same with a compare-and-swap spin lock in word 1 of rank 0 (and the data in word 0
     * of rank 0). */
    for (int i = 0; i < ROUNDS; i++) {
        int zero = 0, me = rank + 1, old = -1, v = -1;
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        do {
            OK(MPI_Compare_and_swap(&me, &zero, &old, MPI_INT, 0, 1, win));
            OK(MPI_Win_flush(0, win));
        } while (old != 0);
        OK(MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        OK(MPI_Win_flush(0, win));
        v += 1;
        OK(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
        OK(MPI_Win_flush(0, win));
        OK(MPI_Fetch_and_op(&zero, &old, MPI_INT, 0, 1, MPI_REPLACE, win));
        OK(MPI_Win_unlock(0, win));
        CHECK(old == me);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == size - 1 && size > 1) CHECK(mem[0] == ROUNDS * size);
    if (rank == 0 && size > 1) CHECK(mem[0] == ROUNDS * size && mem[1] == 0);
    if (size == 1) CHECK(mem[0] == 2 * ROUNDS && mem[1] == 0);
    OK(MPI_Win_free(&win));
}

/* Accumulates `op` of every rank's value (rank + 2) into one int, long long, double or
 * unsigned element at rank 0 and checks the result there. */
static void every_op(int rank, int size) {
    struct {
        MPI_Op op;
        long long start;
    } ops[] = {{MPI_SUM, 1},  {MPI_PROD, 1}, {MPI_MAX, -5}, {MPI_MIN, 99}, {MPI_LAND, 1},
               {MPI_LOR, 0},  {MPI_LXOR, 0}, {MPI_BAND, -1}, {MPI_BOR, 0}, {MPI_BXOR, 0},
               {MPI_REPLACE, 7}};
    int nops = sizeof ops / sizeof ops[0];
    long long *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(nops * 2 * sizeof(long long), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                        &win));
    for (int k = 0; k < nops; k++) {
        mem[2 * k] = ops[k].start;
        double d = (double)ops[k].start;
        memcpy(&mem[2 * k + 1], &d, sizeof d);
    }
    OK(MPI_Win_fence(0, win));
    long long v = rank + 2;
    double dv = rank + 2;
    for (int k = 0; k < nops; k++) {
        OK(MPI_Accumulate(&v, 1, MPI_LONG_LONG, 0, 2 * k * sizeof(long long), 1, MPI_LONG_LONG,
                          ops[k].op, win));
        if (ops[k].op == MPI_SUM || ops[k].op == MPI_PROD || ops[k].op == MPI_MAX ||
            ops[k].op == MPI_MIN)
            OK(MPI_Accumulate(&dv, 1, MPI_DOUBLE, 0, (2 * k + 1) * sizeof(long long), 1,
                              MPI_DOUBLE, ops[k].op, win));
    }
    OK(MPI_Win_fence(0, win));
    if (rank == 0) {
        long long want[11] = {1, 1, -5, 99, 1, 0, 0, -1, 0, 0, 0};
        for (int r = 0; r < size; r++) {
            long long x = r + 2;
            want[0] += x;
            want[1] *= x;
            want[2] = want[2] > x ? want[2] : x;
            want[3] = want[3] < x ? want[3] : x;
            want[4] = want[4] && x;
            want[5] = want[5] || x;
            want[6] = !want[6] != !x;
            want[7] &= x;
            want[8] |= x;
            want[9] ^= x;
        }
        for (int k = 0; k < 10; k++) CHECK(mem[2 * k] == want[k]);
        CHECK(mem[20] >= 2 && mem[20] < size + 2); /* REPLACE: some rank's value */
        for (int k = 0; k < 4; k++) {
            double d;
            memcpy(&d, &mem[2 * k + 1], sizeof d);
            CHECK(d == (double)want[k]);
        }
    }
    OK(MPI_Win_fence(0, win));
    /* MINLOC on (double, int) pairs: the smallest value, lowest index wins ties. */
    struct {
        double v;
        int i;
    } pair = {rank % 2 ? 1.0 : 2.0, rank}, got = {0, -1};
    if (rank == 0) {
        struct {
            double v;
            int i;
        } init = {5.0, 999};
        memcpy(mem, &init, sizeof init);
    }
    OK(MPI_Win_fence(0, win));
    OK(MPI_Accumulate(&pair, 1, MPI_DOUBLE_INT, 0, 0, 1, MPI_DOUBLE_INT, MPI_MINLOC, win));
    OK(MPI_Win_fence(0, win));
    OK(MPI_Get_accumulate(NULL, 0, MPI_DOUBLE_INT, &got, 1, MPI_DOUBLE_INT, 0, 0, 1,
                          MPI_DOUBLE_INT, MPI_NO_OP, win));
    OK(MPI_Win_fence(0, win));
    CHECK(got.v == (size > 1 ? 1.0 : 2.0) && got.i == (size > 1 ? 1 : 0));
    /* Request-based accumulates, and a user op is refused. */
    OK(MPI_Win_lock_all(0, win));
    MPI_Request r[2];
    long long one = 1, before = -1;
    OK(MPI_Raccumulate(&one, 1, MPI_LONG_LONG, 0, 16, 1, MPI_LONG_LONG, MPI_SUM, win, &r[0]));
    OK(MPI_Rget_accumulate(&one, 1, MPI_LONG_LONG, &before, 1, MPI_LONG_LONG, 0, 16, 1,
                           MPI_LONG_LONG, MPI_SUM, win, &r[1]));
    OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(before >= 1);
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Win_free(&win));
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    counter(rank, size);
    exclusive(rank, size);
    every_op(rank, size);
    OK(MPI_Finalize());
    if (rank == 0) printf("rma_atomic: all checks passed\n");
    return 0;
}
