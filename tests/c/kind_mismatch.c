/* kind_mismatch.c: a receive whose datatype does not fit the message's kind (MPI_BYTE for a
 * message sent with a custom datatype, a custom datatype for a message of MPI_INTs) fails with
 * MPI_ERR_TYPE under MPI_ERRORS_RETURN instead of waiting forever, the sender's call returns,
 * and later messages on the same tag arrive intact. Ranks 2k and 2k+1 test each other; every
 * rank also tests itself, so any number of ranks works. */
#include "check.h"
#include <string.h>

/* A "blob": four packed ints and one region of n doubles (zero-copy when large). */
struct blob {
    int hdr[4];
    int n;
    double *v;
};

static int unpack_calls;

static int blob_query(void *state, const void *buf, MPI_Count count, MPI_Count *size) {
    (void)state;
    (void)buf;
    *size = count * (MPI_Count)sizeof(int[4]);
    return MPI_SUCCESS;
}

static int blob_pack(void *state, const void *buf, MPI_Count count, MPI_Count offset, void *dst,
                     MPI_Count dst_size, MPI_Count *used) {
    (void)state;
    (void)count;
    const struct blob *b = buf;
    MPI_Count n = (MPI_Count)sizeof b->hdr - offset;
    if (n > dst_size) n = dst_size;
    memcpy(dst, (const unsigned char *)b->hdr + offset, (size_t)n);
    *used = n;
    return MPI_SUCCESS;
}

static int blob_unpack(void *state, void *buf, MPI_Count count, MPI_Count offset, const void *src,
                       MPI_Count src_size) {
    (void)state;
    (void)count;
    struct blob *b = buf;
    unpack_calls++;
    memcpy((unsigned char *)b->hdr + offset, src, (size_t)src_size);
    return MPI_SUCCESS;
}

static int blob_regions(void *state, void *buf, MPI_Count count, MPI_Count n, void *bases[],
                        MPI_Count lens[], MPI_Datatype types[]) {
    (void)state;
    (void)count;
    (void)n;
    struct blob *b = buf;
    bases[0] = b->v;
    lens[0] = b->n;
    types[0] = MPI_DOUBLE;
    return MPI_SUCCESS;
}

static struct blob make_blob(int seed, int n) {
    struct blob b;
    for (int i = 0; i < 4; i++) b.hdr[i] = seed * 10 + i;
    b.n = n;
    b.v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    CHECK(b.v != NULL);
    for (int j = 0; j < n; j++) b.v[j] = seed + j * 0.5;
    return b;
}

static struct blob empty_blob(int n) {
    struct blob b = make_blob(0, n);
    memset(b.hdr, 0, sizeof b.hdr);
    for (int j = 0; j < n; j++) b.v[j] = -1;
    return b;
}

static void check_blob(const struct blob *b, int seed, int n) {
    for (int i = 0; i < 4; i++) CHECK(b->hdr[i] == seed * 10 + i);
    for (int j = 0; j < n; j++) CHECK(b->v[j] == seed + j * 0.5);
}

enum { BIG = 100000, SMALL = 10, TAG = 5, SELF_TAG = 6 };

/* MPI_INTs and a blob on `tag`, both checked: nothing of a failed receive is left behind. */
static void follow_ups(MPI_Datatype t, int me, int peer, int sender, int tag) {
    int ints[1000];
    if (sender) {
        for (int i = 0; i < 1000; i++) ints[i] = me * 7 + i;
        OK(MPI_Send(ints, 1000, MPI_INT, peer, tag, MPI_COMM_WORLD));
        struct blob b = make_blob(me + 3, BIG);
        OK(MPI_Send(&b, 1, t, peer, tag, MPI_COMM_WORLD));
        free(b.v);
    } else {
        MPI_Status s;
        OK(MPI_Recv(ints, 1000, MPI_INT, peer, tag, MPI_COMM_WORLD, &s));
        int count;
        OK(MPI_Get_count(&s, MPI_INT, &count));
        CHECK(count == 1000 && s.MPI_SOURCE == peer && s.MPI_TAG == tag);
        for (int i = 0; i < 1000; i++) CHECK(ints[i] == peer * 7 + i);
        struct blob b = empty_blob(BIG);
        OK(MPI_Recv(&b, 1, t, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check_blob(&b, peer + 3, BIG);
        free(b.v);
    }
}

/* Between two ranks: the sender uses blocking sends, the receiver the wrong datatype. */
static void pair(MPI_Datatype t, int rank, int peer) {
    int sender = rank % 2 == 0;
    MPI_Comm w = MPI_COMM_WORLD;
    static unsigned char bytes[1 << 20];
    /* Custom messages (zero-copy region; lead only) into MPI_BYTE receives of several sizes:
     * smaller than a lead's header, mid-sized, larger than any lead. */
    const int sizes[] = {0, 10, 100, 4096, 1 << 20};
    for (int k = 0; k < 2; k++) {
        int n = k == 0 ? BIG : SMALL;
        for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            if (sender) {
                struct blob b = make_blob(rank, n);
                OK(MPI_Send(&b, 1, t, peer, TAG, w)); /* returns: its data was drained */
                free(b.v);
            } else {
                MPI_Status s;
                FAILS(MPI_Recv(bytes, sizes[i], MPI_BYTE, peer, TAG, w, &s), MPI_ERR_TYPE);
            }
            follow_ups(t, rank, peer, sender, TAG);
        }
    }
    /* A message of MPI_INTs into a custom receive: the type's callbacks are not called. */
    int ints[5000];
    for (int i = 0; i < 5000; i++) ints[i] = i;
    if (sender) {
        OK(MPI_Send(ints, 5000, MPI_INT, peer, TAG, w));
    } else {
        struct blob b = empty_blob(BIG);
        unpack_calls = 0;
        FAILS(MPI_Recv(&b, 1, t, peer, TAG, w, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
        CHECK(unpack_calls == 0 && b.hdr[0] == 0 && b.v[0] == -1);
        free(b.v);
    }
    follow_ups(t, rank, peer, sender, TAG);
}

/* With itself: the receive is posted first and not waited on while the blocking send runs
 * (it must drain anyway); then a matched probe received with the wrong datatype. */
static void self(MPI_Datatype t, int rank) {
    MPI_Comm w = MPI_COMM_WORLD;
    unsigned char small[16];
    MPI_Request r;
    MPI_Status s;
    struct blob b = make_blob(rank, BIG);
    OK(MPI_Irecv(small, 16, MPI_BYTE, rank, SELF_TAG, w, &r));
    OK(MPI_Send(&b, 1, t, rank, SELF_TAG, w));
    FAILS(MPI_Wait(&r, &s), MPI_ERR_TYPE);

    OK(MPI_Isend(&b, 1, t, rank, SELF_TAG, w, &r));
    MPI_Message m;
    OK(MPI_Mprobe(rank, SELF_TAG, w, &m, &s));
    FAILS(MPI_Mrecv(small, 16, MPI_BYTE, &m, &s), MPI_ERR_TYPE);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    free(b.v);

    /* The tag still works both ways. */
    int x = 42 + rank, y = 0;
    OK(MPI_Sendrecv(&x, 1, MPI_INT, rank, SELF_TAG, &y, 1, MPI_INT, rank, SELF_TAG, w, &s));
    CHECK(y == 42 + rank);
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    MPI_Datatype t;
    OK(MPI_Type_create_custom(NULL, NULL, blob_query, blob_pack, blob_unpack,
                              one_region_per_element, blob_regions, NULL, 1, &t));
    OK(MPI_Type_commit(&t));

    int peer = rank ^ 1;
    if (peer < size) pair(t, rank, peer);
    self(t, rank);

    OK(MPI_Type_free(&t));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    test_finish(rank, "kind_mismatch");
    return 0;
}
