/* kernels.c: the DDTBench kernels (Schneider, Gerstenberger, Hoefler, EuroMPI'12) and their 69
 * (test, configuration) pairs in DDTBench's driver order: data layout, fill order, the packed
 * order of the communicated elements (as a stream), the index lists, and the MPI derived
 * datatypes (both builds: mpi_ddt on Open MPI, mpicd_ddt on mpicd). Parameters and byte counts follow the DDTBench kernel specification;
 * kernel_setup checks each configuration's byte count against it. */
#include "ddtbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int id;
    long p[8];
    size_t bytes; /* expected one-way payload (the specification's table) */
    const char *config;
} entry_t;

#define WRF_Y(c, a, b, d, e, f, g, h, i, by) \
    {K_WRF_Y_VEC, {a, b, d, e, f, g, h, i}, by, c}, {K_WRF_Y_SA, {a, b, d, e, f, g, h, i}, by, c}
#define WRF_X(c, a, b, d, e, f, g, h, i, by) \
    {K_WRF_X_VEC, {a, b, d, e, f, g, h, i}, by, c}, {K_WRF_X_SA, {a, b, d, e, f, g, h, i}, by, c}
#define LU(n, by) {K_NAS_LU_X, {n}, by, "n=" #n}, {K_NAS_LU_Y, {n}, by, "n=" #n}
#define MG(a, b, c, bx, by, cfg)                                                   \
    {K_NAS_MG_X, {a, b, c}, bx, cfg}, {K_NAS_MG_Y, {a, b, c}, by, cfg}, {K_NAS_MG_Z, {a, b, c}, \
                                                                         by, cfg}

/* ims, ime, jms, jme, is, ie, js, je (1-based, inclusive, as DDTBench's driver gives them). */
static const entry_t table[] = {
    WRF_Y("2x2", -4, 27, 34, 85, 1, 23, 41, 43, 90804),
    WRF_Y("3x3", 8, 34, 21, 61, 12, 30, 28, 30, 75012),
    WRF_Y("4x4", 4, 27, 14, 47, 8, 23, 21, 23, 63168),
    WRF_Y("5x5", 10, 31, 10, 39, 14, 27, 17, 19, 55272),
    WRF_Y("8x8", 4, 22, 4, 27, 8, 18, 11, 13, 43428),
    WRF_X("2x2", -4, 27, 34, 85, 18, 20, 38, 81, 173712),
    WRF_X("4x4", 4, 27, 14, 47, 18, 20, 18, 43, 102648),
    WRF_X("8x8", 4, 22, 4, 27, 13, 15, 8, 23, 63168),
    {K_MILC, {16, 16, 16, 16}, 98304, "16x16x16x16"},
    {K_MILC, {8, 16, 16, 16}, 49152, "8x16x16x16"},
    {K_MILC, {8, 8, 8, 16}, 24576, "8x8x8x16"},
    {K_MILC, {8, 8, 8, 8}, 12288, "8x8x8x8"},
    LU(12, 480),
    LU(33, 1320),
    LU(64, 2560),
    LU(102, 4080),
    LU(162, 6480),
    LU(408, 16320),
    LU(1020, 40800),
    MG(34, 18, 18, 2048, 4096, "34x18x18"),
    MG(130, 66, 66, 32768, 65536, "130x66x66"),
    MG(258, 130, 130, 131072, 262144, "258x130x130"),
    MG(514, 258, 258, 524288, 1048576, "514x258x258"),
    {K_LAMMPS_FULL, {3534, 3062}, 195968, "N=3534,icount=3062"},
    {K_LAMMPS_FULL, {2597, 2243}, 143552, "N=2597,icount=2243"},
    {K_LAMMPS_FULL, {1907, 1662}, 106368, "N=1907,icount=1662"},
    {K_LAMMPS_ATOMIC, {4084, 243}, 11664, "N=4084,icount=243"},
    {K_LAMMPS_ATOMIC, {2157, 145}, 6960, "N=2157,icount=145"},
    {K_LAMMPS_ATOMIC, {1217, 114}, 5472, "N=1217,icount=114"},
    {K_SPECFEM_OC, {88881, 3225}, 12900, "c=4"},
    {K_SPECFEM_OC, {38585, 1897}, 7588, "c=3"},
    {K_SPECFEM_OC, {12857, 877}, 3508, "c=2"},
    {K_SPECFEM_OC, {3697, 493}, 1972, "c=1"},
    {K_SPECFEM_CM, {834917, 51153, 11797, 3009}, 177672, "c=4"},
    {K_SPECFEM_CM, {396849, 22477, 7125, 1729}, 106248, "c=3"},
    {K_SPECFEM_CM, {152001, 7209, 3801, 801}, 55224, "c=2"},
    {K_SPECFEM_CM, {39929, 1225, 1957, 245}, 26424, "c=1"},
    {K_SPECFEM_MT, {3, 2, 7600}, 91200, "c=1"},
    {K_SPECFEM_MT, {3, 2, 6400}, 76800, "c=2"},
    {K_SPECFEM_MT, {3, 2, 5600}, 67200, "c=3"},
    {K_SPECFEM_MT, {3, 2, 6200}, 74400, "c=4"},
    {K_FFT, {256}, 0, "D=256"},
    {K_FFT, {512}, 0, "D=512"},
    {K_FFT, {768}, 0, "D=768"},
    {K_FFT, {1024}, 0, "D=1024"},
    {K_FFT, {1536}, 0, "D=1536"},
};

static const char *test_names[] = {
    [K_WRF_Y_VEC] = "WRF_y_vec",         [K_WRF_Y_SA] = "WRF_y_sa",
    [K_WRF_X_VEC] = "WRF_x_vec",         [K_WRF_X_SA] = "WRF_x_sa",
    [K_MILC] = "MILC_su3_zd",            [K_NAS_LU_X] = "NAS_LU_x",
    [K_NAS_LU_Y] = "NAS_LU_y",           [K_NAS_MG_X] = "NAS_MG_x",
    [K_NAS_MG_Y] = "NAS_MG_y",           [K_NAS_MG_Z] = "NAS_MG_z",
    [K_LAMMPS_FULL] = "LAMMPS_full",     [K_LAMMPS_ATOMIC] = "LAMMPS_atomic",
    [K_SPECFEM_OC] = "SPECFEM3D_oc",     [K_SPECFEM_CM] = "SPECFEM3D_cm",
    [K_SPECFEM_MT] = "SPECFEM3D_mt",     [K_FFT] = "FFT",
};

int kernel_count(void) {
    return (int)(sizeof table / sizeof table[0]);
}

const char *kernel_test_name(int i, int nranks) {
    static char fft[16];
    if (table[i].id != K_FFT) return test_names[table[i].id];
    snprintf(fft, sizeof fft, "FFT%d", nranks);
    return fft;
}

/* A configuration's size for the smoke run's choice: the byte count, or D for FFT. */
static size_t smoke_size(const entry_t *e) {
    return e->id == K_FFT ? (size_t)e->p[0] : e->bytes;
}

int kernel_is_smallest(int i) {
    for (int j = 0; j < kernel_count(); j++) {
        if (table[j].id != table[i].id) continue;
        size_t a = smoke_size(&table[j]), b = smoke_size(&table[i]);
        if (a < b || (a == b && j < i)) return 0;
    }
    return 1;
}

static void *zalloc(size_t bytes) {
    void *p = calloc(bytes ? bytes : 1, 1);
    if (!p) {
        fprintf(stderr, "ddtbench: out of memory (%zu bytes)\n", bytes);
        abort();
    }
    return p;
}

/* Adds an array (in fill order) and returns its memory. */
static void *add_array(kernel_t *k, size_t n, size_t esize, int nofill) {
    array_t *a = &k->arr[k->narr++];
    a->base = zalloc(n * esize);
    a->n = n;
    a->esize = esize;
    a->nofill = nofill;
    a->off = k->T;
    if (!nofill) k->T += (double)n;
    return a->base;
}

void kernel_fill(kernel_t *k, int rank) {
    for (int i = 0; i < k->narr; i++) {
        array_t *a = &k->arr[i];
        double v0 = rank * k->T + 1 + a->off;
        if (a->nofill) {
            memset(a->base, 0, a->n * a->esize);
        } else if (a->esize == 4) {
            float *f = a->base;
            for (size_t p = 0; p < a->n; p++) f[p] = (float)(v0 + (double)p);
        } else {
            double *d = a->base;
            for (size_t p = 0; p < a->n; p++) d[p] = v0 + (double)p;
        }
    }
}

/* ----- WRF ----------------------------------------------------------------------------------- */

/* prm: d1 d2 d3 s1 s2 s3 i0 k0 j0 */
static void wrf_setup(kernel_t *k, const long *p) {
    long ims = p[0], ime = p[1], jms = p[2], jme = p[3], is = p[4], ie = p[5], js = p[6],
         je = p[7];
    long kms = 1, kme = 65, ks = 1, ke = 65;
    long d1 = ime - ims + 1, d2 = kme - kms + 1, d3 = jme - jms + 1;
    long s1 = ie - is + 1, s2 = ke - ks + 1, s3 = je - js + 1;
    long i0 = is - ims, k0 = ks - kms, j0 = js - jms;
    long L = 2, f = 1; /* species per 4-D field; param_first_scalar - 1 */
    long *q = k->prm;
    q[0] = d1; q[1] = d2; q[2] = d3; q[3] = s1; q[4] = s2; q[5] = s3;
    q[6] = i0; q[7] = k0; q[8] = j0; q[9] = L; q[10] = f;
    float *F2[4], *F3[3], *F4[2];
    for (int m = 0; m < 4; m++) F2[m] = add_array(k, (size_t)(d1 * d3), 4, 0);
    for (int m = 0; m < 3; m++) F3[m] = add_array(k, (size_t)(d1 * d2 * d3), 4, 0);
    for (int m = 0; m < 2; m++) F4[m] = add_array(k, (size_t)(d1 * d2 * d3 * L), 4, 0);
    stream_t *ss[2] = {&k->send, &k->recv};
    for (int side = 0; side < 2; side++) { /* the send set is the receive set */
        stream_t *s = ss[side];
        for (int m = 0; m < 4; m++)
            stream_seg(s, F2[m] + i0 + j0 * d1, 4, s1, s3, d1, 1, 0);
        for (int m = 0; m < 3; m++)
            stream_seg(s, F3[m] + i0 + d1 * (k0 + d2 * j0), 4, s1, s2, d1, s3, d1 * d2);
        for (int m = 0; m < 2; m++)
            for (long sp = f; sp < L; sp++)
                stream_seg(s, F4[m] + i0 + d1 * (k0 + d2 * (j0 + d3 * sp)), 4, s1, s2, d1, s3,
                           d1 * d2);
    }
    k->regions = 1;
}

/* ----- MILC ---------------------------------------------------------------------------------- */

static void milc_setup(kernel_t *k, const long *p) {
    long Lx = p[0], Ly = p[1], Lz = p[2], Lt = p[3], S = Lx * Ly * Lz;
    memcpy(k->prm, p, 4 * sizeof(long));
    float *V = add_array(k, (size_t)(6 * S * Lt), 4, 0);
    for (int side = 0; side < 2; side++)
        stream_seg(side ? &k->recv : &k->send, V, 4, (size_t)(6 * Lx * Ly / 2), (size_t)(2 * Lt),
                   (size_t)(6 * S / 2), 1, 0);
    k->regions = 1;
}

/* ----- NAS LU and MG --------------------------------------------------------------------------- */

static void lu_setup(kernel_t *k, const long *p) {
    long n = p[0], D2 = n, D3 = n;
    k->prm[0] = n;
    double *U = add_array(k, (size_t)(5 * (D2 + 2) * (D3 + 2)), 8, 0);
#define U_AT(c, pp, qq) (U + (c) + 5 * ((pp) + (D2 + 2) * (qq)))
    if (k->id == K_NAS_LU_X) {
        stream_seg(&k->send, U_AT(0, 1, D3), 8, (size_t)(5 * D2), 1, 0, 1, 0);
        stream_seg(&k->recv, U_AT(0, 1, 0), 8, (size_t)(5 * D2), 1, 0, 1, 0);
    } else {
        stream_seg(&k->send, U_AT(0, D2, 1), 8, 5, (size_t)D3, (size_t)(5 * (D2 + 2)), 1, 0);
        stream_seg(&k->recv, U_AT(0, 0, 1), 8, 5, (size_t)D3, (size_t)(5 * (D2 + 2)), 1, 0);
    }
#undef U_AT
    k->regions = 1;
}

static void mg_setup(kernel_t *k, const long *p) {
    long D1 = p[0], D2 = p[1], D3 = p[2];
    memcpy(k->prm, p, 3 * sizeof(long));
    double *A = add_array(k, (size_t)(D1 * D2 * D3), 8, 0);
#define A_AT(x, y, z) (A + (x) + D1 * ((y) + D2 * (z)))
    if (k->id == K_NAS_MG_X) {
        stream_seg(&k->send, A_AT(D1 - 2, 1, 1), 8, 1, D2 - 2, D1, D3 - 2, D1 * D2);
        stream_seg(&k->recv, A_AT(D1 - 1, 1, 1), 8, 1, D2 - 2, D1, D3 - 2, D1 * D2);
    } else if (k->id == K_NAS_MG_Y) {
        stream_seg(&k->send, A_AT(1, D2 - 2, 1), 8, D1 - 2, D3 - 2, D1 * D2, 1, 0);
        stream_seg(&k->recv, A_AT(1, D2 - 1, 1), 8, D1 - 2, D3 - 2, D1 * D2, 1, 0);
    } else {
        stream_seg(&k->send, A_AT(1, 1, 1), 8, D1 - 2, D2 - 2, D1, 1, 0);
        stream_seg(&k->recv, A_AT(1, 1, 0), 8, D1 - 2, D2 - 2, D1, 1, 0);
    }
#undef A_AT
    k->regions = 1;
}

/* ----- random index lists (LAMMPS, SPECFEM3D_oc/cm) ------------------------------------------- */

static uint64_t rng_next(uint64_t *s) {
    /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* `count` distinct indices from [0, n), unsorted: the first entries of a shuffled identity
 * (a fixed seed per outer iteration and list, the same on every rank). */
static void draw_list(int *out, size_t count, size_t n, uint64_t seed) {
    int *perm = malloc(n * sizeof *perm);
    if (!perm) abort();
    for (size_t i = 0; i < n; i++) perm[i] = (int)i;
    for (size_t i = 0; i < count; i++) {
        size_t j = i + (size_t)(rng_next(&seed) % (n - i));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    memcpy(out, perm, count * sizeof *out);
    free(perm);
}

/* ----- LAMMPS -------------------------------------------------------------------------------- */

/* arr: X, tag, type, mask, q, molecule (full) | X, tag, type, mask (atomic) */
static void lammps_streams(kernel_t *k) {
    long N = k->prm[0], ic = k->prm[1];
    int full = k->id == K_LAMMPS_FULL;
    stream_clear(&k->send);
    stream_clear(&k->recv);
    /* AoS records: X0 X1 X2 tag type mask [molecule q] */
    int order[6] = {0, 1, 2, 3, 5, 4};
    stream_rec(&k->send, k->list[0], 0, (size_t)ic);
    for (int f = 0; f < (full ? 6 : 4); f++)
        stream_field(&k->send, k->arr[order[f]].base, 8, order[f] == 0 ? 3 : 1);
    stream_rec(&k->recv, NULL, (size_t)N, (size_t)ic);
    for (int f = 0; f < (full ? 6 : 4); f++)
        stream_field(&k->recv, k->arr[order[f]].base, 8, order[f] == 0 ? 3 : 1);
}

static void lammps_setup(kernel_t *k, const long *p) {
    long N = p[0], ic = p[1], M = N + ic;
    k->prm[0] = N;
    k->prm[1] = ic;
    add_array(k, (size_t)(3 * M), 8, 0);
    for (int a = 0; a < (k->id == K_LAMMPS_FULL ? 5 : 3); a++) add_array(k, (size_t)M, 8, 0);
    k->list[0] = zalloc((size_t)ic * sizeof(int));
    k->nlist[0] = (size_t)ic;
    k->random = 1;
    kernel_relist(k, 0);
}

/* ----- SPECFEM3D ----------------------------------------------------------------------------- */

static void specfem_streams(kernel_t *k) {
    stream_clear(&k->send);
    stream_clear(&k->recv);
    for (int side = 0; side < 2; side++) {
        stream_t *s = side ? &k->recv : &k->send;
        if (k->id == K_SPECFEM_OC) {
            stream_rec(s, k->list[0], 0, k->nlist[0]);
            stream_field(s, k->arr[0].base, 4, 1);
        } else {
            stream_rec(s, k->list[0], 0, k->nlist[0]);
            stream_field(s, k->arr[0].base, 4, 3);
            stream_rec(s, k->list[1], 0, k->nlist[1]);
            stream_field(s, k->arr[1].base, 4, 3);
        }
    }
}

static void specfem_setup(kernel_t *k, const long *p) {
    memcpy(k->prm, p, 4 * sizeof(long));
    if (k->id == K_SPECFEM_OC) {
        add_array(k, (size_t)p[0], 4, 0);
        k->nlist[0] = (size_t)p[1];
        k->list[0] = zalloc(k->nlist[0] * sizeof(int));
        k->random = 1;
        kernel_relist(k, 0);
    } else if (k->id == K_SPECFEM_CM) {
        add_array(k, (size_t)(3 * p[0]), 4, 0);
        add_array(k, (size_t)(3 * p[1]), 4, 0);
        k->nlist[0] = (size_t)p[2];
        k->nlist[1] = (size_t)p[3];
        k->list[0] = zalloc(k->nlist[0] * sizeof(int));
        k->list[1] = zalloc(k->nlist[1] * sizeof(int));
        k->random = 1;
        kernel_relist(k, 0);
    } else { /* mt: an x-z plane of s sent, stored as a contiguous plane of r */
        long D1 = p[0], D2 = p[1], D3 = p[2];
        float *s = add_array(k, (size_t)(D1 * D2 * D3), 4, 0);
        float *r = add_array(k, (size_t)(D1 * D3), 4, 1);
        stream_seg(&k->send, s, 4, (size_t)D1, (size_t)D3, (size_t)(D1 * D2), 1, 0);
        stream_seg(&k->recv, r, 4, (size_t)(D1 * D3), 1, 0, 1, 0);
    }
}

void kernel_relist(kernel_t *k, unsigned iter) {
    if (!k->random) return;
    uint64_t seed = 0x5eed0000ull + 7919ull * iter;
    if (k->id == K_LAMMPS_FULL || k->id == K_LAMMPS_ATOMIC) {
        draw_list(k->list[0], k->nlist[0], (size_t)k->prm[0], seed);
        lammps_streams(k);
    } else if (k->id == K_SPECFEM_OC) {
        draw_list(k->list[0], k->nlist[0], (size_t)k->prm[0], seed);
        specfem_streams(k);
    } else {
        draw_list(k->list[0], k->nlist[0], (size_t)k->prm[0], seed);
        draw_list(k->list[1], k->nlist[1], (size_t)k->prm[1], seed + 1);
        specfem_streams(k);
    }
}

/* ----- FFT ----------------------------------------------------------------------------------- */

/* prm: D, n, P. Arrays: M (filled), R (receive matrix). The streams are per peer (driver). */
static void fft_setup(kernel_t *k, const long *p, int nranks) {
    long P = nranks, D = p[0] + p[0] % P, n = D / P;
    k->prm[0] = D;
    k->prm[1] = n;
    k->prm[2] = P;
    add_array(k, (size_t)(2 * D * n), 8, 0);
    add_array(k, (size_t)(2 * D * n), 8, 1);
    k->bytes = (size_t)(16 * n * D);
}

/* ----- setup --------------------------------------------------------------------------------- */

void kernel_setup(kernel_t *k, int i, int nranks) {
    const entry_t *e = &table[i];
    memset(k, 0, sizeof *k);
    k->id = e->id;
    snprintf(k->test, sizeof k->test, "%s", test_names[e->id]);
    snprintf(k->config, sizeof k->config, "%s", e->config);
    switch (e->id) {
    case K_WRF_Y_VEC: case K_WRF_Y_SA: case K_WRF_X_VEC: case K_WRF_X_SA:
        wrf_setup(k, e->p);
        break;
    case K_MILC: milc_setup(k, e->p); break;
    case K_NAS_LU_X: case K_NAS_LU_Y: lu_setup(k, e->p); break;
    case K_NAS_MG_X: case K_NAS_MG_Y: case K_NAS_MG_Z: mg_setup(k, e->p); break;
    case K_LAMMPS_FULL: case K_LAMMPS_ATOMIC: lammps_setup(k, e->p); break;
    case K_SPECFEM_OC: case K_SPECFEM_CM: case K_SPECFEM_MT: specfem_setup(k, e->p); break;
    case K_FFT:
        snprintf(k->test, sizeof k->test, "FFT%d", nranks);
        fft_setup(k, e->p, nranks);
        return;
    }
    k->bytes = k->send.total;
    if (k->bytes != e->bytes || k->recv.total != e->bytes) {
        fprintf(stderr, "ddtbench: %s %s: %zu bytes (receive side %zu), specification says %zu\n",
                k->test, k->config, k->bytes, k->recv.total, e->bytes);
        abort();
    }
}

void kernel_free(kernel_t *k) {
    for (int i = 0; i < k->narr; i++) free(k->arr[i].base);
    free(k->list[0]);
    free(k->list[1]);
    memset(k, 0, sizeof *k);
}

/* ----- MPI derived datatypes (both builds) --------------------------------------------------- */

static MPI_Datatype keep(ddt_t *d, MPI_Datatype t) {
    d->tofree[d->nfree++] = t;
    return t;
}

static void wrf_ddt(kernel_t *k, ddt_t *d) {
    long *q = k->prm;
    long d1 = q[0], d2 = q[1], d3 = q[2], s1 = q[3], s2 = q[4], s3 = q[5];
    long i0 = q[6], k0 = q[7], j0 = q[8], L = q[9], f = q[10];
    MPI_Datatype types[9];
    MPI_Aint disp[9];
    int bl[9];
    if (k->id == K_WRF_Y_VEC || k->id == K_WRF_X_VEC) {
        MPI_Datatype T2, Tv, T3, T4;
        MPI_Type_vector((int)s3, (int)s1, (int)d1, MPI_FLOAT, &T2);
        MPI_Type_vector((int)s2, (int)s1, (int)d1, MPI_FLOAT, &Tv);
        MPI_Type_create_hvector((int)s3, 1, (MPI_Aint)(d1 * d2 * 4), Tv, &T3);
        MPI_Type_create_hvector((int)(L - f), 1, (MPI_Aint)(d1 * d2 * d3 * 4), T3, &T4);
        keep(d, T2); keep(d, Tv); keep(d, T3); keep(d, T4);
        for (int m = 0; m < 9; m++) {
            float *base = k->arr[m].base;
            float *at = m < 4   ? base + i0 + j0 * d1
                        : m < 7 ? base + i0 + d1 * (k0 + d2 * j0)
                                : base + i0 + d1 * (k0 + d2 * (j0 + d3 * f));
            MPI_Get_address(at, &disp[m]);
            types[m] = m < 4 ? T2 : m < 7 ? T3 : T4;
            bl[m] = 1;
        }
    } else {
        MPI_Datatype S2, S3, S4;
        int sz2[2] = {(int)d3, (int)d1}, sub2[2] = {(int)s3, (int)s1}, st2[2] = {(int)j0, (int)i0};
        int sz3[3] = {(int)d3, (int)d2, (int)d1}, sub3[3] = {(int)s3, (int)s2, (int)s1},
            st3[3] = {(int)j0, (int)k0, (int)i0};
        int sz4[4] = {(int)L, (int)d3, (int)d2, (int)d1},
            sub4[4] = {(int)(L - f), (int)s3, (int)s2, (int)s1},
            st4[4] = {(int)f, (int)j0, (int)k0, (int)i0};
        MPI_Type_create_subarray(2, sz2, sub2, st2, MPI_ORDER_C, MPI_FLOAT, &S2);
        MPI_Type_create_subarray(3, sz3, sub3, st3, MPI_ORDER_C, MPI_FLOAT, &S3);
        MPI_Type_create_subarray(4, sz4, sub4, st4, MPI_ORDER_C, MPI_FLOAT, &S4);
        keep(d, S2); keep(d, S3); keep(d, S4);
        for (int m = 0; m < 9; m++) {
            MPI_Get_address(k->arr[m].base, &disp[m]);
            types[m] = m < 4 ? S2 : m < 7 ? S3 : S4;
            bl[m] = 1;
        }
    }
    MPI_Datatype all;
    MPI_Type_create_struct(9, bl, disp, types, &all);
    MPI_Type_commit(&all);
    keep(d, all);
    d->sbuf = d->rbuf = MPI_BOTTOM;
    d->stype = d->rtype = all;
}

static void lammps_ddt(kernel_t *k, ddt_t *d) {
    long N = k->prm[0], ic = k->prm[1];
    int nf = k->id == K_LAMMPS_FULL ? 6 : 4;
    int *L = k->list[0];
    int *L3 = malloc((size_t)ic * sizeof *L3);
    for (long i = 0; i < ic; i++) L3[i] = 3 * L[i];
    MPI_Datatype I1, I3, C1, C3;
    MPI_Type_create_indexed_block((int)ic, 1, L, MPI_DOUBLE, &I1);
    MPI_Type_create_indexed_block((int)ic, 3, L3, MPI_DOUBLE, &I3);
    MPI_Type_contiguous((int)ic, MPI_DOUBLE, &C1);
    MPI_Type_contiguous((int)(3 * ic), MPI_DOUBLE, &C3);
    free(L3);
    keep(d, I1); keep(d, I3); keep(d, C1); keep(d, C3);
    MPI_Datatype st[6], rt[6];
    MPI_Aint sd[6], rd[6];
    int bl[6] = {1, 1, 1, 1, 1, 1};
    /* struct-of-arrays: X, tag, type, mask, q, molecule (arrays in fill order) */
    for (int a = 0; a < nf; a++) {
        double *base = k->arr[a].base;
        MPI_Get_address(base, &sd[a]);
        MPI_Get_address(base + (a == 0 ? 3 * N : N), &rd[a]);
        st[a] = a == 0 ? I3 : I1;
        rt[a] = a == 0 ? C3 : C1;
    }
    MPI_Type_create_struct(nf, bl, sd, st, &d->stype);
    MPI_Type_create_struct(nf, bl, rd, rt, &d->rtype);
    MPI_Type_commit(&d->stype);
    MPI_Type_commit(&d->rtype);
    keep(d, d->stype);
    keep(d, d->rtype);
    d->sbuf = d->rbuf = MPI_BOTTOM;
}

void kernel_ddt(kernel_t *k, ddt_t *d) {
    memset(d, 0, sizeof *d);
    long *q = k->prm;
    MPI_Datatype t, e;
    switch (k->id) {
    case K_WRF_Y_VEC: case K_WRF_Y_SA: case K_WRF_X_VEC: case K_WRF_X_SA:
        wrf_ddt(k, d);
        return;
    case K_MILC: {
        long Lx = q[0], Ly = q[1], Lz = q[2], Lt = q[3];
        MPI_Datatype V6, W;
        MPI_Type_contiguous(6, MPI_FLOAT, &V6);
        MPI_Type_vector((int)Lt, (int)(Lx * Ly / 2), (int)(Lx * Ly * Lz / 2), V6, &W);
        MPI_Type_create_hvector(2, 1, (MPI_Aint)(24 * Lx * Ly * Lz * Lt / 2), W, &t);
        keep(d, V6); keep(d, W);
        d->sbuf = d->rbuf = k->arr[0].base;
        break;
    }
    case K_NAS_LU_X:
        MPI_Type_contiguous((int)(5 * q[0]), MPI_DOUBLE, &t);
        d->sbuf = k->send.p[0].base;
        d->rbuf = k->recv.p[0].base;
        break;
    case K_NAS_LU_Y:
        MPI_Type_contiguous(5, MPI_DOUBLE, &e);
        MPI_Type_vector((int)q[0], 1, (int)(q[0] + 2), e, &t);
        keep(d, e);
        d->sbuf = k->send.p[0].base;
        d->rbuf = k->recv.p[0].base;
        break;
    case K_NAS_MG_X:
        MPI_Type_vector((int)(q[1] - 2), 1, (int)q[0], MPI_DOUBLE, &e);
        MPI_Type_create_hvector((int)(q[2] - 2), 1, (MPI_Aint)(8 * q[0] * q[1]), e, &t);
        keep(d, e);
        d->sbuf = k->send.p[0].base;
        d->rbuf = k->recv.p[0].base;
        break;
    case K_NAS_MG_Y:
        MPI_Type_vector((int)(q[2] - 2), (int)(q[0] - 2), (int)(q[0] * q[1]), MPI_DOUBLE, &t);
        d->sbuf = k->send.p[0].base;
        d->rbuf = k->recv.p[0].base;
        break;
    case K_NAS_MG_Z:
        MPI_Type_vector((int)(q[1] - 2), (int)(q[0] - 2), (int)q[0], MPI_DOUBLE, &t);
        d->sbuf = k->send.p[0].base;
        d->rbuf = k->recv.p[0].base;
        break;
    case K_LAMMPS_FULL: case K_LAMMPS_ATOMIC:
        lammps_ddt(k, d);
        return;
    case K_SPECFEM_OC:
        MPI_Type_create_indexed_block((int)k->nlist[0], 1, k->list[0], MPI_FLOAT, &t);
        d->sbuf = d->rbuf = k->arr[0].base;
        break;
    case K_SPECFEM_CM: {
        MPI_Datatype I[2];
        MPI_Aint disp[2];
        int bl[2] = {1, 1};
        for (int a = 0; a < 2; a++) {
            int *L3 = malloc(k->nlist[a] * sizeof *L3);
            for (size_t i = 0; i < k->nlist[a]; i++) L3[i] = 3 * k->list[a][i];
            MPI_Type_create_indexed_block((int)k->nlist[a], 3, L3, MPI_FLOAT, &I[a]);
            free(L3);
            keep(d, I[a]);
            MPI_Get_address(k->arr[a].base, &disp[a]);
        }
        MPI_Type_create_struct(2, bl, disp, I, &t);
        d->sbuf = d->rbuf = MPI_BOTTOM;
        break;
    }
    case K_SPECFEM_MT: {
        MPI_Datatype r;
        MPI_Type_contiguous((int)q[0], MPI_FLOAT, &e);
        MPI_Type_vector((int)q[2], 1, (int)q[1], e, &t);
        MPI_Type_contiguous((int)(q[0] * q[2]), MPI_FLOAT, &r);
        MPI_Type_commit(&t);
        MPI_Type_commit(&r);
        keep(d, e); keep(d, t); keep(d, r);
        d->sbuf = k->arr[0].base;
        d->rbuf = k->arr[1].base;
        d->stype = t;
        d->rtype = r;
        return;
    }
    default:
        abort();
    }
    MPI_Type_commit(&t);
    keep(d, t);
    d->stype = d->rtype = t;
}

void ddt_free(ddt_t *d) {
    for (int i = d->nfree - 1; i >= 0; i--) MPI_Type_free(&d->tofree[i]);
    d->nfree = 0;
}
