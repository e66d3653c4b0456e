/* env_misc.c: MPI_Alloc_mem / MPI_Free_mem (alignment, the mpi_minimum_memory_alignment info
 * key, MPI_ERR_BASE for memory MPI did not give out, MPI_ERR_ARG for a negative size),
 * MPI_Pcontrol with extra arguments, the MPI 4.1 status accessors MPI_Status_get_source /
 * _tag / _error, the error classes of the standard ABI with their text, and the large-count
 * matched receives MPI_Mrecv_c and MPI_Imrecv_c around a ring. */
#include "check.h"
#include <stdint.h>
#include <string.h>

static void check_class(int cls, const char *name) {
    char text[MPI_MAX_ERROR_STRING];
    int len = -1, got = -1;
    OK(MPI_Error_class(cls, &got));
    CHECK(got == cls);
    OK(MPI_Error_string(cls, text, &len));
    CHECK(len > 0 && strncmp(text, name, strlen(name)) == 0);
    CHECK(cls <= MPI_ERR_LASTCODE);
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);

    /* Alloc_mem: usable, 64-byte aligned at least, more when the info key asks. */
    double *mem = NULL;
    OK(MPI_Alloc_mem(1000 * sizeof(double), MPI_INFO_NULL, &mem));
    CHECK(mem != NULL && (uintptr_t)mem % 64 == 0);
    for (int i = 0; i < 1000; i++) mem[i] = i;
    CHECK(mem[999] == 999);
    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096"));
    char *page = NULL;
    OK(MPI_Alloc_mem(10, info, &page));
    CHECK(page != NULL && (uintptr_t)page % 4096 == 0);
    OK(MPI_Info_set(info, "mpi_minimum_memory_alignment", "not a number")); /* ignored hint */
    char *other = NULL;
    OK(MPI_Alloc_mem(0, info, &other));
    CHECK(other != NULL && other != page);
    OK(MPI_Info_free(&info));
    /* memory that MPI did not allocate, or freed twice */
    int local = 0;
    FAILS(MPI_Free_mem(&local), MPI_ERR_BASE);
    FAILS(MPI_Free_mem(mem + 1), MPI_ERR_BASE);
    OK(MPI_Free_mem(mem));
    FAILS(MPI_Free_mem(mem), MPI_ERR_BASE);
    OK(MPI_Free_mem(page));
    OK(MPI_Free_mem(other));
    void *none = NULL;
    FAILS(MPI_Alloc_mem(-1, MPI_INFO_NULL, &none), MPI_ERR_ARG);
    FAILS(MPI_Alloc_mem((MPI_Aint)(SIZE_MAX >> 1), MPI_INFO_NULL, &none), MPI_ERR_NO_MEM);

    /* Pcontrol: any level, any further arguments. */
    OK(MPI_Pcontrol(0));
    OK(MPI_Pcontrol(1, "phase", 2.5));
    OK(MPI_Pcontrol(-7));

    /* Status accessors. */
    MPI_Status st;
    st.MPI_SOURCE = 3;
    st.MPI_TAG = 44;
    st.MPI_ERROR = MPI_ERR_TRUNCATE;
    int v = -1;
    OK(MPI_Status_get_source(&st, &v));
    CHECK(v == 3);
    OK(MPI_Status_get_tag(&st, &v));
    CHECK(v == 44);
    OK(MPI_Status_get_error(&st, &v));
    CHECK(v == MPI_ERR_TRUNCATE);
    FAILS(MPI_Status_get_tag(MPI_STATUS_IGNORE, &v), MPI_ERR_ARG);
    FAILS(MPI_Status_get_source(&st, NULL), MPI_ERR_ARG);

    /* Error classes of the standard ABI (values of the MPI Forum's mpi-abi-stubs). */
    CHECK(MPI_ERR_BASE == 24 && MPI_ERR_FILE == 30 && MPI_ERR_WIN == 56 && MPI_ERR_SESSION == 60);
    CHECK(MPI_ERR_SIZE == 52 && MPI_ERR_RMA_SYNC == 50 && MPI_ERR_ABI == 62);
    check_class(MPI_ERR_BASE, "MPI_ERR_BASE");
    check_class(MPI_ERR_SIZE, "MPI_ERR_SIZE");
    check_class(MPI_ERR_DISP, "MPI_ERR_DISP");
    check_class(MPI_ERR_ASSERT, "MPI_ERR_ASSERT");
    check_class(MPI_ERR_LOCKTYPE, "MPI_ERR_LOCKTYPE");
    check_class(MPI_ERR_RMA_CONFLICT, "MPI_ERR_RMA_CONFLICT");
    check_class(MPI_ERR_RMA_FLAVOR, "MPI_ERR_RMA_FLAVOR");
    check_class(MPI_ERR_WIN, "MPI_ERR_WIN");
    check_class(MPI_ERR_FILE, "MPI_ERR_FILE");
    check_class(MPI_ERR_IO, "MPI_ERR_IO");
    check_class(MPI_ERR_AMODE, "MPI_ERR_AMODE");
    check_class(MPI_ERR_QUOTA, "MPI_ERR_QUOTA");
    check_class(MPI_ERR_SPAWN, "MPI_ERR_SPAWN");
    check_class(MPI_ERR_PORT, "MPI_ERR_PORT");
    check_class(MPI_ERR_SERVICE, "MPI_ERR_SERVICE");
    check_class(MPI_ERR_NAME, "MPI_ERR_NAME");
    check_class(MPI_ERR_SESSION, "MPI_ERR_SESSION");
    check_class(MPI_ERR_ABI, "MPI_ERR_ABI");

    /* Mrecv_c / Imrecv_c: from the left neighbour, two messages, one per form. */
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    long long out[3] = {rank, rank * 2LL, (long long)1 << 40}, in[3] = {0};
    MPI_Request sends[2];
    OK(MPI_Isend(out, 3, MPI_LONG_LONG, to, 7, MPI_COMM_WORLD, &sends[0]));
    OK(MPI_Isend(out, 2, MPI_LONG_LONG, to, 8, MPI_COMM_WORLD, &sends[1]));
    MPI_Message msg;
    MPI_Count n = -1;
    OK(MPI_Mprobe(from, 7, MPI_COMM_WORLD, &msg, &st));
    OK(MPI_Mrecv_c(in, (MPI_Count)3, MPI_LONG_LONG, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL);
    CHECK(in[0] == from && in[1] == 2LL * from && in[2] == (long long)1 << 40);
    OK(MPI_Get_count_c(&st, MPI_LONG_LONG, &n));
    CHECK(n == 3);
    OK(MPI_Status_get_source(&st, &v));
    CHECK(v == from);
    OK(MPI_Status_get_tag(&st, &v));
    CHECK(v == 7);
    memset(in, 0, sizeof in);
    MPI_Request r;
    OK(MPI_Mprobe(from, 8, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE));
    OK(MPI_Imrecv_c(in, (MPI_Count)3, MPI_LONG_LONG, &msg, &r));
    OK(MPI_Wait(&r, &st));
    OK(MPI_Get_count_c(&st, MPI_LONG_LONG, &n));
    CHECK(n == 2 && in[0] == from && in[1] == 2LL * from && in[2] == 0);
    OK(MPI_Waitall(2, sends, MPI_STATUSES_IGNORE));
    /* MPI_MESSAGE_NO_PROC completes at once, from MPI_PROC_NULL. */
    OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE));
    CHECK(msg == MPI_MESSAGE_NO_PROC);
    OK(MPI_Mrecv_c(in, (MPI_Count)1, MPI_LONG_LONG, &msg, &st));
    OK(MPI_Status_get_source(&st, &v));
    CHECK(v == MPI_PROC_NULL);
    FAILS(MPI_Mrecv_c(in, (MPI_Count)-1, MPI_LONG_LONG, &msg, &st), MPI_ERR_REQUEST);

    test_finish(rank, "env_misc");
    return 0;
}
