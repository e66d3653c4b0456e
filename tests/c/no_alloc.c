/* no_alloc.c: after a warm-up, 8-byte and 1 KiB ping-pongs between ranks 0 and 1 through
 * MPI_Send/MPI_Recv, MPI_Isend/MPI_Irecv/MPI_Waitall and MPI_Sendrecv do not call malloc,
 * calloc or realloc per message (libmpi's Rust code and UCX both allocate through them): this
 * program defines them, counting, over glibc's own. A rare allocation that is not per message
 * (a pool or table reaching a new high-water mark, UCX's own housekeeping) is allowed: at most
 * one per ROUNDS / 1000 round trips. Ranks past 1 only take part in the barriers. */
#include "check.h"
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static volatile long allocations;

void *malloc(size_t n) {
    allocations++;
    return __libc_malloc(n);
}
void *calloc(size_t k, size_t n) {
    allocations++;
    return __libc_calloc(k, n);
}
void *realloc(void *p, size_t n) {
    allocations++;
    return __libc_realloc(p, n);
}

#define WARM_UP 2000
#define ROUNDS 10000

enum mode { BLOCKING, NONBLOCKING, SENDRECV };

static void round_trip(enum mode m, int rank, char *out, char *in, int len) {
    int peer = 1 - rank;
    MPI_Request r[2];
    switch (m) {
    case BLOCKING:
        if (rank == 0) {
            OK(MPI_Send(out, len, MPI_CHAR, peer, 1, MPI_COMM_WORLD));
            OK(MPI_Recv(in, len, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            OK(MPI_Recv(in, len, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            OK(MPI_Send(out, len, MPI_CHAR, peer, 1, MPI_COMM_WORLD));
        }
        break;
    case NONBLOCKING:
        OK(MPI_Irecv(in, len, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &r[0]));
        OK(MPI_Isend(out, len, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &r[1]));
        OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        break;
    case SENDRECV:
        OK(MPI_Sendrecv(out, len, MPI_CHAR, peer, 3, in, len, MPI_CHAR, peer, 3, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        break;
    }
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    CHECK(allocations > 0); /* the counting works: MPI_Init allocated */
    static char out[1024], in[1024];
    const char *names[] = {"MPI_Send/MPI_Recv", "MPI_Isend/MPI_Irecv/MPI_Waitall", "MPI_Sendrecv"};
    for (int m = BLOCKING; m <= SENDRECV && size > 1; m++) {
        for (int len = 8; len <= 1024; len *= 128) {
            OK(MPI_Barrier(MPI_COMM_WORLD));
            if (rank > 1) continue;
            for (int i = 0; i < len; i++) out[i] = (char)(rank + i);
            for (int i = 0; i < WARM_UP; i++) round_trip((enum mode)m, rank, out, in, len);
            long before = allocations;
            for (int i = 0; i < ROUNDS; i++) round_trip((enum mode)m, rank, out, in, len);
            long n = allocations - before;
            for (int i = 0; i < len; i++) CHECK(in[i] == (char)(1 - rank + i));
            printf("no_alloc: rank %d: %ld allocations in %d %s round trips of %d B\n", rank, n,
                   ROUNDS, names[m], len);
            CHECK(n <= ROUNDS / 1000);
        }
    }
    test_finish(rank, "no_alloc");
    return 0;
}
