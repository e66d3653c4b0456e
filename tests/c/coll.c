/* coll.c: the collectives through the C ABI on any number of ranks (1 to many, odd sizes
 * included), each checked against values every rank can compute: Barrier, Bcast, Reduce and
 * Allreduce (several ops and types), Gather(v), Scatter(v), Allgather(v), Alltoall(v), with
 * MPI_IN_PLACE, and on a split communicator with a non-zero root. */
#include "check.h"
#include <stdbool.h>
#include <string.h>

static void run(MPI_Comm comm) {
    int rank, size;
    OK(MPI_Comm_rank(comm, &rank));
    OK(MPI_Comm_size(comm, &size));
    OK(MPI_Barrier(comm));

    for (int root = 0; root < size; root++) {
        /* Bcast */
        double b[300];
        for (int i = 0; i < 300; i++) b[i] = rank == root ? root + i * 0.5 : -1;
        OK(MPI_Bcast(b, 300, MPI_DOUBLE, root, comm));
        for (int i = 0; i < 300; i++) CHECK(b[i] == root + i * 0.5);

        /* Reduce (sum of ints, max of doubles), and in place at the root */
        int v[3] = {rank, 2 * rank, 1}, r[3] = {0, 0, 0};
        OK(MPI_Reduce(v, r, 3, MPI_INT, MPI_SUM, root, comm));
        if (rank == root) {
            CHECK(r[0] == size * (size - 1) / 2 && r[1] == size * (size - 1) && r[2] == size);
        }
        double d = rank * 1.5, dm = 0;
        OK(MPI_Reduce(&d, &dm, 1, MPI_DOUBLE, MPI_MAX, root, comm));
        if (rank == root) CHECK(dm == (size - 1) * 1.5);
        long inplace = rank + 1;
        if (rank == root) {
            OK(MPI_Reduce(MPI_IN_PLACE, &inplace, 1, MPI_LONG, MPI_PROD, root, comm));
            long f = 1;
            for (int i = 1; i <= size; i++) f *= i;
            CHECK(inplace == f);
        } else {
            OK(MPI_Reduce(&inplace, NULL, 1, MPI_LONG, MPI_PROD, root, comm));
        }

        /* Gather and Gatherv (rank i sends i+1 ints), in place at the root */
        int mine[2] = {rank * 10, rank * 10 + 1};
        int all[2 * 64];
        OK(MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, root, comm));
        if (rank == root)
            for (int i = 0; i < size; i++) CHECK(all[2 * i] == i * 10 && all[2 * i + 1] == i * 10 + 1);
        int counts[64], displs[64], total = 0;
        for (int i = 0; i < size; i++) {
            counts[i] = i + 1;
            displs[i] = total;
            total += i + 1;
        }
        int vsend[64], vall[64 * 65 / 2];
        for (int i = 0; i <= rank; i++) vsend[i] = rank * 100 + i;
        if (rank == root) {
            memcpy(vall + displs[rank], vsend, (rank + 1) * sizeof(int));
            OK(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_INT, vall, counts, displs, MPI_INT, root, comm));
            for (int i = 0; i < size; i++)
                for (int j = 0; j <= i; j++) CHECK(vall[displs[i] + j] == i * 100 + j);
        } else {
            OK(MPI_Gatherv(vsend, rank + 1, MPI_INT, NULL, NULL, NULL, MPI_INT, root, comm));
        }

        /* Scatter and Scatterv */
        unsigned short sc[64 * 3], got[3];
        for (int i = 0; i < 3 * size; i++) sc[i] = (unsigned short)(i + root);
        OK(MPI_Scatter(sc, 3, MPI_UNSIGNED_SHORT, got, 3, MPI_UNSIGNED_SHORT, root, comm));
        for (int j = 0; j < 3; j++) CHECK(got[j] == 3 * rank + j + root);
        int sv[64 * 65 / 2], sgot[64];
        for (int i = 0; i < total; i++) sv[i] = i - root;
        OK(MPI_Scatterv(sv, counts, displs, MPI_INT, sgot, rank + 1, MPI_INT, root, comm));
        for (int j = 0; j <= rank; j++) CHECK(sgot[j] == displs[rank] + j - root);
    }

    /* Allreduce: sum, min, logical and bitwise ops, in place */
    int x = rank + 1, s = 0;
    OK(MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, comm));
    CHECK(s == size * (size + 1) / 2);
    float f = 10.0f - rank, fmin;
    OK(MPI_Allreduce(&f, &fmin, 1, MPI_FLOAT, MPI_MIN, comm));
    CHECK(fmin == 10.0f - (size - 1));
    bool t = true, all_t = false, any_f = true;
    OK(MPI_Allreduce(&t, &all_t, 1, MPI_C_BOOL, MPI_LAND, comm));
    CHECK(all_t);
    bool odd = rank % 2;
    OK(MPI_Allreduce(&odd, &any_f, 1, MPI_C_BOOL, MPI_LOR, comm));
    CHECK(any_f == (size > 1));
    unsigned bits = 1u << (rank % 32);
    OK(MPI_Allreduce(MPI_IN_PLACE, &bits, 1, MPI_UNSIGNED, MPI_BOR, comm));
    unsigned expect = 0;
    for (int i = 0; i < size; i++) expect |= 1u << (i % 32);
    CHECK(bits == expect);
    unsigned char by = 0xF0 | (unsigned char)rank, band;
    OK(MPI_Allreduce(&by, &band, 1, MPI_BYTE, MPI_BAND, comm));
    CHECK((band & 0xF0) == 0xF0);
    int64_t big[1000];
    for (int i = 0; i < 1000; i++) big[i] = i * (int64_t)(rank + 1);
    OK(MPI_Allreduce(MPI_IN_PLACE, big, 1000, MPI_INT64_T, MPI_SUM, comm));
    for (int i = 0; i < 1000; i++) CHECK(big[i] == i * (int64_t)size * (size + 1) / 2);

    /* Allgather, in place, and Allgatherv */
    int ag[64];
    int me = rank * 7;
    OK(MPI_Allgather(&me, 1, MPI_INT, ag, 1, MPI_INT, comm));
    for (int i = 0; i < size; i++) CHECK(ag[i] == i * 7);
    for (int i = 0; i < size; i++) ag[i] = i == rank ? rank * 9 : -1;
    OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_INT, ag, 1, MPI_INT, comm));
    for (int i = 0; i < size; i++) CHECK(ag[i] == i * 9);
    int counts[64], displs[64], total = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = size - i;
        displs[i] = total + 1; /* a gap before each block */
        total += size - i + 1;
    }
    double mv[64], agv[64 * 66];
    for (int j = 0; j < size - rank; j++) mv[j] = rank + j / 10.0;
    OK(MPI_Allgatherv(mv, size - rank, MPI_DOUBLE, agv, counts, displs, MPI_DOUBLE, comm));
    for (int i = 0; i < size; i++)
        for (int j = 0; j < counts[i]; j++) CHECK(agv[displs[i] + j] == i + j / 10.0);

    /* Alltoall, in place, and Alltoallv (rank i sends j+1 elements to rank j) */
    int a2a[64 * 2], r2a[64 * 2];
    for (int j = 0; j < size; j++) {
        a2a[2 * j] = rank * 1000 + j;
        a2a[2 * j + 1] = -(rank * 1000 + j);
    }
    OK(MPI_Alltoall(a2a, 2, MPI_INT, r2a, 2, MPI_INT, comm));
    for (int i = 0; i < size; i++) CHECK(r2a[2 * i] == i * 1000 + rank && r2a[2 * i + 1] == -(i * 1000 + rank));
    OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_INT, a2a, 2, MPI_INT, comm));
    for (int i = 0; i < size; i++) CHECK(a2a[2 * i] == i * 1000 + rank);
    int scounts[64], sdispls[64], rcounts[64], rdispls[64], st = 0, rt = 0;
    for (int j = 0; j < size; j++) {
        scounts[j] = j + 1;
        sdispls[j] = st;
        st += j + 1;
        rcounts[j] = rank + 1;
        rdispls[j] = rt;
        rt += rank + 1;
    }
    int vs[64 * 65 / 2], vr[64 * 65];
    for (int j = 0; j < size; j++)
        for (int k = 0; k <= j; k++) vs[sdispls[j] + k] = rank * 100 + j;
    OK(MPI_Alltoallv(vs, scounts, sdispls, MPI_INT, vr, rcounts, rdispls, MPI_INT, comm));
    for (int i = 0; i < size; i++)
        for (int k = 0; k <= rank; k++) CHECK(vr[rdispls[i] + k] == i * 100 + rank);
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    CHECK(size <= 64);
    run(MPI_COMM_WORLD);
    run(MPI_COMM_SELF);
    /* A communicator of the ranks but the first (odd size on 4 ranks), in reverse order. */
    MPI_Comm sub;
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 && size > 1 ? MPI_UNDEFINED : 1, size - rank, &sub));
    if (sub != MPI_COMM_NULL) {
        run(sub);
        OK(MPI_Comm_free(&sub));
    }
    test_finish(rank, "coll");
    return 0;
}
