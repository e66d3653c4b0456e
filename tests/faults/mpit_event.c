/* mpit_event.c: the MPI_T event mpicd_peer_failed, end to end. 3 ranks: rank 2 dies (_exit)
 * after a barrier (once told by both others); ranks 0 and 1 receive from it, which fails with MPIX_ERR_PROC_FAILED, and
 * meanwhile their callback (safety MPI_T_CB_REQUIRE_MPI_RESTRICTED) got the event once: the
 * element read, the data copied, the source and the timestamp (between the source's time
 * before and after the receive). A second registration with only an MPI_T_CB_REQUIRE_NONE
 * callback loses the event: its dropped handler is told one. Run by tests/run-fault-tests.sh
 * (the launcher must keep the job alive when a rank exits non-zero); rank 0 prints
 * "mpit_event: all checks passed". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CHECK(c)                                                                           \
    do {                                                                                   \
        if (!(c)) {                                                                        \
            fprintf(stderr, "mpit_event: %s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
            _exit(1);                                                                      \
        }                                                                                  \
    } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS)

static int events, failed_rank = -1, copied = -1, source = -1, safety = -1, data_ok;
static MPI_Count stamp;
static MPI_Count dropped;
static int none_calls;

static void on_failure(MPI_T_event_instance e, MPI_T_event_registration r, MPI_T_cb_safety s,
                       void *data) {
    (void)r;
    events++;
    safety = s;
    data_ok = data == &events;
    if (MPI_T_event_read(e, 0, &failed_rank) != MPI_SUCCESS) failed_rank = -2;
    if (MPI_T_event_copy(e, &copied) != MPI_SUCCESS) copied = -2;
    if (MPI_T_event_get_source(e, &source) != MPI_SUCCESS) source = -2;
    if (MPI_T_event_get_timestamp(e, &stamp) != MPI_SUCCESS) stamp = -2;
}

static void on_none(MPI_T_event_instance e, MPI_T_event_registration r, MPI_T_cb_safety s,
                    void *data) {
    (void)e, (void)r, (void)s, (void)data;
    none_calls++;
}

static void on_dropped(MPI_Count count, MPI_T_event_registration r, int src, MPI_T_cb_safety s,
                       void *data) {
    (void)r, (void)src, (void)s, (void)data;
    dropped += count;
}

int main(int argc, char **argv) {
    int provided, rank, index, one = 1;
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_T_event_get_index("mpicd_peer_failed", &index));
    MPI_T_event_registration reg, lazy;
    OK(MPI_T_event_handle_alloc(index, NULL, MPI_INFO_NULL, &reg));
    OK(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, &events,
                                     on_failure));
    OK(MPI_T_event_handle_alloc(index, NULL, MPI_INFO_NULL, &lazy));
    OK(MPI_T_event_register_callback(lazy, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, on_none));
    OK(MPI_T_event_set_dropped_handler(lazy, on_dropped));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* Rank 2 dies once both others have left the barrier (so that it fails no barrier). */
    if (rank == 2) {
        OK(MPI_Recv(&one, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Recv(&one, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        _exit(1);
    }
    OK(MPI_Send(&one, 1, MPI_INT, 2, 1, MPI_COMM_WORLD));
    MPI_Count before, after;
    OK(MPI_T_source_get_timestamp(0, &before));
    int rc = MPI_Recv(&one, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    OK(MPI_T_source_get_timestamp(0, &after));
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_PROC_FAILED_PENDING);
    CHECK(events == 1 && failed_rank == 2 && copied == 2 && source == 0 && data_ok);
    CHECK(safety == MPI_T_CB_REQUIRE_MPI_RESTRICTED);
    CHECK(stamp >= before && stamp <= after);
    CHECK(none_calls == 0 && dropped == 1);
    OK(MPI_T_event_handle_free(reg, NULL, NULL));
    OK(MPI_T_event_handle_free(lazy, NULL, NULL));
    OK(MPI_T_finalize());
    OK(MPI_Finalize());
    if (rank == 0) printf("mpit_event: all checks passed\n");
    return 0;
}
