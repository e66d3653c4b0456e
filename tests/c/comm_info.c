/* comm_info.c: MPI_Comm_idup (many outstanding at once, overlapping point-to-point traffic,
 * non-blocking collectives and blocking communicator constructors; rings of overlapping
 * pairs that a blocking dup would deadlock on; an inter-communicator), MPI_Comm_idup_with_info,
 * MPI_Comm_dup_with_info, MPI_Comm_set_info / MPI_Comm_get_info (the standard assertions are
 * kept, unknown keys ignored, a dup keeps the hints), attribute copies at every dup form, the
 * error handler's inheritance, and the error classes of misuse. */
#include "check.h"
#include <string.h>

#define NIDUP 8

static int copies = 0;

static int copy_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag) {
    (void)comm;
    (void)keyval;
    (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* The sum of the ranks over `comm` (an intra-communicator) is right, and a ring exchange
 * delivers. */
static void check_works(MPI_Comm comm) {
    int rank, size, sum = -1, got = -1;
    OK(MPI_Comm_rank(comm, &rank));
    OK(MPI_Comm_size(comm, &size));
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == size * (size - 1) / 2);
    OK(MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 5, &got, 1, MPI_INT,
                    (rank + size - 1) % size, 5, comm, MPI_STATUS_IGNORE));
    CHECK(got == (rank + size - 1) % size);
}

static int has_key(MPI_Comm comm, const char *key, const char *want) {
    MPI_Info used;
    char v[MPI_MAX_INFO_VAL];
    int flag = 0;
    OK(MPI_Comm_get_info(comm, &used));
    OK(MPI_Info_get(used, key, MPI_MAX_INFO_VAL - 1, v, &flag));
    OK(MPI_Info_free(&used));
    return flag && (!want || strcmp(v, want) == 0);
}

static void idups_with_traffic(int rank, int size, int keyval) {
    MPI_Comm dups[NIDUP];
    MPI_Request reqs[NIDUP + 2];
    int token = rank, got = -1, bsum = -1, one = 1;
    copies = 0;
    for (int i = 0; i < NIDUP; i++) {
        OK(MPI_Comm_idup(MPI_COMM_WORLD, &dups[i], &reqs[i]));
        CHECK(dups[i] != MPI_COMM_NULL);
    }
    CHECK(copies == NIDUP); /* the attributes were copied at the call */
    /* The error handler of a communicator in flight may be set and read (mpi4py does). */
    MPI_Errhandler pending_e;
    OK(MPI_Comm_set_errhandler(dups[0], MPI_ERRORS_ARE_FATAL));
    OK(MPI_Comm_get_errhandler(dups[0], &pending_e));
    CHECK(pending_e == MPI_ERRORS_ARE_FATAL);
    OK(MPI_Comm_set_errhandler(dups[0], MPI_ERRORS_RETURN));
    /* Traffic and a non-blocking collective on the parent while the idups are in flight. */
    OK(MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, 9, MPI_COMM_WORLD, &reqs[NIDUP]));
    OK(MPI_Iallreduce(&one, &bsum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[NIDUP + 1]));
    OK(MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 9, MPI_COMM_WORLD));
    /* A blocking dup and a split while they are pending. */
    MPI_Comm blocking, half;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &blocking));
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    OK(MPI_Waitall(NIDUP + 2, reqs, MPI_STATUSES_IGNORE));
    CHECK(got == (rank + size - 1) % size && bsum == size);
    for (int i = 0; i < NIDUP; i++) {
        void *v = NULL;
        int flag = 0;
        check_works(dups[i]);
        OK(MPI_Comm_get_attr(dups[i], keyval, &v, &flag));
        CHECK(flag && v == (void *)&copies);
        MPI_Errhandler e;
        OK(MPI_Comm_get_errhandler(dups[i], &e));
        CHECK(e == MPI_ERRORS_RETURN); /* inherited from MPI_COMM_WORLD */
        OK(MPI_Errhandler_free(&e));
        for (int j = 0; j < i; j++) {
            int cmp;
            OK(MPI_Comm_compare(dups[i], dups[j], &cmp));
            CHECK(cmp == MPI_CONGRUENT);
        }
    }
    check_works(blocking);
    check_works(half);
    for (int i = 0; i < NIDUP; i++) OK(MPI_Comm_free(&dups[i]));
    OK(MPI_Comm_free(&blocking));
    OK(MPI_Comm_free(&half));
}

/* Rank i and i+1 share a communicator; each rank idups both of its pairs, then waits for both:
 * a blocking dup in this order would deadlock around the ring. */
static void overlapping_pairs(int rank, int size) {
    if (size < 3) return;
    MPI_Comm mine = MPI_COMM_NULL, prev = MPI_COMM_NULL, tmp;
    for (int i = 0; i < size; i++) {
        int in = rank == i || rank == (i + 1) % size;
        OK(MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, rank == i ? 0 : 1, &tmp));
        if (rank == i) mine = tmp;
        else if (rank == (i + 1) % size) prev = tmp;
        else CHECK(tmp == MPI_COMM_NULL);
    }
    MPI_Comm d[2];
    MPI_Request r[2];
    OK(MPI_Comm_idup(mine, &d[0], &r[0]));
    OK(MPI_Comm_idup(prev, &d[1], &r[1]));
    OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    /* Pairs are checked in the order of their first rank (no cycle of waits). */
    int mine_first = rank < (rank + size - 1) % size;
    check_works(d[mine_first ? 0 : 1]);
    check_works(d[mine_first ? 1 : 0]);
    for (int i = 0; i < 2; i++) OK(MPI_Comm_free(&d[i]));
    OK(MPI_Comm_free(&mine));
    OK(MPI_Comm_free(&prev));
}

static void intercomm_idup(int rank, int size) {
    if (size < 2) return;
    MPI_Comm local, inter, dup;
    MPI_Request req;
    int flag = 0, rsize = 0, lsize = 0;
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 77, &inter));
    OK(MPI_Comm_idup(inter, &dup, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    OK(MPI_Comm_test_inter(dup, &flag));
    OK(MPI_Comm_remote_size(dup, &rsize));
    OK(MPI_Comm_size(dup, &lsize));
    CHECK(flag == 1 && rsize == size / 2 + (size % 2 && rank % 2));
    int v = rank, total = -1;
    OK(MPI_Allreduce(&v, &total, 1, MPI_INT, MPI_SUM, dup)); /* the remote group's sum */
    int want = 0;
    for (int r = 0; r < size; r++)
        if (r % 2 != rank % 2) want += r;
    CHECK(total == want);
    OK(MPI_Comm_free(&dup));
    OK(MPI_Comm_free(&inter));
    OK(MPI_Comm_free(&local));
}

static void hints(void) {
    MPI_Info in;
    MPI_Comm a, b, c, d;
    MPI_Request req;
    OK(MPI_Info_create(&in));
    OK(MPI_Info_set(in, "mpi_assert_no_any_tag", "true"));
    OK(MPI_Info_set(in, "mpi_assert_exact_length", "TRUE"));
    OK(MPI_Info_set(in, "mpi_assert_no_any_source", "maybe")); /* not a valid value: ignored */
    OK(MPI_Info_set(in, "made_up_key", "1"));                  /* unknown: ignored */
    OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, in, &a));
    CHECK(has_key(a, "mpi_assert_no_any_tag", "true"));
    CHECK(has_key(a, "mpi_assert_exact_length", "true"));
    CHECK(!has_key(a, "mpi_assert_no_any_source", NULL));
    CHECK(!has_key(a, "made_up_key", NULL));
    check_works(a);
    /* set_info adds and changes; the hints not named keep their values. */
    OK(MPI_Info_delete(in, "mpi_assert_exact_length"));
    OK(MPI_Info_set(in, "mpi_assert_no_any_tag", "false"));
    OK(MPI_Info_set(in, "mpi_assert_allow_overtaking", "true"));
    OK(MPI_Comm_set_info(a, in));
    CHECK(has_key(a, "mpi_assert_no_any_tag", "false"));
    CHECK(has_key(a, "mpi_assert_exact_length", "true"));
    CHECK(has_key(a, "mpi_assert_allow_overtaking", "true"));
    OK(MPI_Comm_set_info(a, MPI_INFO_NULL));
    /* A dup keeps the hints; a dup with MPI_INFO_NULL has none; idup_with_info takes its
     * info's. */
    OK(MPI_Comm_dup(a, &b));
    CHECK(has_key(b, "mpi_assert_allow_overtaking", "true"));
    OK(MPI_Comm_dup_with_info(a, MPI_INFO_NULL, &c));
    CHECK(!has_key(c, "mpi_assert_allow_overtaking", NULL));
    OK(MPI_Comm_idup_with_info(a, in, &d, &req));
    OK(MPI_Info_free(&in)); /* freed before the idup completes */
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(has_key(d, "mpi_assert_no_any_tag", "false"));
    CHECK(!has_key(d, "mpi_assert_exact_length", NULL));
    check_works(d);
    OK(MPI_Comm_free(&a));
    OK(MPI_Comm_free(&b));
    OK(MPI_Comm_free(&c));
    OK(MPI_Comm_free(&d));
}

static void misuse(void) {
    MPI_Comm c;
    MPI_Request req;
    MPI_Info info;
    FAILS(MPI_Comm_idup(MPI_COMM_NULL, &c, &req), MPI_ERR_COMM);
    FAILS(MPI_Comm_idup(MPI_COMM_WORLD, NULL, &req), MPI_ERR_ARG);
    FAILS(MPI_Comm_get_info(MPI_COMM_NULL, &info), MPI_ERR_COMM);
    FAILS(MPI_Comm_get_info(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    FAILS(MPI_Comm_set_info(MPI_COMM_WORLD, (MPI_Info)0x7777), MPI_ERR_INFO);
    FAILS(MPI_Comm_dup_with_info(MPI_COMM_WORLD, (MPI_Info)0x7777, &c), MPI_ERR_INFO);
    /* The new handle of an idup is not usable before its request completes. */
    MPI_Comm early;
    int rank;
    OK(MPI_Comm_idup(MPI_COMM_SELF, &early, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    OK(MPI_Comm_rank(early, &rank));
    CHECK(rank == 0);
    OK(MPI_Comm_free(&early));
}

int main(int argc, char **argv) {
    int rank, size, keyval;
    test_init(&argc, &argv, &rank, &size);
    OK(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &keyval, NULL));
    OK(MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, &copies));
    for (int round = 0; round < 3; round++) idups_with_traffic(rank, size, keyval);
    overlapping_pairs(rank, size);
    intercomm_idup(rank, size);
    hints();
    misuse();
    OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval));
    OK(MPI_Comm_free_keyval(&keyval));
    test_finish(rank, "comm_info");
    return 0;
}
