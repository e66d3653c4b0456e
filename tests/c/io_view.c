/* io_view.c: file views and the shared file pointer, in a fresh temporary directory:
 * interleaved vector views written collectively (write_all, write_at_all, split collectives)
 * and read back contiguously by every rank, a noncontiguous memory type through a
 * noncontiguous view, get_view / get_byte_offset / seek END in a view, set_view's checks
 * (MPI_ERR_IO for decreasing displacements), the shared file pointer with all ranks racing
 * (every record written once, none lost or overlapping), ordered writes and reads (rank
 * order), seek_shared / get_position_shared, nonblocking shared and collective forms, a
 * sequential file (MPI_ERR_UNSUPPORTED_OPERATION for the individual pointer), external32
 * (big-endian bytes in the file), and MPI_Register_datarep (MPI_ERR_DUP_DATAREP; a
 * representation whose conversion functions complement every int). */
#include "check.h"
#include <string.h>
#include <unistd.h>

#define B 4    /* ints per block of the interleaved view */
#define NB 6   /* blocks per rank */
#define R 25   /* shared-pointer records per rank */

static char dir[256];

static void path(char *out, const char *name) { snprintf(out, 512, "%s/%s", dir, name); }

/* A representation that stores each int complemented: the conversions of "io-view-not". */
static int not_write(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position,
                     void *extra) {
    (void)t;
    (*(int *)extra)++;
    for (int i = 0; i < count; i++) ((int *)filebuf)[i] = ~((int *)userbuf)[position + i];
    return MPI_SUCCESS;
}

static int not_read(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position,
                    void *extra) {
    (void)t;
    (*(int *)extra)++;
    for (int i = 0; i < count; i++) ((int *)userbuf)[position + i] = ~((int *)filebuf)[i];
    return MPI_SUCCESS;
}

static int ext_fn(MPI_Datatype t, MPI_Aint *extent, void *extra) {
    MPI_Aint lb;
    (void)extra;
    return MPI_Type_get_extent(t, &lb, extent);
}

/* Interleaved blocks: rank r owns blocks r, r + size, r + 2 size ... of B ints. */
static void interleaved(int rank, int size) {
    char p[512];
    MPI_File fh;
    MPI_Datatype ft, ft2, et;
    MPI_Status st;
    MPI_Offset disp, off;
    char rep[MPI_MAX_DATAREP_STRING];
    int i, count, buf[B * NB], all[B * NB * 4];
    path(p, "interleaved");
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_Type_vector(1, B, B * size, MPI_INT, &ft));
    OK(MPI_Type_create_resized(ft, 0, (MPI_Aint)(B * size * sizeof(int)), &ft2));
    OK(MPI_Type_commit(&ft2));
    OK(MPI_File_set_view(fh, 16 + rank * B * sizeof(int), MPI_INT, ft2, "native", MPI_INFO_NULL));
    OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(disp == (MPI_Offset)(16 + rank * B * sizeof(int)) && et == MPI_INT);
    CHECK(strcmp(rep, "native") == 0);
    OK(MPI_Type_free(&ft));
    for (i = 0; i < B * NB; i++) buf[i] = rank * 10000 + i;
    /* Half with write_all, the rest with a split collective at an explicit offset. */
    OK(MPI_File_write_all(fh, buf, B * NB / 2, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == B * NB / 2);
    OK(MPI_File_get_position(fh, &off));
    CHECK(off == B * NB / 2);
    OK(MPI_File_write_at_all_begin(fh, B * NB / 2, buf + B * NB / 2, B * NB / 2, MPI_INT));
    FAILS(MPI_File_write_all_begin(fh, buf, 1, MPI_INT), MPI_ERR_ARG);
    OK(MPI_File_write_at_all_end(fh, buf, &st));
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == B * NB / 2);
    /* Byte offsets: etype 5 of this rank is in its second block. */
    OK(MPI_File_get_byte_offset(fh, 5, &off));
    CHECK(off == (MPI_Offset)(16 + (rank * B + B * size + 1) * sizeof(int)));
    OK(MPI_File_sync(fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_sync(fh));
    /* SEEK_END: the view holds B * NB ints of this rank before the end. */
    OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    OK(MPI_File_get_position(fh, &off));
    CHECK(off == B * NB);
    /* Every rank reads the whole file back through the byte view. */
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at_all(fh, 16, all, B * NB * size, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == B * NB * size);
    for (i = 0; i < B * NB * size; i++) {
        int blk = i / B, owner = blk % size, k = (blk / size) * B + i % B;
        CHECK(all[i] == owner * 10000 + k);
    }
    /* A noncontiguous memory type through the noncontiguous view: every other int of a
     * doubled buffer, read back with the split read. */
    MPI_Datatype mem;
    int wide[2 * B * NB];
    OK(MPI_Type_vector(B * NB, 1, 2, MPI_INT, &mem));
    OK(MPI_Type_commit(&mem));
    OK(MPI_File_set_view(fh, 16 + rank * B * sizeof(int), MPI_INT, ft2, "native", MPI_INFO_NULL));
    for (i = 0; i < 2 * B * NB; i++) wide[i] = -1;
    OK(MPI_File_read_all_begin(fh, wide, 1, mem));
    OK(MPI_File_read_all_end(fh, wide, &st));
    OK(MPI_Get_elements(&st, mem, &count));
    CHECK(count == B * NB);
    for (i = 0; i < B * NB; i++) CHECK(wide[2 * i] == rank * 10000 + i && wide[2 * i + 1] == -1);
    for (i = 0; i < 2 * B * NB; i++) wide[2 * (i / 2) + i % 2] = (i % 2) ? -7 : rank * 20000 + i / 2;
    OK(MPI_File_write_at(fh, 0, wide, 1, mem, &st));
    OK(MPI_File_read_at(fh, 0, buf, B * NB, MPI_INT, &st));
    for (i = 0; i < B * NB; i++) CHECK(buf[i] == rank * 20000 + i);
    OK(MPI_Type_free(&mem));
    /* Decreasing displacements in a filetype: MPI_ERR_IO, the view unchanged. */
    int bl[2] = {1, 1}, dp[2] = {3, 0};
    MPI_Datatype bad;
    OK(MPI_Type_indexed(2, bl, dp, MPI_INT, &bad));
    OK(MPI_Type_commit(&bad));
    FAILS(MPI_File_set_view(fh, 0, MPI_INT, bad, "native", MPI_INFO_NULL), MPI_ERR_IO);
    OK(MPI_Type_free(&bad));
    FAILS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL),
          MPI_ERR_UNSUPPORTED_DATAREP);
    OK(MPI_Type_free(&ft2));
    OK(MPI_File_close(&fh));
}

/* All ranks append records through the shared pointer at once, then in rank order. */
static void shared(int rank, int size) {
    char p[512];
    MPI_File fh;
    MPI_Status st;
    MPI_Request req;
    MPI_Offset off;
    int i, count, rec[2], *all, seen[4 * R];
    path(p, "shared");
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    for (i = 0; i < R; i++) {
        rec[0] = rank;
        rec[1] = i;
        if (i % 5 == 4) {
            OK(MPI_File_iwrite_shared(fh, rec, 2, MPI_INT, &req));
            OK(MPI_Wait(&req, &st));
        } else {
            OK(MPI_File_write_shared(fh, rec, 2, MPI_INT, &st));
        }
        OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == 2);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_get_position_shared(fh, &off));
    CHECK(off == 2 * R * size);
    all = malloc(sizeof(int) * 2 * R * size);
    OK(MPI_File_read_at(fh, 0, all, 2 * R * size, MPI_INT, &st));
    memset(seen, 0, sizeof seen);
    for (i = 0; i < R * size; i++) {
        int r = all[2 * i], k = all[2 * i + 1];
        CHECK(r >= 0 && r < size && k >= 0 && k < R);
        seen[r * R + k]++;
    }
    for (i = 0; i < R * size; i++) CHECK(seen[i] == 1);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* Ordered: rank r writes r + 1 ints after what is there, in rank order. */
    int mine[4] = {rank, rank, rank, rank};
    OK(MPI_File_write_ordered(fh, mine, rank + 1, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == rank + 1);
    OK(MPI_File_get_position_shared(fh, &off));
    CHECK(off == 2 * R * size + size * (size + 1) / 2);
    OK(MPI_File_seek_shared(fh, 2 * R * size, MPI_SEEK_SET));
    int got[4] = {-1, -1, -1, -1};
    OK(MPI_File_read_ordered_begin(fh, got, rank + 1, MPI_INT));
    OK(MPI_File_read_ordered_end(fh, got, &st));
    for (i = 0; i <= rank; i++) CHECK(got[i] == rank);
    /* The shared pointer from the end, read with iread_shared by rank 0 alone. */
    OK(MPI_File_seek_shared(fh, -1, MPI_SEEK_END));
    if (rank == 0) {
        OK(MPI_File_iread_shared(fh, got, 1, MPI_INT, &req));
        OK(MPI_Wait(&req, &st));
        OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == 1 && got[0] == size - 1);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* Collective nonblocking forms. */
    OK(MPI_File_iwrite_at_all(fh, 2 * R * size + rank, &rank, 1, MPI_INT, &req));
    OK(MPI_Wait(&req, &st));
    OK(MPI_File_iread_at_all(fh, 2 * R * size + rank, got, 1, MPI_INT, &req));
    OK(MPI_Wait(&req, &st));
    CHECK(got[0] == rank);
    /* A member whose collective call is refused does not leave the others waiting. */
    int rc, bad = rank == 0 ? -1 : 1;
    rc = MPI_File_write_at_all(fh, 2 * R * size + rank, &rank, bad, MPI_INT, &st);
    CHECK(rank == 0 ? rc == MPI_ERR_COUNT : rc == MPI_SUCCESS);
    rc = MPI_File_write_ordered(fh, &rank, bad, MPI_INT, &st);
    CHECK(rank == 0 ? rc == MPI_ERR_COUNT : rc == MPI_SUCCESS);
    rc = MPI_File_read_all(fh, got, 1, rank == 0 ? MPI_DATATYPE_NULL : MPI_INT, &st);
    CHECK(rank == 0 ? rc == MPI_ERR_TYPE : rc == MPI_SUCCESS);
    free(all);
    OK(MPI_File_close(&fh));
}

static void sequential_and_reps(int rank) {
    char p[512];
    MPI_File fh;
    MPI_Offset off;
    MPI_Status st;
    int x = 0x01020304, y = 0;
    unsigned char raw[4];
    path(p, "seq");
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
                     MPI_INFO_NULL, &fh));
    FAILS(MPI_File_write(fh, &x, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_UNSUPPORTED_OPERATION);
    FAILS(MPI_File_write_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE),
          MPI_ERR_UNSUPPORTED_OPERATION);
    FAILS(MPI_File_get_position(fh, &off), MPI_ERR_UNSUPPORTED_OPERATION);
    OK(MPI_File_write_ordered(fh, &x, 1, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "external32",
                         MPI_INFO_NULL));
    OK(MPI_File_write_ordered(fh, &x, 1, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_close(&fh));
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                     &fh));
    int size;
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    /* After the native ints, external32 ones: big-endian bytes. */
    OK(MPI_File_read_at(fh, (MPI_Offset)(size + rank) * 4, raw, 4, MPI_BYTE, &st));
    CHECK(raw[0] == 1 && raw[1] == 2 && raw[2] == 3 && raw[3] == 4);
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    OK(MPI_File_read_at(fh, size + rank, &y, 1, MPI_INT, &st));
    CHECK(y == x);
    MPI_Aint ext;
    OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    CHECK(ext == 4);
    FAILS(MPI_File_read_at(fh, 0, &off, 1, MPI_LONG, &st), MPI_ERR_UNSUPPORTED_DATAREP);
    OK(MPI_File_close(&fh));
    /* A registered representation without conversions: the bytes as they are. */
    if (rank == 0) {
        FAILS(MPI_Register_datarep("native", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                   ext_fn, NULL),
              MPI_ERR_DUP_DATAREP);
    }
    OK(MPI_Register_datarep("io-view-rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, ext_fn,
                            NULL));
    FAILS(MPI_Register_datarep("io-view-rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                               ext_fn, NULL),
          MPI_ERR_DUP_DATAREP);
    path(p, "rep");
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "io-view-rep", MPI_INFO_NULL));
    OK(MPI_File_write_at(fh, rank, &x, 1, MPI_INT, &st));
    OK(MPI_File_read_at(fh, rank, &y, 1, MPI_INT, &st));
    CHECK(y == x);
    /* Conversion functions make the file bytes and read them back. */
    static int calls = 0;
    int v[3] = {rank, 7, -5}, w[3] = {0, 0, 0}, raw3[3];
    OK(MPI_Register_datarep("io-view-not", not_read, not_write, ext_fn, &calls));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "io-view-not", MPI_INFO_NULL));
    OK(MPI_File_write_at(fh, 16 + 3 * rank, v, 3, MPI_INT, &st));
    CHECK(calls == 1);
    OK(MPI_File_read_at(fh, 16 + 3 * rank, w, 3, MPI_INT, &st));
    CHECK(calls == 2 && w[0] == rank && w[1] == 7 && w[2] == -5);
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at(fh, 16 + 3 * rank, raw3, 3, MPI_INT, &st));
    CHECK(raw3[0] == ~rank && raw3[1] == ~7 && raw3[2] == ~(-5));
    OK(MPI_File_close(&fh));
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    if (rank == 0) {
        strcpy(dir, "/tmp/mpicd-io-XXXXXX");
        CHECK(mkdtemp(dir) != NULL);
    }
    OK(MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD));
    if (size <= 4) {
        interleaved(rank, size);
        shared(rank, size);
    }
    sequential_and_reps(rank);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        char p[512];
        path(p, "interleaved");
        OK(MPI_File_delete(p, MPI_INFO_NULL));
        path(p, "shared");
        OK(MPI_File_delete(p, MPI_INFO_NULL));
        CHECK(rmdir(dir) == 0);
    }
    test_finish(rank, "io_view");
    return 0;
}
