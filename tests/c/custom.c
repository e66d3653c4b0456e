/* custom.c: MPI_Type_create_custom through the C ABI (the paper's Listings 2-6): the struct-vec
 * type (a, b, c, d packed around a 4-byte gap, data[] sent as a region) exchanged in a ring,
 * a packed part large enough to be fragmented, the dynamic receive (MPIX_Message_shape after a
 * matched probe, and the MPIX resize callback), callback errors on both sides, a type freed
 * while an operation uses it, and the state callback balance (every state freed once). */
#include "check.h"
#include <string.h>

#define N 2048
#define PACKED 20 /* a, b, c (4 bytes each) and d (8 bytes): the gap is not sent */

struct struct_vec {
    int a, b, c;
    double d;
    int data[N];
};

static int states_made, states_freed;

static int state_fn(void *context, const void *src, MPI_Count count, void **state) {
    (void)src;
    (void)count;
    int *fail = context;
    if (fail && *fail == 1) return MPI_ERR_OTHER;
    states_made++;
    *state = context;
    return MPI_SUCCESS;
}

static int state_free_fn(void *state) {
    (void)state;
    states_freed++;
    return MPI_SUCCESS;
}

static int query_fn(void *state, const void *buf, MPI_Count count, MPI_Count *packed_size) {
    (void)state;
    (void)buf;
    *packed_size = count * PACKED;
    return MPI_SUCCESS;
}

static void image_of(const struct struct_vec *s, unsigned char img[PACKED]) {
    memcpy(img, &s->a, 4);
    memcpy(img + 4, &s->b, 4);
    memcpy(img + 8, &s->c, 4);
    memcpy(img + 12, &s->d, 8);
}

static void from_image(struct struct_vec *s, const unsigned char img[PACKED]) {
    memcpy(&s->a, img, 4);
    memcpy(&s->b, img + 4, 4);
    memcpy(&s->c, img + 8, 4);
    memcpy(&s->d, img + 12, 8);
}

/* Packs element by element from any virtual offset; fills the fragment only with whole
 * elements when it can (partial elements are allowed too). */
static int pack_fn(void *state, const void *buf, MPI_Count count, MPI_Count offset, void *dst,
                   MPI_Count dst_size, MPI_Count *used) {
    int *fail = state;
    if (fail && *fail == 2) return 1234;
    const struct struct_vec *s = buf;
    unsigned char *out = dst;
    MPI_Count done = 0;
    while (done < dst_size && offset + done < count * PACKED) {
        MPI_Count e = (offset + done) / PACKED, within = (offset + done) % PACKED;
        unsigned char img[PACKED];
        image_of(&s[e], img);
        MPI_Count n = PACKED - within;
        if (n > dst_size - done) n = dst_size - done;
        memcpy(out + done, img + within, (size_t)n);
        done += n;
    }
    *used = done;
    return MPI_SUCCESS;
}

static int unpack_fn(void *state, void *buf, MPI_Count count, MPI_Count offset, const void *src,
                     MPI_Count src_size) {
    (void)state;
    struct struct_vec *s = buf;
    const unsigned char *in = src;
    MPI_Count done = 0;
    while (done < src_size) {
        MPI_Count e = (offset + done) / PACKED, within = (offset + done) % PACKED;
        if (e >= count) return MPI_ERR_TRUNCATE;
        unsigned char img[PACKED];
        image_of(&s[e], img);
        MPI_Count n = PACKED - within;
        if (n > src_size - done) n = src_size - done;
        memcpy(img + within, in + done, (size_t)n);
        from_image(&s[e], img);
        done += n;
    }
    return MPI_SUCCESS;
}

static int region_fn(void *state, void *buf, MPI_Count count, MPI_Count region_count,
                     void *reg_bases[], MPI_Count reg_lens[], MPI_Datatype reg_types[]) {
    (void)state;
    struct struct_vec *s = buf;
    if (region_count != count) return MPI_ERR_ARG;
    for (MPI_Count i = 0; i < count; i++) {
        reg_bases[i] = s[i].data;
        reg_lens[i] = N;
        reg_types[i] = MPI_INT;
    }
    return MPI_SUCCESS;
}

static MPI_Datatype make_struct_vec(int *fail) {
    MPI_Datatype t;
    OK(MPI_Type_create_custom(state_fn, state_free_fn, query_fn, pack_fn, unpack_fn,
                              one_region_per_element, region_fn, fail, 1, &t));
    OK(MPI_Type_commit(&t));
    return t;
}

static void fill(struct struct_vec *s, int count, int who) {
    for (int i = 0; i < count; i++) {
        s[i].a = who;
        s[i].b = i;
        s[i].c = who * i;
        s[i].d = who + i / 4.0;
        for (int j = 0; j < N; j++) s[i].data[j] = who * 100000 + i * 1000 + j;
    }
}

static void verify(const struct struct_vec *s, int count, int who) {
    for (int i = 0; i < count; i++) {
        CHECK(s[i].a == who && s[i].b == i && s[i].c == who * i && s[i].d == who + i / 4.0);
        for (int j = 0; j < N; j++) CHECK(s[i].data[j] == who * 100000 + i * 1000 + j);
    }
}

/* The dynamic vector of the dynamic-receive tests: its length is packed, its doubles are a
 * region. */
struct dvec {
    int n;
    double *v;
};

static int dvec_query(void *state, const void *buf, MPI_Count count, MPI_Count *size) {
    (void)state;
    (void)buf;
    *size = count * (MPI_Count)sizeof(int);
    return MPI_SUCCESS;
}

static int dvec_pack(void *state, const void *buf, MPI_Count count, MPI_Count offset, void *dst,
                     MPI_Count dst_size, MPI_Count *used) {
    (void)state;
    const struct dvec *d = buf;
    MPI_Count total = count * (MPI_Count)sizeof(int), n = total - offset;
    if (n > dst_size) n = dst_size;
    unsigned char all[64 * sizeof(int)];
    for (MPI_Count i = 0; i < count; i++) memcpy(all + i * sizeof(int), &d[i].n, sizeof(int));
    memcpy(dst, all + offset, (size_t)n);
    *used = n;
    return MPI_SUCCESS;
}

static int dvec_unpack(void *state, void *buf, MPI_Count count, MPI_Count offset,
                       const void *src, MPI_Count src_size) {
    (void)state;
    struct dvec *d = buf;
    unsigned char all[64 * sizeof(int)];
    for (MPI_Count i = 0; i < count; i++) memcpy(all + i * sizeof(int), &d[i].n, sizeof(int));
    memcpy(all + offset, src, (size_t)src_size);
    for (MPI_Count i = 0; i < count; i++) memcpy(&d[i].n, all + i * sizeof(int), sizeof(int));
    return MPI_SUCCESS;
}

static int dvec_regions(void *state, void *buf, MPI_Count count, MPI_Count n, void *bases[],
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

static int dvec_resize(void *state, void *buf, MPI_Count count, MPI_Count packed_size,
                       MPI_Count region_count, const MPI_Count reg_lens[],
                       const MPI_Datatype reg_types[]) {
    (void)state;
    struct dvec *d = buf;
    if (region_count != count || packed_size != count * (MPI_Count)sizeof(int)) return MPI_ERR_TRUNCATE;
    for (MPI_Count i = 0; i < count; i++) {
        if (reg_types[i] != MPI_DOUBLE) return MPI_ERR_TYPE;
        d[i].n = (int)reg_lens[i];
        d[i].v = calloc((size_t)reg_lens[i] + 1, sizeof(double));
    }
    return MPI_SUCCESS;
}

/* As the paper's programs do: the type is used right after its creation, never committed
 * (make_struct_vec commits, which is allowed and changes nothing). */
static MPI_Datatype make_dvec(void) {
    MPI_Datatype t;
    OK(MPI_Type_create_custom(NULL, NULL, dvec_query, dvec_pack, dvec_unpack,
                              one_region_per_element, dvec_regions, NULL, 1, &t));
    return t;
}

static void dynamic(int rank, int size) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Datatype t = make_dvec();
    struct dvec out[2];
    for (int i = 0; i < 2; i++) {
        out[i].n = 100 * (rank + 1) + i;
        out[i].v = malloc(sizeof(double) * (size_t)out[i].n);
        for (int j = 0; j < out[i].n; j++) out[i].v[j] = rank + j * 0.25;
    }
    MPI_Request r;
    OK(MPI_Isend(out, 2, t, next, 40, MPI_COMM_WORLD, &r));

    /* Matched probe, then the shape, then buffers of the right size. */
    MPI_Message m;
    MPI_Status s;
    OK(MPI_Mprobe(prev, 40, MPI_COMM_WORLD, &m, &s));
    MPI_Count packed, nreg, lens[4];
    MPI_Datatype types[4];
    OK(MPIX_Message_shape(m, &packed, &nreg, 4, lens, types));
    CHECK(packed == 2 * (MPI_Count)sizeof(int) && nreg == 2);
    struct dvec in[2];
    for (int i = 0; i < 2; i++) {
        CHECK(lens[i] == 100 * (prev + 1) + i && types[i] == MPI_DOUBLE);
        in[i].n = (int)lens[i];
        in[i].v = malloc(sizeof(double) * (size_t)lens[i]);
    }
    OK(MPI_Mrecv(in, 2, t, &m, &s));
    int count;
    OK(MPI_Get_count(&s, t, &count));
    CHECK(count == 2);
    for (int i = 0; i < 2; i++) {
        CHECK(in[i].n == 100 * (prev + 1) + i);
        for (int j = 0; j < in[i].n; j++) CHECK(in[i].v[j] == prev + j * 0.25);
        free(in[i].v);
    }
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));

    /* The resize callback: a plain receive into empty vectors. */
    OK(MPIX_Type_custom_set_resize(t, dvec_resize));
    OK(MPI_Isend(out, 2, t, next, 41, MPI_COMM_WORLD, &r));
    struct dvec grown[2] = {{0, NULL}, {0, NULL}};
    OK(MPI_Recv(grown, 2, t, prev, 41, MPI_COMM_WORLD, &s));
    for (int i = 0; i < 2; i++) {
        CHECK(grown[i].n == 100 * (prev + 1) + i);
        for (int j = 0; j < grown[i].n; j++) CHECK(grown[i].v[j] == prev + j * 0.25);
        free(grown[i].v);
    }
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Type_free(&t));
    for (int i = 0; i < 2; i++) free(out[i].v);
}

static void errors(int rank, int size) {
    /* A state callback failure fails the call with its code; nothing is sent. */
    int fail_state = 1;
    MPI_Datatype bad = make_struct_vec(&fail_state);
    struct struct_vec *one = calloc(1, sizeof *one);
    FAILS(MPI_Send(one, 1, bad, (rank + 1) % size, 50, MPI_COMM_WORLD), MPI_ERR_OTHER);
    OK(MPI_Type_free(&bad));

    /* A pack failure fails the sender with the callback's own code, and the receiver's
     * receive fails too instead of waiting forever. */
    if (size >= 2 && rank == 0) {
        int fail_pack = 2;
        MPI_Datatype t = make_struct_vec(&fail_pack);
        FAILS(MPI_Send(one, 1, t, 1, 51, MPI_COMM_WORLD), 1234);
        OK(MPI_Type_free(&t));
    }
    if (size >= 2 && rank == 1) {
        int fine = 0;
        MPI_Datatype good = make_struct_vec(&fine);
        CHECK(MPI_Recv(one, 1, good, 0, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS);
        OK(MPI_Type_free(&good));
    }
    free(one);

    /* An uncommitted custom type is usable (the paper never commits); a freed one is refused. */
    MPI_Datatype t;
    OK(MPI_Type_create_custom(NULL, NULL, query_fn, pack_fn, unpack_fn, NULL, NULL, NULL, 1, &t));
    OK(MPI_Send(NULL, 0, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    OK(MPI_Type_commit(&t));
    MPI_Datatype copy = t;
    OK(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL);
    FAILS(MPI_Type_commit(&copy), MPI_ERR_TYPE);
    FAILS(MPI_Send(NULL, 0, copy, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    int sz;
    FAILS(MPI_Type_free(&t), MPI_ERR_TYPE);
    OK(MPI_Type_size(MPI_INT, &sz));
    CHECK(sz == 4);
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A custom type whose one region has a derived element type (the paper's reg_types): every
 * other int of the object, described by a resized int, travels as the region. */
#define STRIDED_N 64
static MPI_Datatype every_other_int;

static int strided_regions(void *state, void *buf, MPI_Count count, MPI_Count region_count,
                           void *reg_bases[], MPI_Count reg_lens[], MPI_Datatype reg_types[]) {
    (void)state;
    if (count != 1 || region_count != 1) return MPI_ERR_ARG;
    reg_bases[0] = buf;
    reg_lens[0] = STRIDED_N / 2;
    reg_types[0] = every_other_int;
    return MPI_SUCCESS;
}

static void derived_region_type(int rank, int size) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every_other_int));
    OK(MPI_Type_commit(&every_other_int));
    MPI_Datatype t;
    OK(MPI_Type_create_custom(NULL, NULL, NULL, NULL, NULL, one_region_per_element,
                              strided_regions, NULL, 1, &t));
    int out[STRIDED_N], in[STRIDED_N];
    for (int i = 0; i < STRIDED_N; i++) out[i] = 1000 * rank + i, in[i] = -1;
    MPI_Request r;
    OK(MPI_Irecv(in, 1, t, prev, 40, MPI_COMM_WORLD, &r));
    OK(MPI_Send(out, 1, t, next, 40, MPI_COMM_WORLD));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < STRIDED_N; i++) CHECK(in[i] == (i % 2 == 0 ? 1000 * prev + i : -1));
    OK(MPI_Type_free(&t));
    OK(MPI_Type_free(&every_other_int));
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int fine = 0;
    MPI_Datatype t = make_struct_vec(&fine);
    int tsize;
    OK(MPI_Type_size(t, &tsize));
    CHECK(tsize == MPI_UNDEFINED);

    /* The paper's struct-vec, three of them, in a ring. */
    struct struct_vec *out = malloc(3 * sizeof *out), *in = calloc(3, sizeof *in);
    fill(out, 3, rank);
    MPI_Request r;
    MPI_Status s;
    OK(MPI_Irecv(in, 3, t, prev, 30, MPI_COMM_WORLD, &r));
    OK(MPI_Send(out, 3, t, next, 30, MPI_COMM_WORLD));
    OK(MPI_Wait(&r, &s));
    CHECK(s.MPI_SOURCE == prev && s.MPI_TAG == 30);
    verify(in, 3, prev);

    /* Many elements: a packed part of 100 KB, sent in fragments; the type is freed while the
     * send is pending. */
    int many = 5000;
    struct struct_vec *mout = malloc((size_t)many * sizeof *mout);
    struct struct_vec *min = calloc((size_t)many, sizeof *min);
    fill(mout, many, rank);
    MPI_Datatype tmp = make_struct_vec(&fine);
    OK(MPI_Isend(mout, many, tmp, next, 31, MPI_COMM_WORLD, &r));
    OK(MPI_Type_free(&tmp));
    OK(MPI_Recv(min, many, t, prev, 31, MPI_COMM_WORLD, &s));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    verify(min, many, prev);
    int count;
    OK(MPI_Get_count(&s, t, &count));
    CHECK(count == many);

    /* Sendrecv and Ssend with the custom type. */
    memset(in, 0, 3 * sizeof *in);
    OK(MPI_Sendrecv(out, 3, t, next, 32, in, 3, t, prev, 32, MPI_COMM_WORLD, &s));
    verify(in, 3, prev);

    dynamic(rank, size);
    derived_region_type(rank, size);
    errors(rank, size);

    OK(MPI_Type_free(&t));
    free(out);
    free(in);
    free(mout);
    free(min);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(states_made == states_freed);
    test_finish(rank, "custom");
    return 0;
}
