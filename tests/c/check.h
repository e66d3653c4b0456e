/* check.h: assertion helpers shared by the C tests. A failed check prints where and why, then
 * aborts the job (so mpirun exits non-zero). */
#ifndef MPICD_TEST_CHECK_H
#define MPICD_TEST_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            int r_ = -1;                                                                 \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                          \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s\n", r_, __FILE__, __LINE__, \
                    #cond);                                                              \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                \
        }                                                                                \
    } while (0)

/* A call that must succeed. */
#define OK(call) CHECK((call) == MPI_SUCCESS)

/* A call that must fail with error class `cls` (the communicator uses MPI_ERRORS_RETURN). */
#define FAILS(call, cls)                                                                 \
    do {                                                                                 \
        int rc_ = (call);                                                                \
        if (rc_ != (cls)) {                                                              \
            fprintf(stderr, "%s:%d: %s returned %d, expected %s=%d\n", __FILE__, __LINE__,  \
                    #call, rc_, #cls, (cls));                                            \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                \
        }                                                                                \
    } while (0)

/* The region-count callback of a custom type with one region per element. */
static inline int one_region_per_element(void *state, void *buf, MPI_Count count, MPI_Count *n) {
    (void)state;
    (void)buf;
    *n = count;
    return MPI_SUCCESS;
}

/* MPI_Init, then MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF (each call's error is
 * checked where it is made); sets this process's rank and the number of ranks. */
static inline void test_init(int *argc, char ***argv, int *rank, int *size) {
    OK(MPI_Init(argc, argv));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, size));
}

/* MPI_Finalize, then rank 0 prints "NAME: all checks passed" (what run-c-tests.sh looks for). */
static inline void test_finish(int rank, const char *name) {
    OK(MPI_Finalize());
    if (rank == 0) printf("%s: all checks passed\n", name);
}

#endif
