/* partitioned.c: MPI-4 partitioned communication in a ring: MPI_Psend_init/MPI_Precv_init
 * (and their _c forms) with different partitionings on the two sides, restarted many times,
 * partitions marked ready in any order with MPI_Pready, _range and _list, MPI_Parrived polled
 * until the data is there, a derived datatype, and the errors (Pready of an inactive request,
 * of a partition out of range or already ready, Parrived of a send, zero partitions). Runs on
 * any number of ranks >= 1. */
#include "check.h"
#include <string.h>

#define PARTS 8
#define COUNT 16 /* ints per send partition */
#define ROUNDS 30

static void ring(int rank, int size) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out[PARTS * COUNT] = {0}, in[PARTS * COUNT];
    MPI_Request sr, rr;
    OK(MPI_Psend_init(out, PARTS, COUNT, MPI_INT, next, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &sr));
    /* The receiver splits the same message in 4 partitions. */
    OK(MPI_Precv_init_c(in, 4, PARTS * COUNT / 4, MPI_INT, prev, 3, MPI_COMM_WORLD, MPI_INFO_NULL,
                        &rr));
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < PARTS * COUNT; i++) {
            out[i] = rank * 100000 + round * 1000 + i;
            in[i] = -1;
        }
        MPI_Request both[2] = {rr, sr};
        OK(MPI_Startall(2, both));
        int arrived = 1;
        OK(MPI_Parrived(rr, 0, &arrived));
        /* Nothing can arrive before the sender marked every partition: the ring's neighbour
         * does so only after this rank does (1 rank: this rank itself). */
        if (size == 1) CHECK(!arrived);
        switch (round % 3) {
        case 0:
            for (int p = PARTS - 1; p >= 0; p--) OK(MPI_Pready(p, sr));
            break;
        case 1:
            OK(MPI_Pready_range(0, PARTS / 2 - 1, sr));
            OK(MPI_Pready_range(PARTS / 2, PARTS - 1, sr));
            break;
        default: {
            int odd[PARTS / 2], even[PARTS / 2];
            for (int k = 0; k < PARTS / 2; k++) {
                odd[k] = 2 * k + 1;
                even[k] = 2 * k;
            }
            OK(MPI_Pready_list(PARTS / 2, odd, sr));
            OK(MPI_Pready_list(PARTS / 2, even, sr));
        }
        }
        for (int p = 0; p < 4; p++) {
            int flag = 0;
            while (!flag) OK(MPI_Parrived(rr, p, &flag));
        }
        for (int i = 0; i < PARTS * COUNT; i++) CHECK(in[i] == prev * 100000 + round * 1000 + i);
        MPI_Status st[2];
        OK(MPI_Waitall(2, both, st));
        CHECK(both[0] == rr && both[1] == sr);
        int count;
        OK(MPI_Get_count(&st[0], MPI_INT, &count));
        CHECK(count == PARTS * COUNT && st[0].MPI_SOURCE == prev);
        /* Inactive again: Parrived says true, Pready is an error. */
        int flag = 0;
        OK(MPI_Parrived(rr, 0, &flag));
        CHECK(flag);
        FAILS(MPI_Pready(0, sr), MPI_ERR_REQUEST);
    }
    OK(MPI_Request_free(&sr));
    OK(MPI_Request_free(&rr));
}

/* A derived type (every other int), partitions of 2 elements each, the _c send. */
static void derived(int rank, int size) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Datatype every_other;
    OK(MPI_Type_vector(1, 1, 2, MPI_INT, &every_other));
    MPI_Datatype t;
    OK(MPI_Type_create_resized(every_other, 0, 2 * sizeof(int), &t));
    OK(MPI_Type_free(&every_other));
    OK(MPI_Type_commit(&t));
    int out[40] = {0}, in[20];
    MPI_Request sr, rr;
    OK(MPI_Psend_init_c(out, 10, 2, t, next, 4, MPI_COMM_WORLD, MPI_INFO_NULL, &sr));
    OK(MPI_Precv_init(in, 1, 20, MPI_INT, prev, 4, MPI_COMM_WORLD, MPI_INFO_NULL, &rr));
    OK(MPI_Type_free(&t));
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 40; i++) out[i] = rank * 1000 + round * 100 + i;
        OK(MPI_Start(&rr));
        OK(MPI_Start(&sr));
        OK(MPI_Pready_range(0, 9, sr));
        OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
        for (int i = 0; i < 20; i++) CHECK(in[i] == prev * 1000 + round * 100 + 2 * i);
    }
    OK(MPI_Request_free(&sr));
    OK(MPI_Request_free(&rr));
}

static void errors(int rank, int size) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out[4] = {1, 2, 3, 4}, in[4];
    MPI_Request sr, rr;
    FAILS(MPI_Psend_init(out, 0, 4, MPI_INT, next, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &sr),
          MPI_ERR_ARG);
    FAILS(MPI_Psend_init(out, 2, -1, MPI_INT, next, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &sr),
          MPI_ERR_COUNT);
    FAILS(MPI_Precv_init(in, 2, 2, MPI_INT, size, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rr),
          MPI_ERR_RANK);
    OK(MPI_Psend_init(out, 2, 2, MPI_INT, next, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &sr));
    OK(MPI_Precv_init(in, 2, 2, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rr));
    FAILS(MPI_Pready(0, sr), MPI_ERR_REQUEST); /* inactive */
    int flag;
    FAILS(MPI_Parrived(sr, 0, &flag), MPI_ERR_REQUEST);
    OK(MPI_Start(&rr));
    OK(MPI_Start(&sr));
    FAILS(MPI_Start(&sr), MPI_ERR_REQUEST); /* active */
    FAILS(MPI_Pready(2, sr), MPI_ERR_ARG);
    FAILS(MPI_Pready(-1, sr), MPI_ERR_ARG);
    FAILS(MPI_Pready(0, rr), MPI_ERR_REQUEST);
    FAILS(MPI_Parrived(rr, 2, &flag), MPI_ERR_ARG);
    OK(MPI_Pready(1, sr));
    FAILS(MPI_Pready(1, sr), MPI_ERR_ARG);
    FAILS(MPI_Pready_range(1, 0, sr), MPI_ERR_ARG);
    /* Not all ready: the send waits. */
    OK(MPI_Test(&sr, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag);
    OK(MPI_Pready(0, sr));
    OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    CHECK(in[0] == 1 && in[3] == 4);
    OK(MPI_Request_free(&sr));
    OK(MPI_Request_free(&rr));
    MPI_Request null = MPI_REQUEST_NULL;
    FAILS(MPI_Pready(0, null), MPI_ERR_REQUEST);
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    ring(rank, size);
    derived(rank, size);
    errors(rank, size);
    test_finish(rank, "partitioned");
    return 0;
}
