// check.hpp: assertion helpers of the C++ tests. A failed check prints where and why, then
// aborts the job, so mpirun (and ctest) report a failure.
#ifndef MPICD_CPP_TEST_CHECK_HPP
#define MPICD_CPP_TEST_CHECK_HPP

#include <mpi.h>

#include <cstdio>
#include <cstdlib>

namespace test {

inline int rank() {
    int r = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

inline int size() {
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

[[noreturn]] inline void fail(const char *file, int line, const char *what) {
    std::fprintf(stderr, "[rank %d] %s:%d: check failed: %s\n", rank(), file, line, what);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();
}

}  // namespace test

#define CHECK(cond)                                       \
    do {                                                  \
        if (!(cond)) test::fail(__FILE__, __LINE__, #cond); \
    } while (0)

// A call that must succeed.
#define OK(call) CHECK((call) == MPI_SUCCESS)

namespace test {

// MPI_Init, then MPI_ERRORS_RETURN on MPI_COMM_WORLD (each call's error is checked where it is
// made).
inline void init(int *argc, char ***argv) {
    OK(MPI_Init(argc, argv));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
}

// The error class of a call's return code.
inline int error_class(int rc) {
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

// The end of a test: a barrier, MPI_Finalize, then rank 0 prints "NAME: all checks passed".
inline void finish(const char *name) {
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int me = rank();
    OK(MPI_Finalize());
    if (me == 0) std::printf("%s: all checks passed\n", name);
}

}  // namespace test

#endif
