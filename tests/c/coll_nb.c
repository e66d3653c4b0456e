/* coll_nb.c: non-blocking and persistent collectives, and the collectives added with them
 * (Reduce_scatter, Reduce_scatter_block, Alltoallw, the _c variants), at any number of ranks:
 * - every MPI_I... collective once, checked;
 * - many outstanding at once on two communicators, mixed with point-to-point requests, completed
 *   by Waitall, by Test polling, and by Waitany/Waitsome;
 * - persistent collectives started several times with new data (MPI_Start, MPI_Startall), an
 *   inactive persistent request completing at once, MPI_Request_free;
 * - derived datatypes in non-blocking collectives (a strided vector), Alltoallw with per-peer
 *   types, MPI_IN_PLACE forms;
 * - errors: bad root, null request, MPI_Start of a non-persistent request. */
#include "check.h"
#include <string.h>

static int rank, size;

static void each_nonblocking(MPI_Comm comm) {
    MPI_Request r;
    OK(MPI_Ibarrier(comm, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(r == MPI_REQUEST_NULL);

    for (int root = 0; root < size; root++) {
        int b[5];
        for (int i = 0; i < 5; i++) b[i] = rank == root ? 100 * root + i : -1;
        OK(MPI_Ibcast(b, 5, MPI_INT, root, comm, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int i = 0; i < 5; i++) CHECK(b[i] == 100 * root + i);

        long v = rank + 1, sum = 0;
        OK(MPI_Ireduce(&v, &sum, 1, MPI_LONG, MPI_SUM, root, comm, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (rank == root) CHECK(sum == (long)size * (size + 1) / 2);

        int mine[2] = {rank, -rank}, all[2 * 16];
        OK(MPI_Igather(mine, 2, MPI_INT, all, 2, MPI_INT, root, comm, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (rank == root)
            for (int i = 0; i < size; i++) CHECK(all[2 * i] == i && all[2 * i + 1] == -i);

        /* Gatherv / Scatterv: member i has i + 1 ints */
        int counts[16], displs[16], total = 0;
        for (int i = 0; i < size; i++) {
            counts[i] = i + 1;
            displs[i] = total;
            total += i + 1;
        }
        int piece[16], gathered[16 * 17 / 2];
        for (int i = 0; i <= rank; i++) piece[i] = 10 * rank + i;
        OK(MPI_Igatherv(piece, rank + 1, MPI_INT, gathered, counts, displs, MPI_INT, root, comm,
                        &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (rank == root)
            for (int i = 0; i < size; i++)
                for (int j = 0; j <= i; j++) CHECK(gathered[displs[i] + j] == 10 * i + j);
        int back[16];
        OK(MPI_Iscatterv(gathered, counts, displs, MPI_INT, back, rank + 1, MPI_INT, root, comm,
                         &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int j = 0; j <= rank; j++) CHECK(back[j] == 10 * rank + j);
        int one = -1;
        OK(MPI_Iscatter(all, 2, MPI_INT, b, 2, MPI_INT, root, comm, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(b[0] == rank && b[1] == -rank);
        (void)one;
    }

    int ag[16];
    int me = 7 * rank;
    OK(MPI_Iallgather(&me, 1, MPI_INT, ag, 1, MPI_INT, comm, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < size; i++) CHECK(ag[i] == 7 * i);

    int out[16], in[16];
    for (int i = 0; i < size; i++) out[i] = 100 * rank + i;
    OK(MPI_Ialltoall(out, 1, MPI_INT, in, 1, MPI_INT, comm, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < size; i++) CHECK(in[i] == 100 * i + rank);

    double x = rank + 0.5, mx = 0;
    OK(MPI_Iallreduce(&x, &mx, 1, MPI_DOUBLE, MPI_MAX, comm, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(mx == size - 0.5);

    int s = rank + 1, pre = -7, ex = -7;
    OK(MPI_Iscan(&s, &pre, 1, MPI_INT, MPI_SUM, comm, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(pre == (rank + 1) * (rank + 2) / 2);
    OK(MPI_Iexscan(&s, &ex, 1, MPI_INT, MPI_SUM, comm, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(rank == 0 ? ex == -7 : ex == rank * (rank + 1) / 2);

    /* Reduce_scatter_block: member i gets 2 ints, each the sum over members of (member + i). */
    int rsb_in[32], rsb_out[2];
    for (int i = 0; i < 2 * size; i++) rsb_in[i] = rank + i / 2;
    OK(MPI_Ireduce_scatter_block(rsb_in, rsb_out, 2, MPI_INT, MPI_SUM, comm, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(rsb_out[0] == size * (size - 1) / 2 + size * rank && rsb_out[1] == rsb_out[0]);
}

static void reduce_scatter(MPI_Comm comm) {
    /* Member i gets i + 1 elements; element k of the whole vector sums to size * k + sum(ranks). */
    int counts[16], total = 0;
    for (int i = 0; i < size; i++) total += counts[i] = i + 1;
    int in[16 * 17 / 2], out[16], offset = 0;
    for (int k = 0; k < total; k++) in[k] = k + rank;
    for (int i = 0; i < rank; i++) offset += counts[i];
    OK(MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, comm));
    for (int j = 0; j < rank + 1; j++) CHECK(out[j] == size * (offset + j) + size * (size - 1) / 2);
    /* in place: the result lands at the start of the buffer */
    for (int k = 0; k < total; k++) in[k] = k + rank;
    OK(MPI_Reduce_scatter(MPI_IN_PLACE, in, counts, MPI_INT, MPI_SUM, comm));
    for (int j = 0; j < rank + 1; j++) CHECK(in[j] == size * (offset + j) + size * (size - 1) / 2);
    /* MPI_MAX over doubles, blocks of 3: the last member holds the largest */
    double d[48], dm[3];
    for (int k = 0; k < 3 * size; k++) d[k] = (rank == size - 1) ? 1000 + k : k;
    OK(MPI_Reduce_scatter_block(d, dm, 3, MPI_DOUBLE, MPI_MAX, comm));
    for (int j = 0; j < 3; j++) CHECK(dm[j] == 1000 + 3 * rank + j);
}

static void many_outstanding(MPI_Comm a, MPI_Comm b) {
    enum { N = 8 };
    MPI_Request reqs[2 * N + 2];
    long sums[N], vals[N];
    int bc[N][4];
    for (int i = 0; i < N; i++) {
        vals[i] = (long)i * (rank + 1);
        OK(MPI_Iallreduce(&vals[i], &sums[i], 1, MPI_LONG, MPI_SUM, i % 2 ? a : b, &reqs[i]));
        for (int j = 0; j < 4; j++) bc[i][j] = rank == i % size ? 1000 * i + j : -1;
        OK(MPI_Ibcast(bc[i], 4, MPI_INT, i % size, i % 2 ? b : a, &reqs[N + i]));
    }
    /* point-to-point in the middle of them: a ring */
    int to = (rank + 1) % size, from = (rank + size - 1) % size, token = rank, got = -1;
    OK(MPI_Irecv(&got, 1, MPI_INT, from, 5, a, &reqs[2 * N]));
    OK(MPI_Isend(&token, 1, MPI_INT, to, 5, a, &reqs[2 * N + 1]));
    /* complete some with Waitany, then the rest with Test polling */
    int idx;
    OK(MPI_Waitany(2 * N + 2, reqs, &idx, MPI_STATUS_IGNORE));
    CHECK(idx >= 0 && idx < 2 * N + 2 && reqs[idx] == MPI_REQUEST_NULL);
    int outcount, indices[2 * N + 2];
    OK(MPI_Waitsome(2 * N + 2, reqs, &outcount, indices, MPI_STATUSES_IGNORE));
    CHECK(outcount >= 1);
    int flag = 0;
    while (!flag) OK(MPI_Testall(2 * N + 2, reqs, &flag, MPI_STATUSES_IGNORE));
    long tri = (long)size * (size + 1) / 2;
    for (int i = 0; i < N; i++) {
        CHECK(sums[i] == i * tri);
        for (int j = 0; j < 4; j++) CHECK(bc[i][j] == 1000 * i + j);
    }
    CHECK(got == from);
}

static void persistent(MPI_Comm comm) {
    int v = 0, sum = 0, b[3] = {0, 0, 0};
    MPI_Request r[3];
    OK(MPI_Allreduce_init(&v, &sum, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &r[0]));
    OK(MPI_Bcast_init(b, 3, MPI_INT, size - 1, comm, MPI_INFO_NULL, &r[1]));
    OK(MPI_Barrier_init(comm, MPI_INFO_NULL, &r[2]));
    /* inactive: completes at once and stays allocated */
    OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    CHECK(r[0] != MPI_REQUEST_NULL);
    for (int round = 0; round < 5; round++) {
        v = rank * round;
        for (int j = 0; j < 3; j++) b[j] = rank == size - 1 ? round + j : -1;
        if (round % 2) {
            OK(MPI_Startall(3, r));
        } else {
            for (int k = 0; k < 3; k++) OK(MPI_Start(&r[k]));
        }
        FAILS(MPI_Start(&r[0]), MPI_ERR_REQUEST); /* already active */
        OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
        for (int k = 0; k < 3; k++) CHECK(r[k] != MPI_REQUEST_NULL);
        CHECK(sum == round * size * (size - 1) / 2);
        for (int j = 0; j < 3; j++) CHECK(b[j] == round + j);
    }
    for (int k = 0; k < 3; k++) {
        OK(MPI_Request_free(&r[k]));
        CHECK(r[k] == MPI_REQUEST_NULL);
    }
    /* a large-count persistent allgather */
    int me[2] = {rank, rank * rank}, all[32];
    MPI_Request g;
    OK(MPI_Allgather_init_c(me, 2, MPI_INT, all, 2, MPI_INT, comm, MPI_INFO_NULL, &g));
    OK(MPI_Start(&g));
    OK(MPI_Wait(&g, MPI_STATUS_IGNORE));
    for (int i = 0; i < size; i++) CHECK(all[2 * i] == i && all[2 * i + 1] == i * i);
    OK(MPI_Request_free(&g));
}

static void derived(MPI_Comm comm) {
    /* every other double of 2n, broadcast with a vector type, non-blocking */
    enum { N = 50 };
    double strided[2 * N];
    MPI_Datatype every_other;
    OK(MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &every_other));
    OK(MPI_Type_commit(&every_other));
    for (int i = 0; i < 2 * N; i++) strided[i] = rank == 0 ? i : -1;
    MPI_Request r;
    OK(MPI_Ibcast(strided, 1, every_other, 0, comm, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2 * N; i++) CHECK(strided[i] == (i % 2 == 0 || rank == 0 ? i : -1));
    /* in-place allreduce over the vector: only the strided elements change */
    for (int i = 0; i < 2 * N; i++) strided[i] = i % 2 ? -5 : rank;
    OK(MPI_Iallreduce(MPI_IN_PLACE, strided, 1, every_other, MPI_SUM, comm, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2 * N; i++) CHECK(strided[i] == (i % 2 ? -5 : size * (size - 1) / 2));
    OK(MPI_Type_free(&every_other));

    /* Alltoallw: to member j, j + 1 ints as MPI_INT; from member j, as a contiguous type of
     * (rank + 1) ints counted once */
    int sc[16], sd[16], rc[16], rd[16], so[16 * 17 / 2], ro[16 * 17 / 2], off = 0;
    MPI_Datatype st[16], rt[16], mine;
    OK(MPI_Type_contiguous(rank + 1, MPI_INT, &mine));
    OK(MPI_Type_commit(&mine));
    for (int j = 0; j < size; j++) {
        sc[j] = j + 1;
        sd[j] = off * (int)sizeof(int);
        st[j] = MPI_INT;
        for (int k = 0; k <= j; k++) so[off + k] = 1000 * rank + 10 * j + k;
        off += j + 1;
        rc[j] = 1;
        rd[j] = j * (rank + 1) * (int)sizeof(int);
        rt[j] = mine;
    }
    OK(MPI_Alltoallw(so, sc, sd, st, ro, rc, rd, rt, comm));
    for (int j = 0; j < size; j++)
        for (int k = 0; k <= rank; k++) CHECK(ro[j * (rank + 1) + k] == 1000 * j + 10 * rank + k);
    OK(MPI_Type_free(&mine));

    /* Ialltoallv_c with large-count arrays */
    MPI_Count c[16];
    MPI_Aint d[16];
    int a2[16], b2[16];
    for (int j = 0; j < size; j++) {
        c[j] = 1;
        d[j] = j;
        a2[j] = rank * 100 + j;
    }
    OK(MPI_Ialltoallv_c(a2, c, d, MPI_INT, b2, c, d, MPI_INT, comm, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int j = 0; j < size; j++) CHECK(b2[j] == j * 100 + rank);
}

static void errors(MPI_Comm comm) {
    int x = 0;
    MPI_Request r;
    FAILS(MPI_Ibcast(&x, 1, MPI_INT, size, comm, &r), MPI_ERR_ROOT);
    FAILS(MPI_Ibcast(&x, 1, MPI_INT, 0, comm, NULL), MPI_ERR_ARG);
    FAILS(MPI_Iallreduce(&x, &x, 1, MPI_INT, MPI_OP_NULL, comm, &r), MPI_ERR_OP);
    /* aliased send and receive buffers without MPI_IN_PLACE */
    int v[8] = {0};
    FAILS(MPI_Allreduce(v, v, 4, MPI_INT, MPI_SUM, comm), MPI_ERR_BUFFER);
    FAILS(MPI_Iallreduce(v, v + 2, 4, MPI_INT, MPI_SUM, comm, &r), MPI_ERR_BUFFER);
    FAILS(MPI_Allgather(v, 1, MPI_INT, v, 1, MPI_INT, comm), MPI_ERR_BUFFER);
    OK(MPI_Allreduce(v, v + 4, 4, MPI_INT, MPI_SUM, comm)); /* adjacent, not overlapping */
    OK(MPI_Ibarrier(comm, &r));
    FAILS(MPI_Start(&r), MPI_ERR_REQUEST); /* not persistent */
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv) {
    test_init(&argc, &argv, &rank, &size);
    CHECK(size <= 16);
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    each_nonblocking(MPI_COMM_WORLD);
    reduce_scatter(MPI_COMM_WORLD);
    many_outstanding(MPI_COMM_WORLD, dup);
    persistent(dup);
    derived(MPI_COMM_WORLD);
    errors(MPI_COMM_WORLD);
    OK(MPI_Comm_free(&dup));
    test_finish(rank, "coll_nb");
    return 0;
}
