/* msgrate.c: randomized message rate. Every rank sends MSGS messages of random sizes (0 B to
 * 1 MiB, most of them small: the size's bit length is uniform), to random peers with random
 * tags; receivers take them with MPI_ANY_SOURCE and MPI_ANY_TAG, at most WINDOW outstanding
 * each way. Every message carries its source and sequence number and a pattern the receiver
 * checks. Rank 0 prints "RESULT msgrate ranks=N msgs=M seconds=S rate=R" (messages per second
 * over the whole job), or fails on the first wrong byte. Plain MPI: built with either mpicc.
 *
 * Usage: msgrate [MSGS per rank, default 20000] [seed, default 1] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BYTES (1 << 20)
#define WINDOW 16
#define HEADER 8

static uint64_t rng_state;

static uint64_t next_random(void) {
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static int random_size(void) {
    int bits = (int)(next_random() % 21); /* 0 .. 20 */
    if (bits == 0) return (int)(next_random() % 2) * HEADER;
    int size = (1 << (bits - 1)) + (int)(next_random() % (uint64_t)(1 << (bits - 1)));
    return size < HEADER ? HEADER : size;
}

static unsigned char pattern(int source, int seq, int i) {
    return (unsigned char)(source * 31 + seq * 7 + i);
}

static void fill(unsigned char *buf, int len, int source, int seq) {
    if (len < HEADER) return;
    memcpy(buf, &source, 4);
    memcpy(buf + 4, &seq, 4);
    for (int i = HEADER; i < len; i++) buf[i] = pattern(source, seq, i);
}

static void check(const unsigned char *buf, int len, const MPI_Status *st) {
    if (len < HEADER) return;
    int source, seq;
    memcpy(&source, buf, 4);
    memcpy(&seq, buf + 4, 4);
    if (source != st->MPI_SOURCE) {
        fprintf(stderr, "msgrate: header names source %d, status %d\n", source, st->MPI_SOURCE);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = HEADER; i < len; i++) {
        if (buf[i] != pattern(source, seq, i)) {
            fprintf(stderr, "msgrate: byte %d of message %d from %d is wrong\n", i, seq, source);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int msgs = argc > 1 ? atoi(argv[1]) : 20000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "msgrate: needs at least 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    /* The plan: each message's destination and size, from a per-rank stream. */
    int *dest = malloc(sizeof(int) * (size_t)msgs), *len = malloc(sizeof(int) * (size_t)msgs);
    int *tag = malloc(sizeof(int) * (size_t)msgs);
    int *expect = calloc((size_t)size, sizeof(int)), *incoming = calloc((size_t)size, sizeof(int));
    rng_state = seed * 0x9E3779B97F4A7C15ULL + (uint64_t)rank + 1;
    for (int k = 0; k < msgs; k++) {
        dest[k] = (rank + 1 + (int)(next_random() % (uint64_t)(size - 1))) % size;
        len[k] = random_size();
        tag[k] = (int)(next_random() % 100);
        expect[dest[k]]++;
    }
    MPI_Alltoall(expect, 1, MPI_INT, incoming, 1, MPI_INT, MPI_COMM_WORLD);
    int to_receive = 0;
    for (int r = 0; r < size; r++) to_receive += incoming[r];

    unsigned char *sbuf[WINDOW], *rbuf[WINDOW];
    for (int w = 0; w < WINDOW; w++) {
        sbuf[w] = malloc(MAX_BYTES);
        rbuf[w] = malloc(MAX_BYTES);
    }
    MPI_Request req[2 * WINDOW];
    int slot_msg[WINDOW];
    for (int w = 0; w < 2 * WINDOW; w++) req[w] = MPI_REQUEST_NULL;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int sent = 0, posted = 0, received = 0;
    /* Receives in slots 0..WINDOW-1, sends in WINDOW..2*WINDOW-1. */
    for (int w = 0; w < WINDOW && posted < to_receive; w++, posted++)
        MPI_Irecv(rbuf[w], MAX_BYTES, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req[w]);
    for (int w = 0; w < WINDOW && sent < msgs; w++, sent++) {
        fill(sbuf[w], len[sent], rank, sent);
        slot_msg[w] = sent;
        MPI_Isend(sbuf[w], len[sent], MPI_BYTE, dest[sent], tag[sent], MPI_COMM_WORLD,
                  &req[WINDOW + w]);
    }
    int done_sends = 0;
    while (received < to_receive || done_sends < msgs) {
        int idx;
        MPI_Status st;
        MPI_Waitany(2 * WINDOW, req, &idx, &st);
        if (idx == MPI_UNDEFINED) break;
        if (idx < WINDOW) {
            int n;
            MPI_Get_count(&st, MPI_BYTE, &n);
            check(rbuf[idx], n, &st);
            received++;
            if (posted < to_receive) {
                MPI_Irecv(rbuf[idx], MAX_BYTES, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                          MPI_COMM_WORLD, &req[idx]);
                posted++;
            }
        } else {
            int w = idx - WINDOW;
            (void)slot_msg[w];
            done_sends++;
            if (sent < msgs) {
                fill(sbuf[w], len[sent], rank, sent);
                slot_msg[w] = sent;
                MPI_Isend(sbuf[w], len[sent], MPI_BYTE, dest[sent], tag[sent], MPI_COMM_WORLD,
                          &req[idx]);
                sent++;
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double seconds = MPI_Wtime() - t0;
    int total = 0;
    MPI_Reduce(&received, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total != msgs * size) {
            fprintf(stderr, "msgrate: %d messages received, %d sent\n", total, msgs * size);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("RESULT msgrate ranks=%d msgs=%d seconds=%.3f rate=%.0f\n", size, total, seconds,
               total / seconds);
    }
    for (int w = 0; w < WINDOW; w++) {
        free(sbuf[w]);
        free(rbuf[w]);
    }
    free(dest);
    free(len);
    free(tag);
    free(expect);
    free(incoming);
    MPI_Finalize();
    return 0;
}
