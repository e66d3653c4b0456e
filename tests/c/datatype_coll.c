/* datatype_coll.c: collectives and Sendrecv_replace with derived datatypes on any number of
 * ranks: a strided column broadcast, reductions over derived types of one element type (and the
 * error of a mixed one), gather/scatter/allgather between vectors and contiguous ints, and
 * Alltoall(v) whose blocks are strided on one side and contiguous on the other (each block one
 * typed message), including a rank's own block. Every value is checked. */
#include "check.h"
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    MPI_Comm comm = MPI_COMM_WORLD;

    /* every other int: vector(n, 1, 2) resized to extent 2 ints, so counts step over pairs */
    MPI_Datatype strided, every_other;
    OK(MPI_Type_vector(4, 1, 2, MPI_INT, &strided));
    OK(MPI_Type_commit(&strided));
    OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every_other));
    OK(MPI_Type_commit(&every_other));

    for (int root = 0; root < size; root++) {
        /* Bcast of a strided column: only the strided ints change on the receivers */
        int col[8];
        for (int i = 0; i < 8; i++) col[i] = rank == root ? 100 * root + i : -1;
        OK(MPI_Bcast(col, 1, strided, root, comm));
        for (int i = 0; i < 8; i++)
            CHECK(col[i] == (i % 2 == 0 || rank == root ? 100 * root + i : -1));

        /* Reduce and Allreduce on a derived type of ints (sum), in place at the root */
        int v[8], r[8];
        for (int i = 0; i < 8; i++) v[i] = rank + i, r[i] = -7;
        OK(MPI_Reduce(v, r, 1, strided, MPI_SUM, root, comm));
        if (rank == root) {
            for (int i = 0; i < 8; i++)
                CHECK(r[i] == (i % 2 == 0 ? size * (size - 1) / 2 + size * i : -7));
        }
        for (int i = 0; i < 8; i++) v[i] = rank + i;
        OK(MPI_Allreduce(MPI_IN_PLACE, v, 4, every_other, MPI_MAX, comm));
        for (int i = 0; i < 8; i++) CHECK(v[i] == (i % 2 == 0 ? size - 1 + i : rank + i));

        /* Gather: each rank's strided ints into contiguous blocks at the root */
        int mine[8], *all = malloc(sizeof(int) * 4 * size);
        for (int i = 0; i < 8; i++) mine[i] = 10 * rank + i;
        OK(MPI_Gather(mine, 1, strided, all, 4, MPI_INT, root, comm));
        if (rank == root) {
            for (int p = 0; p < size; p++)
                for (int i = 0; i < 4; i++) CHECK(all[4 * p + i] == 10 * p + 2 * i);
        }
        /* Scatter back: contiguous blocks at the root into strided ints */
        int back[8];
        for (int i = 0; i < 8; i++) back[i] = -1;
        OK(MPI_Scatter(all, 4, MPI_INT, back, 1, strided, root, comm));
        for (int i = 0; i < 8; i++) CHECK(back[i] == (i % 2 == 0 ? 10 * rank + i : -1));
        free(all);
    }

    /* Allgather into every other int of the receive buffer */
    int one = 5 * rank + 1, *ev = malloc(sizeof(int) * 2 * size);
    for (int i = 0; i < 2 * size; i++) ev[i] = -1;
    OK(MPI_Allgather(&one, 1, MPI_INT, ev, 1, every_other, comm));
    for (int p = 0; p < size; p++) CHECK(ev[2 * p] == 5 * p + 1 && ev[2 * p + 1] == -1);
    free(ev);

    /* Alltoall: block p (every other int of 2 * 3 ints) to rank p, received contiguously */
    int *sbuf = malloc(sizeof(int) * 6 * size), *rbuf = malloc(sizeof(int) * 3 * size);
    for (int i = 0; i < 6 * size; i++) sbuf[i] = 1000 * rank + i;
    OK(MPI_Alltoall(sbuf, 3, every_other, rbuf, 3, MPI_INT, comm));
    for (int p = 0; p < size; p++)
        for (int i = 0; i < 3; i++) CHECK(rbuf[3 * p + i] == 1000 * p + 6 * rank + 2 * i);
    /* and the reverse direction: contiguous out, strided in */
    int *strided_in = malloc(sizeof(int) * 6 * size);
    for (int i = 0; i < 6 * size; i++) strided_in[i] = -1;
    OK(MPI_Alltoall(rbuf, 3, MPI_INT, strided_in, 3, every_other, comm));
    for (int p = 0; p < size; p++)
        for (int i = 0; i < 3; i++) {
            CHECK(strided_in[6 * p + 2 * i] == 1000 * rank + 6 * p + 2 * i);
            CHECK(strided_in[6 * p + 2 * i + 1] == -1);
        }
    /* Ranks may use different types of the same signature: even ranks send strided blocks,
     * odd ranks contiguous ones; everybody receives contiguously. */
    int *mixed_out = malloc(sizeof(int) * 6 * size), *mixed_in = malloc(sizeof(int) * 3 * size);
    for (int i = 0; i < 6 * size; i++) mixed_out[i] = 100 * rank + i;
    if (rank % 2 == 0)
        OK(MPI_Alltoall(mixed_out, 3, every_other, mixed_in, 3, MPI_INT, comm));
    else
        OK(MPI_Alltoall(mixed_out, 3, MPI_INT, mixed_in, 3, MPI_INT, comm));
    for (int p = 0; p < size; p++)
        for (int i = 0; i < 3; i++)
            CHECK(mixed_in[3 * p + i] == 100 * p + (p % 2 == 0 ? 6 * rank + 2 * i : 3 * rank + i));
    free(mixed_out);
    free(mixed_in);

    /* Alltoallv: rank p gets p + 1 strided ints */
    int *sc = malloc(sizeof(int) * size), *sd = malloc(sizeof(int) * size);
    int *rc = malloc(sizeof(int) * size), *rd = malloc(sizeof(int) * size);
    int off = 0;
    for (int p = 0; p < size; p++) sc[p] = p + 1, sd[p] = off, off += p + 1;
    int *vs = malloc(sizeof(int) * 2 * off);
    for (int i = 0; i < 2 * off; i++) vs[i] = 7 * rank + i;
    for (int p = 0; p < size; p++) rc[p] = rank + 1, rd[p] = p * (rank + 1);
    int *vr = malloc(sizeof(int) * size * (rank + 1));
    OK(MPI_Alltoallv(vs, sc, sd, every_other, vr, rc, rd, MPI_INT, comm));
    for (int p = 0; p < size; p++) {
        int first = 0;
        for (int q = 0; q < rank; q++) first += q + 1;
        for (int i = 0; i <= rank; i++) CHECK(vr[p * (rank + 1) + i] == 7 * p + 2 * (first + i));
    }
    free(sbuf); free(rbuf); free(strided_in); free(sc); free(sd); free(rc); free(rd);
    free(vs); free(vr);

    /* A reduction on a type of mixed elements is refused */
    MPI_Datatype mixed;
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_INT};
    OK(MPI_Type_create_struct(2, bl, dp, ty, &mixed));
    OK(MPI_Type_commit(&mixed));
    char m1[16], m2[16];
    memset(m1, 0, sizeof m1);
    FAILS(MPI_Allreduce(m1, m2, 1, mixed, MPI_SUM, comm), MPI_ERR_OP);
    OK(MPI_Type_free(&mixed));

    /* Sendrecv_replace of a strided column around a ring */
    if (size > 1) {
        int ring[8];
        for (int i = 0; i < 8; i++) ring[i] = 10 * rank + i;
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        OK(MPI_Sendrecv_replace(ring, 1, strided, next, 3, prev, 3, comm, MPI_STATUS_IGNORE));
        for (int i = 0; i < 8; i++) CHECK(ring[i] == (i % 2 == 0 ? 10 * prev + i : 10 * rank + i));
    }

    OK(MPI_Type_free(&strided));
    OK(MPI_Type_free(&every_other));
    test_finish(rank, "datatype_coll");
    return 0;
}
