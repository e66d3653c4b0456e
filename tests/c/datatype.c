/* datatype.c: derived datatypes through the C ABI: every constructor's size, extent and true
 * extent (and the MPI_Count forms), envelope and contents for every combiner, names and
 * addresses; derived-typed messages in a ring (a matrix column received as contiguous values and
 * the reverse, count > 1 stepping by the extent, a struct of absolute addresses sent from
 * MPI_BOTTOM, a negative lower bound, subarrays in C and Fortran order, darrays), Get_count and
 * Get_elements of a partial element, truncation that writes nothing outside the receive type,
 * the error classes of bad input, and a type freed while a send using it is pending. Runs on
 * any number of ranks >= 1. */
#include "check.h"
#include <string.h>

#define ROWS 5
#define COLS 4

static int rank, size, next, prev;

static void check_bounds(MPI_Datatype t, MPI_Count sz, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb,
                         MPI_Aint text) {
    int isz;
    MPI_Count csz, clb, cext, ctlb, ctext;
    MPI_Aint l, e;
    OK(MPI_Type_size(t, &isz));
    OK(MPI_Type_size_x(t, &csz));
    CHECK(isz == sz && csz == sz);
    OK(MPI_Type_size_c(t, &csz));
    CHECK(csz == sz);
    OK(MPI_Type_get_extent(t, &l, &e));
    CHECK(l == lb && e == ext);
    OK(MPI_Type_get_extent_x(t, &clb, &cext));
    CHECK(clb == lb && cext == ext);
    OK(MPI_Type_get_extent_c(t, &clb, &cext));
    CHECK(clb == lb && cext == ext);
    OK(MPI_Type_get_true_extent(t, &l, &e));
    CHECK(l == tlb && e == text);
    OK(MPI_Type_get_true_extent_x(t, &ctlb, &ctext));
    CHECK(ctlb == tlb && ctext == text);
    OK(MPI_Type_get_true_extent_c(t, &ctlb, &ctext));
    CHECK(ctlb == tlb && ctext == text);
}

/* Checks the bounds of `t`, then frees it. */
static void bounds_and_free(MPI_Datatype t, MPI_Count sz, MPI_Aint lb, MPI_Aint ext,
                            MPI_Aint tlb, MPI_Aint text) {
    check_bounds(t, sz, lb, ext, tlb, text);
    OK(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL);
}

static void constructors(void) {
    MPI_Datatype t;
    OK(MPI_Type_contiguous(5, MPI_INT, &t));
    bounds_and_free(t, 20, 0, 20, 0, 20);
    OK(MPI_Type_contiguous_c(5, MPI_INT, &t));
    bounds_and_free(t, 20, 0, 20, 0, 20);
    OK(MPI_Type_vector(3, 2, 4, MPI_INT, &t)); /* ints 0-1, 4-5, 8-9 */
    bounds_and_free(t, 24, 0, 40, 0, 40);
    OK(MPI_Type_vector_c(3, 2, 4, MPI_INT, &t));
    bounds_and_free(t, 24, 0, 40, 0, 40);
    OK(MPI_Type_vector(3, 1, -2, MPI_INT, &t)); /* ints at 0, -8, -16 */
    bounds_and_free(t, 12, -16, 20, -16, 20);
    OK(MPI_Type_create_hvector(3, 2, 20, MPI_INT, &t));
    bounds_and_free(t, 24, 0, 48, 0, 48);
    OK(MPI_Type_create_hvector_c(3, 2, 20, MPI_INT, &t));
    bounds_and_free(t, 24, 0, 48, 0, 48);

    int bl[3] = {2, 1, 3}, disp[3] = {5, 0, 10};
    OK(MPI_Type_indexed(3, bl, disp, MPI_INT, &t)); /* 20-28, 0-4, 40-52 */
    bounds_and_free(t, 24, 0, 52, 0, 52);
    MPI_Count cbl[3] = {2, 1, 3}, cdisp[3] = {5, 0, 10};
    OK(MPI_Type_indexed_c(3, cbl, cdisp, MPI_INT, &t));
    bounds_and_free(t, 24, 0, 52, 0, 52);
    MPI_Aint hdisp[2] = {8, 0};
    OK(MPI_Type_create_hindexed(2, bl, hdisp, MPI_INT, &t)); /* 8-16, 0-4 */
    bounds_and_free(t, 12, 0, 16, 0, 16);
    MPI_Count chdisp[2] = {8, 0};
    OK(MPI_Type_create_hindexed_c(2, cbl, chdisp, MPI_INT, &t));
    bounds_and_free(t, 12, 0, 16, 0, 16);
    int bdisp[3] = {3, 0, 7};
    OK(MPI_Type_create_indexed_block(3, 2, bdisp, MPI_DOUBLE, &t)); /* 24-40, 0-16, 56-72 */
    bounds_and_free(t, 48, 0, 72, 0, 72);
    MPI_Count cbdisp[3] = {3, 0, 7};
    OK(MPI_Type_create_indexed_block_c(3, 2, cbdisp, MPI_DOUBLE, &t));
    bounds_and_free(t, 48, 0, 72, 0, 72);
    MPI_Aint hbdisp[2] = {4, 12};
    OK(MPI_Type_create_hindexed_block(2, 1, hbdisp, MPI_INT, &t)); /* 4-8, 12-16 */
    bounds_and_free(t, 8, 4, 12, 4, 12);
    MPI_Count chbdisp[2] = {4, 12};
    OK(MPI_Type_create_hindexed_block_c(2, 1, chbdisp, MPI_INT, &t));
    bounds_and_free(t, 8, 4, 12, 4, 12);

    /* structs: the extent is padded to the alignment of a double, the true extent is not */
    int sbl[2] = {1, 1};
    MPI_Aint sdisp[2] = {0, 8};
    MPI_Datatype stypes[2] = {MPI_DOUBLE, MPI_CHAR};
    OK(MPI_Type_create_struct(2, sbl, sdisp, stypes, &t));
    bounds_and_free(t, 9, 0, 16, 0, 9);
    MPI_Count csbl[2] = {1, 1}, csdisp[2] = {0, 8};
    OK(MPI_Type_create_struct_c(2, csbl, csdisp, stypes, &t));
    bounds_and_free(t, 9, 0, 16, 0, 9);
    check_bounds(MPI_DOUBLE_INT, 12, 0, 16, 0, 12);
    check_bounds(MPI_2INT, 8, 0, 8, 0, 8);

    /* subarrays of a 4 x 6 int array: rows 1-2, columns 2-4 */
    int sizes[2] = {4, 6}, subsizes[2] = {2, 3}, starts[2] = {1, 2};
    OK(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t));
    bounds_and_free(t, 24, 0, 96, 32, 36); /* elements 8 .. 16 */
    OK(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &t));
    bounds_and_free(t, 24, 0, 96, 36, 40); /* column-major: elements 9 .. 18 */
    MPI_Count csizes[2] = {4, 6}, csubsizes[2] = {2, 3}, cstarts[2] = {1, 2};
    OK(MPI_Type_create_subarray_c(2, csizes, csubsizes, cstarts, MPI_ORDER_C, MPI_INT, &t));
    bounds_and_free(t, 24, 0, 96, 32, 36);

    /* darrays: an 8 x 8 int array in 2 x 2 blocks, each rank's quarter */
    int gsizes[2] = {8, 8}, distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
    int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, psizes[2] = {2, 2};
    for (int r = 0; r < 4; r++) {
        OK(MPI_Type_create_darray(4, r, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT,
                                  &t));
        MPI_Aint first = ((r / 2) * 4 * 8 + (r % 2) * 4) * 4;
        bounds_and_free(t, 64, 0, 256, first, (3 * 8 + 4) * 4);
    }
    MPI_Count cgsizes[2] = {8, 8};
    OK(MPI_Type_create_darray_c(4, 3, 2, cgsizes, distribs, dargs, psizes, MPI_ORDER_FORTRAN,
                                MPI_INT, &t));
    bounds_and_free(t, 64, 0, 256, (4 * 8 + 4) * 4, (3 * 8 + 4) * 4);
    /* 10 ints, cyclic in blocks of 2 over 3 processes: rank 1 has 2, 3, 8, 9 */
    int g1 = 10, cyc = MPI_DISTRIBUTE_CYCLIC, two = 2, three = 3;
    OK(MPI_Type_create_darray(3, 1, 1, &g1, &cyc, &two, &three, MPI_ORDER_C, MPI_INT, &t));
    bounds_and_free(t, 16, 0, 40, 8, 32);
    /* 10 ints in default blocks (4) over 3 processes: rank 2 has 8, 9 */
    int blk = MPI_DISTRIBUTE_BLOCK, dflt = MPI_DISTRIBUTE_DFLT_DARG;
    OK(MPI_Type_create_darray(3, 2, 1, &g1, &blk, &dflt, &three, MPI_ORDER_C, MPI_INT, &t));
    bounds_and_free(t, 8, 0, 40, 32, 8);

    /* resized, dup */
    OK(MPI_Type_create_resized(MPI_INT, -4, 12, &t));
    bounds_and_free(t, 4, -4, 12, 0, 4);
    OK(MPI_Type_create_resized_c(MPI_INT, -4, 12, &t));
    bounds_and_free(t, 4, -4, 12, 0, 4);
    MPI_Datatype v, d;
    OK(MPI_Type_vector(3, 2, 4, MPI_INT, &v));
    OK(MPI_Type_dup(v, &d));
    bounds_and_free(d, 24, 0, 40, 0, 40);
    OK(MPI_Type_free(&v));
    OK(MPI_Type_dup(MPI_DOUBLE_INT, &d));
    bounds_and_free(d, 12, 0, 16, 0, 12);
}

/* The envelope of `t` (checked against both forms) and its combiner. */
static int envelope(MPI_Datatype t, int ni, int na, int nd) {
    int i, a, d, comb, comb_c;
    MPI_Count ci, ca, cc, cd;
    OK(MPI_Type_get_envelope(t, &i, &a, &d, &comb));
    CHECK(i == ni && a == na && d == nd);
    OK(MPI_Type_get_envelope_c(t, &ci, &ca, &cc, &cd, &comb_c));
    CHECK(ci == ni && ca == na && cc == 0 && cd == nd && comb_c == comb);
    return comb;
}

/* Frees a datatype returned by MPI_Type_get_contents unless it is predefined. */
static void free_returned(MPI_Datatype t) {
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    if (comb != MPI_COMBINER_NAMED) OK(MPI_Type_free(&t));
}

static void contents(void) {
    int ints[32];
    MPI_Aint addrs[8];
    MPI_Datatype types[4], t, inner;

    /* named types, the pair types too */
    CHECK(envelope(MPI_INT, 0, 0, 0) == MPI_COMBINER_NAMED);
    CHECK(envelope(MPI_2INT, 0, 0, 0) == MPI_COMBINER_NAMED);
    FAILS(MPI_Type_get_contents(MPI_INT, 0, 0, 0, ints, addrs, types), MPI_ERR_TYPE);

    OK(MPI_Type_dup(MPI_INT, &t));
    CHECK(envelope(t, 0, 0, 1) == MPI_COMBINER_DUP);
    OK(MPI_Type_get_contents(t, 0, 0, 1, ints, addrs, types));
    CHECK(types[0] == MPI_INT);
    OK(MPI_Type_free(&t));

    OK(MPI_Type_contiguous(7, MPI_DOUBLE, &t));
    CHECK(envelope(t, 1, 0, 1) == MPI_COMBINER_CONTIGUOUS);
    OK(MPI_Type_get_contents(t, 1, 0, 1, ints, addrs, types));
    CHECK(ints[0] == 7 && types[0] == MPI_DOUBLE);
    FAILS(MPI_Type_get_contents(t, 0, 0, 1, ints, addrs, types), MPI_ERR_ARG); /* no room */

    /* a derived type inside: returned as a new handle to the same type, committed as it was */
    OK(MPI_Type_commit(&t));
    OK(MPI_Type_vector(2, 3, -4, t, &inner));
    CHECK(envelope(inner, 3, 0, 1) == MPI_COMBINER_VECTOR);
    OK(MPI_Type_get_contents(inner, 3, 0, 1, ints, addrs, types));
    CHECK(ints[0] == 2 && ints[1] == 3 && ints[2] == -4);
    CHECK(types[0] != t && types[0] != MPI_DATATYPE_NULL);
    CHECK(envelope(types[0], 1, 0, 1) == MPI_COMBINER_CONTIGUOUS);
    double seven[7] = {1, 2, 3, 4, 5, 6, 7}, got[7];
    char packed[64];
    int pos = 0;
    OK(MPI_Pack(seven, 1, types[0], packed, sizeof packed, &pos, MPI_COMM_WORLD)); /* committed */
    CHECK(pos == 56);
    pos = 0;
    OK(MPI_Unpack(packed, sizeof packed, &pos, got, 1, types[0], MPI_COMM_WORLD));
    CHECK(memcmp(seven, got, sizeof got) == 0);
    OK(MPI_Type_free(&types[0]));
    OK(MPI_Type_free(&inner));

    OK(MPI_Type_create_hvector(4, 1, -24, t, &inner));
    CHECK(envelope(inner, 2, 1, 1) == MPI_COMBINER_HVECTOR);
    OK(MPI_Type_get_contents(inner, 2, 1, 1, ints, addrs, types));
    CHECK(ints[0] == 4 && ints[1] == 1 && addrs[0] == -24);
    free_returned(types[0]);
    OK(MPI_Type_free(&inner));
    OK(MPI_Type_free(&t));

    int bl[3] = {2, 0, 3}, disp[3] = {9, 4, -1};
    MPI_Aint hdisp[3] = {9, 4, -1};
    OK(MPI_Type_indexed(3, bl, disp, MPI_SHORT, &t));
    CHECK(envelope(t, 7, 0, 1) == MPI_COMBINER_INDEXED);
    OK(MPI_Type_get_contents(t, 7, 0, 1, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 0 && ints[3] == 3);
    CHECK(ints[4] == 9 && ints[5] == 4 && ints[6] == -1 && types[0] == MPI_SHORT);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_hindexed(3, bl, hdisp, MPI_SHORT, &t));
    CHECK(envelope(t, 4, 3, 1) == MPI_COMBINER_HINDEXED);
    OK(MPI_Type_get_contents(t, 4, 3, 1, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[3] == 3 && addrs[0] == 9 && addrs[2] == -1);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_indexed_block(3, 5, disp, MPI_SHORT, &t));
    CHECK(envelope(t, 5, 0, 1) == MPI_COMBINER_INDEXED_BLOCK);
    OK(MPI_Type_get_contents(t, 5, 0, 1, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[1] == 5 && ints[2] == 9 && ints[4] == -1);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_hindexed_block(3, 5, hdisp, MPI_SHORT, &t));
    CHECK(envelope(t, 2, 3, 1) == MPI_COMBINER_HINDEXED_BLOCK);
    OK(MPI_Type_get_contents(t, 2, 3, 1, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[1] == 5 && addrs[1] == 4);
    OK(MPI_Type_free(&t));

    MPI_Datatype st[3] = {MPI_CHAR, MPI_DOUBLE_INT, MPI_FLOAT};
    MPI_Aint sdisp[3] = {0, 8, 24};
    int sbl[3] = {1, 1, 2};
    OK(MPI_Type_create_struct(3, sbl, sdisp, st, &t));
    CHECK(envelope(t, 4, 3, 3) == MPI_COMBINER_STRUCT);
    OK(MPI_Type_get_contents(t, 4, 3, 3, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[3] == 2 && addrs[1] == 8 && addrs[2] == 24);
    CHECK(types[0] == MPI_CHAR && types[1] == MPI_DOUBLE_INT && types[2] == MPI_FLOAT);
    OK(MPI_Type_free(&t));

    int sizes[3] = {4, 5, 6}, subsizes[3] = {1, 2, 3}, starts[3] = {3, 1, 0};
    OK(MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_INT, &t));
    CHECK(envelope(t, 11, 0, 1) == MPI_COMBINER_SUBARRAY);
    OK(MPI_Type_get_contents(t, 11, 0, 1, ints, addrs, types));
    int want_sub[11] = {3, 4, 5, 6, 1, 2, 3, 3, 1, 0, MPI_ORDER_FORTRAN};
    CHECK(memcmp(ints, want_sub, sizeof want_sub) == 0 && types[0] == MPI_INT);
    OK(MPI_Type_free(&t));

    int gs[2] = {9, 4}, ds[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE};
    int da[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {3, 1};
    OK(MPI_Type_create_darray(3, 2, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_FLOAT, &t));
    CHECK(envelope(t, 12, 0, 1) == MPI_COMBINER_DARRAY);
    OK(MPI_Type_get_contents(t, 12, 0, 1, ints, addrs, types));
    int want_d[12] = {3, 2, 2, 9, 4, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE, 2,
                      MPI_DISTRIBUTE_DFLT_DARG, 3, 1, MPI_ORDER_C};
    CHECK(memcmp(ints, want_d, sizeof want_d) == 0 && types[0] == MPI_FLOAT);
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_resized(MPI_2INT, -8, 32, &t));
    CHECK(envelope(t, 0, 2, 1) == MPI_COMBINER_RESIZED);
    OK(MPI_Type_get_contents(t, 0, 2, 1, ints, addrs, types));
    CHECK(addrs[0] == -8 && addrs[1] == 32 && types[0] == MPI_2INT);
    OK(MPI_Type_free(&t));

    /* large-count constructors: their counts come back as large counts, only from the _c calls */
    MPI_Count ni, na, nc, nd, counts[8];
    int comb;
    OK(MPI_Type_vector_c(6, 2, 3, MPI_INT, &t));
    OK(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb));
    CHECK(ni == 0 && na == 0 && nc == 3 && nd == 1 && comb == MPI_COMBINER_VECTOR);
    FAILS(MPI_Type_get_envelope(t, &ints[0], &ints[1], &ints[2], &ints[3]), MPI_ERR_TYPE);
    FAILS(MPI_Type_get_contents(t, 8, 8, 4, ints, addrs, types), MPI_ERR_TYPE);
    OK(MPI_Type_get_contents_c(t, 0, 0, 3, 1, ints, addrs, counts, types));
    CHECK(counts[0] == 6 && counts[1] == 2 && counts[2] == 3 && types[0] == MPI_INT);
    OK(MPI_Type_free(&t));
    MPI_Count csz[2] = {10, 20}, csub[2] = {5, 6}, cst[2] = {1, 2};
    OK(MPI_Type_create_subarray_c(2, csz, csub, cst, MPI_ORDER_C, MPI_BYTE, &t));
    OK(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb));
    CHECK(ni == 2 && na == 0 && nc == 6 && nd == 1 && comb == MPI_COMBINER_SUBARRAY);
    OK(MPI_Type_get_contents_c(t, 2, 0, 6, 1, ints, addrs, counts, types));
    CHECK(ints[0] == 2 && ints[1] == MPI_ORDER_C && counts[0] == 10 && counts[5] == 2);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_resized_c(MPI_INT, 0, 16, &t));
    OK(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb));
    CHECK(ni == 0 && na == 0 && nc == 2 && comb == MPI_COMBINER_RESIZED);
    OK(MPI_Type_free(&t));
}

/* A new type made by calling the constructor that the contents of `t` name with those
 * arguments (the inner types rebuilt the same way). */
static MPI_Datatype rebuild(MPI_Datatype t) {
    int ni, na, nd, comb, i[64];
    MPI_Aint a[32];
    MPI_Datatype d[8], n;
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    if (comb == MPI_COMBINER_NAMED) return t;
    CHECK(ni <= 64 && na <= 32 && nd <= 8);
    OK(MPI_Type_get_contents(t, ni, na, nd, i, a, d));
    for (int k = 0; k < nd; k++) {
        MPI_Datatype inner = rebuild(d[k]);
        free_returned(d[k]);
        d[k] = inner;
    }
    switch (comb) {
    case MPI_COMBINER_DUP: OK(MPI_Type_dup(d[0], &n)); break;
    case MPI_COMBINER_CONTIGUOUS: OK(MPI_Type_contiguous(i[0], d[0], &n)); break;
    case MPI_COMBINER_VECTOR: OK(MPI_Type_vector(i[0], i[1], i[2], d[0], &n)); break;
    case MPI_COMBINER_HVECTOR: OK(MPI_Type_create_hvector(i[0], i[1], a[0], d[0], &n)); break;
    case MPI_COMBINER_INDEXED: OK(MPI_Type_indexed(i[0], i + 1, i + 1 + i[0], d[0], &n)); break;
    case MPI_COMBINER_HINDEXED: OK(MPI_Type_create_hindexed(i[0], i + 1, a, d[0], &n)); break;
    case MPI_COMBINER_INDEXED_BLOCK:
        OK(MPI_Type_create_indexed_block(i[0], i[1], i + 2, d[0], &n));
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        OK(MPI_Type_create_hindexed_block(i[0], i[1], a, d[0], &n));
        break;
    case MPI_COMBINER_STRUCT: OK(MPI_Type_create_struct(i[0], i + 1, a, d, &n)); break;
    case MPI_COMBINER_SUBARRAY: {
        int nd2 = i[0];
        OK(MPI_Type_create_subarray(nd2, i + 1, i + 1 + nd2, i + 1 + 2 * nd2, i[1 + 3 * nd2], d[0],
                                    &n));
        break;
    }
    case MPI_COMBINER_DARRAY: {
        int nd2 = i[2];
        OK(MPI_Type_create_darray(i[0], i[1], nd2, i + 3, i + 3 + nd2, i + 3 + 2 * nd2,
                                  i + 3 + 3 * nd2, i[3 + 4 * nd2], d[0], &n));
        break;
    }
    case MPI_COMBINER_RESIZED: OK(MPI_Type_create_resized(d[0], a[0], a[1], &n)); break;
    default: CHECK(!"unexpected combiner"); n = MPI_DATATYPE_NULL;
    }
    for (int k = 0; k < nd; k++) free_returned(d[k]);
    return n;
}

/* Every combiner, nested: the type rebuilt from its contents has the same bounds and packs the
 * same bytes. */
static void rebuilt_from_contents(void) {
    MPI_Datatype vec, v, s, parts[3], t, r;
    OK(MPI_Type_vector(3, 2, -5, MPI_SHORT, &vec));
    int bl[3] = {1, 2, 1}, ix[3] = {4, 0, 9};
    MPI_Aint hx[3] = {0, 40, 16};
    OK(MPI_Type_indexed(3, bl, ix, vec, &parts[0]));
    OK(MPI_Type_create_hindexed_block(2, 3, hx, MPI_2INT, &parts[1]));
    int sizes[2] = {6, 7}, subs[2] = {2, 3}, starts[2] = {3, 1};
    OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_CHAR, &parts[2]));
    MPI_Datatype parts2[3];
    OK(MPI_Type_create_resized(parts[0], -16, 200, &parts2[0]));
    OK(MPI_Type_create_hvector(2, 1, 48, parts[1], &parts2[1]));
    OK(MPI_Type_dup(parts[2], &parts2[2]));
    OK(MPI_Type_create_struct(3, bl, hx, parts2, &s));
    int g[2] = {5, 9}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK};
    int dargs[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 2};
    MPI_Datatype dar, idx;
    OK(MPI_Type_create_darray(4, 1, 2, g, dist, dargs, ps, MPI_ORDER_C, MPI_FLOAT, &dar));
    MPI_Aint hx2[2] = {0, 400};
    int bl2[2] = {1, 1};
    OK(MPI_Type_create_hindexed(2, bl2, hx2, s, &idx));
    MPI_Datatype both[2] = {idx, dar};
    OK(MPI_Type_create_struct(2, bl2, hx2, both, &t));
    OK(MPI_Type_contiguous(2, t, &v)); /* the outermost type */
    r = rebuild(v);
    MPI_Count sz1, sz2, lb1, lb2, ex1, ex2, tl1, tl2, te1, te2;
    OK(MPI_Type_size_x(v, &sz1));
    OK(MPI_Type_size_x(r, &sz2));
    OK(MPI_Type_get_extent_x(v, &lb1, &ex1));
    OK(MPI_Type_get_extent_x(r, &lb2, &ex2));
    OK(MPI_Type_get_true_extent_x(v, &tl1, &te1));
    OK(MPI_Type_get_true_extent_x(r, &tl2, &te2));
    CHECK(sz1 == sz2 && lb1 == lb2 && ex1 == ex2 && tl1 == tl2 && te1 == te2);
    OK(MPI_Type_commit(&v));
    OK(MPI_Type_commit(&r));
    static unsigned char mem[8192], p1[4096], p2[4096];
    for (int k = 0; k < (int)sizeof mem; k++) mem[k] = (unsigned char)(k * 13 + 5);
    int pos1 = 0, pos2 = 0;
    unsigned char *base = mem + 2048 - tl1; /* the data starts 2048 bytes in */
    CHECK(te1 < 4096 && sz1 <= (MPI_Count)sizeof p1);
    OK(MPI_Pack(base, 1, v, p1, sizeof p1, &pos1, MPI_COMM_WORLD));
    OK(MPI_Pack(base, 1, r, p2, sizeof p2, &pos2, MPI_COMM_WORLD));
    CHECK(pos1 == sz1 && pos2 == pos1 && memcmp(p1, p2, pos1) == 0);
    MPI_Datatype all[] = {vec, v, r, t, idx, dar, s, parts[0], parts[1], parts[2], parts2[0],
                          parts2[1], parts2[2]};
    for (unsigned k = 0; k < sizeof all / sizeof all[0]; k++) OK(MPI_Type_free(&all[k]));
}

static void names_and_addresses(void) {
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Type_get_name(MPI_INT, name, &len));
    CHECK(strcmp(name, "MPI_INT") == 0 && len == 7);
    OK(MPI_Type_get_name(MPI_DOUBLE_INT, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE_INT") == 0);
    MPI_Datatype t;
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    OK(MPI_Type_get_name(t, name, &len));
    CHECK(len == 0 && name[0] == 0);
    OK(MPI_Type_set_name(t, "pair of ints"));
    OK(MPI_Type_get_name(t, name, &len));
    CHECK(strcmp(name, "pair of ints") == 0 && len == 12);
    MPI_Datatype stale = t;
    OK(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL);
    FAILS(MPI_Type_get_name(stale, name, &len), MPI_ERR_TYPE);
    /* MPI-4.1: the null handle has a name, but cannot be given one */
    OK(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len));
    CHECK(strcmp(name, "MPI_DATATYPE_NULL") == 0 && len == 17);
    FAILS(MPI_Type_set_name(MPI_DATATYPE_NULL, "x"), MPI_ERR_TYPE);

    double a[4];
    MPI_Aint p0, p3;
    OK(MPI_Get_address(&a[0], &p0));
    OK(MPI_Get_address(&a[3], &p3));
    CHECK(MPI_Aint_diff(p3, p0) == 3 * (MPI_Aint)sizeof(double));
    CHECK(MPI_Aint_add(p0, 16) == (MPI_Aint)&a[2]);
}

/* Sends with one type and receives with another in the ring; waits for both. */
static void exchange(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, MPI_Status *st) {
    MPI_Request r;
    OK(MPI_Irecv(rbuf, rcount, rtype, prev, 21, MPI_COMM_WORLD, &r));
    OK(MPI_Send(sbuf, scount, stype, next, 21, MPI_COMM_WORLD));
    OK(MPI_Wait(&r, st));
}

static void messages(void) {
    double m[ROWS][COLS], col[2 * ROWS];
    MPI_Datatype column, column1;
    MPI_Status st;
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) m[i][j] = rank * 1000 + i * 10 + j;

    /* a column received as contiguous doubles */
    OK(MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &column));
    OK(MPI_Type_commit(&column));
    exchange(&m[0][1], 1, column, col, ROWS, MPI_DOUBLE, &st);
    for (int i = 0; i < ROWS; i++) CHECK(col[i] == prev * 1000 + i * 10 + 1);
    int n;
    OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
    CHECK(n == ROWS);

    /* contiguous doubles received into a column: nothing else is written */
    double back[ROWS][COLS];
    memset(back, 0, sizeof back);
    for (int i = 0; i < ROWS; i++) col[i] = rank + i * 0.5;
    exchange(col, ROWS, MPI_DOUBLE, &back[0][2], 1, column, &st);
    OK(MPI_Get_count(&st, column, &n));
    CHECK(n == 1);
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) CHECK(back[i][j] == (j == 2 ? prev + i * 0.5 : 0));

    /* count > 1 steps by the extent: a column resized to one double is a run of columns */
    OK(MPI_Type_create_resized(column, 0, sizeof(double), &column1));
    OK(MPI_Type_commit(&column1));
    exchange(&m[0][1], 2, column1, col, 2 * ROWS, MPI_DOUBLE, &st);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < ROWS; i++) CHECK(col[k * ROWS + i] == prev * 1000 + i * 10 + 1 + k);
    OK(MPI_Type_free(&column1));
    OK(MPI_Type_free(&column));

    /* a struct of absolute addresses, sent from MPI_BOTTOM, received relative to a buffer */
    struct rec {
        int i;
        double d[2];
        char c;
    } s = {rank, {rank + 0.25, rank + 0.5}, (char)('a' + rank)}, r;
    memset(&r, 0, sizeof r);
    MPI_Aint abs[3], rel[3];
    OK(MPI_Get_address(&s.i, &abs[0]));
    OK(MPI_Get_address(&s.d, &abs[1]));
    OK(MPI_Get_address(&s.c, &abs[2]));
    for (int k = 0; k < 3; k++) rel[k] = MPI_Aint_diff(abs[k], abs[0]);
    int bl[3] = {1, 2, 1};
    MPI_Datatype ts[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, absolute, relative;
    OK(MPI_Type_create_struct(3, bl, abs, ts, &absolute));
    OK(MPI_Type_create_struct(3, bl, rel, ts, &relative));
    OK(MPI_Type_commit(&absolute));
    OK(MPI_Type_commit(&relative));
    exchange(MPI_BOTTOM, 1, absolute, &r, 1, relative, &st);
    CHECK(r.i == prev && r.d[0] == prev + 0.25 && r.d[1] == prev + 0.5 && r.c == 'a' + prev);
    OK(MPI_Get_elements(&st, relative, &n));
    CHECK(n == 4);
    OK(MPI_Type_free(&absolute));
    OK(MPI_Type_free(&relative));

    /* a negative lower bound: an int 4 bytes before the buffer, extent 8 */
    int arr[6] = {rank, -1, rank + 10, -1, rank + 20, -1}, two[3];
    MPI_Aint minus4 = -4;
    int one = 1;
    MPI_Datatype before, neg;
    OK(MPI_Type_create_hindexed(1, &one, &minus4, MPI_INT, &before));
    OK(MPI_Type_create_resized(before, -4, 8, &neg));
    OK(MPI_Type_commit(&neg));
    check_bounds(neg, 4, -4, 8, -4, 4);
    exchange(&arr[1], 3, neg, two, 3, MPI_INT, &st);
    CHECK(two[0] == prev && two[1] == prev + 10 && two[2] == prev + 20);
    OK(MPI_Type_free(&before));
    OK(MPI_Type_free(&neg));

    /* subarrays in both orders: rows 1-2 and columns 1-3 of a 4 x 5 int array */
    int a[4][5], got[6], sizes[2] = {4, 5}, subs[2] = {2, 3}, starts[2] = {1, 1};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++) a[i][j] = rank * 100 + i * 5 + j;
    MPI_Datatype sub;
    OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub));
    OK(MPI_Type_commit(&sub));
    exchange(a, 1, sub, got, 6, MPI_INT, &st);
    for (int k = 0; k < 6; k++) CHECK(got[k] == prev * 100 + (1 + k / 3) * 5 + 1 + k % 3);
    OK(MPI_Type_free(&sub));
    /* Fortran order: the same memory seen as a 5 x 4 column-major array (dimension 0 is j) */
    int fsizes[2] = {5, 4}, fsubs[2] = {3, 2}, fstarts[2] = {1, 1};
    OK(MPI_Type_create_subarray(2, fsizes, fsubs, fstarts, MPI_ORDER_FORTRAN, MPI_INT, &sub));
    OK(MPI_Type_commit(&sub));
    exchange(a, 1, sub, got, 6, MPI_INT, &st);
    for (int k = 0; k < 6; k++) CHECK(got[k] == prev * 100 + (1 + k / 3) * 5 + 1 + k % 3);
    OK(MPI_Type_free(&sub));

    /* darray: the block of a (2 * size) x 3 array this rank owns, row blocks over the ranks */
    int g[64][3], mine[2][3];
    int gsz[2] = {2 * size, 3}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE};
    int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {size, 1};
    for (int i = 0; i < 2 * size; i++)
        for (int j = 0; j < 3; j++) g[i][j] = rank * 1000 + i * 3 + j;
    MPI_Datatype da;
    OK(MPI_Type_create_darray(size, rank, 2, gsz, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &da));
    OK(MPI_Type_commit(&da));
    MPI_Request rq;
    OK(MPI_Irecv(mine, 6, MPI_INT, MPI_ANY_SOURCE, 22, MPI_COMM_SELF, &rq));
    OK(MPI_Send(g, 1, da, 0, 22, MPI_COMM_SELF));
    OK(MPI_Wait(&rq, &st));
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) CHECK(mine[i][j] == rank * 1000 + (2 * rank + i) * 3 + j);
    OK(MPI_Type_free(&da));
}

static void counts_and_truncation(void) {
    MPI_Datatype pair, gappy;
    MPI_Status st;
    int out[6] = {1, 2, 3, 4, 5, 6}, in[8], n;
    OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    OK(MPI_Type_commit(&pair));
    /* 5 ints into pairs: 2.5 elements */
    exchange(out, 5, MPI_INT, in, 3, pair, &st);
    OK(MPI_Get_count(&st, pair, &n));
    CHECK(n == MPI_UNDEFINED);
    OK(MPI_Get_elements(&st, pair, &n));
    CHECK(n == 5);
    MPI_Count cn;
    OK(MPI_Get_elements_x(&st, pair, &cn));
    CHECK(cn == 5);
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 5);
    OK(MPI_Type_free(&pair));

    /* 10 bytes into pairs of ints: the bytes end inside an int, so no count of basic
     * elements (the message's signature is not the type's) */
    char bytes[10] = {0};
    exchange(bytes, 10, MPI_BYTE, in, 3, MPI_2INT, &st);
    OK(MPI_Get_elements(&st, MPI_2INT, &n));
    CHECK(n == MPI_UNDEFINED);
    OK(MPI_Get_elements(&st, MPI_BYTE, &n));
    CHECK(n == 10);

    /* 6 ints into a type of 4 (every other int of 8): MPI_ERR_TRUNCATE, gaps untouched */
    OK(MPI_Type_vector(4, 1, 2, MPI_INT, &gappy));
    OK(MPI_Type_commit(&gappy));
    for (int k = 0; k < 8; k++) in[k] = -100 - k;
    MPI_Request r;
    OK(MPI_Irecv(in, 1, gappy, prev, 23, MPI_COMM_WORLD, &r));
    OK(MPI_Send(out, 6, MPI_INT, next, 23, MPI_COMM_WORLD));
    int rc = MPI_Wait(&r, &st);
    CHECK(rc == MPI_ERR_TRUNCATE || (rc == MPI_ERR_IN_STATUS && st.MPI_ERROR == MPI_ERR_TRUNCATE));
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 23);
    for (int k = 1; k < 8; k += 2) CHECK(in[k] == -100 - k);
    for (int k = 0; k < 8; k += 2) CHECK(in[k] == -100 - k || in[k] == out[k / 2]);
    /* the blocking receive says the same */
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Isend(out, 6, MPI_INT, next, 24, MPI_COMM_WORLD, &r));
    FAILS(MPI_Recv(in, 1, gappy, prev, 24, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 24);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int k = 1; k < 8; k += 2) CHECK(in[k] == -100 - k);
    OK(MPI_Type_free(&gappy));
}

static int q_fn(void *state, const void *buf, MPI_Count count, MPI_Count *packed) {
    (void)state;
    (void)buf;
    *packed = count;
    return MPI_SUCCESS;
}

static int p_fn(void *state, const void *buf, MPI_Count count, MPI_Count offset, void *dst,
                MPI_Count dst_size, MPI_Count *used) {
    (void)state;
    *used = count - offset < dst_size ? count - offset : dst_size;
    memcpy(dst, (const char *)buf + offset, *used);
    return MPI_SUCCESS;
}

static int u_fn(void *state, void *buf, MPI_Count count, MPI_Count offset, const void *src,
                MPI_Count src_size) {
    (void)state;
    (void)count;
    memcpy((char *)buf + offset, src, src_size);
    return MPI_SUCCESS;
}

static void errors(void) {
    MPI_Datatype t, freed, custom;
    int bl[2] = {1, -1}, disp[2] = {0, 1}, x = 0;
    FAILS(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    FAILS(MPI_Type_vector_c(-3, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
    FAILS(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG);
    FAILS(MPI_Type_indexed(2, bl, disp, MPI_INT, &t), MPI_ERR_ARG);
    FAILS(MPI_Type_indexed(2, NULL, disp, MPI_INT, &t), MPI_ERR_ARG);
    FAILS(MPI_Type_contiguous(2, MPI_INT, NULL), MPI_ERR_ARG);
    FAILS(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    OK(MPI_Type_contiguous(2, MPI_INT, &freed));
    MPI_Datatype stale = freed;
    OK(MPI_Type_free(&freed));
    FAILS(MPI_Type_contiguous(2, stale, &t), MPI_ERR_TYPE);
    FAILS(MPI_Type_free(&stale), MPI_ERR_TYPE);
    FAILS(MPI_Type_commit(&stale), MPI_ERR_TYPE);
    MPI_Datatype predefined = MPI_DOUBLE;
    FAILS(MPI_Type_free(&predefined), MPI_ERR_TYPE);
    MPI_Datatype structs[2] = {MPI_INT, MPI_DATATYPE_NULL};
    MPI_Aint sdisp[2] = {0, 8};
    int sbl[2] = {1, 1};
    FAILS(MPI_Type_create_struct(2, sbl, sdisp, structs, &t), MPI_ERR_TYPE);
    int sizes[2] = {4, 4}, subs[2] = {2, 2}, outside[2] = {3, 0};
    FAILS(MPI_Type_create_subarray(2, sizes, subs, outside, MPI_ORDER_C, MPI_INT, &t),
          MPI_ERR_ARG);
    int starts[2] = {0, 0};
    FAILS(MPI_Type_create_subarray(2, sizes, subs, starts, 3, MPI_INT, &t), MPI_ERR_ARG);
    int g = 8, bad = 99, dflt = MPI_DISTRIBUTE_DFLT_DARG, one = 1;
    FAILS(MPI_Type_create_darray(1, 0, 1, &g, &bad, &dflt, &one, MPI_ORDER_C, MPI_INT, &t),
          MPI_ERR_ARG);
    int blk = MPI_DISTRIBUTE_BLOCK, two = 2; /* a grid of 2 for 1 process */
    FAILS(MPI_Type_create_darray(1, 0, 1, &g, &blk, &dflt, &two, MPI_ORDER_C, MPI_INT, &t),
          MPI_ERR_ARG);

    /* a custom type has no derived form */
    OK(MPI_Type_create_custom(NULL, NULL, q_fn, p_fn, u_fn, NULL, NULL, NULL, 1, &custom));
    FAILS(MPI_Type_contiguous(2, custom, &t), MPI_ERR_TYPE);
    FAILS(MPI_Type_dup(custom, &t), MPI_ERR_TYPE);
    OK(MPI_Type_free(&custom));

    /* an uncommitted derived type cannot be communicated */
    OK(MPI_Type_contiguous(1, MPI_INT, &t));
    FAILS(MPI_Send(&x, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    OK(MPI_Type_commit(&t));
    OK(MPI_Send(&x, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    OK(MPI_Type_free(&t));
}

/* A type freed while a send using it is pending: the send still completes with its data. */
static void freed_while_pending(void) {
    enum { N = 20000 };
    static int src[2 * N], dst[N];
    for (int i = 0; i < 2 * N; i++) src[i] = rank * 7 + i;
    MPI_Datatype every_other;
    OK(MPI_Type_vector(N, 1, 2, MPI_INT, &every_other));
    OK(MPI_Type_commit(&every_other));
    MPI_Request s, r;
    OK(MPI_Isend(src, 1, every_other, next, 25, MPI_COMM_WORLD, &s));
    OK(MPI_Type_free(&every_other));
    CHECK(every_other == MPI_DATATYPE_NULL);
    OK(MPI_Irecv(dst, N, MPI_INT, prev, 25, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++) CHECK(dst[i] == prev * 7 + 2 * i);
}

/* MPI_Status_set_elements(_x, _c) and MPI_Status_set_cancelled: what Get_elements, Get_count
 * and Test_cancelled then report, for a predefined type and a struct of mixed elements. */
static void status_setters(void) {
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int n, flag;
    MPI_Count c;
    OK(MPI_Status_set_elements(&st, MPI_INT, 5));
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 5);
    OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
    CHECK(n == MPI_UNDEFINED);
    MPI_Datatype dint;
    int bl[2] = {1, 2};
    MPI_Aint dp[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_INT};
    OK(MPI_Type_create_struct(2, bl, dp, ty, &dint));
    OK(MPI_Type_commit(&dint));
    OK(MPI_Status_set_elements_x(&st, dint, 7)); /* two whole structs and one double */
    OK(MPI_Get_elements_x(&st, dint, &c));
    CHECK(c == 7);
    OK(MPI_Get_count(&st, dint, &n));
    CHECK(n == MPI_UNDEFINED);
    OK(MPI_Status_set_elements_c(&st, dint, 6));
    OK(MPI_Get_count_c(&st, dint, &c));
    CHECK(c == 2);
    FAILS(MPI_Status_set_elements(&st, dint, -1), MPI_ERR_COUNT);
    FAILS(MPI_Status_set_elements(MPI_STATUS_IGNORE, MPI_INT, 1), MPI_ERR_ARG);
    OK(MPI_Status_set_cancelled(&st, 1));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag);
    OK(MPI_Status_set_cancelled(&st, 0));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag);
    OK(MPI_Type_free(&dint));
}

int main(int argc, char **argv) {
    test_init(&argc, &argv, &rank, &size);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    constructors();
    contents();
    rebuilt_from_contents();
    names_and_addresses();
    messages();
    counts_and_truncation();
    errors();
    freed_while_pending();
    status_setters();
    test_finish(rank, "datatype");
    return 0;
}
