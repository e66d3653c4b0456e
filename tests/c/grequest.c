/* grequest.c: generalized requests (MPI_Grequest_start, MPI_Grequest_complete): pending until
 * completed; Wait/Test call the query callback for the status (source, tag, elements,
 * cancelled as it set them) and then the free callback, once; Request_free before completion
 * defers the free callback to MPI_Grequest_complete; MPI_Cancel calls the cancel callback with
 * whether the request is complete; a callback's error is what the call returns
 * (MPI_ERR_IN_STATUS from Waitall); generalized requests mixed with point-to-point ones in
 * Waitany/Waitsome; MPI_Request_get_status. Runs on any number of ranks >= 1. */
#include "check.h"
#include <string.h>

struct calls {
    int query, free, cancel, last_complete;
    int query_rc, free_rc;
};

static int query_fn(void *extra, MPI_Status *s) {
    struct calls *c = extra;
    c->query++;
    OK(MPI_Status_set_source(s, 3));
    OK(MPI_Status_set_tag(s, 77));
    OK(MPI_Status_set_elements(s, MPI_INT, 5));
    OK(MPI_Status_set_cancelled(s, c->cancel > 0));
    return c->query_rc;
}

static int free_fn(void *extra) {
    struct calls *c = extra;
    c->free++;
    return c->free_rc;
}

static int cancel_fn(void *extra, int complete) {
    struct calls *c = extra;
    c->cancel++;
    c->last_complete = complete;
    return MPI_SUCCESS;
}

static MPI_Request start(struct calls *c) {
    memset(c, 0, sizeof *c);
    MPI_Request r;
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, c, &r));
    CHECK(r != MPI_REQUEST_NULL);
    return r;
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    struct calls c;
    MPI_Status s;
    int flag = -1;

    /* Pending until completed; then the query's status, then free, once each. */
    MPI_Request r = start(&c);
    OK(MPI_Test(&r, &flag, &s));
    CHECK(!flag && r != MPI_REQUEST_NULL && c.query == 0);
    OK(MPI_Grequest_complete(r));
    OK(MPI_Wait(&r, &s));
    CHECK(r == MPI_REQUEST_NULL && c.query == 1 && c.free == 1);
    int count;
    OK(MPI_Get_count(&s, MPI_INT, &count));
    CHECK(s.MPI_SOURCE == 3 && s.MPI_TAG == 77 && count == 5);
    OK(MPI_Test_cancelled(&s, &flag));
    CHECK(!flag);
    /* Its handle is gone: completing it again is an error. */
    FAILS(MPI_Grequest_complete(r), MPI_ERR_REQUEST);

    /* Test completes it too. */
    r = start(&c);
    OK(MPI_Grequest_complete(r));
    flag = 0;
    OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && r == MPI_REQUEST_NULL && c.query == 1 && c.free == 1);

    /* Request_get_status calls the query and leaves the request; Wait then frees it. */
    r = start(&c);
    OK(MPI_Request_get_status(r, &flag, &s));
    CHECK(!flag && c.query == 0);
    OK(MPI_Grequest_complete(r));
    OK(MPI_Request_get_status(r, &flag, &s));
    CHECK(flag && s.MPI_TAG == 77 && c.query == 1 && c.free == 0 && r != MPI_REQUEST_NULL);
    OK(MPI_Wait(&r, &s));
    CHECK(c.free == 1 && s.MPI_TAG == 77);

    /* Request_free before completion: free runs at MPI_Grequest_complete, query never. */
    r = start(&c);
    MPI_Request keep = r;
    OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL && c.free == 0);
    OK(MPI_Grequest_complete(keep));
    CHECK(c.free == 1 && c.query == 0);
    /* Request_free after completion: free at once. */
    r = start(&c);
    OK(MPI_Grequest_complete(r));
    OK(MPI_Request_free(&r));
    CHECK(c.free == 1 && c.query == 0);

    /* Cancel: the callback learns whether the request is complete. */
    r = start(&c);
    OK(MPI_Cancel(&r));
    CHECK(c.cancel == 1 && c.last_complete == 0);
    OK(MPI_Grequest_complete(r));
    OK(MPI_Cancel(&r));
    CHECK(c.cancel == 2 && c.last_complete == 1);
    OK(MPI_Wait(&r, &s));
    OK(MPI_Test_cancelled(&s, &flag));
    CHECK(flag && c.free == 1);

    /* A failing query: its code is the call's; in Waitall, MPI_ERR_IN_STATUS. */
    r = start(&c);
    c.query_rc = MPI_ERR_OTHER;
    OK(MPI_Grequest_complete(r));
    FAILS(MPI_Wait(&r, &s), MPI_ERR_OTHER);
    CHECK(r == MPI_REQUEST_NULL && c.free == 1);
    struct calls c2;
    MPI_Request two[2] = {start(&c), start(&c2)};
    c2.free_rc = MPI_ERR_ARG;
    OK(MPI_Grequest_complete(two[0]));
    OK(MPI_Grequest_complete(two[1]));
    MPI_Status st[2];
    FAILS(MPI_Waitall(2, two, st), MPI_ERR_IN_STATUS);
    CHECK(st[0].MPI_ERROR == MPI_SUCCESS && st[1].MPI_ERROR == MPI_ERR_ARG);
    CHECK(c.free == 1 && c2.free == 1);

    /* Mixed with point-to-point requests. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int x = rank, y = -1, index = -1;
    MPI_Request mix[2];
    mix[0] = start(&c);
    OK(MPI_Irecv(&y, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, &mix[1]));
    OK(MPI_Send(&x, 1, MPI_INT, next, 5, MPI_COMM_WORLD));
    OK(MPI_Waitany(2, mix, &index, &s));
    CHECK(index == 1 && y == prev && s.MPI_SOURCE == prev);
    OK(MPI_Grequest_complete(mix[0]));
    int outcount, indices[2];
    OK(MPI_Waitsome(2, mix, &outcount, indices, st));
    CHECK(outcount == 1 && indices[0] == 0 && st[0].MPI_TAG == 77 && c.free == 1);
    OK(MPI_Waitsome(2, mix, &outcount, indices, st));
    CHECK(outcount == MPI_UNDEFINED);

    /* Not a generalized request. */
    MPI_Request p2p;
    OK(MPI_Irecv(&y, 1, MPI_INT, prev, 6, MPI_COMM_WORLD, &p2p));
    FAILS(MPI_Grequest_complete(p2p), MPI_ERR_REQUEST);
    OK(MPI_Send(&x, 1, MPI_INT, next, 6, MPI_COMM_WORLD));
    OK(MPI_Wait(&p2p, MPI_STATUS_IGNORE));
    FAILS(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &c, NULL), MPI_ERR_ARG);

    test_finish(rank, "grequest");
    return 0;
}
