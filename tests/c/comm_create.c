/* comm_create.c: communicators made from groups and by node, on any number of ranks.
 * MPI_Comm_create with one group for all (reversed world), with a subgroup (the others get
 * MPI_COMM_NULL), with disjoint groups per process, with MPI_GROUP_EMPTY; MPI_Comm_create_group
 * called by the group's members only (the evens and the odds at once, with the same tag),
 * many times in a row, while a user receive with the same tag is posted on the parent (which
 * it must not match); MPI_Comm_split_type by node (SHARED, with keys, MPI_UNDEFINED, the
 * hardware hints); and the error classes. Each new communicator is checked by traffic on it. */
#include "check.h"
#include <string.h>

/* Checks that `comm` holds the world ranks `members[0..n)` in this order: a ring exchange and
 * an allreduce on it. */
static void check_comm(MPI_Comm comm, int n, const int *members) {
    int rank, size, wrank;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    OK(MPI_Comm_size(comm, &size));
    OK(MPI_Comm_rank(comm, &rank));
    CHECK(size == n && members[rank] == wrank);
    int got = -1;
    OK(MPI_Sendrecv(&wrank, 1, MPI_INT, (rank + 1) % size, 3, &got, 1, MPI_INT,
                    (rank + size - 1) % size, 3, comm, MPI_STATUS_IGNORE));
    CHECK(got == members[(rank + size - 1) % size]);
    int sum = 0, want = 0;
    for (int i = 0; i < n; i++) want += members[i];
    OK(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == want);
}

static MPI_Group group_of(MPI_Group world, int n, const int *ranks) {
    MPI_Group g;
    OK(MPI_Group_incl(world, n, ranks, &g));
    return g;
}

static void free_group(MPI_Group *g) {
    if (*g != MPI_GROUP_EMPTY) OK(MPI_Group_free(g));
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    CHECK(size <= 64);
    MPI_Group world;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int rev[64], evens[64], odds[64], ne = 0, no = 0;
    for (int i = 0; i < size; i++) {
        rev[i] = size - 1 - i;
        if (i % 2 == 0) evens[ne++] = i;
        else odds[no++] = i;
    }
    MPI_Comm c;

    /* Comm_create: the reversed world */
    MPI_Group g = group_of(world, size, rev);
    OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    check_comm(c, size, rev);
    MPI_Errhandler eh;
    OK(MPI_Comm_get_errhandler(c, &eh));
    CHECK(eh == MPI_ERRORS_RETURN); /* inherited */
    OK(MPI_Comm_free(&c));
    free_group(&g);

    /* Comm_create: the evens only; the odds get MPI_COMM_NULL */
    g = group_of(world, ne, evens);
    OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    if (rank % 2 == 0) {
        check_comm(c, ne, evens);
        OK(MPI_Comm_free(&c));
    } else {
        CHECK(c == MPI_COMM_NULL);
    }
    free_group(&g);

    /* Comm_create: disjoint groups, each process passing its own */
    g = rank % 2 == 0 ? group_of(world, ne, evens) : group_of(world, no, odds);
    OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    if (rank % 2 == 0) check_comm(c, ne, evens);
    else check_comm(c, no, odds);
    OK(MPI_Comm_free(&c));
    free_group(&g);

    /* Comm_create: the empty group, and from a communicator that is not the world */
    OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL);
    MPI_Comm half;
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half)); /* reversed within its parity */
    MPI_Group hg, hrev;
    OK(MPI_Comm_group(half, &hg));
    int hsize;
    OK(MPI_Group_size(hg, &hsize));
    int hr[64], hmembers[64];
    for (int i = 0; i < hsize; i++) hr[i] = hsize - 1 - i;
    OK(MPI_Group_incl(hg, hsize, hr, &hrev)); /* back to ascending world order */
    for (int i = 0; i < hsize; i++) hmembers[i] = 2 * i + rank % 2;
    OK(MPI_Comm_create(half, hrev, &c));
    check_comm(c, hsize, hmembers);
    OK(MPI_Comm_free(&c));

    /* Comm_create_group: the evens and the odds at the same time, same tag; many in a row */
    for (int round = 0; round < 20; round++) {
        g = rank % 2 == 0 ? group_of(world, ne, evens) : group_of(world, no, odds);
        OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 11, &c));
        if (rank % 2 == 0) check_comm(c, ne, evens);
        else check_comm(c, no, odds);
        OK(MPI_Comm_free(&c));
        free_group(&g);
    }

    /* Comm_create_group never matches user receives with its tag on the parent */
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int in = -1, token = 1000 + rank;
    MPI_Request rq;
    OK(MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 5, dup, &rq));
    g = group_of(world, size, rev);
    OK(MPI_Comm_create_group(dup, g, 5, &c));
    check_comm(c, size, rev);
    int flag = 1;
    OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag);
    OK(MPI_Barrier(dup)); /* nobody sends before everyone has looked */
    OK(MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 5, dup));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(in == 1000 + (rank + size - 1) % size);
    /* a communicator made from one made by create_group */
    MPI_Comm c2;
    MPI_Group g2;
    OK(MPI_Comm_group(c, &g2));
    OK(MPI_Comm_create_group(c, g2, 0, &c2));
    check_comm(c2, size, rev);
    OK(MPI_Comm_free(&c2));
    OK(MPI_Group_free(&g2));
    OK(MPI_Comm_free(&c));
    free_group(&g);

    /* a process outside the group gets MPI_COMM_NULL at once, alone */
    if (size > 1) {
        g = group_of(world, 1, (int[]){(rank + 1) % size});
        OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 2, &c));
        CHECK(c == MPI_COMM_NULL);
        free_group(&g);
    }
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 2, &c));
    CHECK(c == MPI_COMM_NULL);
    /* a group of the calling process alone */
    g = group_of(world, 1, &rank);
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 2, &c));
    check_comm(c, 1, &rank);
    OK(MPI_Comm_free(&c));
    free_group(&g);

    /* split_type: every rank here shares this node */
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL, &c));
    check_comm(c, size, rev);
    OK(MPI_Comm_free(&c));
    OK(MPI_Comm_split_type(dup, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                           &c));
    if (rank % 2) {
        CHECK(c == MPI_COMM_NULL);
    } else {
        check_comm(c, ne, evens);
        OK(MPI_Comm_free(&c));
    }
    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL); /* no hint */
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL);
    OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, info, &c));
    int all[64];
    for (int i = 0; i < size; i++) all[i] = i;
    check_comm(c, size, all);
    OK(MPI_Comm_free(&c));
    OK(MPI_Info_set(info, "mpi_hw_resource_type", "socket"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL);
    OK(MPI_Info_delete(info, "mpi_hw_resource_type"));
    /* unguided: one node cannot be split into strict subsets */
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL);
    OK(MPI_Comm_split_type(half, MPI_COMM_TYPE_SHARED, rank, info, &c)); /* world order */
    check_comm(c, hsize, hmembers);
    OK(MPI_Comm_free(&c));

    /* errors */
    FAILS(MPI_Comm_create_group(MPI_COMM_WORLD, world, -1, &c), MPI_ERR_TAG);
    FAILS(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_NULL, 0, &c), MPI_ERR_GROUP);
    FAILS(MPI_Comm_create_group(MPI_COMM_NULL, world, 0, &c), MPI_ERR_COMM);
    FAILS(MPI_Comm_create_group(MPI_COMM_WORLD, world, 0, NULL), MPI_ERR_ARG);
    if (size > 1) {
        /* the world's group is no subgroup of the half's; every member of half still agrees */
        OK(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
        FAILS(MPI_Comm_create(half, world, &c), MPI_ERR_GROUP);
        FAILS(MPI_Comm_create_group(half, world, 0, &c), MPI_ERR_GROUP);
    }
    FAILS(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG);
    MPI_Info freed;
    OK(MPI_Info_create(&freed));
    MPI_Info stale = freed;
    OK(MPI_Info_free(&freed));
    FAILS(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, stale, &c), MPI_ERR_INFO);
    OK(MPI_Comm_create(MPI_COMM_WORLD, world, &c)); /* everyone still in step */
    check_comm(c, size, all);
    OK(MPI_Comm_free(&c));

    OK(MPI_Info_free(&info));
    OK(MPI_Group_free(&hrev));
    OK(MPI_Group_free(&hg));
    OK(MPI_Comm_free(&half));
    OK(MPI_Comm_free(&dup));
    OK(MPI_Group_free(&world));
    test_finish(rank, "comm_create");
    return 0;
}
