/* p2p.c: point-to-point semantics through the C ABI: blocking and non-blocking sends and
 * receives in a ring, wildcards and statuses, synchronous sends, Sendrecv, probes and matched
 * probes, the completion calls, PROC_NULL, cancel, communicators (dup, split, compare), and
 * the error classes returned under MPI_ERRORS_RETURN, and long messages around 64 KiB and up.
 * Runs on any number of ranks >= 1. */
#include "check.h"
#include <stdlib.h>
#include <string.h>

#define N 1000

static void ring(MPI_Comm comm) {
    int rank, size;
    OK(MPI_Comm_rank(comm, &rank));
    OK(MPI_Comm_size(comm, &size));
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double out[N], in[N];
    for (int i = 0; i < N; i++) out[i] = rank * 10000.0 + i;

    /* Isend/Irecv + Waitall */
    MPI_Request reqs[2];
    MPI_Status st[2];
    OK(MPI_Irecv(in, N, MPI_DOUBLE, prev, 7, comm, &reqs[0]));
    OK(MPI_Isend(out, N, MPI_DOUBLE, next, 7, comm, &reqs[1]));
    OK(MPI_Waitall(2, reqs, st));
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL);
    CHECK(st[0].MPI_SOURCE == prev && st[0].MPI_TAG == 7);
    int count = -1;
    OK(MPI_Get_count(&st[0], MPI_DOUBLE, &count));
    CHECK(count == N);
    OK(MPI_Get_count(&st[0], MPI_BYTE, &count));
    CHECK(count == N * 8);
    for (int i = 0; i < N; i++) CHECK(in[i] == prev * 10000.0 + i);

    /* Sendrecv with wildcards */
    int token = rank, got = -1;
    MPI_Status s;
    OK(MPI_Sendrecv(&token, 1, MPI_INT, next, 3, &got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                    comm, &s));
    CHECK(got == prev && s.MPI_SOURCE == prev && s.MPI_TAG == 3);

    /* Blocking Send/Recv ordering: rank 0 of the ring sends first. */
    long long v = 42 + rank, w = 0;
    if (rank % 2 == 0) {
        OK(MPI_Send(&v, 1, MPI_LONG_LONG, next, 5, comm));
        OK(MPI_Recv(&w, 1, MPI_LONG_LONG, prev, 5, comm, MPI_STATUS_IGNORE));
    } else {
        OK(MPI_Recv(&w, 1, MPI_LONG_LONG, prev, 5, comm, MPI_STATUS_IGNORE));
        OK(MPI_Send(&v, 1, MPI_LONG_LONG, next, 5, comm));
    }
    CHECK(w == 42 + prev);

    /* Issend + Test loop */
    MPI_Request r;
    int flag = 0;
    short sv = (short)rank, sr = -1;
    OK(MPI_Irecv(&sr, 1, MPI_SHORT, prev, 9, comm, &reqs[0]));
    OK(MPI_Issend(&sv, 1, MPI_SHORT, next, 9, comm, &r));
    while (!flag) OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(r == MPI_REQUEST_NULL);
    OK(MPI_Wait(&reqs[0], &s));
    CHECK(sr == prev);
}

static void probes(MPI_Comm comm) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int data[5] = {rank, rank + 1, rank + 2, rank + 3, rank + 4}, in[5];
    MPI_Request r;
    MPI_Status s;

    OK(MPI_Isend(data, 5, MPI_INT, next, 11, comm, &r));
    OK(MPI_Probe(prev, 11, comm, &s));
    int count;
    OK(MPI_Get_count(&s, MPI_INT, &count));
    CHECK(count == 5 && s.MPI_SOURCE == prev);
    int flag = 0;
    while (!flag) OK(MPI_Iprobe(MPI_ANY_SOURCE, 11, comm, &flag, &s));
    MPI_Message m;
    OK(MPI_Mprobe(prev, 11, comm, &m, &s));
    CHECK(m != MPI_MESSAGE_NULL);
    OK(MPI_Mrecv(in, 5, MPI_INT, &m, &s));
    OK(MPI_Mprobe(MPI_PROC_NULL, 1, comm, &m, &s));
    OK(MPI_Imrecv(in, 5, MPI_INT, &m, &r));
    CHECK(m == MPI_MESSAGE_NULL);
    OK(MPI_Wait(&r, &s));
    CHECK(s.MPI_SOURCE == MPI_PROC_NULL && s.MPI_TAG == MPI_ANY_TAG);
    OK(MPI_Get_count(&s, MPI_INT, &count));
    CHECK(count == 0);
    CHECK(m == MPI_MESSAGE_NULL);
    for (int i = 0; i < 5; i++) CHECK(in[i] == prev + i);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));

    /* Improbe + Imrecv */
    OK(MPI_Isend(data, 5, MPI_INT, next, 12, comm, &r));
    flag = 0;
    while (!flag) OK(MPI_Improbe(prev, 12, comm, &flag, &m, &s));
    MPI_Request rr;
    OK(MPI_Imrecv(in, 5, MPI_INT, &m, &rr));
    OK(MPI_Wait(&rr, &s));
    CHECK(in[4] == prev + 4);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));

    /* PROC_NULL completes at once with an empty status */
    OK(MPI_Send(data, 5, MPI_INT, MPI_PROC_NULL, 1, comm));
    OK(MPI_Recv(in, 5, MPI_INT, MPI_PROC_NULL, 1, comm, &s));
    CHECK(s.MPI_SOURCE == MPI_PROC_NULL && s.MPI_TAG == MPI_ANY_TAG);
    OK(MPI_Get_count(&s, MPI_INT, &count));
    CHECK(count == 0);
    OK(MPI_Mprobe(MPI_PROC_NULL, 1, comm, &m, &s));
    CHECK(m == MPI_MESSAGE_NO_PROC);
    OK(MPI_Mrecv(in, 5, MPI_INT, &m, &s));

    /* Cancel an unmatched receive */
    OK(MPI_Irecv(in, 5, MPI_INT, prev, 999, comm, &r));
    OK(MPI_Cancel(&r));
    OK(MPI_Wait(&r, &s));
    OK(MPI_Test_cancelled(&s, &flag));
    CHECK(flag == 1);

    /* Waitany / Waitsome / Testall over two receives */
    int a = -1, b = -1;
    MPI_Request two[2];
    OK(MPI_Irecv(&a, 1, MPI_INT, prev, 21, comm, &two[0]));
    OK(MPI_Irecv(&b, 1, MPI_INT, prev, 22, comm, &two[1]));
    OK(MPI_Send(&rank, 1, MPI_INT, next, 22, comm));
    OK(MPI_Send(&rank, 1, MPI_INT, next, 21, comm));
    int idx = -1;
    OK(MPI_Waitany(2, two, &idx, &s));
    CHECK(idx == 0 || idx == 1);
    CHECK(two[idx] == MPI_REQUEST_NULL);
    int outcount = 0, indices[2];
    OK(MPI_Waitsome(2, two, &outcount, indices, MPI_STATUSES_IGNORE));
    CHECK(outcount == 1 && indices[0] == 1 - idx);
    CHECK(a == prev && b == prev);
    OK(MPI_Testall(2, two, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag == 1);
    OK(MPI_Waitany(2, two, &idx, &s));
    CHECK(idx == MPI_UNDEFINED);
}

static void communicators(void) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, half;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int cmp;
    OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp));
    CHECK(cmp == MPI_CONGRUENT);
    OK(MPI_Comm_compare(dup, dup, &cmp));
    CHECK(cmp == MPI_IDENT);
    ring(dup);
    probes(dup);

    /* Split by parity, reversed order */
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
    int hr, hs;
    OK(MPI_Comm_rank(half, &hr));
    OK(MPI_Comm_size(half, &hs));
    CHECK(hs == (size + 1 - rank % 2) / 2);
    int sum = 0;
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half));
    int expect = 0;
    for (int r = rank % 2; r < size; r += 2) expect += r;
    CHECK(sum == expect);
    ring(half);

    MPI_Comm none;
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &none));
    CHECK((rank == 0) == (none != MPI_COMM_NULL));
    if (none != MPI_COMM_NULL) OK(MPI_Comm_free(&none));

    OK(MPI_Comm_free(&half));
    OK(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL);
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Byte i of the long message from `rank` of length `n`. */
static unsigned char long_byte(int rank, size_t n, size_t i) {
    return (unsigned char)(rank * 31 + n * 7 + i * 13 + i / 251);
}

static void fill_long(unsigned char *b, int rank, size_t n) {
    for (size_t i = 0; i < n; i++) b[i] = long_byte(rank, n, i);
}

static int long_ok(const unsigned char *b, int rank, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (b[i] != long_byte(rank, n, i)) return 0;
    return 1;
}

/* Long contiguous messages (from MPICD_LOCAL_STREAM, 64 KiB, they travel through shared-memory
 * segments to a rank on this node): around the threshold in a ring with every send mode, a
 * probe's count, a receive into a vector type, and truncation, which must fail as usual. */
static void long_messages(void) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    enum { MAX = (1 << 20) + 3 };
    unsigned char *out = malloc(MAX), *in = malloc(MAX);
    CHECK(out && in);
    size_t lens[] = {65535, 65536, 65537, 300001, MAX};
    for (int k = 0; k < 5; k++) {
        size_t n = lens[k];
        fill_long(out, rank, n);
        for (int mode = 0; mode < 4; mode++) {
            MPI_Request r[2];
            MPI_Status st;
            int count;
            memset(in, 0, n);
            OK(MPI_Irecv(in, (int)n, MPI_BYTE, prev, 90 + mode, MPI_COMM_WORLD, &r[0]));
            switch (mode) {
            case 0: OK(MPI_Send(out, (int)n, MPI_BYTE, next, 90, MPI_COMM_WORLD)); break;
            case 1: OK(MPI_Ssend(out, (int)n, MPI_BYTE, next, 91, MPI_COMM_WORLD)); break;
            case 2: OK(MPI_Isend(out, (int)n, MPI_BYTE, next, 92, MPI_COMM_WORLD, &r[1]));
                    OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE)); break;
            default: OK(MPI_Issend(out, (int)n, MPI_BYTE, next, 93, MPI_COMM_WORLD, &r[1]));
                    OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE)); break;
            }
            OK(MPI_Wait(&r[0], &st));
            OK(MPI_Get_count(&st, MPI_BYTE, &count));
            CHECK((size_t)count == n && st.MPI_SOURCE == prev && st.MPI_TAG == 90 + mode);
            CHECK(long_ok(in, prev, n));
        }
    }
    /* A probe's count, then the message received into every other byte of a larger buffer. */
    size_t n = 200000;
    fill_long(out, rank, n);
    MPI_Request sreq;
    OK(MPI_Isend(out, (int)n, MPI_BYTE, next, 95, MPI_COMM_WORLD, &sreq));
    MPI_Status st;
    int count;
    OK(MPI_Probe(prev, 95, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK((size_t)count == n);
    MPI_Datatype every_other;
    OK(MPI_Type_vector((int)n, 1, 2, MPI_BYTE, &every_other));
    OK(MPI_Type_commit(&every_other));
    unsigned char *spread = calloc(2 * n, 1);
    CHECK(spread != NULL);
    OK(MPI_Recv(spread, 1, every_other, prev, 95, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    int spread_ok = 1;
    for (size_t i = 0; i < n; i++) spread_ok &= spread[2 * i] == long_byte(prev, n, i);
    CHECK(spread_ok);
    OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    OK(MPI_Type_free(&every_other));
    free(spread);
    /* Truncation: 1 MiB into half of it. */
    if (size >= 2) {
        if (rank == 0) {
            OK(MPI_Send(out, 1 << 20, MPI_BYTE, 1, 96, MPI_COMM_WORLD));
        } else if (rank == 1) {
            FAILS(MPI_Recv(in, 1 << 19, MPI_BYTE, 0, 96, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
            CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 96);
        }
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    free(out);
    free(in);
}

static void truncation(void) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) return;
    int big[4] = {1, 2, 3, 4}, small[2];
    if (rank == 0) {
        OK(MPI_Send(big, 4, MPI_INT, 1, 77, MPI_COMM_WORLD));
    } else if (rank == 1) {
        MPI_Status s;
        int got;
        FAILS(MPI_Recv(small, 2, MPI_INT, 0, 77, MPI_COMM_WORLD, &s), MPI_ERR_TRUNCATE);
        /* The status still names the message it matched, and counts what the buffer holds. */
        CHECK(s.MPI_SOURCE == 0 && s.MPI_TAG == 77);
        OK(MPI_Get_count(&s, MPI_INT, &got));
        CHECK(got == 2);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv) {
    int provided, flag;
    /* The long messages take the stream path to ranks of this node (off by default). */
    setenv("MPICD_LOCAL_STREAM", "65536", 0);
    OK(MPI_Initialized(&flag));
    CHECK(flag == 0);
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided));
    CHECK(provided == MPI_THREAD_SERIALIZED);
    OK(MPI_Initialized(&flag));
    CHECK(flag == 1);
    OK(MPI_Is_thread_main(&flag));
    CHECK(flag == 1);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Errhandler eh;
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN);

    int version, subversion, len;
    OK(MPI_Get_version(&version, &subversion));
    CHECK(version == MPI_VERSION && subversion == MPI_SUBVERSION);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], host[MPI_MAX_PROCESSOR_NAME];
    OK(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && strncmp(lib, "mpicd", 5) == 0);
    OK(MPI_Get_processor_name(host, &len));
    CHECK(len > 0 && (int)strlen(host) == len);
    double t0 = MPI_Wtime();
    CHECK(MPI_Wtick() > 0 && MPI_Wtime() >= t0);
    int *tag_ub;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    CHECK(flag == 1 && *tag_ub >= 32767);

    ring(MPI_COMM_WORLD);
    probes(MPI_COMM_WORLD);
    communicators();
    truncation();
    long_messages();

    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    OK(MPI_Finalize());
    OK(MPI_Finalized(&flag));
    CHECK(flag == 1);
    if (rank == 0) printf("p2p: all checks passed\n");
    return 0;
}
