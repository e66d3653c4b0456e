/* ddtbench.c: the driver of the DDTBench kernels on mpicd and on Open MPI (see ddtbench.h for
 * the credit to DDTBench and its authors, Schneider, Gerstenberger and Hoefler).
 *
 * Protocol (DDTBench's): ranks 0 and 1 ping-pong one non-contiguous application buffer; an outer
 * loop (default 10) rebuilds the datatypes or buffers (and, for LAMMPS and SPECFEM3D_oc/cm,
 * draws new index lists), an inner loop (default 20) does one round trip per iteration. Rank 0
 * times each round trip including its own pack and unpack; the mean over the samples without the
 * first and the last gives the bandwidth, bytes / mean time (one-way bytes per round-trip time,
 * as in the DDTBench paper's figures). FFT<P> is a 2-D FFT transpose with alltoall on all ranks.
 *
 * After the timed loops every method is checked: both ranks fill their arrays, rank 0 sends,
 * rank 1 checks every element of every array (rank 0's values in the receive set, its own
 * elsewhere), refills with a third pattern and sends back, and rank 0 checks likewise.
 *
 * Usage: ddtbench [OUTER INNER] [--smoke] [--only TEST] [--budget SECONDS]
 * Output: `RESULT <method> <test> <bytes> <MB/s>` per (test, configuration, method) from the
 * median round trip, `RESULT <method> <test>.mean ...` from DDTBench's mean, and a
 * readable `#` line with the configuration and the round-trip times. MB = 1e6 bytes. */
#include "ddtbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The derived-datatype methods (M_DDT, M_PACK_DDT) run in both builds with the same types
 * (kernel_ddt): mpi_ddt and mpi_pack_ddt on Open MPI, mpicd_ddt and mpicd_pack_ddt on mpicd. */
#ifdef MPICD_CUSTOM
enum { M_REFERENCE, M_MANUAL, M_DDT, M_PACK_DDT, M_CUSTOM, M_CUSTOM_REGIONS, M_COUNT };
static const char *method_names[] = {"mpicd_reference", "mpicd_manual", "mpicd_ddt",
                                     "mpicd_pack_ddt", "custom", "custom_regions"};
#else
enum { M_REFERENCE, M_MANUAL, M_DDT, M_PACK_DDT, M_COUNT };
static const char *method_names[] = {"reference", "manual", "mpi_ddt", "mpi_pack_ddt"};
#endif

static int rank, nranks;
static int outer_loop = 10, inner_loop = 20;
/* Seconds one method of one configuration may take: past it (and after MIN_SAMPLES round
 * trips) the loops stop early, so that a slow method on a large configuration (a datatype
 * engine that walks a large FFT type element by element) does not take minutes. */
static double budget = 2.0;
#define MIN_SAMPLES 5
#define TAG 0

static void fail(const char *test, const char *config, const char *method, const char *what) {
    fprintf(stderr, "ddtbench: %s %s %s: %s (rank %d)\n", test, config, method, what, rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned char pat(int r, size_t i) {
    return (unsigned char)(r * 101 + (i * 2654435761u >> 7));
}

/* ----- custom datatypes (mpicd build) ------------------------------------------------------ */
#ifdef MPICD_CUSTOM
typedef struct {
    const stream_t *s;
    long nreg;
    void **bases;
    MPI_Count *lens;
} view_t;

static int cb_state(void *context, const void *src, MPI_Count count, void **state) {
    (void)src;
    (void)count;
    *state = context;
    return MPI_SUCCESS;
}

static int cb_query(void *state, const void *buf, MPI_Count count, MPI_Count *size) {
    (void)buf;
    (void)count;
    *size = (MPI_Count)((view_t *)state)->s->total;
    return MPI_SUCCESS;
}

static int cb_query_none(void *state, const void *buf, MPI_Count count, MPI_Count *size) {
    (void)state;
    (void)buf;
    (void)count;
    *size = 0;
    return MPI_SUCCESS;
}

static int cb_pack(void *state, const void *buf, MPI_Count count, MPI_Count offset, void *dst,
                   MPI_Count dst_size, MPI_Count *used) {
    (void)buf;
    (void)count;
    view_t *v = state;
    *used = (MPI_Count)stream_copy(v->s, (size_t)offset, dst, (size_t)dst_size, 1);
    return *used > 0 ? MPI_SUCCESS : MPI_ERR_OTHER;
}

static int cb_unpack(void *state, void *buf, MPI_Count count, MPI_Count offset, const void *src,
                     MPI_Count src_size) {
    (void)buf;
    (void)count;
    view_t *v = state;
    size_t n = stream_copy(v->s, (size_t)offset, (char *)src, (size_t)src_size, 0);
    return n == (size_t)src_size ? MPI_SUCCESS : MPI_ERR_TRUNCATE;
}

static int cb_region_count(void *state, void *buf, MPI_Count count, MPI_Count *n) {
    (void)buf;
    (void)count;
    *n = ((view_t *)state)->nreg;
    return MPI_SUCCESS;
}

static int cb_regions(void *state, void *buf, MPI_Count count, MPI_Count n, void **bases,
                      MPI_Count *lens, MPI_Datatype *types) {
    (void)buf;
    (void)count;
    view_t *v = state;
    if (n != v->nreg) return MPI_ERR_ARG;
    memcpy(bases, v->bases, (size_t)n * sizeof *bases);
    memcpy(lens, v->lens, (size_t)n * sizeof *lens);
    for (MPI_Count i = 0; i < n; i++) types[i] = MPI_BYTE;
    return MPI_SUCCESS;
}

/* A custom datatype over stream s: packed (callbacks) or regions only. */
static MPI_Datatype custom_type(view_t *v, const stream_t *s, int regions) {
    memset(v, 0, sizeof *v);
    v->s = s;
    MPI_Datatype t;
    if (regions) {
        v->nreg = stream_runs(s);
        v->bases = malloc((size_t)v->nreg * sizeof *v->bases);
        v->lens = malloc((size_t)v->nreg * sizeof *v->lens);
        stream_fill_runs(s, v->bases, v->lens);
        MPI_Type_create_custom(cb_state, NULL, cb_query_none, NULL, NULL, cb_region_count,
                               cb_regions, v, 1, &t);
    } else {
        MPI_Type_create_custom(cb_state, NULL, cb_query, cb_pack, cb_unpack, NULL, NULL, v, 1, &t);
    }
    MPI_Type_commit(&t);
    return t;
}

static void view_free(view_t *v) {
    free(v->bases);
    free(v->lens);
    memset(v, 0, sizeof *v);
}
#endif

/* ----- one method on a two-rank kernel ------------------------------------------------------- */

typedef struct {
    int m;
    kernel_t *k;
    char *buf; /* reference / manual / packed buffer */
    size_t bufsize;
    ddt_t d;
#ifdef MPICD_CUSTOM
    view_t vs, vr;
    MPI_Datatype cs, cr;
#endif
} run_t;

static void method_setup(run_t *r) {
    kernel_t *k = r->k;
    r->bufsize = k->bytes;
#ifdef MPICD_CUSTOM
    if (r->m == M_CUSTOM || r->m == M_CUSTOM_REGIONS) {
        int reg = r->m == M_CUSTOM_REGIONS;
        r->cs = custom_type(&r->vs, &k->send, reg);
        r->cr = custom_type(&r->vr, &k->recv, reg);
        return;
    }
#endif
    if (r->m == M_DDT || r->m == M_PACK_DDT) {
        kernel_ddt(k, &r->d);
        if (r->m == M_PACK_DDT) {
            int s1, s2;
            MPI_Pack_size(1, r->d.stype, MPI_COMM_WORLD, &s1);
            MPI_Pack_size(1, r->d.rtype, MPI_COMM_WORLD, &s2);
            r->bufsize = (size_t)(s1 > s2 ? s1 : s2);
            r->buf = malloc(r->bufsize);
        }
        return;
    }
    r->buf = malloc(r->bufsize ? r->bufsize : 1);
}

static void method_teardown(run_t *r) {
#ifdef MPICD_CUSTOM
    if (r->m == M_CUSTOM || r->m == M_CUSTOM_REGIONS) {
        MPI_Type_free(&r->cs);
        MPI_Type_free(&r->cr);
        view_free(&r->vs);
        view_free(&r->vr);
    }
#endif
    if (r->m == M_DDT || r->m == M_PACK_DDT) ddt_free(&r->d);
    free(r->buf);
    r->buf = NULL;
}

static void do_send(run_t *r, int peer) {
    kernel_t *k = r->k;
    switch (r->m) {
    case M_REFERENCE:
        MPI_Send(r->buf, (int)k->bytes, MPI_BYTE, peer, TAG, MPI_COMM_WORLD);
        break;
    case M_MANUAL:
        stream_copy(&k->send, 0, r->buf, k->bytes, 1);
        MPI_Send(r->buf, (int)k->bytes, MPI_BYTE, peer, TAG, MPI_COMM_WORLD);
        break;
#ifdef MPICD_CUSTOM
    case M_CUSTOM:
    case M_CUSTOM_REGIONS:
        MPI_Send(&r->vs, 1, r->cs, peer, TAG, MPI_COMM_WORLD);
        break;
#endif
    case M_DDT:
        MPI_Send(r->d.sbuf, 1, r->d.stype, peer, TAG, MPI_COMM_WORLD);
        break;
    case M_PACK_DDT: {
        int pos = 0;
        MPI_Pack(r->d.sbuf, 1, r->d.stype, r->buf, (int)r->bufsize, &pos, MPI_COMM_WORLD);
        MPI_Send(r->buf, pos, MPI_PACKED, peer, TAG, MPI_COMM_WORLD);
        break;
    }
    }
}

static void do_recv(run_t *r, int peer) {
    kernel_t *k = r->k;
    switch (r->m) {
    case M_REFERENCE:
        MPI_Recv(r->buf, (int)k->bytes, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
    case M_MANUAL:
        MPI_Recv(r->buf, (int)k->bytes, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        stream_copy(&k->recv, 0, r->buf, k->bytes, 0);
        break;
#ifdef MPICD_CUSTOM
    case M_CUSTOM:
    case M_CUSTOM_REGIONS:
        MPI_Recv(&r->vr, 1, r->cr, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
#endif
    case M_DDT:
        MPI_Recv(r->d.rbuf, 1, r->d.rtype, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
    case M_PACK_DDT: {
        int pos = 0;
        MPI_Recv(r->buf, (int)r->bufsize, MPI_PACKED, peer, TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        MPI_Unpack(r->buf, (int)r->bufsize, &pos, r->d.rbuf, 1, r->d.rtype, MPI_COMM_WORLD);
        break;
    }
    }
}

/* ----- verification -------------------------------------------------------------------------- */

typedef struct {
    int arr;
    size_t pos;
    double v;
} expect_t;

typedef struct {
    kernel_t *k;
    expect_t *e;
    size_t n;
} emap_t;

static void locate(kernel_t *k, char *addr, int *arr, size_t *pos) {
    for (int i = 0; i < k->narr; i++) {
        char *b = k->arr[i].base;
        if (addr >= b && addr < b + k->arr[i].n * k->arr[i].esize) {
            *arr = i;
            *pos = (size_t)(addr - b) / k->arr[i].esize;
            return;
        }
    }
    fprintf(stderr, "ddtbench: element outside every array\n");
    abort();
}

static void collect(void *ctx, char *addr, size_t esize) {
    (void)esize;
    emap_t *m = ctx;
    locate(m->k, addr, &m->e[m->n].arr, &m->e[m->n].pos);
    m->n++;
}

static double value_of(kernel_t *k, int r, int arr, size_t pos) {
    array_t *a = &k->arr[arr];
    return a->nofill ? 0.0 : r * k->T + 1 + a->off + (double)pos;
}

static int cmp_expect(const void *a, const void *b) {
    const expect_t *x = a, *y = b;
    if (x->arr != y->arr) return x->arr < y->arr ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Checks every element after this rank received from a peer whose arrays held pattern
 * `peer_fill`: the receive set holds the peer's send-set values, the rest pattern `own_fill`. */
static int check_arrays(kernel_t *k, int own_fill, int peer_fill) {
    size_t n = k->bytes; /* at least the element count */
    emap_t snd = {k, malloc(n * sizeof(expect_t)), 0}, rcv = {k, malloc(n * sizeof(expect_t)), 0};
    stream_elements(&k->send, collect, &snd);
    stream_elements(&k->recv, collect, &rcv);
    int ok = snd.n == rcv.n;
    for (size_t j = 0; ok && j < rcv.n; j++)
        rcv.e[j].v = value_of(k, peer_fill, snd.e[j].arr, snd.e[j].pos);
    qsort(rcv.e, rcv.n, sizeof(expect_t), cmp_expect);
    size_t j = 0;
    for (int a = 0; ok && a < k->narr; a++) {
        array_t *A = &k->arr[a];
        for (size_t p = 0; p < A->n; p++) {
            double want = value_of(k, own_fill, a, p);
            if (j < rcv.n && rcv.e[j].arr == a && rcv.e[j].pos == p) want = rcv.e[j++].v;
            int good = A->esize == 4 ? ((float *)A->base)[p] == (float)want
                                     : ((double *)A->base)[p] == want;
            if (!good) {
                fprintf(stderr, "ddtbench: %s %s: array %d element %zu is %g, expected %g\n",
                        k->test, k->config, a, p,
                        A->esize == 4 ? (double)((float *)A->base)[p] : ((double *)A->base)[p],
                        want);
                ok = 0;
                break;
            }
        }
    }
    free(snd.e);
    free(rcv.e);
    return ok;
}

static int check_bytes(const char *buf, size_t n, int r) {
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)buf[i] != pat(r, i)) return 0;
    return 1;
}

static void fill_bytes(char *buf, size_t n, int r) {
    for (size_t i = 0; i < n; i++) buf[i] = (char)pat(r, i);
}

/* One verified round trip (see the file comment); returns 1 if both ranks saw the right data. */
static int verify(run_t *r) {
    kernel_t *k = r->k;
    int ok = 1, peer = 1 - rank;
    int ref = r->m == M_REFERENCE;
    if (ref)
        fill_bytes(r->buf, k->bytes, rank);
    else
        kernel_fill(k, rank);
    if (rank == 0) {
        do_send(r, peer);
        do_recv(r, peer);
        ok = ref ? check_bytes(r->buf, k->bytes, 2) : check_arrays(k, 0, 2);
    } else {
        do_recv(r, peer);
        ok = ref ? check_bytes(r->buf, k->bytes, 0) : check_arrays(k, 1, 0);
        if (ref)
            fill_bytes(r->buf, k->bytes, 2);
        else
            kernel_fill(k, 2);
        do_send(r, peer);
    }
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* ----- timing -------------------------------------------------------------------------------- */

/* Rank 0's decision whether to go on (budget left, or too few samples), shared with the ranks
 * taking part: the peer of a ping-pong (`all` = 0) or every rank (FFT). */
static int keep_going(double start, int n, int all) {
    int go = MPI_Wtime() - start < budget || n < MIN_SAMPLES;
    if (all)
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    else if (rank == 0)
        MPI_Send(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    else
        MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return go;
}

static double mean_without_ends(const double *t, int n) {
    if (n <= 2) {
        double s = 0;
        for (int i = 0; i < n; i++) s += t[i];
        return n ? s / n : 0;
    }
    double s = 0;
    for (int i = 1; i < n - 1; i++) s += t[i];
    return s / (n - 2);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Reports DDTBench's statistic (the mean without the first and last sample) and the median,
 * which a shared, noisy machine needs: a single preempted round trip, orders of magnitude
 * longer than the others, moves the mean but not the median. The RESULT line carries the
 * median's bandwidth; `.mean` the mean's. */
static void report(kernel_t *k, int m, double *t, int n) {
    if (rank != 0) return;
    double mean = mean_without_ends(t, n);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    double median = n ? (n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2) : 0;
    double bw_med = median > 0 ? (double)k->bytes / (median * 1e6) : 0;
    double bw_mean = mean > 0 ? (double)k->bytes / (mean * 1e6) : 0;
    printf("# %-14s %-20s %-16s %9zu B  median %10.2f us %9.1f MB/s  mean %10.2f us %9.1f MB/s"
           "  %3d samples  verified\n",
           k->test, k->config, method_names[m], k->bytes, median * 1e6, bw_med, mean * 1e6,
           bw_mean, n);
    printf("RESULT %s %s %zu %.3f\n", method_names[m], k->test, k->bytes, bw_med);
    printf("RESULT %s %s.mean %zu %.3f\n", method_names[m], k->test, k->bytes, bw_mean);
    fflush(stdout);
}

static void run_pingpong(kernel_t *k, int m) {
    run_t r = {.m = m, .k = k};
    int peer = 1 - rank;
    int n = 0, ok = 1;
    double *t = malloc((size_t)(outer_loop * inner_loop) * sizeof *t);
    if (rank <= 1) {
        kernel_fill(k, rank);
        double start = MPI_Wtime();
        int go = 1;
        for (int o = 0; o < outer_loop && go; o++) {
            kernel_relist(k, (unsigned)o);
            method_setup(&r);
            if (m == M_REFERENCE) fill_bytes(r.buf, k->bytes, rank);
            for (int i = 0; i < inner_loop && (go = keep_going(start, n, 0)); i++) {
                double t0 = MPI_Wtime();
                if (rank == 0) {
                    do_send(&r, peer);
                    do_recv(&r, peer);
                } else {
                    do_recv(&r, peer);
                    do_send(&r, peer);
                }
                t[n++] = MPI_Wtime() - t0;
            }
            method_teardown(&r);
        }
        method_setup(&r);
        ok = verify(&r);
        method_teardown(&r);
    } else {
        int mine = 1;
        MPI_Allreduce(&mine, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    if (!ok) fail(k->test, k->config, method_names[m], "received data is wrong");
    report(k, m, t, n);
    free(t);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ----- FFT: 2-D FFT transpose with alltoall on all ranks ---------------------------------------- */

typedef struct {
    int m;
    kernel_t *k;
    size_t D, n, P, B; /* B: bytes per peer */
    double *X[2];      /* M and R */
    stream_t *snd[2], *rcv[2]; /* [dir][peer]: block p of X[dir] / scatter into X[1-dir] */
    char *buf, *buf2;
    MPI_Datatype G, Sc; /* derived: one peer's block of rows; its transposed scatter */
#ifdef MPICD_CUSTOM
    view_t *vs[2], *vr[2];
    MPI_Datatype *cs[2], *cr[2];
#endif
} fft_run_t;

static void fft_streams(fft_run_t *f) {
    size_t D = f->D, n = f->n;
    for (int dir = 0; dir < 2; dir++) {
        f->snd[dir] = calloc(f->P, sizeof(stream_t));
        f->rcv[dir] = calloc(f->P, sizeof(stream_t));
        double *from = f->X[dir], *to = f->X[1 - dir];
        for (size_t p = 0; p < f->P; p++) {
            /* block p: n rows of n complex numbers from column p*n */
            stream_seg(&f->snd[dir][p], from + 2 * p * n, 8, 2 * n, n, 2 * D, 1, 0);
            /* packed (r, c') lands at row c', column p*n + r */
            stream_seg(&f->rcv[dir][p], to + 2 * p * n, 8, 2, n, 2 * D, n, 2);
        }
    }
}

static void fft_setup_method(fft_run_t *f) {
    size_t total = f->B * f->P;
    f->buf = malloc(total);
    f->buf2 = malloc(total);
#ifdef MPICD_CUSTOM
    if (f->m == M_CUSTOM) {
        for (int dir = 0; dir < 2; dir++) {
            f->vs[dir] = calloc(f->P, sizeof(view_t));
            f->vr[dir] = calloc(f->P, sizeof(view_t));
            f->cs[dir] = calloc(f->P, sizeof(MPI_Datatype));
            f->cr[dir] = calloc(f->P, sizeof(MPI_Datatype));
            for (size_t p = 0; p < f->P; p++) {
                f->cs[dir][p] = custom_type(&f->vs[dir][p], &f->snd[dir][p], 0);
                f->cr[dir][p] = custom_type(&f->vr[dir][p], &f->rcv[dir][p], 0);
            }
        }
    }
#endif
    if (f->m == M_DDT || f->m == M_PACK_DDT) {
        int n = (int)f->n, D = (int)f->D;
        MPI_Datatype Cx, V, X;
        MPI_Type_contiguous(2, MPI_DOUBLE, &Cx);
        MPI_Type_vector(n, n, D, Cx, &V);
        MPI_Type_create_resized(V, 0, (MPI_Aint)(16 * n), &f->G);
        MPI_Type_vector(n, 1, D, Cx, &X);
        MPI_Datatype Xr;
        MPI_Type_create_resized(X, 0, 16, &Xr);
        MPI_Type_contiguous(n, Xr, &f->Sc);
        MPI_Type_commit(&f->G);
        MPI_Type_commit(&f->Sc);
        MPI_Type_free(&Cx);
        MPI_Type_free(&V);
        MPI_Type_free(&X);
        MPI_Type_free(&Xr);
    }
}

static void fft_teardown_method(fft_run_t *f) {
    free(f->buf);
    free(f->buf2);
#ifdef MPICD_CUSTOM
    if (f->m == M_CUSTOM) {
        for (int dir = 0; dir < 2; dir++) {
            for (size_t p = 0; p < f->P; p++) {
                MPI_Type_free(&f->cs[dir][p]);
                MPI_Type_free(&f->cr[dir][p]);
                view_free(&f->vs[dir][p]);
                view_free(&f->vr[dir][p]);
            }
            free(f->vs[dir]);
            free(f->vr[dir]);
            free(f->cs[dir]);
            free(f->cr[dir]);
        }
    }
#endif
    if (f->m == M_DDT || f->m == M_PACK_DDT) {
        MPI_Type_free(&f->G);
        MPI_Type_free(&f->Sc);
    }
}

/* One transpose, X[dir] -> X[1-dir] (reference: buf -> buf2 or back). */
static void fft_exchange(fft_run_t *f, int dir) {
    int B = (int)f->B, P = (int)f->P;
    switch (f->m) {
    case M_REFERENCE:
        if (dir == 0)
            MPI_Alltoall(f->buf, B, MPI_BYTE, f->buf2, B, MPI_BYTE, MPI_COMM_WORLD);
        else
            MPI_Alltoall(f->buf2, B, MPI_BYTE, f->buf, B, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case M_MANUAL:
        for (int p = 0; p < P; p++) stream_copy(&f->snd[dir][p], 0, f->buf + (size_t)p * f->B, f->B, 1);
        MPI_Alltoall(f->buf, B, MPI_BYTE, f->buf2, B, MPI_BYTE, MPI_COMM_WORLD);
        for (int p = 0; p < P; p++) stream_copy(&f->rcv[dir][p], 0, f->buf2 + (size_t)p * f->B, f->B, 0);
        break;
#ifdef MPICD_CUSTOM
    case M_CUSTOM: {
        MPI_Request req[2 * 64];
        for (int p = 0; p < P; p++)
            MPI_Irecv(&f->vr[dir][p], 1, f->cr[dir][p], p, TAG, MPI_COMM_WORLD, &req[p]);
        for (int p = 0; p < P; p++)
            MPI_Isend(&f->vs[dir][p], 1, f->cs[dir][p], p, TAG, MPI_COMM_WORLD, &req[P + p]);
        MPI_Waitall(2 * P, req, MPI_STATUSES_IGNORE);
        break;
    }
#endif
    case M_DDT:
        MPI_Alltoall(f->X[dir], 1, f->G, f->X[1 - dir], 1, f->Sc, MPI_COMM_WORLD);
        break;
    case M_PACK_DDT: {
        int pos = 0, size = B * P;
        MPI_Pack(f->X[dir], P, f->G, f->buf, size, &pos, MPI_COMM_WORLD);
        MPI_Alltoall(f->buf, B, MPI_PACKED, f->buf2, B, MPI_PACKED, MPI_COMM_WORLD);
        pos = 0;
        MPI_Unpack(f->buf2, size, &pos, f->X[1 - dir], P, f->Sc, MPI_COMM_WORLD);
        break;
    }
    }
}

/* Whether X[to] holds the transpose of every rank's X[1-to] filled with the test pattern. */
static int fft_check_transposed(fft_run_t *f, int to) {
    size_t D = f->D, n = f->n;
    double *Y = f->X[to];
    for (size_t c = 0; c < n; c++)         /* receiver row */
        for (size_t p = 0; p < f->P; p++)  /* sender */
            for (size_t r = 0; r < n; r++) { /* sender row = column within the block */
                double re = p * f->k->T + 1 + 2.0 * (double)(r * D + rank * n + c);
                double *y = Y + 2 * (c * D + p * n + r);
                if (y[0] != re || y[1] != re + 1) return 0;
            }
    return 1;
}

static int fft_verify(fft_run_t *f) {
    kernel_t *k = f->k;
    int ok = 1;
    size_t total = f->B * f->P;
    if (f->m == M_REFERENCE) {
        fill_bytes(f->buf, total, rank);
        memset(f->buf2, 0, total);
        fft_exchange(f, 0);
        for (size_t p = 0; p < f->P && ok; p++)
            for (size_t i = 0; i < f->B && ok; i++)
                ok = (unsigned char)f->buf2[p * f->B + i] == pat((int)p, rank * f->B + i);
        memset(f->buf, 0, total);
        fft_exchange(f, 1);
        ok = ok && check_bytes(f->buf, total, rank);
    } else {
        kernel_fill(k, rank); /* M = pattern, R = 0 */
        fft_exchange(f, 0);
        ok = fft_check_transposed(f, 1);
        memset(f->X[0], 0, 16 * f->n * f->D);
        fft_exchange(f, 1);
        double *M = f->X[0];
        for (size_t i = 0; ok && i < 2 * f->n * f->D; i++)
            ok = M[i] == rank * k->T + 1 + (double)i;
    }
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

static void run_fft(kernel_t *k, int m) {
#ifdef MPICD_CUSTOM
    if (m == M_CUSTOM_REGIONS) return; /* send and receive runs differ: no regions */
#endif
    fft_run_t f = {.m = m, .k = k};
    f.D = (size_t)k->prm[0];
    f.n = (size_t)k->prm[1];
    f.P = (size_t)k->prm[2];
    f.B = 16 * f.n * f.n;
    f.X[0] = k->arr[0].base;
    f.X[1] = k->arr[1].base;
    fft_streams(&f);
    int n = 0;
    double *t = malloc((size_t)(outer_loop * inner_loop) * sizeof *t);
    kernel_fill(k, rank);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    int go = 1;
    for (int o = 0; o < outer_loop && go; o++) {
        fft_setup_method(&f);
        if (m == M_REFERENCE) fill_bytes(f.buf, f.B * f.P, rank);
        for (int i = 0; i < inner_loop && (go = keep_going(start, n, 1)); i++) {
            double t0 = MPI_Wtime();
            fft_exchange(&f, 0);
            fft_exchange(&f, 1);
            t[n++] = MPI_Wtime() - t0;
        }
        fft_teardown_method(&f);
    }
    fft_setup_method(&f);
    int ok = fft_verify(&f);
    fft_teardown_method(&f);
    if (!ok) fail(k->test, k->config, method_names[m], "received data is wrong");
    report(k, m, t, n);
    free(t);
    for (int dir = 0; dir < 2; dir++) {
        free(f.snd[dir]);
        free(f.rcv[dir]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ----- main ---------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int smoke = 0, nums = 0;
    const char *only = NULL, *method = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--smoke"))
            smoke = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--method") && i + 1 < argc)
            method = argv[++i];
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
            budget = atof(argv[++i]);
        else if (nums == 0 && atoi(argv[i]) > 0)
            outer_loop = atoi(argv[i]), nums++;
        else if (nums == 1 && atoi(argv[i]) > 0)
            inner_loop = atoi(argv[i]), nums++;
    }
    if (smoke) {
        outer_loop = 2;
        inner_loop = 2;
    }
    if (nranks < 2) {
        if (rank == 0) fprintf(stderr, "ddtbench needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    if (rank == 0) {
        printf("# DDTBench kernels (Schneider, Gerstenberger, Hoefler, EuroMPI'12), re-implemented "
               "for mpicd; %s build, %d ranks, outer %d x inner %d\n",
#ifdef MPICD_CUSTOM
               "mpicd",
#else
               "peer MPI",
#endif
               nranks, outer_loop, inner_loop);
        fflush(stdout);
    }
    for (int i = 0; i < kernel_count(); i++) {
        if (only && strcmp(only, kernel_test_name(i, nranks)) != 0) continue;
        /* Smoke: the smallest configuration of each test only. */
        if (smoke && !kernel_is_smallest(i)) continue;
        kernel_t k;
        kernel_setup(&k, i, nranks);
        for (int m = 0; m < M_COUNT; m++) {
            if (method && strcmp(method, method_names[m]) != 0) continue;
#ifdef MPICD_CUSTOM
            if (m == M_CUSTOM_REGIONS && !k.regions) continue;
#endif
            if (k.id == K_FFT)
                run_fft(&k, m);
            else
                run_pingpong(&k, m);
        }
        kernel_free(&k);
    }
    MPI_Finalize();
    return 0;
}
