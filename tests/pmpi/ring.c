/* ring.c: a program with known MPI call counts for tests/run-pmpi-test.sh (2 or more ranks).
 * Every rank calls MPI_Init once, MPI_Send and MPI_Recv ROUNDS times each (a token passed
 * around the ring), MPI_Allreduce twice and MPI_Finalize once. It also calls MPI_Sendrecv and
 * MPI_Bcast, which the library must not turn into calls of the tool's MPI_Send/MPI_Recv, and
 * PMPI_Allreduce itself, which no tool sees; so the tool must count exactly
 *   Init=1 Send=ROUNDS Recv=ROUNDS Allreduce=2 Finalize=1
 * on every rank. Rank 0 prints "ring: all checks passed". */
#include "../c/check.h"

#define ROUNDS 3

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    CHECK(size >= 2);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    for (int round = 0; round < ROUNDS; round++) {
        int token = -1;
        if (rank == 0) {
            token = 100 * round;
            OK(MPI_Send(&token, 1, MPI_INT, right, round, MPI_COMM_WORLD));
            OK(MPI_Recv(&token, 1, MPI_INT, left, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(token == 100 * round + size - 1);
        } else {
            OK(MPI_Recv(&token, 1, MPI_INT, left, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(token == 100 * round + rank - 1);
            token++;
            OK(MPI_Send(&token, 1, MPI_INT, right, round, MPI_COMM_WORLD));
        }
    }

    int one = 1, sum = 0;
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size);
    OK(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * size);
    /* Called by its PMPI_ name: reaches the library, uncounted. */
    OK(PMPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    CHECK(sum == 1);

    int got = -1;
    OK(MPI_Sendrecv(&rank, 1, MPI_INT, right, 99, &got, 1, MPI_INT, left, 99, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    CHECK(got == left);
    int root_value = rank == 0 ? 42 : 0;
    OK(MPI_Bcast(&root_value, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(root_value == 42);

    test_finish(rank, "ring");
    return 0;
}
