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

#endif
