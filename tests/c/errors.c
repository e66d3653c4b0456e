/* errors.c: bad input gets the matching error class under MPI_ERRORS_RETURN, never a crash or a
 * hang, and MPI_Error_string / MPI_Error_class describe it. Runs on any number of ranks. */
#include "check.h"
#include <string.h>

int main(int argc, char **argv) {
    int rank, size, x = 0, flag;
    test_init(&argc, &argv, &rank, &size);
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request r;
    MPI_Status s;

    /* communicators */
    FAILS(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    FAILS(MPI_Comm_size((MPI_Comm)0x12345, &x), MPI_ERR_COMM);
    MPI_Comm world = MPI_COMM_WORLD;
    FAILS(MPI_Comm_free(&world), MPI_ERR_COMM);
    FAILS(MPI_Comm_rank(w, NULL), MPI_ERR_ARG);
    FAILS(MPI_Comm_set_errhandler(w, (MPI_Errhandler)0x777), MPI_ERR_ERRHANDLER); /* MPI 4.1 */
    MPI_Comm dup;
    OK(MPI_Comm_dup(w, &dup));
    OK(MPI_Comm_free(&dup));
    FAILS(MPI_Barrier(dup), MPI_ERR_COMM);

    /* ranks, tags, counts, buffers, types */
    FAILS(MPI_Send(&x, 1, MPI_INT, size, 0, w), MPI_ERR_RANK);
    FAILS(MPI_Send(&x, 1, MPI_INT, -7, 0, w), MPI_ERR_RANK);
    FAILS(MPI_Recv(&x, 1, MPI_INT, size + 3, 0, w, &s), MPI_ERR_RANK);
    FAILS(MPI_Send(&x, 1, MPI_INT, 0, -1, w), MPI_ERR_TAG);
    FAILS(MPI_Send(&x, 1, MPI_INT, 0, MPI_ANY_TAG, w), MPI_ERR_TAG);
    FAILS(MPI_Irecv(&x, 1, MPI_INT, 0, -5, w, &r), MPI_ERR_TAG);
    int *ub;
    OK(MPI_Comm_get_attr(w, MPI_TAG_UB, &ub, &flag));
    if (*ub < 2147483647) FAILS(MPI_Send(&x, 1, MPI_INT, 0, *ub + 1, w), MPI_ERR_TAG);
    FAILS(MPI_Send(&x, -1, MPI_INT, 0, 0, w), MPI_ERR_COUNT);
    FAILS(MPI_Send(NULL, 3, MPI_INT, 0, 0, w), MPI_ERR_BUFFER);
    FAILS(MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, w), MPI_ERR_TYPE);
    FAILS(MPI_Send(&x, 1, (MPI_Datatype)0x5555, 0, 0, w), MPI_ERR_TYPE);
    FAILS(MPI_Isend(&x, 1, MPI_INT, 0, 0, w, NULL), MPI_ERR_ARG);
    FAILS(MPI_Type_size(MPI_DATATYPE_NULL, &x), MPI_ERR_TYPE);
    MPI_Datatype predefined = MPI_INT;
    FAILS(MPI_Type_free(&predefined), MPI_ERR_TYPE);
    OK(MPI_Send(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, w)); /* null buffer, zero count: fine */

    /* requests */
    MPI_Request bogus = (MPI_Request)0x4242;
    FAILS(MPI_Wait(&bogus, &s), MPI_ERR_REQUEST);
    FAILS(MPI_Test(&bogus, &flag, &s), MPI_ERR_REQUEST);
    FAILS(MPI_Waitall(-1, &r, MPI_STATUSES_IGNORE), MPI_ERR_COUNT);
    MPI_Request null = MPI_REQUEST_NULL;
    OK(MPI_Wait(&null, &s)); /* waiting on the null request is allowed */
    CHECK(s.MPI_SOURCE == MPI_ANY_SOURCE && s.MPI_TAG == MPI_ANY_TAG); /* the empty status */
    FAILS(MPI_Request_free(&null), MPI_ERR_REQUEST);
    MPI_Message msg = (MPI_Message)0x99;
    FAILS(MPI_Mrecv(&x, 1, MPI_INT, &msg, &s), MPI_ERR_REQUEST);

    /* collectives */
    FAILS(MPI_Bcast(&x, 1, MPI_INT, size, w), MPI_ERR_ROOT);
    FAILS(MPI_Reduce(&x, &flag, 1, MPI_INT, MPI_SUM, -1, w), MPI_ERR_ROOT);
    double d = 1, e;
    FAILS(MPI_Allreduce(&d, &e, 1, MPI_DOUBLE, MPI_BAND, w), MPI_ERR_OP);
    FAILS(MPI_Allreduce(&d, &e, 1, MPI_DOUBLE, (MPI_Op)0x3f, w), MPI_ERR_OP);
    FAILS(MPI_Allreduce(&x, &flag, 1, MPI_WCHAR, MPI_SUM, w), MPI_ERR_OP);
    FAILS(MPI_Allreduce(&d, &e, 1, MPI_DOUBLE_INT, MPI_SUM, w), MPI_ERR_OP);
    FAILS(MPI_Allreduce(&x, &flag, -2, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);

    /* truncation on a matched receive */
    int big[3] = {1, 2, 3};
    OK(MPI_Isend(big, 3, MPI_INT, 0, 8, MPI_COMM_SELF, &r));
    FAILS(MPI_Recv(&x, 1, MPI_INT, 0, 8, MPI_COMM_SELF, &s), MPI_ERR_TRUNCATE);
    CHECK(s.MPI_SOURCE == 0 && s.MPI_TAG == 8);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));

    /* Waitall reports per-request errors through MPI_ERR_IN_STATUS */
    MPI_Request two[2];
    MPI_Status sts[2];
    OK(MPI_Isend(big, 3, MPI_INT, 0, 9, MPI_COMM_SELF, &two[0]));
    OK(MPI_Irecv(&x, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &two[1]));
    FAILS(MPI_Waitall(2, two, sts), MPI_ERR_IN_STATUS);
    CHECK(sts[0].MPI_ERROR == MPI_SUCCESS && sts[1].MPI_ERROR == MPI_ERR_TRUNCATE);
    CHECK(sts[1].MPI_SOURCE == 0 && sts[1].MPI_TAG == 9);

    /* error strings and classes */
    char text[MPI_MAX_ERROR_STRING];
    int len, cls;
    OK(MPI_Error_string(MPI_ERR_TRUNCATE, text, &len));
    CHECK(len > 0 && strstr(text, "MPI_ERR_TRUNCATE") != NULL);
    OK(MPI_Error_class(MPI_ERR_RANK, &cls));
    CHECK(cls == MPI_ERR_RANK);
    FAILS(MPI_Error_class(-3, &cls), MPI_ERR_ARG);

    OK(MPI_Barrier(w));
    test_finish(rank, "errors");
    return 0;
}
