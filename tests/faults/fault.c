/* fault.c: one rank dies (_exit, like a crash) and the survivors report how each of their calls
 * ended and after how long. Plain MPI, so the same source builds against mpicd (bin/mpicc) and
 * Open MPI (mpicc.openmpi) for comparison; tests/run-fault-tests.sh runs it and checks the lines.
 *
 * Usage: fault SCENARIO (at least 3 ranks; the launcher must keep the job alive when a rank
 * exits non-zero: Open MPI's `--mca orte_abort_on_non_zero_status 0`)
 *   bigrecv  rank 1 sends 512 MiB to rank 0 and dies about 20 ms into the transfer (a receive
 *            that succeeds must hold every byte: class COMPLETE; success without them is
 *            reported as MPI_SUCCESS, a failure of the test)
 *   recv     rank 2 dies; rank 0 receives from it
 *   send     rank 2 dies; rank 0 sends 4 MiB, 8 B, and a synchronous 8 B to it
 *   anysrc   rank 2 dies; rank 0 waits for a receive from MPI_ANY_SOURCE (nobody sends yet);
 *            with ULFM, after acknowledging the failure it waits again and rank 1 sends
 *   coll     rank 2 dies; every survivor calls a 1 MiB MPI_Gather to rank 0, MPI_Barrier,
 *            MPI_Bcast and MPI_Allreduce, then a 64 KiB MPI_Bcast, MPI_Allgather and MPI_Alltoall
 *            and a 1 MiB MPI_Allreduce
 *   late     rank 1 dies at once; rank 0 (no collective before, nothing has it watch rank 1)
 *            receives from MPI_ANY_SOURCE a message nobody sends, which fails. Rank 2 sends
 *            rank 0 three 8-byte messages, which rank 0 probes, then dies when told; rank 0
 *            receives the three, which succeed with their data, and posts a fourth receive
 *            from rank 2: MPI_Irecv succeeds and MPI_Wait fails
 *   objects  (mpicd) rank 2 dies; every survivor calls a gather to rank 0 of custom-typed
 *            objects of 32 B, then of 1 MiB
 *   orphan   every rank prints `READY rank=R pid=P`, then rank 0 waits in MPI_Iprobe and the
 *            others compute (sleep) for 2 minutes: the launcher is killed meanwhile
 *
 * Each survivor prints, per call, `RESULT <scenario> rank=R op=OP class=NAME secs=S` (S: from the
 * call's start to its return), then `DONE rank=R` after MPI_Finalize. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(OPEN_MPI) || defined(MPICH)
#include <mpi-ext.h>
#endif

#define BIG_BYTES (512u << 20)

static const char *scenario;
static int rank;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The name of the error class of `rc`. */
static const char *class_name(int rc) {
    static char other[64];
    int cls = rc;
    MPI_Error_class(rc, &cls);
    switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    case MPI_ERR_UNKNOWN: return "MPI_ERR_UNKNOWN";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE";
#ifdef MPIX_ERR_PROC_FAILED
    case MPIX_ERR_PROC_FAILED: return "MPIX_ERR_PROC_FAILED";
#endif
#ifdef MPIX_ERR_PROC_FAILED_PENDING
    case MPIX_ERR_PROC_FAILED_PENDING: return "MPIX_ERR_PROC_FAILED_PENDING";
#endif
#ifdef MPIX_ERR_REVOKED
    case MPIX_ERR_REVOKED: return "MPIX_ERR_REVOKED";
#endif
    default: snprintf(other, sizeof other, "class-%d", cls); return other;
    }
}

static void report(const char *op, int rc, double start) {
    double secs = now() - start;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &len);
    printf("RESULT %s rank=%d op=%s class=%s secs=%.3f (%s)\n", scenario, rank, op,
           class_name(rc), secs, text);
    fflush(stdout);
}

#ifdef MPICD_MPI_H
/* mpicd's custom datatype (its extension): a vector of doubles whose length the receiver
 * learns from what arrives (the resize callback), for a gather of differently shaped objects. */
struct dvec {
    MPI_Count n;
    double *v;
};

static int dv_query(void *state, const void *buf, MPI_Count count, MPI_Count *size) {
    (void)state, (void)buf;
    *size = count * (MPI_Count)sizeof(MPI_Count);
    return MPI_SUCCESS;
}

static int dv_pack(void *state, const void *buf, MPI_Count count, MPI_Count offset, void *dst,
                   MPI_Count dst_size, MPI_Count *used) {
    (void)state, (void)offset, (void)dst_size;
    const struct dvec *d = buf;
    for (MPI_Count i = 0; i < count; i++) memcpy((MPI_Count *)dst + i, &d[i].n, sizeof d->n);
    *used = count * (MPI_Count)sizeof(MPI_Count);
    return MPI_SUCCESS;
}

static int dv_unpack(void *state, void *buf, MPI_Count count, MPI_Count offset, const void *src,
                     MPI_Count src_size) {
    (void)state, (void)offset, (void)src_size;
    struct dvec *d = buf;
    for (MPI_Count i = 0; i < count; i++) memcpy(&d[i].n, (const MPI_Count *)src + i, sizeof d->n);
    return MPI_SUCCESS;
}

static int dv_count(void *state, void *buf, MPI_Count count, MPI_Count *n) {
    (void)state, (void)buf;
    *n = count;
    return MPI_SUCCESS;
}

static int dv_regions(void *state, void *buf, MPI_Count count, MPI_Count n, void *bases[],
                      MPI_Count lens[], MPI_Datatype types[]) {
    (void)state, (void)n;
    struct dvec *d = buf;
    for (MPI_Count i = 0; i < count; i++) bases[i] = d[i].v, lens[i] = d[i].n, types[i] = MPI_DOUBLE;
    return MPI_SUCCESS;
}

static int dv_resize(void *state, void *buf, MPI_Count count, MPI_Count packed, MPI_Count nregions,
                     const MPI_Count lens[], const MPI_Datatype types[]) {
    (void)state, (void)packed, (void)nregions, (void)types;
    struct dvec *d = buf;
    for (MPI_Count i = 0; i < count; i++)
        d[i].n = lens[i], d[i].v = realloc(d[i].v, (size_t)lens[i] * sizeof(double) + 8);
    return MPI_SUCCESS;
}

/* A gather of one vector of `n` doubles per rank to rank 0 through a custom datatype. */
static int gather_custom(MPI_Count n) {
    MPI_Datatype raw, t;
    MPI_Type_create_custom(NULL, NULL, dv_query, dv_pack, dv_unpack, dv_count, dv_regions, NULL,
                           1, &raw);
    MPIX_Type_custom_set_resize(raw, dv_resize);
    MPI_Type_create_resized(raw, 0, sizeof(struct dvec), &t);
    MPIX_Type_custom_set_resize(t, dv_resize);
    struct dvec mine = {n, calloc((size_t)n, sizeof(double))}, all[3] = {{0, NULL}};
    int rc = MPI_Gather(&mine, 1, t, all, 1, t, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++) free(all[i].v);
    free(mine.v);
    MPI_Type_free(&t);
    MPI_Type_free(&raw);
    return rc;
}
#endif

static void die(void) {
    fflush(stdout);
    fflush(stderr);
    _exit(1);
}

int main(int argc, char **argv) {
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    scenario = argc > 1 ? argv[1] : "";
    if (size < 3) {
        if (rank == 0) fprintf(stderr, "fault: needs at least 3 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Connect every pair first, as a real exchange would (but in `late`, which must find the
     * failure without it). */
    int token = rank, sum = 0;
    if (strcmp(scenario, "late")) MPI_Allreduce(&token, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    double start;
    int rc;
    if (!strcmp(scenario, "late")) {
        long msg = 0;
        if (rank == 1) die();
        if (rank == 0) {
            start = now();
            rc = MPI_Recv(&msg, 1, MPI_LONG, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            report("Recv-ANY_SOURCE", rc, start);
        }
        if (rank == 2) {
            for (long k = 1; k <= 3; k++) MPI_Send(&k, 1, MPI_LONG, 0, (int)k, MPI_COMM_WORLD);
            MPI_Recv(&msg, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            die();
        }
        if (rank == 0) {
            for (int k = 1; k <= 3; k++) MPI_Probe(2, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&msg, 1, MPI_LONG, 2, 0, MPI_COMM_WORLD);
            for (long k = 1; k <= 3; k++) {
                char op[32];
                snprintf(op, sizeof op, "Recv-sent-before-%ld", k);
                msg = 0;
                start = now();
                rc = MPI_Recv(&msg, 1, MPI_LONG, 2, (int)k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                report(rc == MPI_SUCCESS && msg != k ? "wrong-data" : op, rc, start);
            }
            MPI_Request req;
            start = now();
            rc = MPI_Irecv(&msg, 1, MPI_LONG, 2, 4, MPI_COMM_WORLD, &req);
            report("Irecv-post", rc, start);
            if (rc == MPI_SUCCESS) {
                start = now();
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
                report("Irecv-Wait", rc, start);
            }
        }
    } else if (!strcmp(scenario, "bigrecv")) {
        char *buf = malloc(BIG_BYTES);
        if (!buf) MPI_Abort(MPI_COMM_WORLD, 3);
        memset(buf, rank, BIG_BYTES);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            MPI_Request req;
            MPI_Isend(buf, (int)BIG_BYTES, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req);
            double until = now() + 0.02;
            int flag = 0;
            while (now() < until && !flag) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
            die();
        }
        if (rank == 0) {
            start = now();
            rc = MPI_Recv(buf, (int)BIG_BYTES, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            /* The sender may have moved the whole message before it died (one progress call
             * can, over tcp): success is right then, and only then. */
            size_t got = 0;
            while (rc == MPI_SUCCESS && got < BIG_BYTES && buf[got] == 1) got++;
            if (rc == MPI_SUCCESS && got == BIG_BYTES) {
                printf("RESULT bigrecv rank=0 op=Recv-512MiB class=COMPLETE secs=%.3f "
                       "(every byte arrived before the sender died)\n", now() - start);
                fflush(stdout);
            } else {
                report("Recv-512MiB", rc, start);
            }
        }
        free(buf);
    } else if (!strcmp(scenario, "recv") || !strcmp(scenario, "send") ||
               !strcmp(scenario, "anysrc")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 2) die();
        if (rank == 0) {
            char small[8] = {0};
            if (!strcmp(scenario, "recv")) {
                start = now();
                rc = MPI_Recv(small, 8, MPI_BYTE, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                report("Recv", rc, start);
            } else if (!strcmp(scenario, "send")) {
                char *big = calloc(4u << 20, 1);
                start = now();
                rc = MPI_Send(big, 4 << 20, MPI_BYTE, 2, 1, MPI_COMM_WORLD);
                report("Send-4MiB", rc, start);
                start = now();
                rc = MPI_Send(small, 8, MPI_BYTE, 2, 1, MPI_COMM_WORLD);
                report("Send-8B", rc, start);
                start = now();
                rc = MPI_Ssend(small, 8, MPI_BYTE, 2, 1, MPI_COMM_WORLD);
                report("Ssend-8B", rc, start);
                free(big);
            } else {
                MPI_Request req;
                MPI_Status st;
                MPI_Irecv(small, 8, MPI_BYTE, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &req);
                start = now();
                rc = MPI_Wait(&req, &st);
                report("Irecv-ANY_SOURCE", rc, start);
#ifdef MPIX_ERR_PROC_FAILED_PENDING
                /* The other completion calls report it too, and leave it active. */
                if (rc != MPI_SUCCESS && req != MPI_REQUEST_NULL) {
                    int index = -1, outcount = 0, indices[1];
                    start = now();
                    rc = MPI_Waitany(1, &req, &index, &st);
                    report(index == 0 && req != MPI_REQUEST_NULL ? "Waitany-ANY_SOURCE"
                                                                 : "Waitany-wrong-index",
                           rc, start);
                    start = now();
                    rc = MPI_Waitsome(1, &req, &outcount, indices, &st);
                    if (rc == MPI_ERR_IN_STATUS && outcount == 1 && req != MPI_REQUEST_NULL)
                        rc = st.MPI_ERROR;
                    report("Waitsome-ANY_SOURCE", rc, start);
                    start = now();
                    rc = MPI_Waitall(1, &req, &st);
                    if (rc == MPI_ERR_IN_STATUS && req != MPI_REQUEST_NULL) rc = st.MPI_ERROR;
                    report("Waitall-ANY_SOURCE", rc, start);
                }
                /* ULFM: the receive stays pending; once the failure is acknowledged it waits
                 * for rank 1, which sends when told to. */
                if (rc != MPI_SUCCESS && req != MPI_REQUEST_NULL) {
                    MPIX_Comm_failure_ack(MPI_COMM_WORLD);
                    MPI_Send(small, 8, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
                    start = now();
                    rc = MPI_Wait(&req, &st);
                    report("Irecv-ANY_SOURCE-after-ack", rc, start);
                    if (rc == MPI_SUCCESS && st.MPI_SOURCE != 1) report("wrong-source", -1, start);
                }
#endif
            }
        }
        if (rank == 1 && !strcmp(scenario, "anysrc")) {
#ifdef MPIX_ERR_PROC_FAILED_PENDING
            char go[8];
            if (MPI_Recv(go, 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS)
                MPI_Send(go, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
#endif
        }
    } else if (!strcmp(scenario, "coll")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 2) die();
        /* First, a long gather of bytes: the root, which may know of the death already,
         * gives up at once; the live giver's long message must not leave that one waiting. */
        static char part[1 << 20], parts[3 << 20];
        start = now();
        rc = MPI_Gather(part, sizeof part, MPI_BYTE, parts, sizeof part, MPI_BYTE, 0, MPI_COMM_WORLD);
        report("Gather-1MiB", rc, start);
        start = now();
        rc = MPI_Barrier(MPI_COMM_WORLD);
        report("Barrier", rc, start);
        int v = rank, r = 0;
        start = now();
        rc = MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
        report("Bcast", rc, start);
        start = now();
        rc = MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        report("Allreduce", rc, start);
        /* Blocks long enough for the node's single-copy way (mpicd/src/schedule/node/lend.rs) */
        static char block[64 << 10], all[3 * (64 << 10)];
        start = now();
        rc = MPI_Bcast(block, sizeof block, MPI_BYTE, 0, MPI_COMM_WORLD);
        report("Bcast-64KiB", rc, start);
        start = now();
        rc = MPI_Allgather(block, sizeof block, MPI_BYTE, all, sizeof block, MPI_BYTE, MPI_COMM_WORLD);
        report("Allgather-64KiB", rc, start);
        static char out[3 * (64 << 10)];
        start = now();
        rc = MPI_Alltoall(all, sizeof block, MPI_BYTE, out, sizeof block, MPI_BYTE, MPI_COMM_WORLD);
        report("Alltoall-64KiB", rc, start);
        /* Longer than the node area's share: through it in pieces (node/caller.rs). */
        static double x[1 << 17], y[1 << 17];
        start = now();
        rc = MPI_Allreduce(x, y, 1 << 17, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        report("Allreduce-1MiB", rc, start);
#ifdef MPICD_MPI_H
    } else if (!strcmp(scenario, "objects")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 2) die();
        /* A gather of custom-typed objects: the root waits for the dead rank's, short (through
         * the node's memory where the communicator has an area) and long (a message). */
        start = now();
        rc = gather_custom(4);
        report("Gather-custom-32B", rc, start);
        start = now();
        rc = gather_custom(1 << 17);
        report("Gather-custom-1MiB", rc, start);
#endif
    } else if (!strcmp(scenario, "orphan")) {
        /* The launcher is killed meanwhile: rank 0 waits in MPI, the others compute. */
        printf("READY rank=%d pid=%d\n", rank, (int)getpid());
        fflush(stdout);
        double until = now() + 120;
        int flag = 0;
        while (now() < until) {
            if (rank == 0)
                MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            else
                usleep(100000);
        }
    } else {
        if (rank == 0) fprintf(stderr, "fault: unknown scenario '%s'\n", scenario);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    start = now();
    rc = MPI_Finalize();
    printf("DONE rank=%d finalize=%s secs=%.3f\n", rank, rc == MPI_SUCCESS ? "ok" : "error",
           now() - start);
    return 0;
}
