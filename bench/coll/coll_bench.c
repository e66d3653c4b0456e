/*
 * coll_bench.c: times MPI collectives over a range of message sizes and checks their results.
 *
 * Built twice by bench/coll/run.py, once with mpicd's bin/mpicc and once with Open MPI's mpicc,
 * from this one source, so both implementations run exactly the same workload.
 *
 * Operations (--ops, comma-separated; default: every one this MPI library provides):
 *   allreduce             MPI_Allreduce, MPI_INT, MPI_SUM; bytes = the whole vector
 *   bcast                 MPI_Bcast from rank 0, MPI_INT; bytes = the whole buffer
 *   allgather             MPI_Allgather, MPI_INT; bytes = the block each rank contributes
 *                         (every rank receives ranks x bytes)
 *   alltoall              MPI_Alltoall, MPI_INT; bytes = the block sent to each rank
 *                         (every rank sends and receives ranks x bytes)
 *   reduce_scatter_block  MPI_Reduce_scatter_block, MPI_INT, MPI_SUM; bytes = the block each rank
 *                         receives (every rank contributes ranks x bytes)
 *
 * For each operation and size (--min to --max bytes, multiplied by --factor each step):
 *   1. the buffers get a pattern that depends on rank, position and size, the output buffers a
 *      poison value; one call; every rank checks what it received (a check call);
 *   2. two warm-up calls, each after an MPI_Barrier; their wall time gives the cost of one
 *      iteration, the largest over the ranks is agreed on;
 *   3. iters = clamp(2^20 / bytes, 10, --max-iters), lowered (never below --min-iters) so that
 *      the timed loop takes about --budget seconds; more warm-up calls up to iters/10, at least
 *      WARMUP_MIN (within a quarter of the budget);
 *   4. timed loop: iters times { MPI_Barrier; t0 = MPI_Wtime(); the call; sum += MPI_Wtime() - t0 }:
 *      only the call is timed, every call starts from a barrier (no pipelining of calls);
 *   5. the output of the last timed call is checked again;
 *   6. each rank's mean time per call is reduced with MPI_Reduce(MPI_MAX) to rank 0, which prints
 *        op,ranks,bytes,usec
 *      on stdout (after a header line "op,ranks,bytes,usec").
 *
 * A wrong result is reported on stderr as
 *   coll_bench: FAILED op=OP ranks=N bytes=B rank=R index=I got=G expected=E (check|timed)
 * the remaining sizes of that operation are skipped, the other operations still run, and the
 * program exits with status 1. The ranks agree on failures and on iteration counts through
 * MPI_Send/MPI_Recv with rank 0, not through a collective, so that a broken collective cannot
 * hide its own failure. Progress ("coll_bench: op OP") goes to stderr, so that a driver can tell
 * which operation was running when a run hung.
 *
 * MPI_Reduce_scatter_block is referenced weakly: a library without it (mpicd before it gets one)
 * still links, `--list` leaves it out, and asking for it with --ops fails with status 2.
 *
 * Usage: coll_bench [--ops LIST] [--min BYTES] [--max BYTES] [--factor F] [--budget SECONDS]
 *                   [--min-iters N] [--max-iters N] [--cycle] [--list]
 *   --cycle  times the barrier with the call (step 4): where ranks share cores, which rank leaves
 *            the barrier first decides how long the others wait inside the call, so a call's time
 *            alone can move between the two; the cycle does not.
 *   --list   prints the operations this library provides, one a line, without MPI_Init.
 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Weak: resolves to NULL when the library lacks it (see above). */
#pragma weak MPI_Reduce_scatter_block
int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

#define TAG_AGREE 4242

enum op_id { OP_ALLREDUCE, OP_BCAST, OP_ALLGATHER, OP_ALLTOALL, OP_REDUCE_SCATTER_BLOCK, N_OPS };

static const char *const op_names[N_OPS] = {
    "allreduce", "bcast", "allgather", "alltoall", "reduce_scatter_block",
};

static int op_available(int op)
{
    if (op == OP_REDUCE_SCATTER_BLOCK)
        return MPI_Reduce_scatter_block != NULL;
    return 1;
}

static int rank, nranks;
static int *sendbuf, *recvbuf;

/* ---- patterns ------------------------------------------------------------------------------- */

/* Bits of a well-mixed 31-bit value from three small integers (data movement checks). */
static int mix(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t x = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u) * 0x85ebca6bu ^ (c + 0x165667b1u) * 0xc2b2ae35u;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 13;
    return (int)(x & 0x7fffffffu);
}

/* Small operand of the reductions: sums over a few thousand ranks cannot overflow an int. */
static int term(int r, size_t i, size_t count)
{
    return (int)((i * 7 + (size_t)r * 13 + count) % 1021) + r;
}

/* What no correct result can hold at a position whose expected value is v. */
static int poison(int v) { return v ^ 0x55aa55aa; }

/* ---- one operation -------------------------------------------------------------------------- */

/* Fills the inputs of OP for COUNT ints per block and poisons its outputs. */
static void prepare(int op, size_t count)
{
    size_t p = (size_t)nranks, i, d;
    switch (op) {
    case OP_ALLREDUCE:
        for (i = 0; i < count; i++) {
            sendbuf[i] = term(rank, i, count);
            recvbuf[i] = -1;
        }
        break;
    case OP_BCAST:
        for (i = 0; i < count; i++) {
            int v = mix(1, (uint32_t)i, (uint32_t)count);
            sendbuf[i] = rank == 0 ? v : poison(v);
        }
        break;
    case OP_ALLGATHER:
        for (i = 0; i < count; i++)
            sendbuf[i] = mix((uint32_t)rank, (uint32_t)i, (uint32_t)count);
        for (i = 0; i < p * count; i++)
            recvbuf[i] = poison(mix((uint32_t)(i / count), (uint32_t)(i % count), (uint32_t)count));
        break;
    case OP_ALLTOALL:
        for (d = 0; d < p; d++)
            for (i = 0; i < count; i++) {
                sendbuf[d * count + i] =
                    mix((uint32_t)(rank * 65536 + (int)d), (uint32_t)i, (uint32_t)count);
                recvbuf[d * count + i] =
                    poison(mix((uint32_t)((int)d * 65536 + rank), (uint32_t)i, (uint32_t)count));
            }
        break;
    case OP_REDUCE_SCATTER_BLOCK:
        for (i = 0; i < p * count; i++)
            sendbuf[i] = term(rank, i, count);
        for (i = 0; i < count; i++)
            recvbuf[i] = -1;
        break;
    }
}

static int call(int op, int count)
{
    switch (op) {
    case OP_ALLREDUCE:
        return MPI_Allreduce(sendbuf, recvbuf, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    case OP_BCAST:
        return MPI_Bcast(sendbuf, count, MPI_INT, 0, MPI_COMM_WORLD);
    case OP_ALLGATHER:
        return MPI_Allgather(sendbuf, count, MPI_INT, recvbuf, count, MPI_INT, MPI_COMM_WORLD);
    case OP_ALLTOALL:
        return MPI_Alltoall(sendbuf, count, MPI_INT, recvbuf, count, MPI_INT, MPI_COMM_WORLD);
    case OP_REDUCE_SCATTER_BLOCK:
        return MPI_Reduce_scatter_block(sendbuf, recvbuf, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    return MPI_ERR_OTHER;
}

/* Checks this rank's output of OP; returns 0 or reports the first wrong position and returns 1. */
static int check(int op, size_t count, size_t bytes, const char *when)
{
    size_t p = (size_t)nranks, i, n = 0;
    const int *out = recvbuf;
    int got = 0, want = 0, bad = 0;
    switch (op) {
    case OP_ALLREDUCE:
    case OP_REDUCE_SCATTER_BLOCK: {
        /* allreduce: element i is the sum of term(s, i); reduce_scatter_block: this rank holds
         * block `rank` of that sum over ranks x count elements. */
        size_t base = op == OP_ALLREDUCE ? 0 : (size_t)rank * count;
        for (i = 0; i < count && !bad; i++) {
            int s = 0, r;
            for (r = 0; r < nranks; r++)
                s += term(r, base + i, count);
            if (out[i] != s) {
                bad = 1, n = i, got = out[i], want = s;
            }
        }
        break;
    }
    case OP_BCAST:
        out = sendbuf;
        for (i = 0; i < count && !bad; i++) {
            int v = mix(1, (uint32_t)i, (uint32_t)count);
            if (out[i] != v)
                bad = 1, n = i, got = out[i], want = v;
        }
        break;
    case OP_ALLGATHER:
        for (i = 0; i < p * count && !bad; i++) {
            int v = mix((uint32_t)(i / count), (uint32_t)(i % count), (uint32_t)count);
            if (out[i] != v)
                bad = 1, n = i, got = out[i], want = v;
        }
        break;
    case OP_ALLTOALL:
        for (i = 0; i < p * count && !bad; i++) {
            int v = mix((uint32_t)((int)(i / count) * 65536 + rank), (uint32_t)(i % count),
                        (uint32_t)count);
            if (out[i] != v)
                bad = 1, n = i, got = out[i], want = v;
        }
        break;
    }
    if (bad)
        fprintf(stderr,
                "coll_bench: FAILED op=%s ranks=%d bytes=%zu rank=%d index=%zu got=%d expected=%d (%s)\n",
                op_names[op], nranks, bytes, rank, n, got, want, when);
    return bad;
}

/* ---- agreement without collectives ---------------------------------------------------------- */

/* The largest of every rank's X, known to all, through point-to-point messages with rank 0. */
static double agree_max(double x)
{
    int r;
    if (rank == 0) {
        for (r = 1; r < nranks; r++) {
            double y;
            MPI_Recv(&y, 1, MPI_DOUBLE, r, TAG_AGREE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (y > x)
                x = y;
        }
        for (r = 1; r < nranks; r++)
            MPI_Send(&x, 1, MPI_DOUBLE, r, TAG_AGREE, MPI_COMM_WORLD);
    } else {
        MPI_Send(&x, 1, MPI_DOUBLE, 0, TAG_AGREE, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_DOUBLE, 0, TAG_AGREE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return x;
}

/* ---- driver --------------------------------------------------------------------------------- */

struct opts {
    int ops[N_OPS], nops;
    size_t min, max;
    double factor, budget;
    long min_iters, max_iters;
    int list;
    int cycle;
};

static void usage(FILE *f)
{
    fprintf(f, "usage: coll_bench [--ops LIST] [--min BYTES] [--max BYTES] [--factor F]\n"
               "                  [--budget SECONDS] [--min-iters N] [--max-iters N] [--cycle]\n"
               "                  [--list]\n"
               "ops: allreduce,bcast,allgather,alltoall,reduce_scatter_block\n");
}

static int parse_ops(const char *s, struct opts *o)
{
    char *copy = strdup(s), *save = NULL, *tok;
    o->nops = 0;
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k, found = -1;
        for (k = 0; k < N_OPS; k++)
            if (strcmp(tok, op_names[k]) == 0)
                found = k;
        if (found < 0) {
            fprintf(stderr, "coll_bench: unknown op '%s'\n", tok);
            free(copy);
            return -1;
        }
        if (o->nops < N_OPS)
            o->ops[o->nops++] = found;
    }
    free(copy);
    return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    int i, k;
    o->nops = 0;
    for (k = 0; k < N_OPS; k++)
        if (op_available(k))
            o->ops[o->nops++] = k;
    o->min = 8;
    o->max = 4u << 20;
    o->factor = 2;
    o->budget = 0.1;
    o->min_iters = 5;
    o->max_iters = 500;
    o->list = 0;
    o->cycle = 0;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--list") == 0) {
            o->list = 1;
            continue;
        }
        if (strcmp(a, "--cycle") == 0) {
            o->cycle = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (!v) {
            usage(stderr);
            return -1;
        }
        i++;
        if (strcmp(a, "--ops") == 0) {
            if (parse_ops(v, o))
                return -1;
        } else if (strcmp(a, "--min") == 0) {
            o->min = strtoull(v, NULL, 0);
        } else if (strcmp(a, "--max") == 0) {
            o->max = strtoull(v, NULL, 0);
        } else if (strcmp(a, "--factor") == 0) {
            o->factor = atof(v);
        } else if (strcmp(a, "--budget") == 0) {
            o->budget = atof(v);
        } else if (strcmp(a, "--min-iters") == 0) {
            o->min_iters = atol(v);
        } else if (strcmp(a, "--max-iters") == 0) {
            o->max_iters = atol(v);
        } else {
            usage(stderr);
            return -1;
        }
    }
    if (o->min < 4 || o->min % 4 || o->max < o->min || o->factor <= 1 || o->budget <= 0 ||
        o->min_iters < 1 || o->max_iters < o->min_iters) {
        fprintf(stderr, "coll_bench: bad sizes or counts (sizes are multiples of 4 bytes)\n");
        return -1;
    }
    return 0;
}

/* Fewest warm-up calls per size (within a quarter of the budget). A transport's buffers are
 * touched for the first time by the first messages of a new size: UCX's shared-memory FIFO
 * holds 64 receive buffers per peer, and the first 64 messages over 8 KiB each fault in the
 * pages of a buffer not used that far before (about 10 us more per message on this VM, 1 ms
 * once per size class and peer). Timing starts after them, as for Open MPI. */
#define WARMUP_MIN 100

/* Runs OP at BYTES; prints its line on rank 0. Returns 0, or 1 after a wrong result. */
static int bench_one(int op, size_t bytes, const struct opts *o)
{
    size_t count = bytes / sizeof(int);
    long iters, warmup, k;
    double t0, est, sum = 0, mean, worst;
    int bad;

    /* 1. the check call */
    prepare(op, count);
    if (call(op, (int)count) != MPI_SUCCESS) {
        fprintf(stderr, "coll_bench: FAILED op=%s ranks=%d bytes=%zu rank=%d: error returned\n",
                op_names[op], nranks, bytes, rank);
        bad = 1;
    } else {
        bad = check(op, count, bytes, "check");
    }
    if (agree_max(bad) > 0)
        return 1;

    /* 2. two warm-up calls give the cost of one iteration (the slowest rank's) */
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (k = 0; k < 2; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        call(op, (int)count);
    }
    est = agree_max((MPI_Wtime() - t0) / 2.0);

    /* 3. iterations scaled by size, within the budget; the rest of the warm-up (a tenth of
     * them, at least WARMUP_MIN, within a quarter of the budget) */
    iters = (long)((1u << 20) / bytes);
    if (iters < 10)
        iters = 10;
    if (iters > o->max_iters)
        iters = o->max_iters;
    if (est > 0 && (double)iters * est > o->budget)
        iters = (long)(o->budget / est);
    if (iters < o->min_iters)
        iters = o->min_iters;
    warmup = iters / 10 < WARMUP_MIN ? WARMUP_MIN : iters / 10;
    if (est > 0 && (double)warmup * est > o->budget / 4)
        warmup = (long)(o->budget / 4 / est);
    for (k = 2; k < warmup; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        call(op, (int)count);
    }

    /* 4. the timed loop (--cycle: the barrier timed with the call) */
    for (k = 0; k < iters; k++) {
        t0 = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        if (!o->cycle)
            t0 = MPI_Wtime();
        call(op, (int)count);
        sum += MPI_Wtime() - t0;
    }

    /* 5. the last call's output */
    bad = check(op, count, bytes, "timed");
    if (agree_max(bad) > 0)
        return 1;

    /* 6. the slowest rank's mean */
    mean = sum / (double)iters;
    worst = 0;
    MPI_Reduce(&mean, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%s,%d,%zu,%.3f\n", op_names[op], nranks, bytes, worst * 1e6);
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    size_t bytes, prev;
    int i, failed = 0;

    if (parse_args(argc, argv, &o))
        return 2;
    if (o.list) {
        for (i = 0; i < N_OPS; i++)
            if (op_available(i))
                printf("%s\n", op_names[i]);
        return 0;
    }
    for (i = 0; i < o.nops; i++)
        if (!op_available(o.ops[i])) {
            fprintf(stderr, "coll_bench: %s is not provided by this MPI library\n",
                    op_names[o.ops[i]]);
            return 2;
        }

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    /* The largest buffers: alltoall's and reduce_scatter_block's ranks x max bytes. */
    sendbuf = malloc((size_t)nranks * o.max);
    recvbuf = malloc((size_t)nranks * o.max);
    if (!sendbuf || !recvbuf) {
        fprintf(stderr, "coll_bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    if (rank == 0) {
        printf("op,ranks,bytes,usec\n");
        fflush(stdout);
    }
    for (i = 0; i < o.nops; i++) {
        int op = o.ops[i];
        if (rank == 0)
            fprintf(stderr, "coll_bench: op %s\n", op_names[op]);
        for (bytes = o.min, prev = 0; bytes <= o.max && bytes > prev;) {
            if (bench_one(op, bytes, &o)) {
                failed = 1;
                if (rank == 0)
                    fprintf(stderr, "coll_bench: %s: larger sizes skipped after the failure\n",
                            op_names[op]);
                break;
            }
            prev = bytes;
            /* next size: times the factor, rounded to a multiple of 4 bytes */
            bytes = (size_t)((double)bytes * o.factor + 0.5) / 4 * 4;
        }
    }

    free(sendbuf);
    free(recvbuf);
    MPI_Finalize();
    return failed;
}
