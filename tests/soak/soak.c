/* soak.c: load and resources over a long run (make test-soak). Every phase checks its data,
 * and the resident set size of every rank, read after a warm-up, must stay flat (within
 * SLACK_MIB) through the rest of the phase; rank 0 prints each rank's RSS as the phase goes.
 *
 *   messages   MSGS messages per rank of random sizes (0 B - 1 MiB, the size's bit length
 *              uniform) and modes (MPI_Send, MPI_Isend, MPI_Ssend, MPI_Sendrecv with a
 *              neighbour), to random peers, received with MPI_ANY_SOURCE (the round's tag)
 *   comms      COMMS communicators made and freed (MPI_Comm_dup, MPI_Comm_split, MPI_Comm_idup),
 *              each used by one MPI_Allreduce
 *   requests   REQS receives outstanding at once on rank 0, then REQS sends to it from the others
 *   flood      FLOOD eager messages of 1 KiB to rank 0 before it posts any receive (they wait
 *              in the unexpected queue), then received in order: memory grows by the flood and
 *              is given back, or the run fails with an error, never an OOM kill
 *
 * Usage: soak [SCALE] (1.0: 10^6 messages in all, 10^4 communicators, 10^5 requests and
 * flood messages; about 10 minutes on 2 cores at 2 ranks). Prints "soak: all checks passed". */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BYTES (1 << 20)
#define SLACK_MIB 64.0

static int rank, size;

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double rss_mib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = atof(line + 6);
    if (f) fclose(f);
    return kib / 1024.0;
}

static void fail(const char *what) {
    fprintf(stderr, "soak: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Prints every rank's RSS (rank 0) and fails if one grew past its baseline by SLACK_MIB. */
static void report(const char *phase, const char *when, double baseline) {
    double mine = rss_mib(), all[256];
    MPI_Gather(&mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("soak: %-9s %-12s RSS MiB:", phase, when);
        for (int r = 0; r < size && r < 256; r++) printf(" %.1f", all[r]);
        printf("\n");
        fflush(stdout);
    }
    if (baseline > 0 && mine > baseline + SLACK_MIB) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s: RSS %.1f MiB, %.1f after the warm-up", phase, mine, baseline);
        fail(msg);
    }
}

static int random_size(void) {
    int bits = (int)(next_random() % 21);
    if (bits == 0) return 0;
    return (1 << (bits - 1)) + (int)(next_random() % (uint64_t)(1 << (bits - 1)));
}

static void fill(unsigned char *b, int n, int seed) {
    for (int i = 0; i < n; i++) b[i] = (unsigned char)(seed + i * 7);
}

static void check(const unsigned char *b, int n, int seed) {
    for (int i = 0; i < n; i++)
        if (b[i] != (unsigned char)(seed + i * 7)) fail("a message arrived wrong");
}

/* One round: every rank sends one message to (rank + shift) % size and receives one from
 * anyone; the seed is carried in the tag so the receiver can check the data. */
static void message_round(unsigned char *sbuf, unsigned char *rbuf, int k) {
    int shift = 1 + (int)(next_random() % (uint64_t)(size - 1)); /* same on every rank */
    int n = random_size(), mode = (int)(next_random() % 4), tag = k % 30000;
    int to = (rank + shift) % size, from = (rank - shift + size) % size;
    MPI_Request r;
    MPI_Status st;
    fill(sbuf, n, tag + rank);
    if (mode == 3) {
        MPI_Sendrecv(sbuf, n, MPI_BYTE, to, tag, rbuf, MAX_BYTES, MPI_BYTE, from, tag,
                     MPI_COMM_WORLD, &st);
    } else {
        MPI_Irecv(rbuf, MAX_BYTES, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &r);
        if (mode == 0) MPI_Send(sbuf, n, MPI_BYTE, to, tag, MPI_COMM_WORLD);
        if (mode == 2) MPI_Ssend(sbuf, n, MPI_BYTE, to, tag, MPI_COMM_WORLD);
        if (mode == 1) {
            MPI_Request s;
            MPI_Isend(sbuf, n, MPI_BYTE, to, tag, MPI_COMM_WORLD, &s);
            MPI_Wait(&s, MPI_STATUS_IGNORE);
        }
        MPI_Wait(&r, &st);
    }
    int got;
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (st.MPI_SOURCE != from || st.MPI_TAG != tag || got != n) fail("wrong status");
    check(rbuf, got, tag + from);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    if (size < 2) fail("needs at least 2 ranks");
    long msgs = (long)(1e6 * scale / size), comms = (long)(1e4 * scale);
    long reqs = (long)(1e5 * scale), flood = (long)(1e5 * scale);
    unsigned char *sbuf = malloc(MAX_BYTES), *rbuf = malloc(MAX_BYTES);
    double base;

    /* messages */
    long warm = msgs / 10;
    for (long k = 0; k < warm; k++) message_round(sbuf, rbuf, (int)k);
    base = rss_mib();
    report("messages", "warmed up", 0);
    for (long k = warm; k < msgs; k++) {
        message_round(sbuf, rbuf, (int)k);
        if ((k - warm + 1) % ((msgs - warm) / 5 + 1) == 0) {
            char when[32];
            snprintf(when, sizeof when, "%ld%%", (k + 1) * 100 / msgs);
            report("messages", when, base);
        }
    }
    report("messages", "done", base);

    /* comms */
    for (long k = 0; k < comms; k++) {
        MPI_Comm c;
        MPI_Request r;
        switch (k % 3) {
        case 0: MPI_Comm_dup(MPI_COMM_WORLD, &c); break;
        case 1: MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &c); break;
        default:
            MPI_Comm_idup(MPI_COMM_WORLD, &c, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        int one = 1, sum = 0, n;
        MPI_Comm_size(c, &n);
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
        if (sum != n) fail("a new communicator's allreduce is wrong");
        MPI_Comm_free(&c);
        if (k + 1 == comms / 10) base = rss_mib(), report("comms", "warmed up", 0);
        if (k + 1 > comms / 10 && (k + 1) % (comms / 5 + 1) == 0) report("comms", "", base);
    }
    report("comms", "done", base);

    /* requests */
    for (int round = 0; round < 2; round++) {
        long per = reqs / (size - 1), total = per * (size - 1);
        if (rank == 0) {
            MPI_Request *r = malloc(sizeof(MPI_Request) * (size_t)total);
            int *v = malloc(sizeof(int) * (size_t)total);
            for (long k = 0; k < total; k++)
                MPI_Irecv(&v[k], 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &r[k]);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Waitall((int)total, r, MPI_STATUSES_IGNORE);
            long sum = 0;
            for (long k = 0; k < total; k++) sum += v[k];
            if (sum != total) fail("the outstanding receives got wrong values");
            free(r);
            free(v);
        } else {
            int one = 1;
            MPI_Barrier(MPI_COMM_WORLD);
            for (long k = 0; k < per; k++) MPI_Send(&one, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
        }
        if (round == 0) base = rss_mib(), report("requests", "first round", 0);
    }
    report("requests", "second round", base);

    /* flood */
    {
        long per = flood / (size - 1);
        static unsigned char msg[1024];
        if (rank != 0) {
            for (long k = 0; k < per; k++) {
                fill(msg, sizeof msg, (int)(k % 251));
                MPI_Send(msg, sizeof msg, MPI_BYTE, 0, 9, MPI_COMM_WORLD);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD); /* every flood message sent before rank 0 receives */
        report("flood", "all waiting", 0);
        if (rank == 0) {
            long *next = calloc((size_t)size, sizeof(long));
            for (long k = 0; k < per * (size - 1); k++) {
                MPI_Status st;
                MPI_Recv(msg, sizeof msg, MPI_BYTE, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st);
                check(msg, sizeof msg, (int)(next[st.MPI_SOURCE]++ % 251));
            }
            free(next);
        }
        report("flood", "received", 0);
    }

    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    if (rank == 0) printf("soak: all checks passed\n");
    return 0;
}
