/* io_basic.c: MPI parallel I/O basics in a fresh temporary directory: MPI_File_open (create,
 * exclusive, the access mode checks), explicit-offset and individual-pointer reads and writes
 * (each rank its own block, read back by another rank), seek (SET, CUR, END) and positions,
 * get_size / set_size / preallocate, sync, get_amode, get_group, atomicity, info, nonblocking
 * reads and writes with MPI_Wait / MPI_Waitall and their counts, DELETE_ON_CLOSE, delete, the
 * default error handler of files (MPI_ERRORS_RETURN, replaced through MPI_FILE_NULL), user
 * file error handlers, and the error classes of bad arguments. */
#include "check.h"
#include <string.h>
#include <unistd.h>

#define N 100

static char dir[256];

static void path(char *out, const char *name) { snprintf(out, 512, "%s/%s", dir, name); }

/* Rank 0 makes the temporary directory; every rank learns its name. */
static void make_dir(int rank) {
    if (rank == 0) {
        strcpy(dir, "/tmp/mpicd-io-XXXXXX");
        CHECK(mkdtemp(dir) != NULL);
    }
    OK(MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD));
}

static int handler_calls = 0, handler_code = 0;
static MPI_File handler_file = MPI_FILE_NULL;
static void file_handler(MPI_File *fh, int *code, ...) {
    handler_calls++;
    handler_code = *code;
    handler_file = *fh;
}

static void errors(int rank) {
    char p[512], q[512];
    MPI_File fh;
    int buf[4] = {0}, cls;
    path(p, "missing");
    FAILS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
          MPI_ERR_NO_SUCH_FILE);
    FAILS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
          MPI_ERR_AMODE);
    FAILS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    FAILS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
          MPI_ERR_AMODE);
    FAILS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
                        &fh),
          MPI_ERR_AMODE);
    if (rank == 0) FAILS(MPI_File_delete(p, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    FAILS(MPI_File_write_at(MPI_FILE_NULL, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_FILE);
    FAILS(MPI_File_get_size(MPI_FILE_NULL, NULL), MPI_ERR_FILE);
    FAILS(MPI_File_close(NULL), MPI_ERR_ARG);

    /* An existing file: exclusive creation fails; a read-only file refuses writes. */
    path(q, "exists");
    OK(MPI_File_open(MPI_COMM_WORLD, q, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    FAILS(MPI_File_read_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ACCESS);
    FAILS(MPI_File_write_at(fh, 0, buf, -1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    FAILS(MPI_File_write_at(fh, 0, buf, 1, MPI_DATATYPE_NULL, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    FAILS(MPI_File_write_at(fh, -1, buf, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    FAILS(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
    FAILS(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
    OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL);
    FAILS(MPI_File_open(MPI_COMM_WORLD, q, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                        MPI_INFO_NULL, &fh),
          MPI_ERR_FILE_EXISTS);
    OK(MPI_File_open(MPI_COMM_WORLD, q, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    cls = MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(cls == MPI_ERR_READ_ONLY || cls == MPI_ERR_ACCESS);
    FAILS(MPI_File_set_size(fh, 10), MPI_ERR_READ_ONLY);

    /* A user handler on the file is called with the file and the code. */
    MPI_Errhandler eh, got;
    OK(MPI_File_create_errhandler(file_handler, &eh));
    OK(MPI_File_set_errhandler(fh, eh));
    OK(MPI_File_get_errhandler(fh, &got));
    CHECK(got == eh);
    OK(MPI_Errhandler_free(&got));
    FAILS(MPI_File_read_at(fh, 0, buf, -5, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_COUNT && handler_file == fh);
    OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_IO);
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) OK(MPI_File_delete(q, MPI_INFO_NULL));
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* The default handler of files is MPI_ERRORS_RETURN; set through MPI_FILE_NULL, it takes
     * the errors of open and of calls on MPI_FILE_NULL. */
    OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    CHECK(got == MPI_ERRORS_RETURN);
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    FAILS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
          MPI_ERR_NO_SUCH_FILE);
    CHECK(handler_calls == 3 && handler_code == MPI_ERR_NO_SUCH_FILE);
    CHECK(handler_file == MPI_FILE_NULL);
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_free(&eh));
    /* A communicator's handler is not a file's. */
    MPI_Errhandler ceh;
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &ceh));
    OK(MPI_Errhandler_free(&ceh));
}

int main(int argc, char **argv) {
    int rank, size, i, count, flag, amode;
    char p[512];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset off, sz;
    test_init(&argc, &argv, &rank, &size);
    make_dir(rank);
    errors(rank);

    /* Each rank writes its block at an explicit offset; the next rank reads it back. */
    path(p, "blocks");
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_get_amode(fh, &amode));
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR));
    int out[N], in[N];
    for (i = 0; i < N; i++) out[i] = rank * 1000 + i;
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * N * sizeof(int), out, N, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == N);
    OK(MPI_File_sync(fh));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == (MPI_Offset)size * N * (MPI_Offset)sizeof(int));
    int peer = (rank + 1) % size;
    OK(MPI_File_read_at(fh, (MPI_Offset)peer * N * sizeof(int), in, N, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == N);
    for (i = 0; i < N; i++) CHECK(in[i] == peer * 1000 + i);
    /* Reading past the end gives what is there. */
    OK(MPI_File_read_at(fh, sz - 2 * sizeof(int), in, N, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 2);
    OK(MPI_Get_elements(&st, MPI_INT, &count));
    CHECK(count == 2);
    OK(MPI_File_read_at(fh, sz + 100, in, N, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 0);

    /* The individual file pointer: seek, read, position. */
    OK(MPI_File_seek(fh, (MPI_Offset)peer * N * sizeof(int) + 4 * sizeof(int), MPI_SEEK_SET));
    OK(MPI_File_read(fh, in, 3, MPI_INT, &st));
    CHECK(in[0] == peer * 1000 + 4 && in[2] == peer * 1000 + 6);
    OK(MPI_File_get_position(fh, &off));
    CHECK(off == (MPI_Offset)(peer * N * sizeof(int) + 7 * sizeof(int)));
    OK(MPI_File_seek(fh, -(MPI_Offset)sizeof(int), MPI_SEEK_CUR));
    OK(MPI_File_read(fh, in, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(in[0] == peer * 1000 + 6);
    OK(MPI_File_seek(fh, -(MPI_Offset)sizeof(int), MPI_SEEK_END));
    OK(MPI_File_read(fh, in, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(in[0] == (size - 1) * 1000 + N - 1);
    OK(MPI_File_get_byte_offset(fh, 12, &off));
    CHECK(off == 12);
    MPI_Aint ext;
    OK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
    CHECK(ext == sizeof(double));

    /* Nonblocking: complete requests with the right counts. */
    MPI_Request req[2];
    MPI_Status sts[2];
    OK(MPI_File_iwrite_at(fh, (MPI_Offset)rank * N * sizeof(int), out, N / 2, MPI_INT, &req[0]));
    OK(MPI_Wait(&req[0], &st));
    CHECK(req[0] == MPI_REQUEST_NULL);
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == N / 2);
    OK(MPI_File_iread_at(fh, (MPI_Offset)rank * N * sizeof(int), in, N, MPI_INT, &req[0]));
    OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    OK(MPI_File_iread(fh, in + N / 2, 5, MPI_INT, &req[1]));
    OK(MPI_Waitall(2, req, sts));
    OK(MPI_Get_count(&sts[0], MPI_INT, &count));
    CHECK(count == N);
    OK(MPI_Get_count(&sts[1], MPI_INT, &count));
    CHECK(count == 5 && in[N / 2] == 0 && in[N / 2 + 4] == 4);
    OK(MPI_File_iread_at(fh, 0, in, 1, MPI_INT, &req[0]));
    flag = 0;
    OK(MPI_Test(&req[0], &flag, &st));
    CHECK(flag);

    /* Size changes (collective), atomicity, group, info. */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_set_size(fh, 40));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 40);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_preallocate(fh, 100));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 100);
    OK(MPI_File_preallocate(fh, 10));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 100);
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 0);
    OK(MPI_File_set_atomicity(fh, 1));
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1);
    OK(MPI_File_write_at(fh, rank * sizeof(int), &rank, 1, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_set_atomicity(fh, 0));
    MPI_Group g, wg;
    int cmp;
    OK(MPI_File_get_group(fh, &g));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    OK(MPI_Group_compare(g, wg, &cmp));
    CHECK(cmp == MPI_IDENT);
    OK(MPI_Group_free(&g));
    OK(MPI_Group_free(&wg));
    MPI_Info info, used;
    char v[MPI_MAX_INFO_VAL];
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "access_style", "read_mostly"));
    OK(MPI_File_set_info(fh, info));
    OK(MPI_File_get_info(fh, &used));
    OK(MPI_Info_get(used, "access_style", MPI_MAX_INFO_VAL - 1, v, &flag));
    CHECK(flag && strcmp(v, "read_mostly") == 0);
    OK(MPI_Info_free(&used));
    OK(MPI_Info_free(&info));
    CHECK(MPI_File_f2c(MPI_File_c2f(fh)) == fh);
    CHECK(MPI_File_fromint(MPI_File_toint(fh)) == fh);
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) OK(MPI_File_delete(p, MPI_INFO_NULL));

    /* DELETE_ON_CLOSE removes it; APPEND starts at the end. */
    path(p, "temporary");
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    OK(MPI_File_write_at_all(fh, rank, "x", 1, MPI_CHAR, MPI_STATUS_IGNORE));
    OK(MPI_File_close(&fh));
    CHECK(access(p, F_OK) != 0);
    path(p, "append");
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    if (rank == 0) OK(MPI_File_write(fh, "abcd", 4, MPI_CHAR, MPI_STATUS_IGNORE));
    OK(MPI_File_close(&fh));
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    OK(MPI_File_get_position(fh, &off));
    CHECK(off == 4);
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        OK(MPI_File_delete(p, MPI_INFO_NULL));
        CHECK(rmdir(dir) == 0);
    }
    test_finish(rank, "io_basic");
    return 0;
}
