/* count_tool.c: a profiling tool of the kind the MPI profiling interface exists for. It defines
 * MPI_Init (and MPI_Init_thread, counted as Init), MPI_Send, MPI_Recv, MPI_Allreduce and MPI_Finalize, counts the program's calls of
 * each and reaches the library through their PMPI_ names; at MPI_Finalize every rank prints
 *   pmpi-count rank=R Init=1 Send=S Recv=V Allreduce=A Finalize=1
 * Used by tests/run-pmpi-test.sh as a shared library (LD_PRELOAD, or linked before -lmpi; built
 * without -lmpi, so the PMPI_ names bind to whichever libmpi the program loads) and as an object
 * linked with the program and libmpi.a. */
#include <mpi.h>
#include <stdio.h>

static long n_init, n_send, n_recv, n_allreduce, n_finalize;

int MPI_Init(int *argc, char ***argv) {
    n_init++;
    return PMPI_Init(argc, argv);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    n_init++;
    return PMPI_Init_thread(argc, argv, required, provided);
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    n_send++;
    return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    n_recv++;
    return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
    n_allreduce++;
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Finalize(void) {
    int rank = -1;
    n_finalize++;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("pmpi-count rank=%d Init=%ld Send=%ld Recv=%ld Allreduce=%ld Finalize=%ld\n", rank,
           n_init, n_send, n_recv, n_allreduce, n_finalize);
    fflush(stdout);
    return PMPI_Finalize();
}
