/* coll_arg_error.c: a collective whose arguments fail at some members before it begins has no
 * effect there (MPI's rule for a call that returns an error for its arguments): the members
 * whose arguments passed go on with their part, and a make-up call of the failed ones pairs
 * with it, through the node's memory and by messages (the run's tcp mode), blocking and
 * non-blocking, also as the first collective of a communicator (whose members agree on the
 * node's area there). Every result is checked, and the collectives after them still match.
 * The failures: aliased send and receive buffers at the root of a reduce, gather and scatter
 * (MPI_ERR_BUFFER, where only the root sees them), on every member of an allreduce, a null
 * buffer with a count at one non-root of a gather (MPI_ERR_BUFFER), an invalid op at the root
 * of a non-blocking reduce (MPI_ERR_OP). */
#include "check.h"

static int rank, size;

/* A blocking reduce of [rank, 2 rank] to `root`, failed first at the root (aliased buffers),
 * then made up there. */
static void reduce_made_up(MPI_Comm comm, int root) {
    long x[2] = {rank, 2 * rank}, sum[2] = {-1, -1};
    int rc = MPI_Reduce(x, rank == root ? x : NULL, 2, MPI_LONG, MPI_SUM, root, comm);
    CHECK(rank == root ? rc == MPI_ERR_BUFFER : rc == MPI_SUCCESS);
    if (rc != MPI_SUCCESS) OK(MPI_Reduce(x, sum, 2, MPI_LONG, MPI_SUM, root, comm));
    long all = (long)size * (size - 1) / 2;
    if (rank == root) CHECK(sum[0] == all && sum[1] == 2 * all);
}

static void gather_made_up(MPI_Comm comm, int root) {
    int mine = 10 + rank, all[64];
    for (int i = 0; i < size; i++) all[i] = -1;
    /* The root's receive buffer holds its send buffer: aliased. */
    int rc = MPI_Gather(rank == root ? &all[root] : &mine, 1, MPI_INT, all, 1, MPI_INT, root, comm);
    CHECK(rank == root ? rc == MPI_ERR_BUFFER : rc == MPI_SUCCESS);
    if (rc != MPI_SUCCESS) OK(MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, root, comm));
    if (rank == root)
        for (int i = 0; i < size; i++) CHECK(all[i] == 10 + i);
}

static void scatter_made_up(MPI_Comm comm, int root) {
    int blocks[64], got = -1;
    for (int i = 0; i < size; i++) blocks[i] = 20 + i;
    int rc = MPI_Scatter(blocks, 1, MPI_INT, rank == root ? &blocks[1 % size] : &got, 1, MPI_INT,
                         root, comm);
    CHECK(rank == root ? rc == MPI_ERR_BUFFER : rc == MPI_SUCCESS);
    if (rc != MPI_SUCCESS) OK(MPI_Scatter(blocks, 1, MPI_INT, &got, 1, MPI_INT, root, comm));
    CHECK(got == 20 + rank);
}

/* Fails on every member (each sees its own aliasing): nothing happens anywhere. */
static void allreduce_failed_everywhere(MPI_Comm comm) {
    int x = rank + 1;
    FAILS(MPI_Allreduce(&x, &x, 1, MPI_INT, MPI_SUM, comm), MPI_ERR_BUFFER);
    CHECK(x == rank + 1);
    int sum = 0;
    OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == size * (size + 1) / 2);
}

/* A non-root whose send buffer is null with a count: the others (the root included) go on. */
static void gather_failed_at_a_giver(MPI_Comm comm) {
    if (size < 2) return;
    int giver = size - 1, mine = 30 + rank, all[64];
    int rc = MPI_Gather(rank == giver ? NULL : &mine, 1, MPI_INT, all, 1, MPI_INT, 0, comm);
    CHECK(rank == giver ? rc == MPI_ERR_BUFFER : rc == MPI_SUCCESS);
    if (rc != MPI_SUCCESS) OK(MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, 0, comm));
    if (rank == 0)
        for (int i = 0; i < size; i++) CHECK(all[i] == 30 + i);
}

/* A non-blocking reduce whose root names no valid op: MPI_ERR_OP there, no request. */
static void ireduce_made_up(MPI_Comm comm, int root) {
    long x = rank + 5, sum = -1;
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Ireduce(&x, &sum, 1, MPI_LONG, rank == root ? MPI_OP_NULL : MPI_SUM, root, comm,
                         &r);
    CHECK(rank == root ? rc == MPI_ERR_OP : rc == MPI_SUCCESS);
    if (rc != MPI_SUCCESS) OK(MPI_Ireduce(&x, &sum, 1, MPI_LONG, MPI_SUM, root, comm, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    if (rank == root) CHECK(sum == (long)size * (size - 1) / 2 + 5L * size);
}

static void all_of_them(MPI_Comm comm, int k) {
    int root = k % size;
    reduce_made_up(comm, root);
    gather_made_up(comm, root);
    scatter_made_up(comm, root);
    allreduce_failed_everywhere(comm);
    gather_failed_at_a_giver(comm);
    ireduce_made_up(comm, root);
    /* Everything still matches. */
    int one = 1, n = 0;
    OK(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, comm));
    CHECK(n == size);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* The first collective of a communicator fails at one member: its area is agreed on in the
     * make-up call's turn. */
    MPI_Comm fresh;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &fresh));
    reduce_made_up(fresh, 0);
    for (int k = 0; k < 2 * size; k++) all_of_them(k % 2 ? fresh : MPI_COMM_WORLD, k);
    OK(MPI_Comm_free(&fresh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("coll_arg_error: all checks passed\n");
    MPI_Finalize();
    return 0;
}
