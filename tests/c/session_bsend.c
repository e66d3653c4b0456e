/* session_bsend.c: MPI 4.1 session buffers (MPI_Session_attach_buffer, _detach_buffer,
 * _flush_buffer, _iflush_buffer and the _c forms). A buffered send on a communicator made from
 * a session's group, or from such a communicator (dup, idup, split, create_from_group of its
 * group, cart_create), uses the session's buffer when it has none of its own; a
 * communicator's buffer overrides it; without either, the process's buffer; the session
 * buffer serves no world communicator, nor another session's. Overflow and bad arguments
 * (MPI_ERR_BUFFER, MPI_ERR_SESSION, MPI_ERR_ARG); detach, flush and iflush wait for the
 * pending sends (the buffer is overwritten right after, the data still arrives whole), and so
 * does MPI_Session_finalize, which also detaches. Runs on any number of ranks >= 1. */
#include "check.h"
#include <string.h>

#define BIG (1 << 18) /* ints: 1 MiB, sent by rendezvous: pending until received */

static int rank, size, next, prev;

static MPI_Comm comm_of(MPI_Session s, const char *tag) {
    MPI_Group g;
    MPI_Comm c;
    OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    OK(MPI_Group_free(&g));
    return c;
}

/* A small buffered message around the ring of `c` must go (or fail with `expect`). */
static void ring(MPI_Comm c, int expect) {
    int x = rank * 10 + 1, y = -1;
    if (expect != MPI_SUCCESS) {
        FAILS(MPI_Bsend(&x, 1, MPI_INT, next, 5, c), expect);
        return;
    }
    OK(MPI_Bsend(&x, 1, MPI_INT, next, 5, c));
    OK(MPI_Recv(&y, 1, MPI_INT, prev, 5, c, MPI_STATUS_IGNORE));
    CHECK(y == prev * 10 + 1);
}

static void errors(MPI_Session s, MPI_Comm c) {
    char small[MPI_BSEND_OVERHEAD + 16];
    void *addr;
    int sz;
    MPI_Count szc;
    MPI_Request r;
    FAILS(MPI_Session_attach_buffer(MPI_SESSION_NULL, small, sizeof small), MPI_ERR_SESSION);
    FAILS(MPI_Session_attach_buffer_c(MPI_SESSION_NULL, small, sizeof small), MPI_ERR_SESSION);
    FAILS(MPI_Session_detach_buffer(MPI_SESSION_NULL, &addr, &sz), MPI_ERR_SESSION);
    FAILS(MPI_Session_detach_buffer_c(MPI_SESSION_NULL, &addr, &szc), MPI_ERR_SESSION);
    FAILS(MPI_Session_flush_buffer(MPI_SESSION_NULL), MPI_ERR_SESSION);
    FAILS(MPI_Session_iflush_buffer(MPI_SESSION_NULL, &r), MPI_ERR_SESSION);
    FAILS(MPI_Session_detach_buffer(s, &addr, &sz), MPI_ERR_BUFFER);  /* none attached */
    FAILS(MPI_Session_attach_buffer(s, small, -1), MPI_ERR_ARG);
    FAILS(MPI_Session_attach_buffer(s, NULL, 16), MPI_ERR_BUFFER);
    /* No buffer anywhere. */
    ring(c, MPI_ERR_BUFFER);
    /* 16 bytes fit, 20 do not; a second attach fails. */
    OK(MPI_Session_attach_buffer(s, small, sizeof small));
    FAILS(MPI_Session_attach_buffer(s, small, sizeof small), MPI_ERR_BUFFER);
    int five[5] = {1, 2, 3, 4, 5}, got[5];
    FAILS(MPI_Bsend(five, 5, MPI_INT, next, 6, c), MPI_ERR_BUFFER);
    OK(MPI_Bsend(five, 4, MPI_INT, next, 6, c));
    OK(MPI_Recv(got, 4, MPI_INT, prev, 6, c, MPI_STATUS_IGNORE));
    CHECK(got[0] == 1 && got[3] == 4);
    OK(MPI_Session_flush_buffer(s));
    /* The session's buffer does not serve the world model. */
    ring(MPI_COMM_WORLD, MPI_ERR_BUFFER);
    OK(MPI_Session_detach_buffer(s, &addr, &sz));
    CHECK(addr == small && sz == (int)sizeof small);
    OK(MPI_Session_flush_buffer(s)); /* nothing attached: nothing to wait for */
}

/* Communicators derived from a session's communicator use the session's buffer. */
static void derived(MPI_Session s, MPI_Comm c) {
    char *space = malloc(8 * (MPI_BSEND_OVERHEAD + 16));
    OK(MPI_Session_attach_buffer_c(s, space, 8 * (MPI_BSEND_OVERHEAD + 16)));
    ring(c, MPI_SUCCESS);
    MPI_Comm d, sp, cg, cart, id;
    OK(MPI_Comm_dup(c, &d));
    ring(d, MPI_SUCCESS);
    OK(MPI_Comm_split(c, 0, rank, &sp));
    ring(sp, MPI_SUCCESS);
    MPI_Request r;
    OK(MPI_Comm_idup(c, &id, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    ring(id, MPI_SUCCESS);
    MPI_Group g, sub;
    OK(MPI_Comm_group(d, &g));
    OK(MPI_Group_incl(g, 1, &rank, &sub)); /* just me: a ring of one */
    OK(MPI_Comm_create_from_group(sub, "session_bsend.self", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                  &cg));
    int x = 3, y = 0;
    OK(MPI_Bsend(&x, 1, MPI_INT, 0, 1, cg));
    OK(MPI_Recv(&y, 1, MPI_INT, 0, 1, cg, MPI_STATUS_IGNORE));
    CHECK(y == 3);
    int dims[1] = {size}, periods[1] = {1};
    OK(MPI_Cart_create(c, 1, dims, periods, 0, &cart));
    ring(cart, MPI_SUCCESS);
    /* A communicator's own buffer overrides the session's: this one is too small. */
    char tiny[MPI_BSEND_OVERHEAD + 2];
    OK(MPI_Comm_attach_buffer(d, tiny, sizeof tiny));
    ring(d, MPI_ERR_BUFFER);
    ring(sp, MPI_SUCCESS);
    void *addr;
    int sz;
    OK(MPI_Comm_detach_buffer(d, &addr, &sz));
    CHECK(addr == tiny);
    ring(d, MPI_SUCCESS);
    /* A world communicator and another session's are not served. */
    MPI_Comm wd;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &wd));
    ring(wd, MPI_ERR_BUFFER);
    MPI_Session s2;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    MPI_Comm c2 = comm_of(s2, "session_bsend.two");
    ring(c2, MPI_ERR_BUFFER);
    /* Without the session's buffer: the process's. */
    MPI_Count szc;
    OK(MPI_Session_detach_buffer_c(s, &addr, &szc));
    CHECK(addr == space && szc == 8 * (MPI_BSEND_OVERHEAD + 16));
    ring(c, MPI_ERR_BUFFER);
    OK(MPI_Buffer_attach(space, 8 * (MPI_BSEND_OVERHEAD + 16)));
    ring(c, MPI_SUCCESS);
    ring(c2, MPI_SUCCESS);
    ring(wd, MPI_SUCCESS);
    OK(MPI_Buffer_detach(&addr, &sz));
    MPI_Comm *all[] = {&d, &sp, &id, &cg, &cart, &wd, &c2};
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++) OK(MPI_Comm_free(all[i]));
    OK(MPI_Group_free(&g));
    OK(MPI_Group_free(&sub));
    OK(MPI_Session_finalize(&s2));
    free(space);
}

/* A big message is pending until received: `how` (0 detach, 1 flush, 2 iflush) must wait for
 * it, after which the buffer is scribbled over; the receiver still gets the data whole. */
static void waits(MPI_Session s, MPI_Comm c, int how) {
    int bytes = BIG * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    char *space = malloc((size_t)bytes);
    int *out = malloc(sizeof(int) * BIG), *in = malloc(sizeof(int) * BIG);
    for (int i = 0; i < BIG; i++) out[i] = rank * 5 + how + i;
    MPI_Request rr;
    OK(MPI_Irecv(in, BIG, MPI_INT, prev, 40 + how, c, &rr));
    OK(MPI_Session_attach_buffer(s, space, bytes));
    OK(MPI_Bsend(out, BIG, MPI_INT, next, 40 + how, c));
    memset(out, 0, sizeof(int) * BIG);
    void *addr;
    int sz;
    if (how == 0) {
        OK(MPI_Session_detach_buffer(s, &addr, &sz));
        CHECK(addr == space && sz == bytes);
    } else if (how == 1) {
        OK(MPI_Session_flush_buffer(s));
    } else {
        MPI_Request fl;
        OK(MPI_Session_iflush_buffer(s, &fl));
        OK(MPI_Wait(&fl, MPI_STATUS_IGNORE));
        CHECK(fl == MPI_REQUEST_NULL);
    }
    memset(space, 0xff, (size_t)bytes);
    OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    for (int i = 0; i < BIG; i++) CHECK(in[i] == prev * 5 + how + i);
    if (how != 0) OK(MPI_Session_detach_buffer(s, &addr, &sz));
    free(space);
    free(out);
    free(in);
}

/* MPI_Session_finalize waits for the session's buffered sends and detaches its buffer. */
static void finalize_flushes(void) {
    MPI_Session s;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Comm c = comm_of(s, "session_bsend.fin");
    int bytes = BIG * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    char *space = malloc((size_t)bytes);
    int *out = malloc(sizeof(int) * BIG), *in = malloc(sizeof(int) * BIG);
    for (int i = 0; i < BIG; i++) out[i] = rank * 9 + i;
    MPI_Request rr;
    OK(MPI_Irecv(in, BIG, MPI_INT, prev, 50, c, &rr));
    OK(MPI_Session_attach_buffer(s, space, bytes));
    OK(MPI_Bsend(out, BIG, MPI_INT, next, 50, c));
    OK(MPI_Comm_free(&c));
    OK(MPI_Session_finalize(&s));
    CHECK(s == MPI_SESSION_NULL);
    memset(space, 0xff, (size_t)bytes);
    OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    for (int i = 0; i < BIG; i++) CHECK(in[i] == prev * 9 + i);
    free(space);
    free(out);
    free(in);
}

int main(int argc, char **argv) {
    test_init(&argc, &argv, &rank, &size);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    MPI_Session s;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Comm c = comm_of(s, "session_bsend");
    errors(s, c);
    derived(s, c);
    for (int how = 0; how < 3; how++) waits(s, c, how);
    OK(MPI_Comm_free(&c));
    OK(MPI_Session_finalize(&s));
    finalize_flushes();
    test_finish(rank, "session_bsend");
    return 0;
}
