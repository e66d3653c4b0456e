/* bad_args.c: bad input gets the standard's error class, never a crash or success: a table of
 * call x bad argument x expected class for point-to-point, request and communicator calls, the
 * empty status of a null request, and error codes that do not exist. */
#include "check.h"
#include <string.h>

/* One row: the call's name, what is wrong, its return code, the classes that are right. */
static int failures = 0;

static void row(const char *call, const char *bad, int rc, int want, int also) {
    int cls = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    if (cls != want && cls != also) {
        fprintf(stderr, "bad_args: %-22s %-36s returned class %d, expected %d%s\n", call, bad,
                cls, want, also != want ? " (or another)" : "");
        failures++;
    }
}

#define ROW(call, bad, want) row(#call, bad, (call), (want), (want))
#define ROW2(call, bad, want, also) row(#call, bad, (call), (want), (also))

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    int buf[4] = {0}, flag = 0, n = 0, tag_ub = 0, *tag_ub_p = NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub_p, &flag);
    tag_ub = flag ? *tag_ub_p : 32767;
    MPI_Request req = MPI_REQUEST_NULL, null_req = MPI_REQUEST_NULL;
    MPI_Status st;
    MPI_Comm comm = MPI_COMM_NULL, world = MPI_COMM_WORLD;
    int me = rank;

    /* Point-to-point. */
    ROW(MPI_Send(buf, -1, MPI_INT, me, 0, world), "negative count", MPI_ERR_COUNT);
    ROW(MPI_Send(buf, 1, MPI_DATATYPE_NULL, me, 0, world), "null datatype", MPI_ERR_TYPE);
    ROW(MPI_Send(buf, 1, MPI_INT, size, 0, world), "dest = size", MPI_ERR_RANK);
    ROW(MPI_Send(buf, 1, MPI_INT, -5, 0, world), "dest = -5", MPI_ERR_RANK);
    ROW(MPI_Send(buf, 1, MPI_INT, me, -1, world), "negative tag", MPI_ERR_TAG);
    ROW(MPI_Send(buf, 1, MPI_INT, me, MPI_ANY_TAG, world), "tag = MPI_ANY_TAG", MPI_ERR_TAG);
    ROW(MPI_Send(buf, 1, MPI_INT, me, 0, MPI_COMM_NULL), "MPI_COMM_NULL", MPI_ERR_COMM);
    ROW(MPI_Send(NULL, 1, MPI_INT, me, 0, world), "null buffer, count 1", MPI_ERR_BUFFER);
    ROW(MPI_Ssend(buf, 1, MPI_INT, size, 0, world), "dest = size", MPI_ERR_RANK);
    ROW(MPI_Recv(buf, -1, MPI_INT, me, 0, world, &st), "negative count", MPI_ERR_COUNT);
    ROW(MPI_Recv(buf, 1, MPI_INT, size, 0, world, &st), "source = size", MPI_ERR_RANK);
    if (tag_ub < 0x7fffffff)
        ROW(MPI_Recv(buf, 1, MPI_INT, me, tag_ub + 1, world, &st), "tag > MPI_TAG_UB", MPI_ERR_TAG);
    ROW(MPI_Recv(buf, 1, MPI_INT, me, -7, world, &st), "tag = -7", MPI_ERR_TAG);
    ROW(MPI_Recv(buf, 1, MPI_INT, me, 0, MPI_COMM_NULL, &st), "MPI_COMM_NULL", MPI_ERR_COMM);
    ROW(MPI_Isend(buf, 1, MPI_INT, size, 0, world, &req), "dest = size", MPI_ERR_RANK);
    ROW2(MPI_Isend(buf, 1, MPI_INT, me, 0, world, NULL), "null request pointer", MPI_ERR_ARG,
         MPI_ERR_REQUEST);
    ROW(MPI_Irecv(buf, 1, MPI_INT, me, 0, world, NULL), "null request pointer", MPI_ERR_ARG);
    ROW(MPI_Irecv(buf, 1, MPI_DATATYPE_NULL, me, 0, world, &req), "null datatype", MPI_ERR_TYPE);
    ROW(MPI_Probe(size, 0, world, &st), "source = size", MPI_ERR_RANK);
    ROW(MPI_Iprobe(me, 0, world, NULL, &st), "null flag", MPI_ERR_ARG);
    ROW(MPI_Get_count(NULL, MPI_INT, &n), "null status", MPI_ERR_ARG);

    /* Requests. */
    ROW2(MPI_Wait(NULL, &st), "null request pointer", MPI_ERR_REQUEST, MPI_ERR_ARG);
    ROW2(MPI_Test(NULL, &flag, &st), "null request pointer", MPI_ERR_REQUEST, MPI_ERR_ARG);
    ROW(MPI_Test(&null_req, NULL, &st), "null flag", MPI_ERR_ARG);
    ROW(MPI_Request_free(&null_req), "MPI_REQUEST_NULL", MPI_ERR_REQUEST);
    ROW2(MPI_Request_free(NULL), "null request pointer", MPI_ERR_REQUEST, MPI_ERR_ARG);
    ROW(MPI_Cancel(&null_req), "MPI_REQUEST_NULL", MPI_ERR_REQUEST);
    ROW2(MPI_Waitall(-1, &req, MPI_STATUSES_IGNORE), "negative count", MPI_ERR_COUNT, MPI_ERR_ARG);
    ROW2(MPI_Waitall(1, NULL, MPI_STATUSES_IGNORE), "null array", MPI_ERR_REQUEST, MPI_ERR_ARG);
    ROW(MPI_Waitany(1, &null_req, NULL, &st), "null index", MPI_ERR_ARG);
    ROW(MPI_Testall(1, &null_req, NULL, MPI_STATUSES_IGNORE), "null flag", MPI_ERR_ARG);
    MPI_Request bogus = (MPI_Request)(intptr_t)0x7fff0001;
    ROW(MPI_Wait(&bogus, &st), "a handle never made", MPI_ERR_REQUEST);
    ROW(MPI_Start(&null_req), "MPI_REQUEST_NULL", MPI_ERR_REQUEST);

    /* Communicators. */
    ROW(MPI_Comm_rank(MPI_COMM_NULL, &n), "MPI_COMM_NULL", MPI_ERR_COMM);
    ROW(MPI_Comm_rank(world, NULL), "null rank pointer", MPI_ERR_ARG);
    ROW(MPI_Comm_size(MPI_COMM_NULL, &n), "MPI_COMM_NULL", MPI_ERR_COMM);
    ROW(MPI_Comm_size(world, NULL), "null size pointer", MPI_ERR_ARG);
    ROW(MPI_Comm_dup(MPI_COMM_NULL, &comm), "MPI_COMM_NULL", MPI_ERR_COMM);
    ROW(MPI_Comm_dup(world, NULL), "null newcomm", MPI_ERR_ARG);
    ROW(MPI_Comm_split(MPI_COMM_NULL, 0, 0, &comm), "MPI_COMM_NULL", MPI_ERR_COMM);
    ROW(MPI_Comm_free(&comm), "MPI_COMM_NULL", MPI_ERR_COMM);
    MPI_Comm w = MPI_COMM_WORLD;
    ROW(MPI_Comm_free(&w), "MPI_COMM_WORLD", MPI_ERR_COMM);
    ROW2(MPI_Comm_free(NULL), "null pointer", MPI_ERR_COMM, MPI_ERR_ARG);
    MPI_Comm bogus_comm = (MPI_Comm)(intptr_t)0x7fff0002;
    ROW(MPI_Comm_rank(bogus_comm, &n), "a handle never made", MPI_ERR_COMM);
    ROW(MPI_Comm_compare(world, MPI_COMM_NULL, &n), "MPI_COMM_NULL", MPI_ERR_COMM);

    /* The empty status of a null request (MPI 4.1 sec. 3.7.3). */
    MPI_Status empty;
    memset(&empty, 0x5a, sizeof empty);
    OK(MPI_Wait(&null_req, &empty));
    CHECK(empty.MPI_SOURCE == MPI_ANY_SOURCE);
    CHECK(empty.MPI_TAG == MPI_ANY_TAG);
    CHECK(empty.MPI_ERROR == MPI_SUCCESS);
    OK(MPI_Get_count(&empty, MPI_INT, &n));
    CHECK(n == 0);
    memset(&empty, 0x5a, sizeof empty);
    OK(MPI_Test(&null_req, &flag, &empty));
    CHECK(flag == 1 && empty.MPI_SOURCE == MPI_ANY_SOURCE && empty.MPI_TAG == MPI_ANY_TAG);

    /* Error codes that do not exist. */
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, cls = 0;
    ROW(MPI_Error_string(123456, text, &len), "code 123456", MPI_ERR_ARG);
    ROW(MPI_Error_string(-3, text, &len), "code -3", MPI_ERR_ARG);
    ROW(MPI_Error_class(123456, &cls), "code 123456", MPI_ERR_ARG);
    ROW(MPI_Error_class(-3, &cls), "code -3", MPI_ERR_ARG);
    ROW(MPI_Error_string(MPI_ERR_COMM, NULL, &len), "null string", MPI_ERR_ARG);
    OK(MPI_Error_string(MPIX_ERR_PROC_FAILED_PENDING, text, &len));
    CHECK(len > 0 && strstr(text, "PENDING") != NULL);

    CHECK(failures == 0);
    test_finish(rank, "bad_args");
    return 0;
}
