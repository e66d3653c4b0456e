/* request_status.c: MPI_Request_get_status and its _all, _any and _some forms (MPI-4.1) on any
 * number of ranks: they report pending requests as not done (receives whose sender waits at a
 * barrier), done ones with their status, and leave every request as it was (a later MPI_Wait
 * still completes it with the same status); MPI_REQUEST_NULL and inactive persistent requests
 * count as done with an empty status; a persistent request stays active until a test
 * completes it; a truncated receive reports MPI_ERR_TRUNCATE (MPI_ERR_IN_STATUS for the array
 * forms); and the argument errors. */
#include "check.h"
#include <stdlib.h>
#include <string.h>

static void check_empty(const MPI_Status *s) {
    int count = -1;
    CHECK(s->MPI_SOURCE == MPI_ANY_SOURCE && s->MPI_TAG == MPI_ANY_TAG);
    CHECK(s->MPI_ERROR == MPI_SUCCESS);
    OK(MPI_Get_count(s, MPI_INT, &count));
    CHECK(count == 0);
}

static void check_recv(const MPI_Status *s, int source, int tag, int count) {
    int n = -1;
    CHECK(s->MPI_SOURCE == source && s->MPI_TAG == tag);
    OK(MPI_Get_count(s, MPI_INT, &n));
    CHECK(n == count);
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Status st, sts[3];
    int flag = -1, index = -2, outcount = -2, indices[3];

    /* MPI_REQUEST_NULL: done, empty status */
    MPI_Request null = MPI_REQUEST_NULL;
    OK(MPI_Request_get_status(null, &flag, &st));
    CHECK(flag == 1);
    check_empty(&st);
    OK(MPI_Request_get_status_any(1, &null, &index, &flag, &st));
    CHECK(flag == 1 && index == MPI_UNDEFINED);
    OK(MPI_Request_get_status_some(1, &null, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED);
    OK(MPI_Request_get_status_all(0, NULL, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag == 1);

    /* A ring of 1 MiB messages: nothing arrives before the barrier */
    enum { N = 1 << 18 };
    int *in = malloc(N * sizeof(int)), *out = malloc(N * sizeof(int));
    CHECK(in && out);
    for (int i = 0; i < N; i++) out[i] = rank * 7 + i;
    MPI_Request rq[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    OK(MPI_Irecv(in, N, MPI_INT, left, 1, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Request_get_status(rq[1], &flag, &st));
    CHECK(flag == 0);
    OK(MPI_Request_get_status_all(3, rq, &flag, sts));
    CHECK(flag == 0);
    OK(MPI_Request_get_status_any(3, rq, &index, &flag, &st));
    CHECK(flag == 0 && index == MPI_UNDEFINED);
    OK(MPI_Request_get_status_some(3, rq, &outcount, indices, sts));
    CHECK(outcount == 0);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Isend(out, N, MPI_INT, right, 1, MPI_COMM_WORLD, &rq[2]));
    do {
        OK(MPI_Request_get_status_all(3, rq, &flag, sts));
    } while (!flag);
    check_empty(&sts[0]);
    check_recv(&sts[1], left, 1, N);
    for (int i = 0; i < N; i += 997) CHECK(in[i] == left * 7 + i);
    /* Still there, and the same, however often one looks */
    CHECK(rq[1] != MPI_REQUEST_NULL && rq[2] != MPI_REQUEST_NULL);
    OK(MPI_Request_get_status_any(3, rq, &index, &flag, &st));
    CHECK(flag == 1 && index == 1);
    check_recv(&st, left, 1, N);
    OK(MPI_Request_get_status_some(3, rq, &outcount, indices, sts));
    CHECK(outcount == 2 && indices[0] == 1 && indices[1] == 2);
    check_recv(&sts[0], left, 1, N);
    OK(MPI_Request_get_status(rq[1], &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 1);
    OK(MPI_Waitall(3, rq, sts));
    check_recv(&sts[1], left, 1, N);
    CHECK(rq[1] == MPI_REQUEST_NULL && rq[2] == MPI_REQUEST_NULL);

    /* Persistent: inactive counts as done; once started it stays active until a test */
    MPI_Request p;
    OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &p));
    OK(MPI_Request_get_status(p, &flag, &st));
    CHECK(flag == 1);
    check_empty(&st);
    OK(MPI_Request_get_status_some(1, &p, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED);
    for (int round = 0; round < 3; round++) {
        OK(MPI_Start(&p));
        do {
            OK(MPI_Request_get_status(p, &flag, &st));
        } while (!flag);
        OK(MPI_Request_get_status_some(1, &p, &outcount, indices, sts));
        CHECK(outcount == 1 && indices[0] == 0);
        FAILS(MPI_Start(&p), MPI_ERR_REQUEST); /* still active */
        OK(MPI_Test(&p, &flag, &st));
        CHECK(flag == 1 && p != MPI_REQUEST_NULL);
        OK(MPI_Request_get_status_any(1, &p, &index, &flag, &st));
        CHECK(flag == 1 && index == MPI_UNDEFINED);
    }
    OK(MPI_Request_free(&p));

    /* A failed request: its error, every time one looks, then from the wait */
    int small = 0, two[2] = {5, 6};
    MPI_Request r, s;
    OK(MPI_Irecv(&small, 1, MPI_INT, 0, 4, MPI_COMM_SELF, &r));
    OK(MPI_Isend(two, 2, MPI_INT, 0, 4, MPI_COMM_SELF, &s));
    int rc;
    do {
        rc = MPI_Request_get_status(r, &flag, &st);
    } while (rc == MPI_SUCCESS && !flag);
    CHECK(rc == MPI_ERR_TRUNCATE && flag == 1 && st.MPI_ERROR == MPI_ERR_TRUNCATE);
    do {
        OK(MPI_Request_get_status(s, &flag, MPI_STATUS_IGNORE));
    } while (!flag);
    MPI_Request both[2] = {s, r};
    FAILS(MPI_Request_get_status_all(2, both, &flag, sts), MPI_ERR_IN_STATUS);
    CHECK(flag == 1 && sts[0].MPI_ERROR == MPI_SUCCESS && sts[1].MPI_ERROR == MPI_ERR_TRUNCATE);
    FAILS(MPI_Request_get_status_some(2, both, &outcount, indices, sts), MPI_ERR_IN_STATUS);
    CHECK(outcount == 2 && sts[1].MPI_ERROR == MPI_ERR_TRUNCATE);
    FAILS(MPI_Request_get_status_any(1, &r, &index, &flag, &st), MPI_ERR_TRUNCATE);
    CHECK(index == 0 && flag == 1);
    MPI_Request stale = r;
    FAILS(MPI_Wait(&r, &st), MPI_ERR_TRUNCATE);
    OK(MPI_Wait(&s, MPI_STATUS_IGNORE));

    /* Argument errors */
    FAILS(MPI_Request_get_status(stale, &flag, &st), MPI_ERR_REQUEST);
    FAILS(MPI_Request_get_status(MPI_REQUEST_NULL, NULL, &st), MPI_ERR_ARG);
    FAILS(MPI_Request_get_status_all(-1, rq, &flag, sts), MPI_ERR_COUNT);
    FAILS(MPI_Request_get_status_all(1, NULL, &flag, sts), MPI_ERR_ARG);
    FAILS(MPI_Request_get_status_any(1, &stale, &index, &flag, &st), MPI_ERR_REQUEST);
    FAILS(MPI_Request_get_status_some(1, rq, &outcount, NULL, sts), MPI_ERR_ARG);

    free(in);
    free(out);
    test_finish(rank, "request_status");
    return 0;
}
