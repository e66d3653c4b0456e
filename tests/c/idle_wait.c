/* idle_wait.c: ranks blocked in MPI_Recv, MPI_Wait, MPI_Waitall, MPI_Waitany and MPI_Barrier
 * while rank 0 sleeps, then gets their messages: every wait ends with the right data, and
 * when this node runs more ranks than it has cores (MPICD_WAIT=auto, the default, then sleeps
 * on the transport's event descriptor) a blocked rank uses less than a fifth of the waiting
 * time as CPU. Each rank prints its CPU time per wall time. */
#include "check.h"
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define NAP_US 400000 /* rank 0's sleep before each phase */

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/* True when waits are expected to sleep: more ranks than cores on this one node, and
 * MPICD_WAIT unset, auto or sleep. */
static int expect_sleep(int size) {
    const char *w = getenv("MPICD_WAIT");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (w && strcmp(w, "auto") != 0 && strcmp(w, "sleep") != 0) return 0;
    if (w && strcmp(w, "sleep") == 0) return 1;
    return size > cores;
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    if (size < 2) {
        test_finish(rank, "idle_wait");
        return 0;
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    double wall0 = MPI_Wtime(), cpu0 = cpu_seconds();
    int x[2] = {-1, -1};
    if (rank == 0) {
        for (int phase = 0; phase < 5; phase++) {
            usleep(NAP_US);
            if (phase == 4) {
                OK(MPI_Barrier(MPI_COMM_WORLD));
                continue;
            }
            for (int to = 1; to < size; to++) {
                int v[2] = {phase * 100 + to, phase * 100 + to + 1};
                OK(MPI_Send(v, 2, MPI_INT, to, phase, MPI_COMM_WORLD));
            }
        }
    } else {
        MPI_Request r[2];
        int idx = -1;
        /* phase 0: MPI_Recv */
        OK(MPI_Recv(x, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(x[0] == rank && x[1] == rank + 1);
        /* phase 1: MPI_Wait */
        OK(MPI_Irecv(x, 2, MPI_INT, 0, 1, MPI_COMM_WORLD, &r[0]));
        OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        CHECK(x[0] == 100 + rank);
        /* phase 2: MPI_Waitall over the message and an inactive request */
        OK(MPI_Irecv(x, 2, MPI_INT, 0, 2, MPI_COMM_WORLD, &r[0]));
        r[1] = MPI_REQUEST_NULL;
        OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        CHECK(x[0] == 200 + rank);
        /* phase 3: MPI_Waitany */
        OK(MPI_Irecv(x, 2, MPI_INT, 0, 3, MPI_COMM_WORLD, &r[1]));
        r[0] = MPI_REQUEST_NULL;
        OK(MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE));
        CHECK(idx == 1 && x[0] == 300 + rank);
        /* phase 4: a collective */
        OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    double wall = MPI_Wtime() - wall0, cpu = cpu_seconds() - cpu0;
    int sleeps = expect_sleep(size);
    printf("idle_wait: rank %d of %d: %.3f s CPU in %.3f s of waiting (%s)\n", rank, size, cpu,
           wall, sleeps ? "sleeping expected" : "may spin");
    if (rank != 0 && sleeps) CHECK(cpu < 0.2 * wall);
    test_finish(rank, "idle_wait");
    return 0;
}
