/* intercomm_coll.c: the collectives on inter-communicators (MPI-4.1 section 6.2.2), on 2 or
 * more ranks (alone, the test has no inter-communicator and passes at once). The world splits
 * into a lower group A and an upper group B of any sizes; every rooted collective runs with
 * every root of both groups (MPI_ROOT at the root, MPI_PROC_NULL at its group's others, the
 * root's remote rank in the other group), and the data is checked against values every rank
 * can compute: Barrier, Bcast (also of a vector datatype), Reduce, Allreduce (a sum and a
 * non-commutative user op, which must combine the other group in rank order), Gather(v),
 * Scatter(v), Allgather(v), Alltoall(v,w), Reduce_scatter(_block); their non-blocking and
 * persistent forms; and the error classes (MPI_IN_PLACE, a bad root, Scan). */
#include "check.h"
#include <string.h>

static int wrank, wsize, rank, size, rsize, in_a;
static int remote[64]; /* the remote group's world ranks, by remote rank */

/* 2x2 integer matrices, multiplied: associative, not commutative. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    int *x = in, *y = inout;
    for (int k = 0; k < *len; k++, x += 4, y += 4) {
        int p[4] = {x[0] * y[0] + x[1] * y[2], x[0] * y[1] + x[1] * y[3],
                    x[2] * y[0] + x[3] * y[2], x[2] * y[1] + x[3] * y[3]};
        memcpy(y, p, sizeof p);
    }
}

/* Member w's matrix: distinct for every world rank, with small entries. */
static void matrix_of(int w, int *m) {
    m[0] = 1;
    m[1] = w + 1;
    m[2] = w % 3;
    m[3] = 1;
}

/* The root argument of member `lrank` of the root's group `root_in_a` with root `r`. */
static int root_arg(int root_in_a, int r) {
    if (root_in_a != in_a) return r;
    return rank == r ? MPI_ROOT : MPI_PROC_NULL;
}

static void rooted(MPI_Comm ic, int na, int nb) {
    for (int side = 0; side < 2; side++) {
        int root_in_a = side == 0, n = root_in_a ? na : nb;
        for (int r = 0; r < n; r++) {
            int root = root_arg(root_in_a, r), at_root = root == MPI_ROOT;
            int rworld = root_in_a ? r : na + r;
            /* Bcast */
            double bb[100];
            for (int i = 0; i < 100; i++) bb[i] = at_root ? rworld + i * 0.25 : -1;
            OK(MPI_Bcast(bb, 100, MPI_DOUBLE, root, ic));
            for (int i = 0; i < 100; i++)
                CHECK(bb[i] == (root == MPI_PROC_NULL ? -1 : rworld + i * 0.25));
            /* Bcast of every other int (a vector type) */
            MPI_Datatype vec;
            OK(MPI_Type_vector(5, 1, 2, MPI_INT, &vec));
            OK(MPI_Type_commit(&vec));
            int vb[10];
            for (int i = 0; i < 10; i++) vb[i] = at_root ? rworld * 100 + i : -1;
            OK(MPI_Bcast(vb, 1, vec, root, ic));
            if (root >= 0)
                for (int i = 0; i < 10; i++) CHECK(vb[i] == (i % 2 ? -1 : rworld * 100 + i));
            OK(MPI_Type_free(&vec));
            /* Reduce: the sum of the other group's world ranks + 1 */
            int v = wrank + 1, s = -1;
            OK(MPI_Reduce(&v, &s, 1, MPI_INT, MPI_SUM, root, ic));
            if (at_root) {
                int want = 0;
                for (int j = 0; j < rsize; j++) want += remote[j] + 1;
                CHECK(s == want);
            } else {
                CHECK(s == -1);
            }
            /* Gather (two ints) and Gatherv (remote rank j sends j + 1 ints) */
            int mine[2] = {wrank, -wrank}, all[128];
            OK(MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, root, ic));
            if (at_root)
                for (int j = 0; j < rsize; j++) CHECK(all[2 * j] == remote[j] && all[2 * j + 1] == -remote[j]);
            int counts[64], displs[64], total = 0, vs[64], va[64 * 66];
            for (int j = 0; j < rsize; j++) {
                counts[j] = j + 1;
                displs[j] = total + 1;
                total += j + 2;
            }
            for (int i = 0; i <= rank; i++) vs[i] = wrank * 10 + i;
            OK(MPI_Gatherv(vs, rank + 1, MPI_INT, va, counts, displs, MPI_INT, root, ic));
            if (at_root)
                for (int j = 0; j < rsize; j++)
                    for (int i = 0; i <= j; i++) CHECK(va[displs[j] + i] == remote[j] * 10 + i);
            /* Scatter (three shorts) and Scatterv (remote rank j gets j + 1 ints) */
            short sc[3 * 64], sg[3] = {-1, -1, -1};
            for (int i = 0; i < 3 * rsize; i++) sc[i] = (short)(i + rworld);
            OK(MPI_Scatter(sc, 3, MPI_SHORT, sg, 3, MPI_SHORT, root, ic));
            if (root >= 0)
                for (int i = 0; i < 3; i++) CHECK(sg[i] == 3 * rank + i + rworld);
            for (int j = 0; j < rsize; j++)
                for (int i = 0; i <= j; i++) va[displs[j] + i] = j * 1000 + i + rworld;
            int sv[64];
            OK(MPI_Scatterv(va, counts, displs, MPI_INT, sv, rank + 1, MPI_INT, root, ic));
            if (root >= 0)
                for (int i = 0; i <= rank; i++) CHECK(sv[i] == rank * 1000 + i + rworld);
        }
    }
}

static void exchanges(MPI_Comm ic) {
    OK(MPI_Barrier(ic));
    /* Allreduce: the sum and the matrix product of the other group, in its rank order */
    int v = wrank + 1, s = 0, want = 0;
    OK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, ic));
    for (int j = 0; j < rsize; j++) want += remote[j] + 1;
    CHECK(s == want);
    MPI_Op op;
    OK(MPI_Op_create(matmul, 0, &op));
    MPI_Datatype mat;
    OK(MPI_Type_contiguous(4, MPI_INT, &mat));
    OK(MPI_Type_commit(&mat));
    int m[4], p[4], w[4] = {1, 0, 0, 1};
    matrix_of(wrank, m);
    OK(MPI_Allreduce(m, p, 1, mat, op, ic));
    for (int j = 0; j < rsize; j++) {
        int x[4], len = 1;
        matrix_of(remote[j], x);
        matmul(w, x, &len, &mat); /* x = w * x */
        memcpy(w, x, sizeof w);
    }
    CHECK(memcmp(p, w, sizeof w) == 0);
    OK(MPI_Type_free(&mat));
    OK(MPI_Op_free(&op));
    /* Allgather and Allgatherv: remote rank j's block has j + 1 doubles */
    int ag[64];
    OK(MPI_Allgather(&wrank, 1, MPI_INT, ag, 1, MPI_INT, ic));
    for (int j = 0; j < rsize; j++) CHECK(ag[j] == remote[j]);
    int counts[64], displs[64], total = 0;
    for (int j = 0; j < rsize; j++) {
        counts[j] = j + 1;
        displs[j] = total;
        total += j + 1;
    }
    double dv[64], dall[64 * 65 / 2];
    for (int i = 0; i <= rank; i++) dv[i] = wrank + i / 8.0;
    OK(MPI_Allgatherv(dv, rank + 1, MPI_DOUBLE, dall, counts, displs, MPI_DOUBLE, ic));
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i <= j; i++) CHECK(dall[displs[j] + i] == remote[j] + i / 8.0);
    /* Alltoall, Alltoallv (j + 1 ints to remote rank j) and Alltoallw */
    int a2a[64 * 2], r2a[64 * 2];
    for (int j = 0; j < rsize; j++) {
        a2a[2 * j] = wrank * 100 + j;
        a2a[2 * j + 1] = -1;
    }
    OK(MPI_Alltoall(a2a, 2, MPI_INT, r2a, 2, MPI_INT, ic));
    for (int j = 0; j < rsize; j++) CHECK(r2a[2 * j] == remote[j] * 100 + rank && r2a[2 * j + 1] == -1);
    int sc[64], sd[64], rc[64], rd[64], st = 0, rt = 0, vs[64 * 65 / 2], vr[64 * 65];
    for (int j = 0; j < rsize; j++) {
        sc[j] = j + 1;
        sd[j] = st;
        st += j + 1;
        rc[j] = rank + 1;
        rd[j] = rt;
        rt += rank + 1;
    }
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i <= j; i++) vs[sd[j] + i] = wrank * 100 + j;
    OK(MPI_Alltoallv(vs, sc, sd, MPI_INT, vr, rc, rd, MPI_INT, ic));
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i <= rank; i++) CHECK(vr[rd[j] + i] == remote[j] * 100 + rank);
    MPI_Datatype types[64];
    int wc[64], wsd[64], wrd[64];
    long lout[64], lin[64];
    for (int j = 0; j < rsize; j++) {
        types[j] = MPI_LONG;
        wc[j] = 1;
        wsd[j] = wrd[j] = j * (int)sizeof(long);
        lout[j] = wrank * 1000L + j;
    }
    OK(MPI_Alltoallw(lout, wc, wsd, types, lin, wc, wrd, types, ic));
    for (int j = 0; j < rsize; j++) CHECK(lin[j] == remote[j] * 1000L + rank);
    /* Reduce_scatter_block: vectors of size * rsize ints, rsize to each member */
    int rs[64 * 64], rr[64 * 64];
    for (int i = 0; i < size * rsize; i++) rs[i] = wrank + i;
    OK(MPI_Reduce_scatter_block(rs, rr, rsize, MPI_INT, MPI_SUM, ic));
    for (int i = 0; i < rsize; i++) {
        int e = 0;
        for (int j = 0; j < rsize; j++) e += remote[j] + rank * rsize + i;
        CHECK(rr[i] == e);
    }
    /* Reduce_scatter: member i gets i + 1 ints; both vectors have size * rsize ints, so the
     * last member takes the rest */
    int rcounts[64], t = 0;
    for (int i = 0; i < size; i++) {
        rcounts[i] = i == size - 1 ? size * rsize - t : (i + 1 < rsize ? i + 1 : 1);
        t += rcounts[i];
    }
    if (rcounts[size - 1] >= 0) {
        OK(MPI_Reduce_scatter(rs, rr, rcounts, MPI_INT, MPI_SUM, ic));
        int off = 0;
        for (int i = 0; i < rank; i++) off += rcounts[i];
        for (int i = 0; i < rcounts[rank]; i++) {
            int e = 0;
            for (int j = 0; j < rsize; j++) e += remote[j] + off + i;
            CHECK(rr[i] == e);
        }
    }
}

static void nonblocking(MPI_Comm ic) {
    /* Several at once, completed together */
    int v = wrank + 1, s = 0, b = -1, a2a[64], r2a[64];
    for (int j = 0; j < rsize; j++) a2a[j] = wrank * 100 + j;
    MPI_Request reqs[4];
    OK(MPI_Iallreduce(&v, &s, 1, MPI_INT, MPI_SUM, ic, &reqs[0]));
    int root = in_a ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    if (root == MPI_ROOT) b = 4242;
    OK(MPI_Ibcast(&b, 1, MPI_INT, root, ic, &reqs[1]));
    OK(MPI_Ialltoall(a2a, 1, MPI_INT, r2a, 1, MPI_INT, ic, &reqs[2]));
    OK(MPI_Ibarrier(ic, &reqs[3]));
    OK(MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE));
    int want = 0;
    for (int j = 0; j < rsize; j++) want += remote[j] + 1;
    CHECK(s == want);
    CHECK(b == (root == MPI_PROC_NULL ? -1 : 4242));
    for (int j = 0; j < rsize; j++) CHECK(r2a[j] == remote[j] * 100 + rank);
    /* Persistent: started twice with new data */
    MPI_Request p;
    OK(MPI_Allreduce_init(&v, &s, 1, MPI_INT, MPI_MAX, ic, MPI_INFO_NULL, &p));
    for (int round = 0; round < 2; round++) {
        v = wrank * (round + 1);
        OK(MPI_Start(&p));
        OK(MPI_Wait(&p, MPI_STATUS_IGNORE));
        int max = 0;
        for (int j = 0; j < rsize; j++) max = remote[j] > max ? remote[j] : max;
        CHECK(s == max * (round + 1));
    }
    OK(MPI_Request_free(&p));
}

static void errors(MPI_Comm ic) {
    int x = 1, y = 0;
    FAILS(MPI_Allreduce(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_ARG);
    FAILS(MPI_Bcast(&x, 1, MPI_INT, rsize, ic), MPI_ERR_ROOT);
    FAILS(MPI_Bcast(&x, 1, MPI_INT, -7, ic), MPI_ERR_ROOT);
    FAILS(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM);
    FAILS(MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM);
    int all[64];
    FAILS(MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, all, 1, MPI_INT, ic), MPI_ERR_ARG);
}

int main(int argc, char **argv) {
    test_init(&argc, &argv, &wrank, &wsize);
    CHECK(wsize <= 64);
    if (wsize < 2) {
        test_finish(wrank, "intercomm_coll");
        return 0;
    }
    int half = wsize / 2;
    in_a = wrank < half;
    int na = half, nb = wsize - half;
    MPI_Comm local, ic;
    OK(MPI_Comm_split(MPI_COMM_WORLD, !in_a, wrank, &local));
    OK(MPI_Comm_rank(local, &rank));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? half : 0, 1, &ic));
    OK(MPI_Comm_size(ic, &size));
    OK(MPI_Comm_remote_size(ic, &rsize));
    for (int j = 0; j < rsize; j++) remote[j] = in_a ? half + j : j;
    rooted(ic, na, nb);
    exchanges(ic);
    nonblocking(ic);
    errors(ic);
    /* The same on a dup, and on groups split unevenly (A: rank 0 only; B: the rest). */
    MPI_Comm dup;
    OK(MPI_Comm_dup(ic, &dup));
    exchanges(dup);
    OK(MPI_Comm_free(&dup));
    OK(MPI_Comm_free(&ic));
    OK(MPI_Comm_free(&local));
    in_a = wrank == 0;
    OK(MPI_Comm_split(MPI_COMM_WORLD, !in_a, wrank, &local));
    OK(MPI_Comm_rank(local, &rank));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a ? 1 : 0, 2, &ic));
    OK(MPI_Comm_size(ic, &size));
    OK(MPI_Comm_remote_size(ic, &rsize));
    for (int j = 0; j < rsize; j++) remote[j] = in_a ? 1 + j : j;
    rooted(ic, 1, wsize - 1);
    exchanges(ic);
    nonblocking(ic);
    OK(MPI_Comm_free(&ic));
    OK(MPI_Comm_free(&local));
    test_finish(wrank, "intercomm_coll");
    return 0;
}
