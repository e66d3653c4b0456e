/* persistent.c: persistent point-to-point requests (MPI_Send_init, _Ssend_init, _Rsend_init,
 * _Bsend_init, _Recv_init and their _c forms) restarted many times in a ring, with predefined,
 * derived and custom datatypes (the datatype freed after init); the inactive-request rules
 * (Wait/Test on an inactive request return the empty status at once, Start of an active one
 * is MPI_ERR_REQUEST, Cancel of an inactive one too); Request_free of an active request;
 * Cancel of a started receive and of a send (a send is not withdrawn: it completes, not
 * cancelled). Runs on any number of ranks >= 1. */
#include "check.h"
#include <string.h>

#define N 64
#define ROUNDS 50

/* A custom type over an array of ints, packed by callbacks (no regions). */
static int ints_query(void *state, const void *buf, MPI_Count count, MPI_Count *packed) {
    (void)state;
    (void)buf;
    *packed = count * (MPI_Count)sizeof(int);
    return MPI_SUCCESS;
}

static int ints_pack(void *state, const void *buf, MPI_Count count, MPI_Count offset, void *dst,
                     MPI_Count dst_size, MPI_Count *used) {
    (void)state;
    MPI_Count total = count * (MPI_Count)sizeof(int), n = total - offset;
    if (n > dst_size) n = dst_size;
    memcpy(dst, (const char *)buf + offset, (size_t)n);
    *used = n;
    return MPI_SUCCESS;
}

static int ints_unpack(void *state, void *buf, MPI_Count count, MPI_Count offset, const void *src,
                       MPI_Count src_size) {
    (void)state;
    if (offset + src_size > count * (MPI_Count)sizeof(int)) return MPI_ERR_TRUNCATE;
    memcpy((char *)buf + offset, src, (size_t)src_size);
    return MPI_SUCCESS;
}

static int zero_regions(void *state, void *buf, MPI_Count count, MPI_Count *n) {
    (void)state;
    (void)buf;
    (void)count;
    *n = 0;
    return MPI_SUCCESS;
}

/* One kind of persistent send restarted ROUNDS times around the ring, the receive persistent
 * too; `dt` describes `N` ints (contiguous, strided or custom) and is freed after init. */
static void ring_rounds(int rank, int size, int kind, MPI_Datatype dt, int stride, int custom) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out[N * 2], in[N * 2];
    MPI_Request rr, sr;
    int count = stride == 0 ? N : N / 2; /* elements of dt */
    if (kind == 4) {
        OK(MPI_Recv_init_c(in, count, dt, prev, 11, MPI_COMM_WORLD, &rr));
    } else {
        OK(MPI_Recv_init(in, count, dt, prev, 11, MPI_COMM_WORLD, &rr));
    }
    switch (kind) {
    case 0: OK(MPI_Send_init(out, count, dt, next, 11, MPI_COMM_WORLD, &sr)); break;
    case 1: OK(MPI_Ssend_init(out, count, dt, next, 11, MPI_COMM_WORLD, &sr)); break;
    case 2: OK(MPI_Rsend_init(out, count, dt, next, 11, MPI_COMM_WORLD, &sr)); break;
    case 3: OK(MPI_Send_init_c(out, count, dt, next, 11, MPI_COMM_WORLD, &sr)); break;
    case 4: OK(MPI_Ssend_init_c(out, count, dt, next, 11, MPI_COMM_WORLD, &sr)); break;
    }
    if (dt != MPI_INT) OK(MPI_Type_free(&dt));
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < N * 2; i++) {
            out[i] = rank * 100000 + round * 1000 + i;
            in[i] = -1;
        }
        /* Rsend needs the receive posted first everywhere. */
        OK(MPI_Start(&rr));
        if (kind == 2) OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Start(&sr));
        MPI_Request both[2] = {rr, sr};
        MPI_Status st[2];
        if (round % 2 == 0) {
            OK(MPI_Waitall(2, both, st));
        } else {
            int flag = 0;
            while (!flag) OK(MPI_Testall(2, both, &flag, st));
        }
        /* Persistent handles stay. */
        CHECK(both[0] == rr && both[1] == sr);
        CHECK(st[0].MPI_SOURCE == prev && st[0].MPI_TAG == 11);
        if (!custom) {
            int got = -1;
            OK(MPI_Get_count(&st[0], MPI_INT, &got));
            CHECK(got == N);
        }
        if (stride == 0) {
            for (int i = 0; i < N; i++) CHECK(in[i] == prev * 100000 + round * 1000 + i);
        } else {
            /* A vector of N/2 blocks of 2 ints at stride 4: elements 0,1,4,5,... */
            for (int b = 0; b < N / 2; b++)
                for (int j = 0; j < 2; j++) {
                    int i = b * stride + j;
                    CHECK(in[i] == prev * 100000 + round * 1000 + i);
                }
        }
        if (kind == 2) OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    OK(MPI_Request_free(&rr));
    OK(MPI_Request_free(&sr));
    CHECK(rr == MPI_REQUEST_NULL && sr == MPI_REQUEST_NULL);
}

/* Bsend_init: every start copies the message, so the buffer may change right after. */
static void buffered(int rank, int size) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int pack_size;
    OK(MPI_Pack_size(N, MPI_INT, MPI_COMM_WORLD, &pack_size));
    int bytes = 4 * (pack_size + MPI_BSEND_OVERHEAD);
    char *space = malloc((size_t)bytes);
    OK(MPI_Buffer_attach(space, bytes));
    int out[N], in[N];
    MPI_Request sr, rr;
    OK(MPI_Bsend_init(out, N, MPI_INT, next, 12, MPI_COMM_WORLD, &sr));
    OK(MPI_Recv_init(in, N, MPI_INT, prev, 12, MPI_COMM_WORLD, &rr));
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < N; i++) out[i] = round + i;
        OK(MPI_Start(&sr));
        memset(out, 0xff, sizeof out); /* the copy was taken */
        OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        OK(MPI_Start(&rr));
        OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++) CHECK(in[i] == round + i);
    }
    OK(MPI_Request_free(&sr));
    OK(MPI_Request_free(&rr));
    void *back;
    int back_size;
    OK(MPI_Buffer_detach(&back, &back_size));
    CHECK(back == space && back_size == bytes);
    free(space);
}

static void inactive_rules(int rank, int size) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int x = rank, y = -1;
    MPI_Request rr, sr;
    MPI_Status s;
    OK(MPI_Recv_init(&y, 1, MPI_INT, prev, 13, MPI_COMM_WORLD, &rr));
    OK(MPI_Send_init(&x, 1, MPI_INT, next, 13, MPI_COMM_WORLD, &sr));

    /* Wait/Test on inactive requests: at once, the empty status, the handle stays. */
    memset(&s, 0x55, sizeof s);
    OK(MPI_Wait(&rr, &s));
    CHECK(rr != MPI_REQUEST_NULL);
    CHECK(s.MPI_SOURCE == MPI_ANY_SOURCE && s.MPI_TAG == MPI_ANY_TAG && s.MPI_ERROR == MPI_SUCCESS);
    int count = -1, flag = 0;
    OK(MPI_Get_count(&s, MPI_INT, &count));
    CHECK(count == 0);
    OK(MPI_Test_cancelled(&s, &flag));
    CHECK(!flag);
    flag = 0;
    OK(MPI_Test(&sr, &flag, &s));
    CHECK(flag && sr != MPI_REQUEST_NULL && s.MPI_TAG == MPI_ANY_TAG);
    int index = 0;
    MPI_Request both[2] = {rr, sr};
    OK(MPI_Waitany(2, both, &index, &s));
    CHECK(index == MPI_UNDEFINED);
    /* Cancel of an inactive request, Start of MPI_REQUEST_NULL: MPI_ERR_REQUEST. */
    FAILS(MPI_Cancel(&rr), MPI_ERR_REQUEST);
    MPI_Request null = MPI_REQUEST_NULL;
    FAILS(MPI_Start(&null), MPI_ERR_REQUEST);

    /* Starting an active request is MPI_ERR_REQUEST; it stays active and completes. */
    OK(MPI_Start(&rr));
    FAILS(MPI_Start(&rr), MPI_ERR_REQUEST);
    OK(MPI_Start(&sr));
    MPI_Request again[2] = {rr, sr};
    FAILS(MPI_Startall(2, again), MPI_ERR_REQUEST);
    OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&rr, &s));
    CHECK(y == prev && s.MPI_SOURCE == prev);

    /* A non-persistent request cannot be started. */
    MPI_Request once;
    OK(MPI_Irecv(&y, 1, MPI_INT, prev, 14, MPI_COMM_WORLD, &once));
    FAILS(MPI_Start(&once), MPI_ERR_REQUEST);
    OK(MPI_Send(&x, 1, MPI_INT, next, 14, MPI_COMM_WORLD));
    OK(MPI_Wait(&once, MPI_STATUS_IGNORE));

    /* Cancel of a started receive: completes cancelled, the request inactive again and
     * usable: the next start receives normally. */
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* no message with tag 13 is on its way */
    OK(MPI_Start(&rr));
    OK(MPI_Cancel(&rr));
    OK(MPI_Wait(&rr, &s));
    OK(MPI_Test_cancelled(&s, &flag));
    CHECK(flag && rr != MPI_REQUEST_NULL);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Startall(1, &rr));
    OK(MPI_Start(&sr));
    /* Cancel of a started send: not withdrawn, completes normally and is not cancelled. */
    OK(MPI_Cancel(&sr));
    OK(MPI_Wait(&sr, &s));
    OK(MPI_Test_cancelled(&s, &flag));
    CHECK(!flag);
    OK(MPI_Wait(&rr, &s));
    OK(MPI_Test_cancelled(&s, &flag));
    CHECK(!flag && y == prev);

    /* Request_free of an active persistent receive: it completes in the background; the
     * message it takes is gone. Free the matching send after it completes. */
    OK(MPI_Start(&rr));
    OK(MPI_Request_free(&rr));
    CHECK(rr == MPI_REQUEST_NULL);
    OK(MPI_Start(&sr));
    OK(MPI_Request_free(&sr));
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Invalid arguments at init. */
    FAILS(MPI_Send_init(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &sr), MPI_ERR_RANK);
    FAILS(MPI_Send_init(&x, -1, MPI_INT, next, 0, MPI_COMM_WORLD, &sr), MPI_ERR_COUNT);
    FAILS(MPI_Send_init(&x, 1, MPI_INT, next, -5, MPI_COMM_WORLD, &sr), MPI_ERR_TAG);
    FAILS(MPI_Recv_init(&y, 1, MPI_DATATYPE_NULL, prev, 0, MPI_COMM_WORLD, &rr), MPI_ERR_TYPE);
    FAILS(MPI_Recv_init(&y, 1, MPI_INT, prev, 0, MPI_COMM_NULL, &rr), MPI_ERR_COMM);

    /* MPI_PROC_NULL: start and complete at once with the PROC_NULL status. */
    OK(MPI_Recv_init(&y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rr));
    OK(MPI_Send_init(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &sr));
    for (int i = 0; i < 3; i++) {
        OK(MPI_Start(&rr));
        OK(MPI_Start(&sr));
        OK(MPI_Wait(&rr, &s));
        CHECK(s.MPI_SOURCE == MPI_PROC_NULL);
        OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    }
    OK(MPI_Request_free(&rr));
    OK(MPI_Request_free(&sr));
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    for (int kind = 0; kind < 5; kind++) ring_rounds(rank, size, kind, MPI_INT, 0, 0);
    /* Derived: N/2 blocks of 2 ints at stride 4, freed after init. */
    MPI_Datatype vec, pair;
    OK(MPI_Type_vector(1, 2, 4, MPI_INT, &pair));
    OK(MPI_Type_create_resized(pair, 0, 4 * sizeof(int), &vec));
    OK(MPI_Type_free(&pair));
    OK(MPI_Type_commit(&vec));
    ring_rounds(rank, size, 0, vec, 4, 0);
    MPI_Datatype custom;
    OK(MPI_Type_create_custom(NULL, NULL, ints_query, ints_pack, ints_unpack, zero_regions, NULL,
                              NULL, 1, &custom));
    ring_rounds(rank, size, 1, custom, 0, 1);
    buffered(rank, size);
    inactive_rules(rank, size);
    test_finish(rank, "persistent");
    return 0;
}
