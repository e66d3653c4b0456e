/* rma_pair_atomic.c: an accumulate on a pair type (MPI_2INT: two ints, MINLOC/MAXLOC's type)
 * changes the pair as one element. The last rank replaces the pairs of rank 0's window with
 * (v, v) for growing v (MPI_Accumulate with MPI_REPLACE, one pair and four at a time) while
 * rank 1 reads them (MPI_Fetch_and_op and MPI_Get_accumulate with MPI_NO_OP): every pair it
 * reads must have equal halves, never one half of an old pair and one of a new. A pair
 * changed as two separate ints fails this within a few rounds. With one rank the same calls
 * run unopposed. */
#include "check.h"

#define PAIRS 4
#define OPS 4000

struct pair {
    int a, b;
};

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    struct pair *base;
    MPI_Win win;
    OK(MPI_Win_allocate(PAIRS * sizeof(struct pair), sizeof(struct pair), MPI_INFO_NULL,
                        MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < PAIRS; i++) base[i].a = base[i].b = 0;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    const int writer = size - 1, reader = size > 1 ? 1 : 0;
    OK(MPI_Win_lock_all(0, win));
    if (rank == writer) {
        struct pair out[PAIRS];
        for (int v = 1; v <= OPS; v++) {
            for (int i = 0; i < PAIRS; i++) out[i].a = out[i].b = v;
            if (v % 2)
                OK(MPI_Accumulate(out, 1, MPI_2INT, 0, v % PAIRS, 1, MPI_2INT, MPI_REPLACE, win));
            else
                OK(MPI_Accumulate(out, PAIRS, MPI_2INT, 0, 0, PAIRS, MPI_2INT, MPI_REPLACE, win));
        }
        OK(MPI_Win_flush(0, win));
    }
    if (rank == reader) {
        struct pair got[PAIRS];
        int torn = 0;
        for (int k = 0; k < OPS; k++) {
            if (k % 2) {
                OK(MPI_Fetch_and_op(NULL, got, MPI_2INT, 0, k % PAIRS, MPI_NO_OP, win));
                OK(MPI_Win_flush(0, win));
                torn += got[0].a != got[0].b;
            } else {
                OK(MPI_Get_accumulate(NULL, 0, MPI_2INT, got, PAIRS, MPI_2INT, 0, 0, PAIRS,
                                      MPI_2INT, MPI_NO_OP, win));
                OK(MPI_Win_flush(0, win));
                for (int i = 0; i < PAIRS; i++) torn += got[i].a != got[i].b;
            }
        }
        CHECK(torn == 0);
    }
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        for (int i = 0; i < PAIRS; i++) CHECK(base[i].a == base[i].b);
    OK(MPI_Win_free(&win));
    test_finish(rank, "rma_pair_atomic");
    return 0;
}
