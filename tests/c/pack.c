/* pack.c: MPI_Pack, MPI_Unpack and MPI_Pack_size (and their _c forms) with predefined and
 * derived types: round trips, positions, a buffer too small (MPI_ERR_TRUNCATE, nothing written
 * past it) and input too short; packed data sent as MPI_PACKED in a ring; and the external32
 * representation (MPI_Pack_external and friends) compared with big-endian bytes, MPI_LONG in
 * 4 bytes, a pair type, and a derived type. Runs on any number of ranks >= 1. */
#include "check.h"
#include <string.h>

static int rank, size, next, prev;

static void native(void) {
    MPI_Comm w = MPI_COMM_WORLD;
    int n = 42 + rank, m[3][4];
    double d[3] = {0.5, 1.5, 2.5 + rank};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) m[i][j] = rank * 100 + i * 4 + j;
    MPI_Datatype column;
    OK(MPI_Type_vector(3, 1, 4, MPI_INT, &column));
    FAILS(MPI_Pack(m, 1, column, (char[16]){0}, 16, &(int){0}, w), MPI_ERR_TYPE); /* uncommitted */
    OK(MPI_Type_commit(&column));

    int s1, s2, s3;
    OK(MPI_Pack_size(1, MPI_INT, w, &s1));
    OK(MPI_Pack_size(1, column, w, &s2));
    OK(MPI_Pack_size(3, MPI_DOUBLE, w, &s3));
    CHECK(s1 == 4 && s2 == 12 && s3 == 24);
    MPI_Count cs;
    OK(MPI_Pack_size_c(2, column, w, &cs));
    CHECK(cs == 24);

    char buf[64 + 8];
    memset(buf, 0x5a, sizeof buf);
    int pos = 0;
    OK(MPI_Pack(&n, 1, MPI_INT, buf, 64, &pos, w));
    OK(MPI_Pack(&m[0][2], 1, column, buf, 64, &pos, w));
    OK(MPI_Pack(d, 3, MPI_DOUBLE, buf, 64, &pos, w));
    CHECK(pos == 40);
    int col[3];
    memcpy(col, buf + 4, sizeof col);
    for (int i = 0; i < 3; i++) CHECK(col[i] == m[i][2]);

    /* too small: MPI_ERR_TRUNCATE, position kept, nothing written past outsize */
    int before = pos;
    FAILS(MPI_Pack(d, 3, MPI_DOUBLE, buf, 60, &pos, w), MPI_ERR_TRUNCATE);
    CHECK(pos == before);
    for (int k = 40; k < 72; k++) CHECK(buf[k] == 0x5a);
    FAILS(MPI_Pack(&m[0][1], 2, column, buf, 50, &pos, w), MPI_ERR_TRUNCATE);
    for (int k = 40; k < 72; k++) CHECK(buf[k] == 0x5a);
    FAILS(MPI_Pack(&n, -1, MPI_INT, buf, 64, &pos, w), MPI_ERR_COUNT);

    /* unpack it all back, into fresh memory */
    int n2 = 0, m2[3][4];
    double d2[3];
    memset(m2, 0, sizeof m2);
    pos = 0;
    OK(MPI_Unpack(buf, 40, &pos, &n2, 1, MPI_INT, w));
    OK(MPI_Unpack(buf, 40, &pos, &m2[0][2], 1, column, w));
    OK(MPI_Unpack(buf, 40, &pos, d2, 3, MPI_DOUBLE, w));
    CHECK(pos == 40 && n2 == n && memcmp(d, d2, sizeof d) == 0);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) CHECK(m2[i][j] == (j == 2 ? m[i][2] : 0));
    /* input too short */
    pos = 36;
    FAILS(MPI_Unpack(buf, 40, &pos, d2, 1, MPI_DOUBLE, w), MPI_ERR_TRUNCATE);
    CHECK(pos == 36);

    /* the _c forms */
    MPI_Count cpos = 0;
    char cbuf[12];
    OK(MPI_Pack_c(&m[0][3], 1, column, cbuf, sizeof cbuf, &cpos, w));
    CHECK(cpos == 12);
    int back[3];
    cpos = 0;
    OK(MPI_Unpack_c(cbuf, 12, &cpos, back, 3, MPI_INT, w));
    for (int k = 0; k < 3; k++) CHECK(back[k] == m[k][3]);

    /* packed data travels as MPI_PACKED */
    char in[64];
    MPI_Request r;
    MPI_Status st;
    OK(MPI_Irecv(in, sizeof in, MPI_PACKED, prev, 31, w, &r));
    OK(MPI_Send(buf, 40, MPI_PACKED, next, 31, w));
    OK(MPI_Wait(&r, &st));
    int got;
    OK(MPI_Get_count(&st, MPI_PACKED, &got));
    CHECK(got == 40);
    pos = 0;
    OK(MPI_Unpack(in, got, &pos, &n2, 1, MPI_INT, w));
    OK(MPI_Unpack(in, got, &pos, col, 3, MPI_INT, w));
    OK(MPI_Unpack(in, got, &pos, d2, 3, MPI_DOUBLE, w));
    CHECK(n2 == 42 + prev && d2[2] == 2.5 + prev);
    for (int i = 0; i < 3; i++) CHECK(col[i] == prev * 100 + i * 4 + 2);
    OK(MPI_Type_free(&column));
}

static int big_endian_int(const unsigned char *p) {
    return (int)((unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3]);
}

static void external32(void) {
    const char *ext = "external32";
    unsigned char buf[128];
    memset(buf, 0xee, sizeof buf);
    MPI_Aint pos = 0, sz;

    int ints[2] = {0x01020304, -2};
    OK(MPI_Pack_external_size(ext, 2, MPI_INT, &sz));
    CHECK(sz == 8);
    OK(MPI_Pack_external(ext, ints, 2, MPI_INT, buf, sizeof buf, &pos));
    CHECK(pos == 8);
    unsigned char want_ints[8] = {1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe};
    CHECK(memcmp(buf, want_ints, 8) == 0);

    double dbl = 1.5; /* 0x3FF8000000000000 */
    OK(MPI_Pack_external(ext, &dbl, 1, MPI_DOUBLE, buf, sizeof buf, &pos));
    unsigned char want_d[8] = {0x3f, 0xf8, 0, 0, 0, 0, 0, 0};
    CHECK(pos == 16 && memcmp(buf + 8, want_d, 8) == 0);

    long l = -3; /* MPI_LONG is 4 bytes in external32 */
    OK(MPI_Pack_external_size(ext, 1, MPI_LONG, &sz));
    CHECK(sz == 4);
    OK(MPI_Pack_external(ext, &l, 1, MPI_LONG, buf, sizeof buf, &pos));
    CHECK(pos == 20 && big_endian_int(buf + 16) == -3);

    struct {
        double v;
        int i;
    } di = {-0.5, 77};
    OK(MPI_Pack_external_size(ext, 1, MPI_DOUBLE_INT, &sz));
    CHECK(sz == 12);
    OK(MPI_Pack_external(ext, &di, 1, MPI_DOUBLE_INT, buf, sizeof buf, &pos));
    unsigned char want_half[8] = {0xbf, 0xe0, 0, 0, 0, 0, 0, 0};
    CHECK(pos == 32 && memcmp(buf + 20, want_half, 8) == 0 && big_endian_int(buf + 28) == 77);

    /* a derived type: every other short of 6, then unpacked back through the same type */
    short sh[6] = {0x0102, -1, 0x0304, -1, 0x0506, -1}, sh2[6] = {0};
    MPI_Datatype alt;
    OK(MPI_Type_vector(3, 1, 2, MPI_SHORT, &alt));
    OK(MPI_Type_commit(&alt));
    MPI_Count csz;
    OK(MPI_Pack_external_size_c(ext, 1, alt, &csz));
    CHECK(csz == 6);
    MPI_Count cpos = pos;
    OK(MPI_Pack_external_c(ext, sh, 1, alt, buf, sizeof buf, &cpos));
    unsigned char want_s[6] = {1, 2, 3, 4, 5, 6};
    CHECK(cpos == 38 && memcmp(buf + 32, want_s, 6) == 0);
    for (int k = 38; k < 128; k++) CHECK(buf[k] == 0xee);

    /* too small, and an unknown representation */
    pos = 38;
    FAILS(MPI_Pack_external(ext, ints, 2, MPI_INT, buf, 44, &pos), MPI_ERR_TRUNCATE);
    CHECK(pos == 38 && buf[38] == 0xee);
    FAILS(MPI_Pack_external("native", ints, 2, MPI_INT, buf, sizeof buf, &pos), MPI_ERR_ARG);
    FAILS(MPI_Pack_external_size("external64", 1, MPI_INT, &sz), MPI_ERR_ARG);

    /* and back */
    int ints2[2];
    double dbl2;
    long l2;
    struct {
        double v;
        int i;
    } di2;
    pos = 0;
    OK(MPI_Unpack_external(ext, buf, 38, &pos, ints2, 2, MPI_INT));
    OK(MPI_Unpack_external(ext, buf, 38, &pos, &dbl2, 1, MPI_DOUBLE));
    OK(MPI_Unpack_external(ext, buf, 38, &pos, &l2, 1, MPI_LONG));
    OK(MPI_Unpack_external(ext, buf, 38, &pos, &di2, 1, MPI_DOUBLE_INT));
    cpos = pos;
    OK(MPI_Unpack_external_c(ext, buf, 38, &cpos, sh2, 1, alt));
    CHECK(cpos == 38 && ints2[0] == ints[0] && ints2[1] == -2 && dbl2 == 1.5 && l2 == -3);
    CHECK(di2.v == -0.5 && di2.i == 77);
    CHECK(sh2[0] == 0x0102 && sh2[1] == 0 && sh2[2] == 0x0304 && sh2[4] == 0x0506);
    pos = 30;
    FAILS(MPI_Unpack_external(ext, buf, 38, &pos, &dbl2, 2, MPI_DOUBLE), MPI_ERR_TRUNCATE);
    OK(MPI_Type_free(&alt));
}

int main(int argc, char **argv) {
    test_init(&argc, &argv, &rank, &size);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    native();
    external32();
    test_finish(rank, "pack");
    return 0;
}
