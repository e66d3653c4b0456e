/* gather_shapes.c: a gather of objects whose shapes differ per rank, done two ways with mpicd:
 *   collective  one MPI_Gather of a custom datatype: every object is one custom-typed message,
 *               its arrays zero-copy regions, and the root's resize callback sizes each
 *               receiving object from the message;
 *   probe       what a program without it does: every rank MPI_Sends each array of its object,
 *               the root MPI_Mprobes each array of each rank in turn, MPI_Get_counts,
 *               allocates and MPI_Mrecvs.
 * Two objects (argument 1):
 *   vec   a vector of doubles (one array: the fewest messages the probe way can take);
 *   csr   a block of a sparse matrix in CSR form: row offsets (int64), column indices (int32)
 *         and values (double), three arrays whose lengths only their rank knows.
 * Both ways check every element at the root. Output, from the root, one CSV line per length:
 *   object,ranks,elements,collective_us,probe_us
 * (rank r's object has n + r * (n / 8) elements, for n from 8 to max: its vector's doubles, or
 * its matrix's nonzeros, with a row per 4 of them). Usage:
 *   mpirun -n P gather_shapes vec|csr [max_elements] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARRAYS 3 /* the most arrays an object has */

/* An object: its arrays' lengths and bases (vec uses array 0 only). */
struct obj {
    MPI_Count len[ARRAYS];
    void *base[ARRAYS];
};

static int narrays;                   /* 1 (vec) or 3 (csr) */
static MPI_Datatype elem[ARRAYS];     /* each array's element type */
static size_t elem_size[ARRAYS];

static MPI_Count nnz_of(int r, MPI_Count n) { return n + r * (n / 8); }

/* The lengths of rank r's object of n elements. */
static void lengths(int r, MPI_Count n, MPI_Count len[ARRAYS]) {
    MPI_Count nnz = nnz_of(r, n);
    if (narrays == 1) {
        len[0] = nnz;
        return;
    }
    len[0] = nnz / 4 + 2; /* row offsets: rows + 1 */
    len[1] = nnz;
    len[2] = nnz;
}

/* Element k of array a of rank r's object, as a double. */
static double value(int a, int r, MPI_Count k) {
    switch (narrays == 1 ? 2 : a) {
    case 0: return (double)(k * 4);
    case 1: return (double)((k * 7 + r) % 1000);
    default: return r * 1e7 + (double)k;
    }
}

static double get(const struct obj *o, int a, MPI_Count k) {
    if (elem[a] == MPI_INT64_T) return (double)((const int64_t *)o->base[a])[k];
    if (elem[a] == MPI_INT32_T) return (double)((const int32_t *)o->base[a])[k];
    return ((const double *)o->base[a])[k];
}

static void set(struct obj *o, int a, MPI_Count k, double v) {
    if (elem[a] == MPI_INT64_T) ((int64_t *)o->base[a])[k] = (int64_t)v;
    else if (elem[a] == MPI_INT32_T) ((int32_t *)o->base[a])[k] = (int32_t)v;
    else ((double *)o->base[a])[k] = v;
}

/* Array a of o sized for len elements (one more, so that 0 allocates). */
static void size_array(struct obj *o, int a, MPI_Count len) {
    o->len[a] = len;
    o->base[a] = realloc(o->base[a], (size_t)(len + 1) * elem_size[a]);
}

static int check(const struct obj *o, int r, MPI_Count n) {
    MPI_Count len[ARRAYS];
    lengths(r, n, len);
    for (int a = 0; a < narrays; a++) {
        if (o->len[a] != len[a]) return 1;
        for (MPI_Count k = 0; k < len[a]; k++)
            if (get(o, a, k) != value(a, r, k)) return 1;
    }
    return 0;
}

/* The custom type's callbacks: the packed part is each object's lengths, its regions are
 * each object's arrays. */
static int query(void *state, const void *buf, MPI_Count count, MPI_Count *size) {
    (void)state, (void)buf;
    *size = count * narrays * (MPI_Count)sizeof(MPI_Count);
    return MPI_SUCCESS;
}

static int pack(void *state, const void *buf, MPI_Count count, MPI_Count offset, void *dst,
                MPI_Count dst_size, MPI_Count *used) {
    (void)state;
    const struct obj *o = buf;
    size_t one = (size_t)narrays * sizeof(MPI_Count);
    if (offset != 0 || dst_size < (MPI_Count)one * count) return MPI_ERR_TRUNCATE;
    for (MPI_Count i = 0; i < count; i++) memcpy((char *)dst + i * one, o[i].len, one);
    *used = count * (MPI_Count)one;
    return MPI_SUCCESS;
}

static int unpack(void *state, void *buf, MPI_Count count, MPI_Count offset, const void *src,
                  MPI_Count src_size) {
    (void)state, (void)offset, (void)src_size;
    struct obj *o = buf;
    size_t one = (size_t)narrays * sizeof(MPI_Count);
    for (MPI_Count i = 0; i < count; i++) memcpy(o[i].len, (const char *)src + i * one, one);
    return MPI_SUCCESS;
}

static int region_count(void *state, void *buf, MPI_Count count, MPI_Count *n) {
    (void)state, (void)buf;
    *n = count * narrays;
    return MPI_SUCCESS;
}

static int regions(void *state, void *buf, MPI_Count count, MPI_Count n, void *bases[],
                   MPI_Count lens[], MPI_Datatype types[]) {
    (void)state, (void)n;
    struct obj *o = buf;
    for (MPI_Count i = 0; i < count; i++)
        for (int a = 0; a < narrays; a++) {
            bases[i * narrays + a] = o[i].base[a];
            lens[i * narrays + a] = o[i].len[a];
            types[i * narrays + a] = elem[a];
        }
    return MPI_SUCCESS;
}

static int resize(void *state, void *buf, MPI_Count count, MPI_Count packed_size,
                  MPI_Count nregions, const MPI_Count lens[], const MPI_Datatype types[]) {
    (void)state, (void)packed_size;
    struct obj *o = buf;
    if (nregions != count * narrays) return MPI_ERR_TRUNCATE;
    for (MPI_Count i = 0; i < count; i++)
        for (int a = 0; a < narrays; a++) {
            if (types[i * narrays + a] != elem[a]) return MPI_ERR_TYPE;
            size_array(&o[i], a, lens[i * narrays + a]);
        }
    return MPI_SUCCESS;
}

/* The probe way, one gather: arrays sent apart, each probed for at the root. */
static void probe_gather(const struct obj *mine, struct obj *all, int rank, int size) {
    if (rank != 0) {
        for (int a = 0; a < narrays; a++)
            MPI_Send(mine->base[a], (int)mine->len[a], elem[a], 0, 7 + a, MPI_COMM_WORLD);
        return;
    }
    for (int a = 0; a < narrays; a++) {
        size_array(&all[0], a, mine->len[a]);
        memcpy(all[0].base[a], mine->base[a], (size_t)mine->len[a] * elem_size[a]);
    }
    for (int r = 1; r < size; r++)
        for (int a = 0; a < narrays; a++) {
            MPI_Message m;
            MPI_Status st;
            int count;
            MPI_Mprobe(r, 7 + a, MPI_COMM_WORLD, &m, &st);
            MPI_Get_count(&st, elem[a], &count);
            size_array(&all[r], a, count);
            MPI_Mrecv(all[r].base[a], count, elem[a], &m, MPI_STATUS_IGNORE);
        }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *object = argc > 1 ? argv[1] : "vec";
    if (strcmp(object, "vec") == 0) {
        narrays = 1;
        elem[0] = MPI_DOUBLE, elem_size[0] = sizeof(double);
    } else if (strcmp(object, "csr") == 0) {
        narrays = 3;
        elem[0] = MPI_INT64_T, elem_size[0] = sizeof(int64_t);
        elem[1] = MPI_INT32_T, elem_size[1] = sizeof(int32_t);
        elem[2] = MPI_DOUBLE, elem_size[2] = sizeof(double);
    } else {
        if (rank == 0) fprintf(stderr, "usage: gather_shapes vec|csr [max_elements]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Count max = argc > 2 ? atol(argv[2]) : 1 << 20;
    MPI_Datatype raw, type;
    MPI_Type_create_custom(NULL, NULL, query, pack, unpack, region_count, regions, NULL, 1, &raw);
    MPIX_Type_custom_set_resize(raw, resize);
    MPI_Type_create_resized(raw, 0, sizeof(struct obj), &type);
    MPIX_Type_custom_set_resize(type, resize);
    struct obj *all = calloc((size_t)size, sizeof *all);
    int bad = 0;
    for (MPI_Count n = 8; n <= max; n *= 4) {
        struct obj mine = {{0}, {NULL}};
        MPI_Count len[ARRAYS];
        lengths(rank, n, len);
        for (int a = 0; a < narrays; a++) {
            size_array(&mine, a, len[a]);
            for (MPI_Count k = 0; k < len[a]; k++) set(&mine, a, k, value(a, rank, k));
        }
        int iters = n >= (1 << 18) ? 10 : n >= (1 << 12) ? 100 : 1000;
        double best_c = 1e30, best_p = 1e30;
        for (int round = 0; round < 3; round++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            for (int i = 0; i < iters; i++) {
                MPI_Gather(&mine, 1, type, all, 1, type, 0, MPI_COMM_WORLD);
                if (rank == 0 && i == 0)
                    for (int r = 0; r < size; r++) bad |= check(&all[r], r, n);
            }
            double c = (MPI_Wtime() - t) / iters;
            MPI_Barrier(MPI_COMM_WORLD);
            t = MPI_Wtime();
            for (int i = 0; i < iters; i++) {
                probe_gather(&mine, all, rank, size);
                if (rank == 0 && i == 0)
                    for (int r = 0; r < size; r++) bad |= check(&all[r], r, n);
            }
            double p = (MPI_Wtime() - t) / iters;
            double both[2] = {c, p}, worst[2];
            MPI_Reduce(both, worst, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                best_c = worst[0] < best_c ? worst[0] : best_c;
                best_p = worst[1] < best_p ? worst[1] : best_p;
            }
        }
        if (rank == 0)
            printf("%s,%d,%lld,%.3f,%.3f\n", object, size, (long long)n, best_c * 1e6, best_p * 1e6);
        for (int a = 0; a < narrays; a++) free(mine.base[a]);
    }
    for (int r = 0; r < size; r++)
        for (int a = 0; a < narrays; a++) free(all[r].base[a]);
    free(all);
    MPI_Type_free(&type);
    MPI_Type_free(&raw);
    int any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0 && any) fprintf(stderr, "gather_shapes: wrong data\n");
    MPI_Finalize();
    return any ? 1 : 0;
}
