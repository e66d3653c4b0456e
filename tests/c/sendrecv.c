/* sendrecv.c: the send-receive calls in a ring: MPI_Sendrecv(_c), MPI_Sendrecv_replace(_c),
 * the MPI-4 MPI_Isendrecv(_c) and MPI_Isendrecv_replace(_c) with predefined and derived
 * types, completed by Wait and Test, freed while active (the message is still placed), and the
 * large-count point-to-point calls (MPI_Send_c, MPI_Recv_c, MPI_Isend_c, MPI_Irecv_c ...).
 * Runs on any number of ranks >= 1. */
#include "check.h"
#include <string.h>

#define N 300

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out[N], in[N], buf[2 * N];
    MPI_Status s;
    MPI_Request r;

    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < N; i++) {
            out[i] = rank * 10000 + round * 100 + i;
            in[i] = -1;
        }
        if (round % 2) {
            OK(MPI_Isendrecv(out, N, MPI_INT, next, 1, in, N, MPI_INT, prev, 1, MPI_COMM_WORLD,
                             &r));
        } else {
            OK(MPI_Isendrecv_c(out, N, MPI_INT, next, 1, in, N, MPI_INT, prev, MPI_ANY_TAG,
                               MPI_COMM_WORLD, &r));
        }
        int flag = 0;
        if (round % 3 == 0) {
            while (!flag) OK(MPI_Test(&r, &flag, &s));
        } else {
            OK(MPI_Wait(&r, &s));
        }
        CHECK(r == MPI_REQUEST_NULL && s.MPI_SOURCE == prev && s.MPI_TAG == 1);
        int count;
        OK(MPI_Get_count(&s, MPI_INT, &count));
        CHECK(count == N);
        for (int i = 0; i < N; i++) CHECK(in[i] == prev * 10000 + round * 100 + i);
    }

    /* Replace with a derived type: every other int of buf. */
    MPI_Datatype every_other;
    OK(MPI_Type_vector(N, 1, 2, MPI_INT, &every_other));
    OK(MPI_Type_commit(&every_other));
    for (int round = 0; round < 10; round++) {
        for (int i = 0; i < 2 * N; i++) buf[i] = rank * 10000 + round * 100 + i;
        if (round % 2) {
            OK(MPI_Isendrecv_replace(buf, 1, every_other, next, 2, prev, 2, MPI_COMM_WORLD, &r));
        } else {
            OK(MPI_Isendrecv_replace_c(buf, 1, every_other, next, 2, prev, 2, MPI_COMM_WORLD, &r));
        }
        OK(MPI_Wait(&r, &s));
        CHECK(s.MPI_SOURCE == prev);
        for (int i = 0; i < 2 * N; i++)
            CHECK(buf[i] == (i % 2 ? rank : prev) * 10000 + round * 100 + i);
    }
    /* Freed while active: the message still lands in the buffer. */
    for (int i = 0; i < N; i++) buf[i] = rank;
    OK(MPI_Isendrecv_replace(buf, N, MPI_INT, next, 3, prev, 3, MPI_COMM_WORLD, &r));
    OK(MPI_Request_free(&r));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int seen = 0;
    for (int spin = 0; spin < 100000 && !seen; spin++) {
        OK(MPI_Test(&r, &seen, MPI_STATUS_IGNORE)); /* MPI_REQUEST_NULL: progresses only */
        seen = buf[N - 1] == prev;
    }
    CHECK(buf[0] == prev && buf[N - 1] == prev);

    /* Blocking forms, _c. */
    for (int i = 0; i < N; i++) out[i] = rank + i;
    OK(MPI_Sendrecv_c(out, N, MPI_INT, next, 4, in, N, MPI_INT, prev, 4, MPI_COMM_WORLD, &s));
    CHECK(in[N - 1] == prev + N - 1 && s.MPI_SOURCE == prev);
    OK(MPI_Sendrecv_replace_c(out, N, MPI_INT, next, 5, prev, 5, MPI_COMM_WORLD, &s));
    CHECK(out[0] == prev);
    OK(MPI_Type_free(&every_other));

    /* The large-count point-to-point calls. */
    for (int i = 0; i < N; i++) out[i] = rank + i;
    MPI_Request two[2];
    OK(MPI_Irecv_c(in, N, MPI_INT, prev, 6, MPI_COMM_WORLD, &two[0]));
    OK(MPI_Isend_c(out, N, MPI_INT, next, 6, MPI_COMM_WORLD, &two[1]));
    OK(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
    CHECK(in[0] == prev);
    OK(MPI_Irecv_c(in, N, MPI_INT, prev, 7, MPI_COMM_WORLD, &two[0]));
    OK(MPI_Issend_c(out, N, MPI_INT, next, 7, MPI_COMM_WORLD, &two[1]));
    OK(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
    OK(MPI_Irecv_c(in, N, MPI_INT, prev, 8, MPI_COMM_WORLD, &two[0]));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Irsend_c(out, N, MPI_INT, next, 8, MPI_COMM_WORLD, &two[1]));
    OK(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
    if (size > 1) {
        s.MPI_ERROR = MPI_ERR_DIMS; /* a single-completion call leaves it alone */
        if (rank % 2 == 0) {
            OK(MPI_Send_c(out, N, MPI_INT, next, 9, MPI_COMM_WORLD));
            OK(MPI_Recv_c(in, N, MPI_INT, prev, 9, MPI_COMM_WORLD, &s));
        } else {
            OK(MPI_Recv_c(in, N, MPI_INT, prev, 9, MPI_COMM_WORLD, &s));
            OK(MPI_Ssend_c(out, N, MPI_INT, next, 9, MPI_COMM_WORLD));
        }
        CHECK(s.MPI_ERROR == MPI_ERR_DIMS && s.MPI_SOURCE == prev);
        MPI_Count cc;
        OK(MPI_Get_count_c(&s, MPI_INT, &cc));
        CHECK(cc == N && in[1] == prev + 1);
    }
    /* Errors: a bad type, a bad rank. */
    FAILS(MPI_Isendrecv(out, 1, MPI_DATATYPE_NULL, next, 1, in, 1, MPI_INT, prev, 1,
                        MPI_COMM_WORLD, &r),
          MPI_ERR_TYPE);
    FAILS(MPI_Isendrecv_replace(out, 1, MPI_INT, size, 1, prev, 1, MPI_COMM_WORLD, &r),
          MPI_ERR_RANK);
    test_finish(rank, "sendrecv");
    return 0;
}
