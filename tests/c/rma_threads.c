/* rma_threads.c: one-sided calls from several threads at once (MPI_THREAD_MULTIPLE) on a
 * window every rank can map: in one MPI_Win_lock_all epoch, each of THREADS threads per rank
 * adds to a counter on every rank with MPI_Fetch_and_op and MPI_Accumulate, puts into its own
 * slot and flushes; no update is lost and every put lands. Then a freed window's handle (kept
 * in a copy) gives MPI_ERR_WIN to the communication and flush calls, also once a new window
 * may have taken its place. */
#include "check.h"
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#define THREADS 3
#define ROUNDS 300

struct mem {
    long counter;
    long sum;
    int slots[64];
};

static MPI_Win win;
static int nranks;

static void *worker(void *arg) {
    int me = (int)(long)arg, rank;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    for (int r = 0; r < ROUNDS; r++) {
        for (int t = 0; t < nranks; t++) {
            long one = 1, old;
            OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, t, offsetof(struct mem, counter), MPI_SUM,
                                win));
            OK(MPI_Accumulate(&one, 1, MPI_LONG, t, offsetof(struct mem, sum), 1, MPI_LONG,
                              MPI_SUM, win));
            int v = r + 1;
            MPI_Aint slot = offsetof(struct mem, slots) + sizeof(int) * (rank * THREADS + me);
            OK(MPI_Put(&v, 1, MPI_INT, t, slot, 1, MPI_INT, win));
            OK(MPI_Win_flush(t, win));
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided, rank;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));
    CHECK(nranks * THREADS <= 64);
    struct mem *mem;
    OK(MPI_Win_allocate(sizeof *mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    memset(mem, 0, sizeof *mem);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock_all(0, win));
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&th[i], NULL, worker, (void *)(long)i) == 0);
    for (int i = 0; i < THREADS; i++) CHECK(pthread_join(th[i], NULL) == 0);
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(mem->counter == (long)nranks * THREADS * ROUNDS);
    CHECK(mem->sum == (long)nranks * THREADS * ROUNDS);
    for (int s = 0; s < nranks * THREADS; s++) CHECK(mem->slots[s] == ROUNDS);
    MPI_Win stale = win;
    OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL);
    /* The freed handle: MPI_ERR_WIN (to MPI_COMM_SELF's handler, which returns). */
    long one = 1, old;
    FAILS(MPI_Put(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, stale), MPI_ERR_WIN);
    FAILS(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, stale), MPI_ERR_WIN);
    FAILS(MPI_Win_flush(0, stale), MPI_ERR_WIN);
    /* A new window (maybe in the old one's slot): the stale handle still names nothing. */
    OK(MPI_Win_allocate(sizeof *mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    OK(MPI_Win_lock_all(0, win));
    FAILS(MPI_Get(&old, 1, MPI_LONG, 0, 0, 1, MPI_LONG, stale), MPI_ERR_WIN);
    FAILS(MPI_Accumulate(&one, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, stale), MPI_ERR_WIN);
    OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win));
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Win_free(&win));
    test_finish(rank, "rma_threads");
}
