/* rma_acc_mix.c: accumulate-class operations of different shapes on the same window elements
 * from every rank at once lose no update. Each rank's window holds N ints, N doubles and N
 * long longs (MPI_Win_allocate, and MPI_Win_allocate_shared for a second round); every rank,
 * in one MPI_Win_lock_all epoch, adds to every target's elements with
 *   - MPI_Accumulate of all N elements (MPI_SUM, MPI_INT and MPI_DOUBLE),
 *   - MPI_Fetch_and_op on one element (MPI_SUM, MPI_INT and MPI_DOUBLE),
 *   - MPI_Get_accumulate of all N elements (MPI_SUM on MPI_INT),
 *   - MPI_Accumulate through a derived target type (every other int: a vector),
 *   - compare-and-swap increments of one long long, beside MPI_Fetch_and_op ones on it,
 * and MPI_Get_accumulate with MPI_NO_OP reads. After a barrier each rank checks that its
 * elements hold exactly what every rank added. */
#include "check.h"
#include <stddef.h>
#include <string.h>

#define N 8
#define ROUNDS 200

struct mem {
    int ints[N];
    double doubles[N];
    long long longs[N];
};

static void round_on(MPI_Win win, struct mem *mem, int rank, int size) {
    (void)rank;
    memset(mem, 0, sizeof *mem);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Datatype every_other;
    OK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other));
    OK(MPI_Type_commit(&every_other));
    const MPI_Aint ints = 0, doubles = offsetof(struct mem, doubles),
                   longs = offsetof(struct mem, longs);
    int ones[N];
    double dones[N];
    for (int i = 0; i < N; i++) {
        ones[i] = 1;
        dones[i] = 1.0;
    }
    OK(MPI_Win_lock_all(0, win));
    for (int r = 0; r < ROUNDS; r++) {
        for (int t = 0; t < size; t++) {
            int k = r % N, one = 1, old = 0, got[N];
            double done = 1.0, dold = 0;
            OK(MPI_Accumulate(ones, N, MPI_INT, t, ints, N, MPI_INT, MPI_SUM, win));
            OK(MPI_Fetch_and_op(&one, &old, MPI_INT, t, ints + k * (MPI_Aint)sizeof(int), MPI_SUM,
                                win));
            OK(MPI_Accumulate(dones, N, MPI_DOUBLE, t, doubles, N, MPI_DOUBLE, MPI_SUM, win));
            OK(MPI_Fetch_and_op(&done, &dold, MPI_DOUBLE, t,
                                doubles + k * (MPI_Aint)sizeof(double), MPI_SUM, win));
            OK(MPI_Get_accumulate(ones, N, MPI_INT, got, N, MPI_INT, t, ints, N, MPI_INT, MPI_SUM,
                                  win));
            OK(MPI_Accumulate(ones, N / 2, MPI_INT, t, ints, 1, every_other, MPI_SUM, win));
            OK(MPI_Get_accumulate(NULL, 0, MPI_INT, got, N, MPI_INT, t, ints, N, MPI_INT,
                                  MPI_NO_OP, win));
            /* A CAS increment (retried until it wins) and a fetch-and-op one on longs[0]. */
            long long seen = 0, cmp = 0, next;
            do {
                cmp = seen;
                next = cmp + 1;
                OK(MPI_Compare_and_swap(&next, &cmp, &seen, MPI_LONG_LONG, t, longs, win));
            } while (seen != cmp);
            long long lone = 1, lold;
            OK(MPI_Fetch_and_op(&lone, &lold, MPI_LONG_LONG, t, longs, MPI_SUM, win));
            OK(MPI_Win_flush(t, win));
        }
    }
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* Per rank and round: N-wide adds twice (accumulate, get_accumulate), the vector on even
     * elements, and one fetch-and-op on element r % N. */
    const int per_k = ROUNDS / N;
    for (int i = 0; i < N; i++) {
        int want = size * (2 * ROUNDS + (i % 2 == 0 ? ROUNDS : 0) + per_k);
        CHECK(mem->ints[i] == want);
        CHECK(mem->doubles[i] == (double)(size * (ROUNDS + per_k)));
    }
    CHECK(mem->longs[0] == 2LL * size * ROUNDS);
    OK(MPI_Type_free(&every_other));
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    CHECK(ROUNDS % N == 0);
    struct mem *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(sizeof(struct mem), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    round_on(win, mem, rank, size);
    OK(MPI_Win_free(&win));
    OK(MPI_Win_allocate_shared(sizeof(struct mem), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    round_on(win, mem, rank, size);
    OK(MPI_Win_free(&win));
    /* A window over memory of the caller's (not mapped): the same numbers. */
    struct mem *own = malloc(sizeof *own);
    OK(MPI_Win_create(own, sizeof *own, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    round_on(win, own, rank, size);
    OK(MPI_Win_free(&win));
    free(own);
    test_finish(rank, "rma_acc_mix");
}
