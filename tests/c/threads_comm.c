/* threads_comm.c: communicators made by several threads at once (MPI_THREAD_MULTIPLE). Each of
 * THREADS threads per rank has its own duplicate of MPI_COMM_WORLD and, ROUNDS times, makes a
 * communicator from it (dup, split, create, create_group in turn; every fifth round also an
 * inter-communicator between its even and odd ranks), checks that an allreduce
 * and a ring exchange on it see only its own thread's values (two communicators that got one
 * context id would mix them), and frees it. Between rounds each thread duplicates
 * MPI_COMM_SELF while holding a lock the threads share, as MPICH's comm_dup_deadlock does: a
 * thread waiting for the lock must not keep another's agreement from ending. */
#include "check.h"
#include <pthread.h>

#define THREADS 4
#define ROUNDS 25

static MPI_Comm parents[THREADS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* A value only thread `me`'s communicator of round `r` carries, from its member `rank`. */
static int value(int me, int r, int rank) { return 1000 * me + 10 * r + rank; }

static void check_isolated(MPI_Comm c, int me, int r) {
    int rank, size;
    OK(MPI_Comm_rank(c, &rank));
    OK(MPI_Comm_size(c, &size));
    int sum = 0, expected = 0;
    int mine = value(me, r, rank);
    OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c));
    for (int k = 0; k < size; k++) expected += value(me, r, k);
    CHECK(sum == expected);
    int got = -1;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    OK(MPI_Sendrecv(&mine, 1, MPI_INT, next, r, &got, 1, MPI_INT, prev, r, c, MPI_STATUS_IGNORE));
    CHECK(got == value(me, r, prev));
}

/* An inter-communicator between the even and the odd ranks of `parent`: an allreduce over it
 * gives each side the sum of the other side's values. */
static void intercomm(MPI_Comm parent, int me, int r) {
    int rank, size;
    OK(MPI_Comm_rank(parent, &rank));
    OK(MPI_Comm_size(parent, &size));
    MPI_Comm half, inter;
    OK(MPI_Comm_split(parent, rank % 2, rank, &half));
    OK(MPI_Intercomm_create(half, 0, parent, rank % 2 == 0 ? 1 : 0, 100 + me, &inter));
    int mine = value(me, r, rank), sum = 0, expected = 0;
    OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
    for (int k = 0; k < size; k++)
        if (k % 2 != rank % 2) expected += value(me, r, k);
    CHECK(sum == expected);
    OK(MPI_Comm_free(&inter));
    OK(MPI_Comm_free(&half));
}

static void *worker(void *arg) {
    int me = (int)(long)arg, rank, size;
    MPI_Comm parent = parents[me];
    OK(MPI_Comm_rank(parent, &rank));
    OK(MPI_Comm_size(parent, &size));
    MPI_Group all;
    OK(MPI_Comm_group(parent, &all));
    for (int r = 0; r < ROUNDS; r++) {
        MPI_Comm c = MPI_COMM_NULL, self;
        switch (r % 4) {
        case 0: OK(MPI_Comm_dup(parent, &c)); break;
        case 1: OK(MPI_Comm_split(parent, 0, -rank, &c)); break;
        case 2: OK(MPI_Comm_create(parent, all, &c)); break;
        default: OK(MPI_Comm_create_group(parent, all, me, &c)); break;
        }
        check_isolated(c, me, r);
        OK(MPI_Comm_free(&c));
        if (size >= 2 && r % 5 == 4) intercomm(parent, me, r);
        CHECK(pthread_mutex_lock(&lock) == 0);
        OK(MPI_Comm_dup(MPI_COMM_SELF, &self));
        CHECK(pthread_mutex_unlock(&lock) == 0);
        OK(MPI_Comm_free(&self));
    }
    OK(MPI_Group_free(&all));
    return NULL;
}

int main(int argc, char **argv) {
    int provided, rank;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    for (int t = 0; t < THREADS; t++) OK(MPI_Comm_dup(MPI_COMM_WORLD, &parents[t]));
    pthread_t threads[THREADS];
    for (long t = 0; t < THREADS; t++) CHECK(pthread_create(&threads[t], NULL, worker, (void *)t) == 0);
    for (int t = 0; t < THREADS; t++) CHECK(pthread_join(threads[t], NULL) == 0);
    for (int t = 0; t < THREADS; t++) OK(MPI_Comm_free(&parents[t]));
    test_finish(rank, "threads_comm");
    return 0;
}
