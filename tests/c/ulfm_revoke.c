/* ulfm_revoke.c: MPIX_Comm_revoke (ULFM) with every process alive. One process revokes a
 * communicator while the others wait in it (a receive from any source, a barrier, a large send
 * nobody receives); each wait ends with MPIX_ERR_REVOKED (the send may also complete: its
 * receiver drains it), every later operation on it fails the same way, and the fault-tolerance
 * calls still work on it: MPIX_Comm_is_revoked, _agree, _iagree, _shrink, _ishrink, whose communicator
 * works. */
#include "check.h"
#include <string.h>
#include <unistd.h>

#define BIG (1 << 20)

/* Rank 0 revokes `comm` after the others had time to start waiting in it. */
static void revoke_later(MPI_Comm comm, int rank) {
    if (rank == 0) {
        usleep(200 * 1000);
        OK(MPIX_Comm_revoke(comm));
        OK(MPIX_Comm_revoke(comm)); /* again: nothing more happens */
    }
}

static void expect_revoked_everywhere(MPI_Comm comm) {
    int flag = 0, x = 1;
    OK(MPIX_Comm_is_revoked(comm, &flag));
    CHECK(flag == 1);
    FAILS(MPI_Send(&x, 1, MPI_INT, 0, 5, comm), MPIX_ERR_REVOKED);
    FAILS(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 5, comm, MPI_STATUS_IGNORE), MPIX_ERR_REVOKED);
    FAILS(MPI_Barrier(comm), MPIX_ERR_REVOKED);
    FAILS(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, comm), MPIX_ERR_REVOKED);
    MPI_Request req;
    int rc = MPI_Irecv(&x, 1, MPI_INT, 0, 5, comm, &req);
    CHECK(rc == MPIX_ERR_REVOKED);
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rank, size;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* A receive waiting on a communicator another process revokes. */
    MPI_Comm a;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    int flag = -1;
    OK(MPIX_Comm_is_revoked(a, &flag));
    CHECK(flag == 0);
    revoke_later(a, rank);
    if (rank != 0) {
        int x;
        FAILS(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 1, a, MPI_STATUS_IGNORE), MPIX_ERR_REVOKED);
    }
    expect_revoked_everywhere(a);

    /* A barrier waiting, and a large send nobody will receive: both end. */
    MPI_Comm b;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    char *big = calloc(BIG, 1);
    CHECK(big != NULL);
    MPI_Request send = MPI_REQUEST_NULL;
    if (size > 1 && rank == size - 1)
        OK(MPI_Isend(big, BIG, MPI_CHAR, 0, 7, b, &send));
    revoke_later(b, rank);
    if (rank != 0)
        FAILS(MPI_Barrier(b), MPIX_ERR_REVOKED);
    int rc = MPI_Wait(&send, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS || rc == MPIX_ERR_REVOKED);
    expect_revoked_everywhere(b);
    free(big);

    /* The fault-tolerance calls still run on a revoked communicator. */
    flag = rank == 0 ? 0x3 : 0x1;
    OK(MPIX_Comm_agree(a, &flag));
    CHECK(flag == (size > 1 ? 0x1 : 0x3));
    /* Non-blocking agreements, completed by polling and by waiting, two in flight. */
    int f1 = rank == 0 ? 0x6 : 0x2, f2 = rank == size - 1 ? 0x1 : 0x9, done = 0;
    MPI_Request agreements[2];
    OK(MPIX_Comm_iagree(a, &f1, &agreements[0]));
    OK(MPIX_Comm_iagree(a, &f2, &agreements[1]));
    while (!done)
        OK(MPI_Test(&agreements[0], &done, MPI_STATUS_IGNORE));
    CHECK(f1 == (size > 1 ? 0x2 : 0x6));
    OK(MPI_Wait(&agreements[1], MPI_STATUS_IGNORE));
    CHECK(f2 == (size > 1 ? 0x1 : 0x1));
    CHECK(agreements[0] == MPI_REQUEST_NULL && agreements[1] == MPI_REQUEST_NULL);
    FAILS(MPIX_Comm_iagree(a, NULL, &agreements[0]), MPI_ERR_ARG);
    MPI_Comm shrunk;
    OK(MPIX_Comm_shrink(a, &shrunk));
    int n, r, sum = 0;
    OK(MPI_Comm_size(shrunk, &n));
    OK(MPI_Comm_rank(shrunk, &r));
    CHECK(n == size && r == rank);
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, shrunk));
    CHECK(sum == size * (size - 1) / 2);
    OK(MPIX_Comm_is_revoked(shrunk, &flag));
    CHECK(flag == 0);

    /* Other communicators are untouched; revoked ones can be freed. */
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size - 1) / 2);
    FAILS(MPIX_Comm_revoke(MPI_COMM_NULL), MPI_ERR_COMM);
    FAILS(MPIX_Comm_is_revoked(shrunk, NULL), MPI_ERR_ARG);
    OK(MPI_Comm_free(&shrunk));
    MPI_Request sr;
    OK(MPIX_Comm_ishrink(b, &shrunk, &sr));
    OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, shrunk));
    CHECK(sum == size * (size - 1) / 2);
    OK(MPI_Comm_free(&shrunk));
    OK(MPI_Comm_free(&a));
    OK(MPI_Comm_free(&b));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("ulfm_revoke: all checks passed\n");
    OK(MPI_Finalize());
    return 0;
}
