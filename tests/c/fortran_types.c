/* fortran_types.c: the Fortran predefined datatypes as C handles (no Fortran compiler needed):
 * sizes as gfortran has them, names, extents of the pair types; reductions where the standard
 * defines them (arithmetic on INTEGER/REAL/DOUBLE PRECISION/COMPLEX and their sized forms,
 * bitwise on INTEGERn, logical on LOGICALn with any non-zero value true and results 1 or 0,
 * 128-bit INTEGER16 and binary128 REAL16 where the compiler has them, MINLOC/MAXLOC on
 * MPI_2INTEGER, MPI_2REAL and MPI_2DOUBLE_PRECISION) and MPI_ERR_OP where it does not (logical
 * ops on INTEGER, any op on CHARACTER or half precision); point-to-point of a vector of
 * MPI_REAL; external32 of MPI_INTEGER; MPI_Type_match_size, MPI_Type_get_value_index and
 * MPI_Type_create_f90_real / _complex / _integer. */
#include "check.h"
#include <string.h>

static void check_type(MPI_Datatype t, int size, const char *name) {
    int s = -1, len = -1;
    char got[MPI_MAX_OBJECT_NAME];
    OK(MPI_Type_size(t, &s));
    CHECK(s == size);
    OK(MPI_Type_get_name(t, got, &len));
    CHECK(strcmp(got, name) == 0 && len == (int)strlen(name));
    MPI_Aint lb = -1, extent = -1;
    OK(MPI_Type_get_extent(t, &lb, &extent));
    CHECK(lb == 0 && extent >= size);
}

/* op on one element of t, locally: inout = in op inout. */
static int reduce1(void *in, void *inout, MPI_Datatype t, MPI_Op op) {
    return MPI_Reduce_local(in, inout, 1, t, op);
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);

    check_type(MPI_CHARACTER, 1, "MPI_CHARACTER");
    check_type(MPI_LOGICAL, 4, "MPI_LOGICAL");
    check_type(MPI_INTEGER, 4, "MPI_INTEGER");
    check_type(MPI_REAL, 4, "MPI_REAL");
    check_type(MPI_DOUBLE_PRECISION, 8, "MPI_DOUBLE_PRECISION");
    check_type(MPI_COMPLEX, 8, "MPI_COMPLEX");
    check_type(MPI_DOUBLE_COMPLEX, 16, "MPI_DOUBLE_COMPLEX");
    MPI_Datatype sized[] = {MPI_LOGICAL1, MPI_LOGICAL2, MPI_LOGICAL4, MPI_LOGICAL8,
                            MPI_LOGICAL16, MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4,
                            MPI_INTEGER8, MPI_INTEGER16, MPI_REAL2, MPI_REAL4,
                            MPI_REAL8, MPI_REAL16, MPI_COMPLEX4, MPI_COMPLEX8,
                            MPI_COMPLEX16, MPI_COMPLEX32};
    int sizes[] = {1, 2, 4, 8, 16, 1, 2, 4, 8, 16, 2, 4, 8, 16, 4, 8, 16, 32};
    const char *names[] = {"MPI_LOGICAL1", "MPI_LOGICAL2", "MPI_LOGICAL4", "MPI_LOGICAL8",
                           "MPI_LOGICAL16", "MPI_INTEGER1", "MPI_INTEGER2", "MPI_INTEGER4",
                           "MPI_INTEGER8", "MPI_INTEGER16", "MPI_REAL2", "MPI_REAL4",
                           "MPI_REAL8", "MPI_REAL16", "MPI_COMPLEX4", "MPI_COMPLEX8",
                           "MPI_COMPLEX16", "MPI_COMPLEX32"};
    for (int i = 0; i < (int)(sizeof sizes / sizeof sizes[0]); i++)
        check_type(sized[i], sizes[i], names[i]);
    check_type(MPI_2INTEGER, 8, "MPI_2INTEGER");
    check_type(MPI_2REAL, 8, "MPI_2REAL");
    check_type(MPI_2DOUBLE_PRECISION, 16, "MPI_2DOUBLE_PRECISION");
    int combiner = -1, ni, na, nd;
    OK(MPI_Type_get_envelope(MPI_REAL8, &ni, &na, &nd, &combiner));
    CHECK(combiner == MPI_COMBINER_NAMED);

    /* Reductions across the ranks. */
    int ints[2] = {rank + 1, 1 << rank}, isum[2];
    OK(MPI_Allreduce(ints, isum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD));
    CHECK(isum[0] == size * (size + 1) / 2);
    OK(MPI_Allreduce(ints + 1, isum + 1, 1, MPI_INTEGER4, MPI_BOR, MPI_COMM_WORLD));
    CHECK(isum[1] == (1 << size) - 1);
    float r = (float)rank, rmax = -1;
    OK(MPI_Allreduce(&r, &rmax, 1, MPI_REAL, MPI_MAX, MPI_COMM_WORLD));
    CHECK(rmax == (float)(size - 1));
    double d[3] = {0.5, rank, -rank}, dsum[3];
    OK(MPI_Allreduce(d, dsum, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD));
    CHECK(dsum[0] == 0.5 * size && dsum[1] == size * (size - 1) / 2.0 && dsum[2] == -dsum[1]);
    long long big = (long long)1 << 40, bigsum = 0;
    OK(MPI_Allreduce(&big, &bigsum, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD));
    CHECK(bigsum == big * size);
    /* LOGICAL: any non-zero value is true; a combined result is 1 or 0 (one rank's value alone
     * is passed on as it is). */
    int lg = rank == 0 ? 7 : 1, land = -1, lor = -1;
    OK(MPI_Allreduce(&lg, &land, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD));
    CHECK(land == (size == 1 ? 7 : 1));
    int none = 0;
    OK(MPI_Allreduce(&none, &lor, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD));
    CHECK(lor == 0);
    signed char l1 = (signed char)(rank == 0 ? 5 : 0), lx = -1;
    OK(MPI_Allreduce(&l1, &lx, 1, MPI_LOGICAL1, MPI_LXOR, MPI_COMM_WORLD));
    CHECK(lx == (size == 1 ? 5 : 1));
    /* COMPLEX: sum; product locally. */
    float z[2] = {1.0f, (float)rank}, zs[2];
    OK(MPI_Allreduce(z, zs, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
    CHECK(zs[0] == (float)size && zs[1] == (float)(size * (size - 1) / 2));
    double za[2] = {1, 2}, zb[2] = {3, -1};
    OK(reduce1(za, zb, MPI_DOUBLE_COMPLEX, MPI_PROD));
    CHECK(zb[0] == 5 && zb[1] == 5);
    /* MINLOC/MAXLOC on the Fortran pairs: the index has the value's type. */
    int pi[2] = {size - rank, rank}, pmin[2];
    OK(MPI_Allreduce(pi, pmin, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(pmin[0] == 1 && pmin[1] == size - 1);
    double pd[2] = {rank % 2, rank}, pmax[2];
    OK(MPI_Allreduce(pd, pmax, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(pmax[0] == (size > 1 ? 1 : 0) && pmax[1] == (size > 1 ? 1 : 0));
    float pr[2] = {2.5f, 7.0f}, pr2[2] = {2.5f, 3.0f};
    OK(reduce1(pr, pr2, MPI_2REAL, MPI_MINLOC));
    CHECK(pr2[0] == 2.5f && pr2[1] == 3.0f);
#if defined(__SIZEOF_INT128__)
    __int128 w = ((__int128)1 << 100) + rank, wsum = 0;
    OK(MPI_Allreduce(&w, &wsum, 1, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD));
    CHECK(wsum == ((__int128)size << 100) + size * (size - 1) / 2);
    __int128 wl = 3, wl2 = 0;
    OK(reduce1(&wl, &wl2, MPI_LOGICAL16, MPI_LOR));
    CHECK(wl2 == 1);
#endif
#if defined(__SIZEOF_FLOAT128__)
    __float128 q = 0.25Q + rank, qsum = 0;
    OK(MPI_Allreduce(&q, &qsum, 1, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD));
    CHECK(qsum == 0.25Q * size + size * (size - 1) / 2);
    __float128 qa[2] = {1, 2}, qb[2] = {3, -1};
    OK(reduce1(qa, qb, MPI_COMPLEX32, MPI_PROD));
    CHECK(qb[0] == 5 && qb[1] == 5);
#endif
    /* A derived type of a Fortran type reduces as its element. */
    MPI_Datatype pairs;
    OK(MPI_Type_contiguous(2, MPI_REAL8, &pairs));
    OK(MPI_Type_commit(&pairs));
    double v2[2] = {1, rank}, v2s[2];
    OK(MPI_Allreduce(v2, v2s, 1, pairs, MPI_SUM, MPI_COMM_WORLD));
    CHECK(v2s[0] == size && v2s[1] == size * (size - 1) / 2.0);
    OK(MPI_Type_free(&pairs));

    /* Ops the standard does not define on these types. */
    int a = 1, b = 1;
    FAILS(reduce1(&a, &b, MPI_INTEGER, MPI_LAND), MPI_ERR_OP);
    FAILS(reduce1(&a, &b, MPI_LOGICAL, MPI_SUM), MPI_ERR_OP);
    FAILS(reduce1(&a, &b, MPI_REAL, MPI_BAND), MPI_ERR_OP);
    FAILS(reduce1(&a, &b, MPI_CHARACTER, MPI_MAX), MPI_ERR_OP);
    FAILS(reduce1(&a, &b, MPI_REAL2, MPI_SUM), MPI_ERR_OP);
    FAILS(reduce1(&a, &b, MPI_COMPLEX, MPI_MAX), MPI_ERR_OP);
    FAILS(reduce1(&a, &b, MPI_2INTEGER, MPI_SUM), MPI_ERR_OP);

    /* Point-to-point: every other MPI_REAL, around a ring. */
    MPI_Datatype every_other;
    OK(MPI_Type_vector(3, 1, 2, MPI_REAL, &every_other));
    OK(MPI_Type_commit(&every_other));
    float out[6], in[6];
    for (int i = 0; i < 6; i++) out[i] = (float)(rank * 10 + i), in[i] = -1;
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Status st;
    OK(MPI_Sendrecv(out, 1, every_other, to, 5, in, 3, MPI_REAL, from, 5, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 3; i++) CHECK(in[i] == (float)(from * 10 + 2 * i));
    CHECK(in[3] == -1);
    int count = -1;
    OK(MPI_Get_count(&st, MPI_REAL, &count));
    CHECK(count == 3);
    OK(MPI_Type_free(&every_other));

    /* external32: default INTEGER is 4 big-endian bytes, CHARACTER 1, DOUBLE PRECISION 8. */
    int iv = 0x01020304;
    unsigned char ext[8];
    MPI_Aint pos = 0, esz = 0;
    OK(MPI_Pack_external("external32", &iv, 1, MPI_INTEGER, ext, sizeof ext, &pos));
    CHECK(pos == 4 && ext[0] == 1 && ext[1] == 2 && ext[2] == 3 && ext[3] == 4);
    OK(MPI_Pack_external_size("external32", 2, MPI_DOUBLE_PRECISION, &esz));
    CHECK(esz == 16);

    /* MPI_Type_match_size: the size-specific types. */
    MPI_Datatype m = MPI_DATATYPE_NULL;
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m));
    CHECK(m == MPI_INTEGER4);
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &m));
    CHECK(m == MPI_INTEGER8);
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 2, &m));
    CHECK(m == MPI_REAL2);
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, (int)sizeof(double), &m));
    CHECK(m == MPI_REAL8);
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &m));
    CHECK(m == MPI_REAL4);
    OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &m));
    CHECK(m == MPI_COMPLEX16);
    int msize = -1;
    OK(MPI_Type_size(m, &msize));
    CHECK(msize == 16);
    FAILS(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &m), MPI_ERR_ARG);
    FAILS(MPI_Type_match_size(12345, 4, &m), MPI_ERR_ARG);

    /* MPI_Type_get_value_index: the predefined pairs, else MPI_DATATYPE_NULL. */
    MPI_Datatype p = MPI_DATATYPE_NULL;
    OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &p));
    CHECK(p == MPI_DOUBLE_INT);
    OK(MPI_Type_get_value_index(MPI_INT, MPI_INT, &p));
    CHECK(p == MPI_2INT);
    OK(MPI_Type_get_value_index(MPI_REAL, MPI_REAL, &p));
    CHECK(p == MPI_2REAL);
    OK(MPI_Type_get_value_index(MPI_INTEGER, MPI_INTEGER, &p));
    CHECK(p == MPI_2INTEGER);
    OK(MPI_Type_get_value_index(MPI_INT, MPI_DOUBLE, &p));
    CHECK(p == MPI_DATATYPE_NULL);
    FAILS(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &p), MPI_ERR_TYPE);

    /* MPI_Type_create_f90_*: the smallest kind that holds, decoded as the F90 combiner; the
     * same arguments give the same handle, which cannot be freed. */
    MPI_Datatype f1, f2, fi, fc;
    OK(MPI_Type_create_f90_real(3, MPI_UNDEFINED, &f1));
    OK(MPI_Type_create_f90_real(3, MPI_UNDEFINED, &f2));
    CHECK(f1 == f2);
    int fsize = -1, fints[2] = {0, 0};
    OK(MPI_Type_size(f1, &fsize));
    CHECK(fsize == 4);
    OK(MPI_Type_get_envelope(f1, &ni, &na, &nd, &combiner));
    CHECK(combiner == MPI_COMBINER_F90_REAL && ni == 2 && na == 0 && nd == 0);
    OK(MPI_Type_get_contents(f1, 2, 0, 0, fints, NULL, NULL));
    CHECK(fints[0] == 3 && fints[1] == MPI_UNDEFINED);
    OK(MPI_Type_create_f90_complex(7, 30, &fc));
    OK(MPI_Type_size(fc, &fsize));
    CHECK(fsize == 16);
    OK(MPI_Type_create_f90_integer(9, &fi));
    OK(MPI_Type_get_envelope(fi, &ni, &na, &nd, &combiner));
    CHECK(combiner == MPI_COMBINER_F90_INTEGER && ni == 1);
    int fv = rank + 1, fsum = 0;
    OK(MPI_Allreduce(&fv, &fsum, 1, fi, MPI_SUM, MPI_COMM_WORLD));
    CHECK(fsum == size * (size + 1) / 2);
    FAILS(MPI_Type_free(&fi), MPI_ERR_TYPE);
    FAILS(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &f1), MPI_ERR_ARG);
    FAILS(MPI_Type_create_f90_integer(100, &f1), MPI_ERR_ARG);

    test_finish(rank, "fortran_types");
    return 0;
}
