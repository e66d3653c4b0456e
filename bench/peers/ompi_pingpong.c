/*
 * ompi_pingpong: the Open MPI peer of mpicd's p2p benchmark (bench/pingpong-compare.sh).
 *
 * A plain MPI program, built with Open MPI's mpicc, measuring between ranks 0 and 1:
 *   - latency:   OSU-style ping-pong; one-way latency = half the mean round trip, in microseconds.
 *   - bandwidth: OSU-style window: rank 0 posts a window of 64 MPI_Isend, waits for all, and rank 1
 *                answers each window with a 4-byte ack; MB/s with MB = 1e6 bytes.
 *
 * Options:
 *   -l SIZE   latency message size in bytes      (default 8)
 *   -L ITERS  timed latency iterations            (default 10000; warm-up 1000)
 *   -b SIZE   bandwidth message size in bytes    (default 4194304)
 *   -B ITERS  timed bandwidth iterations          (default 20; warm-up 2)
 *   -w ITERS  latency warm-up iterations          (default 1000)
 *   -W ITERS  bandwidth warm-up iterations        (default 2)
 *   -n NAME   implementation name in the output   (default "openmpi")
 *
 * Rank 0 prints exactly:
 *   RESULT <impl> latency <bytes> <usec>
 *   RESULT <impl> bandwidth <bytes> <MBps>
 * Ranks beyond 1 only take part in the barriers.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WINDOW 64
#define TAG_LAT 1
#define TAG_BW 2
#define TAG_ACK 3

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [-l SIZE] [-L ITERS] [-w ITERS] [-b SIZE] [-B ITERS] [-W ITERS] [-n NAME]\n",
            prog);
}

static long parse_long(const char *s, const char *what)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < 0) {
        fprintf(stderr, "ompi_pingpong: bad %s '%s'\n", what, s);
        exit(2);
    }
    return v;
}

/* The start of the timed iterations, after the warm-up: every rank leaves a barrier, then
 * reads the clock. */
static double start_timing(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime();
}

/* Ping-pong between ranks 0 and 1: returns the one-way latency in microseconds on rank 0. */
static double latency(int rank, char *buf, long size, long warmup, long iters)
{
    double t0 = 0.0;
    for (long i = 0; i < warmup + iters; i++) {
        if (i == warmup) t0 = start_timing();
        if (rank == 0) {
            MPI_Send(buf, (int)size, MPI_CHAR, 1, TAG_LAT, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)size, MPI_CHAR, 1, TAG_LAT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, (int)size, MPI_CHAR, 0, TAG_LAT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)size, MPI_CHAR, 0, TAG_LAT, MPI_COMM_WORLD);
        }
    }
    double t1 = MPI_Wtime();
    if (iters == 0) {
        return 0.0;
    }
    return (t1 - t0) * 1e6 / (2.0 * (double)iters);
}

/* Windowed streaming from rank 0 to rank 1: returns MB/s (1e6 bytes) on rank 0. */
static double bandwidth(int rank, char *buf, long size, long warmup, long iters)
{
    MPI_Request reqs[WINDOW];
    char ack[4] = {0};
    double t0 = 0.0;
    for (long i = 0; i < warmup + iters; i++) {
        if (i == warmup) t0 = start_timing();
        if (rank == 0) {
            for (int w = 0; w < WINDOW; w++) {
                MPI_Isend(buf, (int)size, MPI_CHAR, 1, TAG_BW, MPI_COMM_WORLD, &reqs[w]);
            }
            MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(ack, 4, MPI_CHAR, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            /* All receives of a window land in the same buffer, as in OSU's osu_bw. */
            for (int w = 0; w < WINDOW; w++) {
                MPI_Irecv(buf, (int)size, MPI_CHAR, 0, TAG_BW, MPI_COMM_WORLD, &reqs[w]);
            }
            MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
            MPI_Send(ack, 4, MPI_CHAR, 0, TAG_ACK, MPI_COMM_WORLD);
        }
    }
    double t1 = MPI_Wtime();
    if (iters == 0 || t1 <= t0) {
        return 0.0;
    }
    return (double)size * WINDOW * (double)iters / (t1 - t0) / 1e6;
}

int main(int argc, char **argv)
{
    long lat_size = 8, lat_iters = 10000, lat_warmup = 1000;
    long bw_size = 4194304, bw_iters = 20, bw_warmup = 2;
    const char *name = "openmpi";
    int opt;

    while ((opt = getopt(argc, argv, "l:L:w:b:B:W:n:h")) != -1) {
        switch (opt) {
        case 'l': lat_size = parse_long(optarg, "latency size"); break;
        case 'L': lat_iters = parse_long(optarg, "latency iterations"); break;
        case 'w': lat_warmup = parse_long(optarg, "latency warm-up"); break;
        case 'b': bw_size = parse_long(optarg, "bandwidth size"); break;
        case 'B': bw_iters = parse_long(optarg, "bandwidth iterations"); break;
        case 'W': bw_warmup = parse_long(optarg, "bandwidth warm-up"); break;
        case 'n': name = optarg; break;
        case 'h': usage(argv[0]); return 0;
        default: usage(argv[0]); return 2;
        }
    }
    if (lat_size > 0x7fffffffL || bw_size > 0x7fffffffL) {
        fprintf(stderr, "ompi_pingpong: sizes must fit in an int\n");
        return 2;
    }

    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0) {
            fprintf(stderr, "ompi_pingpong: needs at least 2 ranks\n");
        }
        MPI_Finalize();
        return 2;
    }

    long bufsize = lat_size > bw_size ? lat_size : bw_size;
    char *buf = malloc(bufsize > 0 ? (size_t)bufsize : 1);
    if (buf == NULL) {
        fprintf(stderr, "ompi_pingpong: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 'a', bufsize > 0 ? (size_t)bufsize : 1);

    double lat = latency(rank, buf, lat_size, lat_warmup, lat_iters);
    double bw = bandwidth(rank, buf, bw_size, bw_warmup, bw_iters);

    if (rank == 0) {
        printf("RESULT %s latency %ld %.3f\n", name, lat_size, lat);
        printf("RESULT %s bandwidth %ld %.1f\n", name, bw_size, bw);
        fflush(stdout);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
