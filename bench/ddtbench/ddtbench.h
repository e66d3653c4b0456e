/* ddtbench.h: the DDTBench micro-application kernels, re-implemented for mpicd.
 *
 * DDTBench is by Timo Schneider, Robert Gerstenberger and Torsten Hoefler:
 *   T. Schneider, R. Gerstenberger, T. Hoefler, "Micro-Applications for Communication Data Access
 *   Patterns and MPI Datatypes", EuroMPI'12, LNCS 7490, Springer, 2012, pp. 121-131.
 * This is new code written from a specification of its kernels (data layouts, communicated
 * element sets, MPI datatypes and the exact message size of every configuration); no DDTBench
 * source is copied. Kernel and test names are DDTBench's, so results stay comparable.
 *
 * One source, two builds:
 *   - with Open MPI's mpicc (the peer): methods reference, manual, mpi_ddt, mpi_pack_ddt;
 *   - with mpicd's bin/mpicc and -DMPICD_CUSTOM: methods mpicd_reference, mpicd_manual,
 *     mpicd_ddt and mpicd_pack_ddt (the same derived datatypes as mpi_ddt and mpi_pack_ddt, on
 *     mpicd), custom (MPI_Type_create_custom with pack/unpack callbacks) and custom_regions
 *     (regions only, where the send and receive sides have the same runs).
 *
 * Every kernel describes what it communicates as a *stream*: the elements in packed order (the
 * layout of the application's manual pack buffer), as a list of parts. A part is either a strided
 * segment (runs of equal length at two levels of strides: WRF, MILC, NAS, SPECFEM3D_mt, FFT) or
 * a block of fixed-size records gathered through an index list (LAMMPS, SPECFEM3D_oc/cm). The
 * manual pack and unpack loops, the custom pack and unpack callbacks (resumable at any byte
 * offset) and the region lists all come from the stream, so the methods differ only in how the
 * bytes travel. */
#ifndef DDTBENCH_H
#define DDTBENCH_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_ARRAYS 12
#define MAX_PARTS 12
#define MAX_FIELDS 8

/* One array of a kernel, in fill order. */
typedef struct {
    void *base;
    size_t n;     /* elements */
    size_t esize; /* 4 (float) or 8 (double) */
    int nofill;   /* not part of the test pattern (receive-only arrays): zeroed */
    double off;   /* first value offset: elements of the arrays filled before it */
} array_t;

/* One field of a record: nelem elements at base + index * nelem * esize. */
typedef struct {
    char *base;
    size_t esize, nelem;
} field_t;

enum { PART_SEG, PART_REC };

typedef struct {
    int type;
    size_t bytes;
    /* PART_SEG: for i2 < c2: for i1 < c1: rl elements at base + (i2*s2 + i1*s1) * esize */
    char *base;
    size_t esize, rl, c1, s1, c2, s2;
    /* PART_REC: for k < count: the fields at index list[k] (or start + k without a list) */
    int nf;
    field_t f[MAX_FIELDS];
    size_t recbytes;
    const int *list;
    size_t start, count;
} part_t;

typedef struct {
    int n;
    part_t p[MAX_PARTS];
    size_t total;
} stream_t;

/* Stream construction. */
void stream_clear(stream_t *s);
void stream_seg(stream_t *s, void *base, size_t esize, size_t rl, size_t c1, size_t s1, size_t c2,
                size_t s2);
/* Starts a record block; add its fields with stream_field. */
void stream_rec(stream_t *s, const int *list, size_t start, size_t count);
void stream_field(stream_t *s, void *base, size_t esize, size_t nelem);

/* Copies bytes [off, off+len) of the stream to buf (pack != 0) or from buf into memory;
 * returns the bytes copied (less than len only at the end of the stream). */
size_t stream_copy(const stream_t *s, size_t off, char *buf, size_t len, int pack);

/* Number of runs (regions) of a stream made only of segments; -1 if it has record blocks. */
long stream_runs(const stream_t *s);
/* Fills the runs: start addresses and lengths in bytes. */
void stream_fill_runs(const stream_t *s, void **bases, MPI_Count *lens);

/* Calls f(ctx, address, esize) for every element, in packed order. */
void stream_elements(const stream_t *s, void (*f)(void *ctx, char *addr, size_t esize),
                     void *ctx);

/* A kernel in one configuration. */
typedef struct kernel {
    char test[32];   /* DDTBench's test name, e.g. "WRF_x_vec" */
    char config[48]; /* e.g. "2x2", "n=64" */
    int id;          /* KERNEL_* */
    size_t bytes;    /* one-way payload of one message */
    int narr;
    array_t arr[MAX_ARRAYS];
    double T; /* elements of all filled arrays (the fill's rank stride) */
    stream_t send, recv;
    int regions;  /* custom_regions offered (send and receive runs match one to one) */
    int random;   /* index lists redrawn every outer iteration */
    long prm[12]; /* kernel parameters */
    int *list[2]; /* index lists */
    size_t nlist[2];
} kernel_t;

enum {
    K_WRF_Y_VEC,
    K_WRF_Y_SA,
    K_WRF_X_VEC,
    K_WRF_X_SA,
    K_MILC,
    K_NAS_LU_X,
    K_NAS_LU_Y,
    K_NAS_MG_X,
    K_NAS_MG_Y,
    K_NAS_MG_Z,
    K_LAMMPS_FULL,
    K_LAMMPS_ATOMIC,
    K_SPECFEM_OC,
    K_SPECFEM_CM,
    K_SPECFEM_MT,
    K_FFT,
};

/* All (test, configuration) pairs in the driver order of DDTBench; returns how many. */
int kernel_count(void);
/* The test name of configuration i (FFT<nranks> for FFT). */
const char *kernel_test_name(int i, int nranks);
/* Whether configuration i is the smallest of its test (the smoke run's choice). */
int kernel_is_smallest(int i);
/* Sets up configuration i (allocates and describes); kernel_free releases it. */
void kernel_setup(kernel_t *k, int i, int nranks);
void kernel_free(kernel_t *k);
/* Fills every array with the test pattern of `rank` (value = rank*T + 1 + off + position). */
void kernel_fill(kernel_t *k, int rank);
/* Draws new index lists for outer iteration `iter` (same on every rank) and rebuilds the
 * streams. */
void kernel_relist(kernel_t *k, unsigned iter);

/* The MPI derived datatypes of DDTBench (built per outer iteration; both builds). */
typedef struct {
    void *sbuf, *rbuf;
    MPI_Datatype stype, rtype;
    int nfree;
    MPI_Datatype tofree[16];
} ddt_t;
void kernel_ddt(kernel_t *k, ddt_t *d);
void ddt_free(ddt_t *d);

/* FFT (alltoall on all ranks). */
typedef struct {
    size_t D, n, P;
    double *M, *R;
    double T;
} fft_t;

#endif
