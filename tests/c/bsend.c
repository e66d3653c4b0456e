/* bsend.c: buffered mode: MPI_Buffer_attach/_detach (which waits for the buffered messages
 * and returns the buffer), MPI_Bsend, MPI_Ibsend and their _c forms with predefined and
 * derived datatypes, the capacity rule (packed size + MPI_BSEND_OVERHEAD per message;
 * MPI_ERR_BUFFER when a message does not fit or no buffer is attached), space given back as
 * sends complete, MPI_BUFFER_AUTOMATIC, MPI_Buffer_flush/_iflush, and a communicator's own
 * buffer (MPI_Comm_attach_buffer). Runs on any number of ranks >= 1. */
#include "check.h"
#include <string.h>

#define BIG (1 << 18) /* ints: 1 MiB, sent by rendezvous: pending until received */
#define N 100

static void errors(int rank, int size) {
    int next = (rank + 1) % size;
    int x = 1;
    /* No buffer attached. */
    FAILS(MPI_Bsend(&x, 1, MPI_INT, next, 1, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MPI_Request r;
    FAILS(MPI_Ibsend(&x, 1, MPI_INT, next, 1, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER);
    void *addr;
    int sz;
    FAILS(MPI_Buffer_detach(&addr, &sz), MPI_ERR_BUFFER);
    /* A message larger than the buffer; a second attach. */
    char small[MPI_BSEND_OVERHEAD + 16];
    OK(MPI_Buffer_attach(small, sizeof small));
    FAILS(MPI_Buffer_attach(small, sizeof small), MPI_ERR_BUFFER);
    int five[5] = {0};
    FAILS(MPI_Bsend(five, 5, MPI_INT, next, 1, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    /* Exactly 16 bytes fit; to MPI_PROC_NULL nothing is needed. */
    OK(MPI_Bsend(five, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    FAILS(MPI_Bsend(five, 1, MPI_INT, next, -3, MPI_COMM_WORLD), MPI_ERR_TAG);
    FAILS(MPI_Bsend(five, 1, MPI_INT, size, 1, MPI_COMM_WORLD), MPI_ERR_RANK);
    FAILS(MPI_Bsend(five, -1, MPI_INT, next, 1, MPI_COMM_WORLD), MPI_ERR_COUNT);
    OK(MPI_Buffer_detach(&addr, &sz));
    CHECK(addr == small && sz == (int)sizeof small);
    FAILS(MPI_Buffer_attach(small, -1), MPI_ERR_ARG);
}

/* Two rendezvous messages fill the buffer; a third does not fit until they are received. */
static void capacity(int rank, int size) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int pack;
    OK(MPI_Pack_size(BIG, MPI_INT, MPI_COMM_WORLD, &pack));
    int bytes = 2 * (pack + MPI_BSEND_OVERHEAD);
    char *space = malloc((size_t)bytes);
    OK(MPI_Buffer_attach(space, bytes));
    int *out = malloc(sizeof(int) * BIG), *in = malloc(sizeof(int) * BIG);
    for (int m = 0; m < 2; m++) {
        for (int i = 0; i < BIG; i++) out[i] = rank * 7 + m * 3 + i;
        if (m == 0) {
            OK(MPI_Bsend(out, BIG, MPI_INT, next, 20 + m, MPI_COMM_WORLD));
        } else {
            OK(MPI_Bsend_c(out, BIG, MPI_INT, next, 20 + m, MPI_COMM_WORLD));
        }
    }
    memset(out, 0, sizeof(int) * BIG); /* copies were taken */
    FAILS(MPI_Bsend(out, 1, MPI_INT, next, 22, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int m = 0; m < 2; m++) {
        MPI_Status s;
        OK(MPI_Recv(in, BIG, MPI_INT, prev, 20 + m, MPI_COMM_WORLD, &s));
        int count;
        OK(MPI_Get_count(&s, MPI_INT, &count));
        CHECK(count == BIG);
        for (int i = 0; i < BIG; i++) CHECK(in[i] == prev * 7 + m * 3 + i);
    }
    /* Once received (and progressed), the space is free again. */
    OK(MPI_Buffer_flush());
    OK(MPI_Bsend(out, BIG, MPI_INT, next, 23, MPI_COMM_WORLD));
    OK(MPI_Recv(in, BIG, MPI_INT, prev, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    void *addr;
    int sz;
    OK(MPI_Buffer_detach(&addr, &sz));
    CHECK(addr == space && sz == bytes);
    free(space);
    free(out);
    free(in);
}

/* Ibsend is complete at once; derived types are packed; detach waits for delivery. */
static void ibsend_derived(int rank, int size) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Datatype every_other;
    OK(MPI_Type_vector(N, 1, 2, MPI_INT, &every_other));
    OK(MPI_Type_commit(&every_other));
    int pack;
    OK(MPI_Pack_size(1, every_other, MPI_COMM_WORLD, &pack));
    CHECK(pack == N * (int)sizeof(int));
    MPI_Count bytes = 3 * (pack + MPI_BSEND_OVERHEAD);
    char *space = malloc((size_t)bytes);
    OK(MPI_Buffer_attach_c(space, bytes));
    int out[2 * N], in[2 * N];
    for (int i = 0; i < 2 * N; i++) out[i] = rank * 1000 + i;
    MPI_Request r[2];
    OK(MPI_Ibsend(out, 1, every_other, next, 30, MPI_COMM_WORLD, &r[0]));
    OK(MPI_Ibsend_c(out + 1, 1, every_other, next, 31, MPI_COMM_WORLD, &r[1]));
    int flag = 0;
    OK(MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag && r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL);
    OK(MPI_Bsend(out, N, MPI_INT, next, 32, MPI_COMM_WORLD));
    memset(out, 0, sizeof out);
    MPI_Request fl;
    OK(MPI_Buffer_iflush(&fl));
    /* Received as plain ints, in the type map's order. */
    OK(MPI_Recv(in, N, MPI_INT, prev, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++) CHECK(in[i] == prev * 1000 + 2 * i);
    OK(MPI_Recv(in, N, MPI_INT, prev, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++) CHECK(in[i] == prev * 1000 + 2 * i + 1);
    for (int i = 0; i < 2 * N; i++) in[i] = -1;
    OK(MPI_Recv(in, 1, every_other, prev, 32, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++) CHECK(in[2 * i] == prev * 1000 + i && in[2 * i + 1] == -1);
    OK(MPI_Wait(&fl, MPI_STATUS_IGNORE));
    OK(MPI_Type_free(&every_other));
    void *addr;
    MPI_Count sz;
    OK(MPI_Buffer_detach_c(&addr, &sz));
    CHECK(addr == space && sz == bytes);
    free(space);
}

/* MPI_BUFFER_AUTOMATIC: no capacity limit; a communicator's own buffer takes precedence. */
static void automatic_and_comm(int rank, int size) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
    int *big = malloc(sizeof(int) * BIG);
    for (int i = 0; i < BIG; i++) big[i] = i ^ rank;
    for (int m = 0; m < 3; m++) OK(MPI_Bsend(big, BIG, MPI_INT, next, 40 + m, MPI_COMM_WORLD));
    int *in = malloc(sizeof(int) * BIG);
    for (int m = 0; m < 3; m++) {
        OK(MPI_Recv(in, BIG, MPI_INT, prev, 40 + m, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(in[BIG - 1] == ((BIG - 1) ^ prev));
    }
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    char own[MPI_BSEND_OVERHEAD + sizeof(int)];
    OK(MPI_Comm_attach_buffer(dup, own, sizeof own));
    int x = rank, y = -1;
    OK(MPI_Bsend(&x, 1, MPI_INT, next, 50, dup));
    /* The communicator's buffer is full until that message is received; the process's
     * (automatic) buffer is not used for it. */
    OK(MPI_Comm_flush_buffer(dup));
    OK(MPI_Recv(&y, 1, MPI_INT, prev, 50, dup, MPI_STATUS_IGNORE));
    CHECK(y == prev);
    void *addr;
    int sz;
    OK(MPI_Comm_detach_buffer(dup, &addr, &sz));
    CHECK(addr == own && sz == (int)sizeof own);
    OK(MPI_Comm_free(&dup));
    OK(MPI_Buffer_detach(&addr, &sz));
    CHECK(addr == MPI_BUFFER_AUTOMATIC);
    free(big);
    free(in);
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    errors(rank, size);
    capacity(rank, size);
    ibsend_derived(rank, size);
    automatic_and_comm(rank, size);
    /* Buffered messages still in flight at finalize are delivered. */
    char space[MPI_BSEND_OVERHEAD + sizeof(int)];
    OK(MPI_Buffer_attach(space, sizeof space));
    int x = rank;
    OK(MPI_Bsend(&x, 1, MPI_INT, (rank + 1) % size, 60, MPI_COMM_WORLD));
    int y = -1;
    OK(MPI_Recv(&y, 1, MPI_INT, (rank + size - 1) % size, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(y == (rank + size - 1) % size);
    test_finish(rank, "bsend");
    return 0;
}
