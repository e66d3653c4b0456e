/* sessions.c: the MPI-4 sessions model beside the world model. A session started before
 * MPI_Init: its process sets (mpi://WORLD, mpi://SELF, names in any case), their info
 * (mpi_size), groups from them, communicators from groups (MPI_Comm_create_from_group, also of
 * a subgroup and of MPI_GROUP_EMPTY), an inter-communicator from two groups
 * (MPI_Intercomm_create_from_groups), traffic and collectives on them, the session's info and
 * error handlers (user handler called by MPI_Session_call_errhandler and by a failed call,
 * get/set, kinds checked). Then MPI_Init while the session lives, a second session, MPI_Finalize
 * while sessions live (they go on working), their finalize, and a new session after
 * everything ended (the runtime starts again). */
#include "check.h"
#include <string.h>

static int handled = 0;
static MPI_Session handled_session = MPI_SESSION_NULL;

static void on_error(MPI_Session *session, int *code, ...) {
    handled = *code;
    handled_session = *session;
}

static void comm_error(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    (void)code;
}

/* The sum of the ranks of `comm` and a ring exchange. */
static void check_works(MPI_Comm comm) {
    int rank, size, sum = -1, got = -1;
    OK(MPI_Comm_rank(comm, &rank));
    OK(MPI_Comm_size(comm, &size));
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == size * (size - 1) / 2);
    OK(MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 3, &got, 1, MPI_INT,
                    (rank + size - 1) % size, 3, comm, MPI_STATUS_IGNORE));
    CHECK(got == (rank + size - 1) % size);
}

static MPI_Comm world_of(MPI_Session s, const char *pset, const char *tag) {
    MPI_Group g;
    MPI_Comm c;
    OK(MPI_Group_from_session_pset(s, pset, &g));
    OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    OK(MPI_Group_free(&g));
    return c;
}

static void psets(MPI_Session s, int *rank, int *size) {
    int n = -1, len, flag = 0;
    char name[MPI_MAX_PSET_NAME_LEN], v[MPI_MAX_INFO_VAL];
    OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n == 2);
    const char *want[2] = {"mpi://WORLD", "mpi://SELF"};
    for (int i = 0; i < n; i++) {
        len = 0;
        OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len == (int)strlen(want[i]) + 1);
        OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK(strcmp(name, want[i]) == 0);
        len = 7; /* cut */
        OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK(strncmp(name, want[i], 6) == 0 && name[6] == 0);
    }
    FAILS(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 2, &len, name), MPI_ERR_ARG);
    MPI_Info info;
    MPI_Group g;
    OK(MPI_Session_get_pset_info(s, "mpi://WORLD", &info));
    OK(MPI_Info_get(info, "mpi_size", MPI_MAX_INFO_VAL - 1, v, &flag));
    CHECK(flag);
    *size = atoi(v);
    OK(MPI_Info_free(&info));
    OK(MPI_Session_get_pset_info(s, "mpi://self", &info));
    OK(MPI_Info_get(info, "mpi_size", MPI_MAX_INFO_VAL - 1, v, &flag));
    CHECK(flag && strcmp(v, "1") == 0);
    OK(MPI_Info_free(&info));
    OK(MPI_Group_from_session_pset(s, "mpi://world", &g));
    OK(MPI_Group_rank(g, rank));
    int gsize;
    OK(MPI_Group_size(g, &gsize));
    CHECK(gsize == *size && *rank >= 0 && *rank < *size);
    OK(MPI_Group_free(&g));
    FAILS(MPI_Group_from_session_pset(s, "mpi://nowhere", &g), MPI_ERR_ARG);
    FAILS(MPI_Session_get_pset_info(s, "mpi://nowhere", &info), MPI_ERR_ARG);
}

static void from_groups(MPI_Session s, int rank, int size) {
    MPI_Comm world = world_of(s, "mpi://WORLD", "sessions.world");
    MPI_Comm self = world_of(s, "mpi://SELF", "sessions.self");
    /* A matched probe of MPI_PROC_NULL and its receive, even without MPI_COMM_SELF. */
    MPI_Message msg;
    MPI_Request req;
    MPI_Status st;
    int flag = 0, x = 7;
    OK(MPI_Improbe(MPI_PROC_NULL, 0, world, &flag, &msg, &st));
    CHECK(flag == 1 && msg == MPI_MESSAGE_NO_PROC);
    OK(MPI_Imrecv(&x, 1, MPI_INT, &msg, &req));
    OK(MPI_Wait(&req, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && x == 7);
    int r = -1, n = -1;
    OK(MPI_Comm_rank(world, &r));
    OK(MPI_Comm_size(world, &n));
    CHECK(r == rank && n == size);
    check_works(world);
    check_works(self);
    /* A subgroup (all but the last process) and MPI_GROUP_EMPTY for the one left out. */
    MPI_Group wg, sub;
    MPI_Comm part;
    OK(MPI_Comm_group(world, &wg));
    int last = size - 1;
    if (size > 1) {
        OK(MPI_Group_excl(wg, 1, &last, &sub));
        if (rank == last) {
            OK(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "sessions.part", MPI_INFO_NULL,
                                          MPI_ERRORS_RETURN, &part));
            CHECK(part == MPI_COMM_NULL);
        } else {
            OK(MPI_Comm_create_from_group(sub, "sessions.part", MPI_INFO_NULL,
                                          MPI_ERRORS_RETURN, &part));
            OK(MPI_Comm_size(part, &n));
            CHECK(n == size - 1);
            check_works(part);
            OK(MPI_Comm_free(&part));
        }
        OK(MPI_Group_free(&sub));
    }
    /* An inter-communicator: the lower half and the upper half. */
    if (size > 1) {
        int half = size / 2, lo[64], hi[64];
        for (int i = 0; i < half; i++) lo[i] = i;
        for (int i = half; i < size; i++) hi[i - half] = i;
        MPI_Group low, high;
        MPI_Comm inter;
        OK(MPI_Group_incl(wg, half, lo, &low));
        OK(MPI_Group_incl(wg, size - half, hi, &high));
        int in_low = rank < half;
        OK(MPI_Intercomm_create_from_groups(in_low ? low : high, 0, in_low ? high : low, 0,
                                            "sessions.inter", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                            &inter));
        int flag = 0, rsize = -1, sum = -1;
        OK(MPI_Comm_test_inter(inter, &flag));
        OK(MPI_Comm_remote_size(inter, &rsize));
        CHECK(flag && rsize == (in_low ? size - half : half));
        OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, inter));
        int want = 0;
        for (int i = 0; i < size; i++)
            if ((i < half) != in_low) want += i;
        CHECK(sum == want);
        OK(MPI_Comm_free(&inter));
        OK(MPI_Group_free(&low));
        OK(MPI_Group_free(&high));
    }
    OK(MPI_Group_free(&wg));
    /* Misuse. */
    MPI_Comm c;
    MPI_Group g;
    OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    FAILS(MPI_Comm_create_from_group(g, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c), MPI_ERR_ARG);
    FAILS(MPI_Comm_create_from_group(MPI_GROUP_NULL, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c),
          MPI_ERR_GROUP);
    OK(MPI_Group_free(&g));
    OK(MPI_Comm_free(&world));
    OK(MPI_Comm_free(&self));
}

static void errhandlers(MPI_Session s) {
    MPI_Errhandler e, got, comm_e;
    OK(MPI_Session_get_errhandler(s, &got));
    CHECK(got == MPI_ERRORS_RETURN);
    OK(MPI_Session_create_errhandler(on_error, &e));
    OK(MPI_Session_set_errhandler(s, e));
    OK(MPI_Session_get_errhandler(s, &got));
    CHECK(got == e);
    OK(MPI_Errhandler_free(&got));
    OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK(handled == MPI_ERR_OTHER && handled_session == s);
    /* A failed call on the session goes to its handler. */
    int len = 0;
    handled = 0;
    CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 99, &len, NULL) == MPI_ERR_ARG);
    CHECK(handled == MPI_ERR_ARG);
    OK(MPI_Errhandler_free(&e)); /* the session keeps it */
    handled = 0;
    OK(MPI_Session_call_errhandler(s, MPI_ERR_ARG));
    CHECK(handled == MPI_ERR_ARG);
    /* A communicator's handler is not a session's. */
    OK(MPI_Comm_create_errhandler(comm_error, &comm_e));
    CHECK(MPI_Session_set_errhandler(s, comm_e) == MPI_ERR_ARG);
    OK(MPI_Errhandler_free(&comm_e));
    OK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
}

/* Errors of an invalid session handle go to the handler of errors tied to no object
 * (MPI_COMM_WORLD's here, set to MPI_ERRORS_RETURN). */
static void invalid_sessions(void) {
    int n;
    MPI_Session none = MPI_SESSION_NULL;
    FAILS(MPI_Session_call_errhandler(MPI_SESSION_NULL, MPI_ERR_OTHER), MPI_ERR_SESSION);
    FAILS(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n), MPI_ERR_SESSION);
    FAILS(MPI_Session_finalize(&none), MPI_ERR_SESSION);
}

static MPI_Session start(const char *level) {
    MPI_Session s;
    MPI_Info in, used;
    char v[MPI_MAX_INFO_VAL];
    int flag = 0;
    OK(MPI_Info_create(&in));
    OK(MPI_Info_set(in, "mpi_thread_support_level", level));
    OK(MPI_Session_init(in, MPI_ERRORS_RETURN, &s));
    OK(MPI_Info_free(&in));
    OK(MPI_Session_get_info(s, &used));
    OK(MPI_Info_get(used, "mpi_thread_support_level", MPI_MAX_INFO_VAL - 1, v, &flag));
    CHECK(flag && strcmp(v, level) == 0);
    OK(MPI_Info_free(&used));
    return s;
}

/* A session that asks for no thread level gets MPI_THREAD_MULTIPLE. */
static void default_level(void) {
    MPI_Session plain;
    MPI_Info used;
    char v[MPI_MAX_INFO_VAL];
    int flag = 0;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &plain));
    OK(MPI_Session_get_info(plain, &used));
    OK(MPI_Info_get(used, "thread_level", MPI_MAX_INFO_VAL - 1, v, &flag));
    CHECK(flag && strcmp(v, "MPI_THREAD_MULTIPLE") == 0);
    OK(MPI_Info_free(&used));
    OK(MPI_Session_finalize(&plain));
}

int main(int argc, char **argv) {
    int rank = -1, size = -1, flag = -1;
    MPI_Session first, second, third;
    OK(MPI_Initialized(&flag));
    CHECK(flag == 0);
    first = start("MPI_THREAD_MULTIPLE");
    default_level();
    OK(MPI_Initialized(&flag));
    CHECK(flag == 0); /* sessions are not the world model */
    psets(first, &rank, &size);
    from_groups(first, rank, size);
    errhandlers(first);
    /* The world model joins the running session. */
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    check_works(MPI_COMM_WORLD);
    invalid_sessions();
    second = start("MPI_THREAD_SINGLE");
    from_groups(second, rank, size);
    OK(MPI_Session_finalize(&second));
    CHECK(second == MPI_SESSION_NULL);
    OK(MPI_Finalize());
    OK(MPI_Finalized(&flag));
    CHECK(flag == 1);
    /* The session outlives the world model. */
    from_groups(first, rank, size);
    OK(MPI_Session_finalize(&first));
    /* Everything ended: a new session starts the runtime again. */
    third = start("MPI_THREAD_SERIALIZED");
    from_groups(third, rank, size);
    OK(MPI_Session_finalize(&third));
    if (rank == 0) printf("sessions: all checks passed\n");
    return 0;
}
