/* gather_shapes.c: a gather of objects whose shapes differ per rank (a vector of doubles whose
 * length only its rank knows), done two ways with mpicd:
 *   collective  one MPI_Gather of a custom datatype: every vector is one custom-typed message,
 *               its doubles a zero-copy region, and the root's resize callback sizes each
 *               receiving vector from the message;
 *   probe       what a program without it does: every rank MPI_Sends its doubles, the root
 *               MPI_Mprobes each rank in turn, MPI_Get_counts, allocates and MPI_Mrecvs.
 * Both check every element at the root. Output, from the root, one CSV line per length:
 *   ranks,doubles,collective_us,probe_us
 * (lengths: rank r sends n + r * (n / 8) doubles, for n from 8 to 1 Mi). Usage:
 *   mpirun -n P gather_shapes [max_doubles] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dvec {
    MPI_Count n;
    double *v;
};

static int query(void *state, const void *buf, MPI_Count count, MPI_Count *size) {
    (void)state, (void)buf;
    *size = count * (MPI_Count)sizeof(MPI_Count);
    return MPI_SUCCESS;
}

static int pack(void *state, const void *buf, MPI_Count count, MPI_Count offset, void *dst,
                MPI_Count dst_size, MPI_Count *used) {
    (void)state;
    const struct dvec *d = buf;
    if (offset != 0 || dst_size < (MPI_Count)sizeof(MPI_Count) * count) return MPI_ERR_TRUNCATE;
    for (MPI_Count i = 0; i < count; i++)
        memcpy((char *)dst + i * sizeof(MPI_Count), &d[i].n, sizeof(MPI_Count));
    *used = count * (MPI_Count)sizeof(MPI_Count);
    return MPI_SUCCESS;
}

static int unpack(void *state, void *buf, MPI_Count count, MPI_Count offset, const void *src,
                  MPI_Count src_size) {
    (void)state, (void)offset, (void)src_size;
    struct dvec *d = buf;
    for (MPI_Count i = 0; i < count; i++)
        memcpy(&d[i].n, (const char *)src + i * sizeof(MPI_Count), sizeof(MPI_Count));
    return MPI_SUCCESS;
}

static int region_count(void *state, void *buf, MPI_Count count, MPI_Count *n) {
    (void)state, (void)buf;
    *n = count;
    return MPI_SUCCESS;
}

static int regions(void *state, void *buf, MPI_Count count, MPI_Count n, void *bases[],
                   MPI_Count lens[], MPI_Datatype types[]) {
    (void)state, (void)n;
    struct dvec *d = buf;
    for (MPI_Count i = 0; i < count; i++) {
        bases[i] = d[i].v;
        lens[i] = d[i].n;
        types[i] = MPI_DOUBLE;
    }
    return MPI_SUCCESS;
}

static int resize(void *state, void *buf, MPI_Count count, MPI_Count packed_size,
                  MPI_Count nregions, const MPI_Count lens[], const MPI_Datatype types[]) {
    (void)state, (void)packed_size;
    struct dvec *d = buf;
    if (nregions != count) return MPI_ERR_TRUNCATE;
    for (MPI_Count i = 0; i < count; i++) {
        if (types[i] != MPI_DOUBLE) return MPI_ERR_TYPE;
        d[i].n = lens[i];
        d[i].v = realloc(d[i].v, (size_t)lens[i] * sizeof(double) + 1);
    }
    return MPI_SUCCESS;
}

static MPI_Count length_of(int r, MPI_Count n) { return n + r * (n / 8); }

static int check(const struct dvec *d, int r, MPI_Count n) {
    if (d->n != length_of(r, n)) return 1;
    for (MPI_Count i = 0; i < d->n; i++)
        if (d->v[i] != r * 1e7 + (double)i) return 1;
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Count max = argc > 1 ? atol(argv[1]) : 1 << 20;
    MPI_Datatype raw, vec;
    MPI_Type_create_custom(NULL, NULL, query, pack, unpack, region_count, regions, NULL, 1, &raw);
    MPIX_Type_custom_set_resize(raw, resize);
    MPI_Type_create_resized(raw, 0, sizeof(struct dvec), &vec);
    MPIX_Type_custom_set_resize(vec, resize);
    struct dvec *all = calloc((size_t)size, sizeof *all);
    int bad = 0;
    for (MPI_Count n = 8; n <= max; n *= 4) {
        struct dvec mine = {length_of(rank, n), malloc((size_t)length_of(rank, n) * 8 + 8)};
        for (MPI_Count i = 0; i < mine.n; i++) mine.v[i] = rank * 1e7 + (double)i;
        int iters = n >= (1 << 18) ? 10 : n >= (1 << 12) ? 100 : 1000;
        double best_c = 1e30, best_p = 1e30;
        for (int round = 0; round < 3; round++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            for (int i = 0; i < iters; i++) {
                MPI_Gather(&mine, 1, vec, all, 1, vec, 0, MPI_COMM_WORLD);
                if (rank == 0 && i == 0)
                    for (int r = 0; r < size; r++) bad |= check(&all[r], r, n);
            }
            double c = (MPI_Wtime() - t) / iters;
            MPI_Barrier(MPI_COMM_WORLD);
            t = MPI_Wtime();
            for (int i = 0; i < iters; i++) {
                if (rank != 0) {
                    MPI_Send(mine.v, (int)mine.n, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
                    continue;
                }
                all[0].n = mine.n;
                all[0].v = realloc(all[0].v, (size_t)mine.n * 8 + 8);
                memcpy(all[0].v, mine.v, (size_t)mine.n * 8);
                for (int r = 1; r < size; r++) {
                    MPI_Message m;
                    MPI_Status st;
                    int count;
                    MPI_Mprobe(r, 7, MPI_COMM_WORLD, &m, &st);
                    MPI_Get_count(&st, MPI_DOUBLE, &count);
                    all[r].n = count;
                    all[r].v = realloc(all[r].v, (size_t)count * 8 + 8);
                    MPI_Mrecv(all[r].v, count, MPI_DOUBLE, &m, MPI_STATUS_IGNORE);
                }
                if (i == 0)
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
        if (rank == 0) printf("%d,%lld,%.3f,%.3f\n", size, (long long)n, best_c * 1e6, best_p * 1e6);
        free(mine.v);
    }
    for (int r = 0; r < size; r++) free(all[r].v);
    free(all);
    MPI_Type_free(&vec);
    MPI_Type_free(&raw);
    int any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0 && any) fprintf(stderr, "gather_shapes: wrong data\n");
    MPI_Finalize();
    return any ? 1 : 0;
}
