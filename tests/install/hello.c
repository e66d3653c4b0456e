/* hello.c: an MPI program written only against the standard (no mpicd extension), used to
 * check the installed tree: built with the installed mpicc, with pkg-config, with -lmpi_abi,
 * statically, and through CMake's FindMPI; run under mpirun. Rank 0 prints "hello: ok". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                        \
    do {                                                                \
        if (!(c)) {                                                     \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
            MPI_Abort(MPI_COMM_WORLD, 1);                               \
        }                                                               \
    } while (0)

int main(int argc, char **argv) {
    CHECK(MPI_Init(&argc, &argv) == MPI_SUCCESS);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int sum = 0;
    CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(sum == size * (size - 1) / 2);

    double token[4] = {0};
    if (rank == 0)
        for (int i = 0; i < 4; i++) token[i] = 1.5 * i;
    CHECK(MPI_Bcast(token, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
    for (int i = 0; i < 4; i++) CHECK(token[i] == 1.5 * i);

    int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1;
    MPI_Status st;
    CHECK(MPI_Sendrecv(&rank, 1, MPI_INT, next, 5, &got, 1, MPI_INT, prev, 5, MPI_COMM_WORLD,
                       &st) == MPI_SUCCESS);
    CHECK(got == prev && st.MPI_SOURCE == prev && st.MPI_TAG == 5);

    int version, subversion;
    MPI_Get_version(&version, &subversion);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    CHECK(MPI_Finalize() == MPI_SUCCESS);
    if (rank == 0) printf("hello: ok, %d ranks, MPI %d.%d, %s\n", size, version, subversion, lib);
    return 0;
}
