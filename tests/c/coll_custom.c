/* coll_custom.c: collectives over a custom datatype whose objects differ in shape from rank to
 * rank: a dynamic vector (its length packed, its doubles a zero-copy region) resized to its
 * struct's size so that arrays of it have the right stride. The receivers start with empty
 * vectors; the MPIX resize callback sizes each from what arrives, so the root of a gather
 * learns every rank's length without a probe. Bcast, Gather, Gatherv (0-2 vectors a rank),
 * Gather in place, Scatter (1 and 2 vectors a rank, more rounds than a node area has slots),
 * Allgather, Alltoall, an Alltoallw mixing two custom types, Igather, an in-place Allgather,
 * pack callbacks that fail in a Gather and a Bcast, a root's resize callback that refuses a
 * long vector, and a reduction refused (MPI_ERR_TYPE). */
#include "check.h"
#include <string.h>

struct dvec {
    int n;
    double *v;
};

static int query(void *state, const void *buf, MPI_Count count, MPI_Count *size) {
    (void)state;
    (void)buf;
    *size = count * (MPI_Count)sizeof(int);
    return MPI_SUCCESS;
}

static int pack(void *state, const void *buf, MPI_Count count, MPI_Count offset, void *dst,
                MPI_Count dst_size, MPI_Count *used) {
    (void)state;
    const struct dvec *d = buf;
    MPI_Count n = 0;
    for (MPI_Count i = offset / (MPI_Count)sizeof(int); i < count && n + 4 <= dst_size; i++) {
        memcpy((char *)dst + n, &d[i].n, sizeof(int));
        n += sizeof(int);
    }
    *used = n;
    return MPI_SUCCESS;
}

static int unpack(void *state, void *buf, MPI_Count count, MPI_Count offset, const void *src,
                  MPI_Count src_size) {
    (void)state;
    struct dvec *d = buf;
    for (MPI_Count k = 0; k < src_size / (MPI_Count)sizeof(int); k++) {
        MPI_Count i = offset / (MPI_Count)sizeof(int) + k;
        if (i >= count) return MPI_ERR_TRUNCATE;
        memcpy(&d[i].n, (const char *)src + k * sizeof(int), sizeof(int));
    }
    return MPI_SUCCESS;
}

static int regions(void *state, void *buf, MPI_Count count, MPI_Count n, void *bases[],
                   MPI_Count lens[], MPI_Datatype types[]) {
    (void)state;
    (void)n;
    struct dvec *d = buf;
    for (MPI_Count i = 0; i < count; i++) {
        bases[i] = d[i].v;
        lens[i] = d[i].n;
        types[i] = MPI_DOUBLE;
    }
    return MPI_SUCCESS;
}

static int resize(void *state, void *buf, MPI_Count count, MPI_Count packed_size,
                  MPI_Count region_count, const MPI_Count reg_lens[],
                  const MPI_Datatype reg_types[]) {
    (void)state;
    struct dvec *d = buf;
    if (region_count != count || packed_size != count * (MPI_Count)sizeof(int))
        return MPI_ERR_TRUNCATE;
    for (MPI_Count i = 0; i < count; i++) {
        if (reg_types[i] != MPI_DOUBLE) return MPI_ERR_TYPE;
        free(d[i].v);
        d[i].n = (int)reg_lens[i];
        d[i].v = calloc((size_t)reg_lens[i] + 1, sizeof(double));
    }
    return MPI_SUCCESS;
}

/* resize, refusing (4321) a vector longer than 50000 doubles. */
static int resize_capped(void *state, void *buf, MPI_Count count, MPI_Count packed_size,
                         MPI_Count region_count, const MPI_Count reg_lens[],
                         const MPI_Datatype reg_types[]) {
    for (MPI_Count i = 0; i < region_count; i++)
        if (reg_lens[i] > 50000) return 4321;
    return resize(state, buf, count, packed_size, region_count, reg_lens, reg_types);
}

/* A second custom type for the same struct layout, its elements ints: Alltoallw mixes them. */
struct ivec {
    int n;
    int *v;
};

static int regions_int(void *state, void *buf, MPI_Count count, MPI_Count n, void *bases[],
                       MPI_Count lens[], MPI_Datatype types[]) {
    (void)state, (void)n;
    struct ivec *d = buf;
    for (MPI_Count i = 0; i < count; i++) {
        bases[i] = d[i].v;
        lens[i] = d[i].n;
        types[i] = MPI_INT;
    }
    return MPI_SUCCESS;
}

static int int_resizes; /* calls of resize_int */

static int resize_int(void *state, void *buf, MPI_Count count, MPI_Count packed_size,
                      MPI_Count region_count, const MPI_Count reg_lens[],
                      const MPI_Datatype reg_types[]) {
    (void)state, (void)packed_size;
    int_resizes++;
    struct ivec *d = buf;
    if (region_count != count) return MPI_ERR_TRUNCATE;
    for (MPI_Count i = 0; i < count; i++) {
        /* A region's type arrives as its fixed-size equivalent (MPI_INT32_T for MPI_INT). */
        if (reg_types[i] != MPI_INT32_T) return MPI_ERR_TYPE;
        free(d[i].v);
        d[i].n = (int)reg_lens[i];
        d[i].v = calloc((size_t)reg_lens[i] + 1, sizeof(int));
    }
    return MPI_SUCCESS;
}

/* The state of an operation: the type's context. */
static int state_is_context(void *context, const void *buf, MPI_Count count, void **state) {
    (void)buf, (void)count;
    *state = context;
    return MPI_SUCCESS;
}

/* pack, failing with 1234 where the flag its state points to is set. */
static int pack_or_fail(void *state, const void *buf, MPI_Count count, MPI_Count offset,
                        void *dst, MPI_Count dst_size, MPI_Count *used) {
    if (state && *(int *)state) return 1234;
    return pack(NULL, buf, count, offset, dst, dst_size, used);
}

/* A vector of `n` doubles identified by `id`. */
static struct dvec make(int id, int n) {
    struct dvec d = {n, malloc(((size_t)n + 1) * sizeof(double))};
    for (int i = 0; i < n; i++) d.v[i] = id * 1e6 + i;
    return d;
}

static void check(const struct dvec *d, int id, int n) {
    CHECK(d->n == n);
    for (int i = 0; i < n; i++) CHECK(d->v[i] == id * 1e6 + i);
}

static void clear(struct dvec *d, int count) {
    for (int i = 0; i < count; i++) {
        free(d[i].v);
        d[i].v = NULL;
        d[i].n = 0;
    }
}

/* The length of rank r's vector: shapes differ per rank, some are long (zero-copy regions). */
static int len_of(int r) { return r % 2 ? 70000 + r : 3 * r + 1; }

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    CHECK(size <= 16);
    MPI_Datatype raw, t;
    OK(MPI_Type_create_custom(NULL, NULL, query, pack, unpack, one_region_per_element, regions,
                              NULL, 1, &raw));
    OK(MPIX_Type_custom_set_resize(raw, resize));
    OK(MPI_Type_create_resized(raw, 0, sizeof(struct dvec), &t));
    MPI_Aint lb, extent;
    OK(MPI_Type_get_extent(t, &lb, &extent));
    CHECK(lb == 0 && extent == (MPI_Aint)sizeof(struct dvec));
    OK(MPIX_Type_custom_set_resize(t, resize));

    struct dvec mine = make(rank, len_of(rank)), all[16] = {{0, NULL}}, one = {0, NULL};
    for (int root = 0; root < size; root++) {
        /* Gather: the root learns every length from the messages. */
        OK(MPI_Gather(&mine, 1, t, all, 1, t, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int r = 0; r < size; r++) check(&all[r], r, len_of(r));
        /* Scatter them back (the root's own block goes to itself as a message). */
        OK(MPI_Scatter(all, 1, t, &one, 1, t, root, MPI_COMM_WORLD));
        check(&one, rank, len_of(rank));
        clear(&one, 1);
        clear(all, 16);
        /* Bcast of the root's vector into empty ones. */
        struct dvec b = rank == root ? make(root, len_of(root)) : (struct dvec){0, NULL};
        OK(MPI_Bcast(&b, 1, t, root, MPI_COMM_WORLD));
        check(&b, root, len_of(root));
        clear(&b, 1);
    }

    /* Gatherv at root 0 into every other slot (displacements in extents). */
    int counts[16], displs[16];
    struct dvec spread[32] = {{0, NULL}};
    for (int r = 0; r < size; r++) {
        counts[r] = 1;
        displs[r] = 2 * r;
    }
    OK(MPI_Gatherv(&mine, 1, t, spread, counts, displs, t, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int r = 0; r < size; r++) {
            check(&spread[2 * r], r, len_of(r));
            CHECK(spread[2 * r + 1].n == 0 && spread[2 * r + 1].v == NULL);
        }
    clear(spread, 32);

    /* Allgather, and in place (this rank's own slot already filled). */
    OK(MPI_Allgather(&mine, 1, t, all, 1, t, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++) check(&all[r], r, len_of(r));
    clear(all, 16);
    all[rank] = make(rank, len_of(rank));
    OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 1, t, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++) check(&all[r], r, len_of(r));
    clear(all, 16);

    /* Alltoall: to rank j, a vector of 10 * rank + j doubles, identified 100 * rank + j. */
    struct dvec out[16], in[16] = {{0, NULL}};
    for (int j = 0; j < size; j++) out[j] = make(100 * rank + j, 10 * rank + j);
    OK(MPI_Alltoall(out, 1, t, in, 1, t, MPI_COMM_WORLD));
    for (int j = 0; j < size; j++) check(&in[j], 100 * j + rank, 10 * j + rank);
    clear(in, 16);
    clear(out, size);

    /* Alltoallw whose send blocks mix two custom types: doubles to even ranks, ints to odd
     * ones, each block packed by its own type's callbacks (a rank receives one kind, by its
     * own parity). */
    MPI_Datatype iraw;
    OK(MPI_Type_create_custom(NULL, NULL, query, pack, unpack, one_region_per_element,
                              regions_int, NULL, 1, &iraw));
    OK(MPIX_Type_custom_set_resize(iraw, resize_int));
    /* Each side's blocks in one object, so that its displacements stay within it. */
    struct {
        struct dvec d[16];
        struct ivec i[16];
    } wout, win;
    memset(&win, 0, sizeof win);
    int ones[16], sdispls[16], rdispls[16];
    MPI_Datatype stypes[16], rtypes[16];
    for (int j = 0; j < size; j++) {
        wout.d[j] = make(100 * rank + j, 5 + j);
        wout.i[j] = (struct ivec){3 + rank, malloc(sizeof(int) * (size_t)(3 + rank))};
        for (int k = 0; k < wout.i[j].n; k++) wout.i[j].v[k] = 1000 * rank + k;
        ones[j] = 1;
        stypes[j] = j % 2 ? iraw : t;
        sdispls[j] = j % 2 ? (int)((char *)&wout.i[j] - (char *)&wout)
                           : (int)((char *)&wout.d[j] - (char *)&wout);
        rtypes[j] = rank % 2 ? iraw : t;
        rdispls[j] = rank % 2 ? (int)((char *)&win.i[j] - (char *)&win)
                              : (int)((char *)&win.d[j] - (char *)&win);
    }
    OK(MPI_Alltoallw(&wout, ones, sdispls, stypes, &win, ones, rdispls, rtypes,
                     MPI_COMM_WORLD));
    CHECK(int_resizes == (rank % 2 ? size : 0)); /* each block by its own type */
    for (int i = 0; i < size; i++) {
        if (rank % 2) {
            CHECK(win.i[i].n == 3 + i);
            for (int k = 0; k < win.i[i].n; k++) CHECK(win.i[i].v[k] == 1000 * i + k);
        } else {
            check(&win.d[i], 100 * i + rank, 5 + rank);
        }
        free(win.i[i].v);
        free(wout.i[i].v);
    }
    clear(win.d, size);
    clear(wout.d, size);
    OK(MPI_Type_free(&iraw));

    /* Twelve rounds (more than a node area's slots): a Gatherv where members give 0, 1 or 2
     * vectors, a Gather in place at the root, a Scatter of 2 vectors each. */
    for (int round = 0; round < 12; round++) {
        /* On odd rounds the second vector is long (its giver pushes it into the root's). */
        int second = round % 2 ? 9000 + 100 * rank : 7;
        struct dvec two[2] = {make(rank * 10, rank * 10 + round), make(rank * 10 + 1, second)};
        int vcounts[16], vdispls[16], at = 0;
        struct dvec many[40] = {{0, NULL}};
        for (int r = 0; r < size; r++) {
            vcounts[r] = r % 2 ? 2 : (r % 4 == 2 ? 0 : 1);
            vdispls[r] = at;
            at += vcounts[r];
        }
        OK(MPI_Gatherv(two, vcounts[rank], t, many, vcounts, vdispls, t, 0, MPI_COMM_WORLD));
        if (rank == 0)
            for (int r = 0; r < size; r++)
                for (int k = 0; k < vcounts[r]; k++)
                    check(&many[vdispls[r] + k], r * 10 + k,
                          k ? (round % 2 ? 9000 + 100 * r : 7) : r * 10 + round);
        clear(many, 40);
        if (rank == 0) all[0] = make(0, 3 + round);
        OK(MPI_Gather(rank == 0 ? MPI_IN_PLACE : (void *)two, 1, t, all, 1, t, 0,
                      MPI_COMM_WORLD));
        if (rank == 0) {
            check(&all[0], 0, 3 + round);
            for (int r = 1; r < size; r++) check(&all[r], r * 10, r * 10 + round);
        }
        clear(all, 16);
        struct dvec src[32] = {{0, NULL}}, got[2] = {{0, NULL}, {0, NULL}};
        if (rank == 0)
            for (int k = 0; k < 2 * size; k++) src[k] = make(k, k + round);
        OK(MPI_Scatter(src, 2, t, got, 2, t, 0, MPI_COMM_WORLD));
        for (int k = 0; k < 2; k++) check(&got[k], 2 * rank + k, 2 * rank + k + round);
        clear(got, 2);
        clear(src, 32);
        clear(two, 2);
    }

    /* Non-blocking gather. */
    MPI_Request r;
    OK(MPI_Igather(&mine, 1, t, all, 1, t, size - 1, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    if (rank == size - 1)
        for (int k = 0; k < size; k++) check(&all[k], k, len_of(k));
    clear(all, 16);

    /* A pack callback that fails: the member whose callback failed gets its code, every
     * member that waits for its object fails (MPI_ERR_OTHER) instead of waiting forever, and
     * the next collectives still agree. Short vectors (through the node's memory where the
     * communicator has an area) and long ones (messages). */
    int fails = 0;
    MPI_Datatype braw, bad;
    OK(MPI_Type_create_custom(state_is_context, NULL, query, pack_or_fail, unpack,
                              one_region_per_element, regions, &fails, 1, &braw));
    OK(MPIX_Type_custom_set_resize(braw, resize));
    OK(MPI_Type_create_resized(braw, 0, sizeof(struct dvec), &bad));
    OK(MPIX_Type_custom_set_resize(bad, resize));
    for (int len = 5; size > 1 && len <= 50000; len *= 10000) {
        struct dvec v = make(rank, len);
        /* Gather at 0: rank 1's pack fails. */
        fails = rank == 1;
        int rc = MPI_Gather(&v, 1, bad, all, 1, bad, 0, MPI_COMM_WORLD);
        int class = MPI_SUCCESS;
        if (rc != MPI_SUCCESS && rc != 1234) MPI_Error_class(rc, &class);
        CHECK(rank == 1 ? rc == 1234 : rank == 0 ? class == MPI_ERR_OTHER : rc == MPI_SUCCESS);
        clear(all, 16);
        /* Bcast from 0 whose pack fails: every member fails. */
        fails = rank == 0;
        struct dvec b = rank == 0 ? make(0, len) : (struct dvec){0, NULL};
        rc = MPI_Bcast(&b, 1, bad, 0, MPI_COMM_WORLD);
        class = MPI_SUCCESS;
        if (rc != MPI_SUCCESS && rc != 1234) MPI_Error_class(rc, &class);
        CHECK(rank == 0 ? rc == 1234 : class == MPI_ERR_OTHER);
        clear(&b, 1);
        fails = 0;
        /* Then the same collectives work. */
        OK(MPI_Allgather(&v, 1, bad, all, 1, bad, MPI_COMM_WORLD));
        for (int r = 0; r < size; r++) check(&all[r], r, len);
        clear(all, 16);
        clear(&v, 1);
    }
    OK(MPI_Type_free(&bad));
    OK(MPI_Type_free(&braw));

    /* A root whose resize callback refuses a long vector fails alone: its givers (which push
     * long vectors into the root's where the members may write each other's memory) succeed,
     * and the next gather still agrees. */
    MPI_Datatype craw, capped;
    OK(MPI_Type_create_custom(NULL, NULL, query, pack, unpack, one_region_per_element, regions,
                              NULL, 1, &craw));
    OK(MPIX_Type_custom_set_resize(craw, resize_capped));
    OK(MPI_Type_create_resized(craw, 0, sizeof(struct dvec), &capped));
    OK(MPIX_Type_custom_set_resize(capped, resize_capped));
    for (int round = 0; size > 1 && round < 3; round++) {
        int rc = MPI_Gather(&mine, 1, capped, all, 1, capped, 0, MPI_COMM_WORLD);
        CHECK(rank == 0 ? rc != MPI_SUCCESS : rc == MPI_SUCCESS);
        clear(all, 16);
        OK(MPI_Gather(&mine, 1, t, all, 1, t, 0, MPI_COMM_WORLD));
        if (rank == 0)
            for (int r = 0; r < size; r++) check(&all[r], r, len_of(r));
        clear(all, 16);
    }
    OK(MPI_Type_free(&capped));
    OK(MPI_Type_free(&craw));

    /* No reductions over custom types. */
    FAILS(MPI_Allreduce(&mine, &one, 1, t, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE);
    clear(&mine, 1);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_free(&raw));
    test_finish(rank, "coll_custom");
    return 0;
}
