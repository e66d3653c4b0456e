/* abi_info.c: the standard ABI's queries and renumbered constants at run time.
 * MPI_Abi_get_version and MPI_Abi_get_info before MPI_Init, between init and finalize and after
 * finalize (1.0; the sizes of MPI_Aint, MPI_Count and MPI_Offset); MPI_Init_thread with the
 * standard thread levels (4096 for MULTIPLE); MPI_PROC_NULL and MPI_ANY_TAG in a receive's
 * status (MPI_ROOT is no rank of an intracommunicator); MPI_IDENT from MPI_Comm_compare; the
 * predefined attribute MPI_TAG_UB; MPI_KEYVAL_INVALID after a keyval is freed; the error class
 * names of the renumbered classes; the Fortran properties (MPI_Abi_get_fortran_info: sizes 4, 4,
 * 4, 8, the optional types; MPI_Abi_get_fortran_booleans: 1 and 0; both setters MPI_ERR_ABI).
 * Local calls only, except the ring exchange. */
#include "check.h"
#include <string.h>

static void check_abi_queries(void) {
    int major = -1, minor = -1, flag = 0;
    char v[MPI_MAX_INFO_VAL], want[32];
    MPI_Info info = MPI_INFO_NULL;
    OK(MPI_Abi_get_version(&major, &minor));
    CHECK(major == 1 && minor == 0);
    OK(MPI_Abi_get_info(&info));
    CHECK(info != MPI_INFO_NULL);
    const char *keys[3] = {"mpi_aint_size", "mpi_count_size", "mpi_offset_size"};
    size_t sizes[3] = {sizeof(MPI_Aint), sizeof(MPI_Count), sizeof(MPI_Offset)};
    for (int i = 0; i < 3; i++) {
        OK(MPI_Info_get(info, keys[i], MPI_MAX_INFO_VAL - 1, v, &flag));
        snprintf(want, sizeof want, "%zu", sizes[i]);
        CHECK(flag == 1 && strcmp(v, want) == 0);
    }
    OK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL);

    /* Fortran: the library knows gfortran's properties; they cannot be set again. */
    OK(MPI_Abi_get_fortran_info(&info));
    CHECK(info != MPI_INFO_NULL);
    const char *fkeys[6] = {"mpi_logical_size", "mpi_integer_size", "mpi_real_size",
                            "mpi_double_precision_size", "mpi_integer8_supported",
                            "mpi_real2_supported"};
    const char *fvals[6] = {"4", "4", "4", "8", "true", "true"};
    for (int i = 0; i < 6; i++) {
        OK(MPI_Info_get(info, fkeys[i], MPI_MAX_INFO_VAL - 1, v, &flag));
        CHECK(flag == 1 && strcmp(v, fvals[i]) == 0);
    }
    int integer_size = -1;
    OK(MPI_Type_size(MPI_INTEGER, &integer_size));
    CHECK(integer_size == 4);
    CHECK(MPI_Abi_set_fortran_info(info) == MPI_ERR_ABI);
    OK(MPI_Info_free(&info));
    CHECK(MPI_Abi_set_fortran_info(MPI_INFO_NULL) == MPI_ERR_INFO);
    CHECK(MPI_Abi_get_fortran_info(NULL) == MPI_ERR_ARG);
    long long t = -1, f = -1;
    int is_set = 0;
    OK(MPI_Abi_get_fortran_booleans(8, &t, &f, &is_set));
    CHECK(t == 1 && f == 0 && is_set == 1);
    int t4 = -1, f4 = -1;
    OK(MPI_Abi_get_fortran_booleans(4, &t4, &f4, &is_set));
    CHECK(t4 == 1 && f4 == 0);
    CHECK(MPI_Abi_get_fortran_booleans(3, &t4, &f4, &is_set) == MPI_ERR_ARG);
    CHECK(MPI_Abi_set_fortran_booleans(4, &t4, &f4) == MPI_ERR_ABI);
    CHECK(MPI_Abi_set_fortran_booleans(6, &t4, &f4) == MPI_ERR_ARG);
}

static void check_class_name(int cls, const char *name) {
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    OK(MPI_Error_string(cls, s, &len));
    CHECK(strncmp(s, name, strlen(name)) == 0);
}

int main(int argc, char **argv) {
    int provided = -1, level = -1, rank, size, flag = 0, res = -1, *ub = NULL, x, kv;
    MPI_Status st;

    /* Before MPI_Init */
    check_abi_queries();

    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
          MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE && MPI_THREAD_MULTIPLE == 4096);
    CHECK(provided == MPI_THREAD_MULTIPLE);
    OK(MPI_Query_thread(&level));
    CHECK(level == provided);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_abi_queries();
    FAILS(MPI_Abi_get_version(NULL, &x), MPI_ERR_ARG);
    FAILS(MPI_Abi_get_info(NULL), MPI_ERR_ARG);

    /* Sentinels of the standard ABI, through a receive and a status. */
    CHECK(MPI_ANY_TAG == -2 && MPI_PROC_NULL == -3 && MPI_ROOT == -4);
    x = 5;
    OK(MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK(x == 5 && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);
    OK(MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 3, &x, 1, MPI_INT, MPI_ANY_SOURCE,
                    MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK(x == (rank + size - 1) % size && st.MPI_TAG == 3 && st.MPI_SOURCE == x);
    FAILS(MPI_Send(&x, 1, MPI_INT, MPI_ROOT, 0, MPI_COMM_WORLD), MPI_ERR_RANK);

    /* Comparisons and attributes. */
    OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_IDENT && MPI_IDENT == 201);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK(MPI_TAG_UB == 501 && flag == 1 && *ub >= 32767);
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv, NULL));
    CHECK(kv != MPI_KEYVAL_INVALID);
    OK(MPI_Comm_free_keyval(&kv));
    CHECK(kv == MPI_KEYVAL_INVALID && MPI_KEYVAL_INVALID == 0);

    /* The renumbered error classes keep their names. */
    CHECK(MPI_ERR_QUOTA == 44 && MPI_ERR_UNSUPPORTED_OPERATION == 55 && MPI_ERR_PROC_ABORTED == 58);
    check_class_name(MPI_ERR_QUOTA, "MPI_ERR_QUOTA");
    check_class_name(MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION");
    check_class_name(MPI_ERR_PROC_ABORTED, "MPI_ERR_PROC_ABORTED");

    test_finish(rank, "abi_info");

    /* After MPI_Finalize */
    check_abi_queries();
    return 0;
}
