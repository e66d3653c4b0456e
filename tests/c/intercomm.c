/* intercomm.c: inter-communicators through the C ABI, on 2 or more ranks (alone, the test
 * checks only the error classes of the intra-communicator it has). The world splits into a
 * lower group A (ranks 0..size/2-1) and an upper group B; MPI_Intercomm_create joins them
 * (leaders meeting on MPI_COMM_WORLD, non-leaders passing MPI_COMM_NULL as peer; a second one
 * with the last member of each group as leader; a third whose leaders meet on the first
 * inter-communicator). Checked: MPI_Comm_test_inter, sizes, MPI_Comm_group and
 * MPI_Comm_remote_group, point-to-point addressed to remote ranks (status sources are remote
 * ranks, MPI_ANY_SOURCE included), MPI_Comm_dup, MPI_Comm_split (a color absent from the other
 * group gives MPI_COMM_NULL), MPI_Comm_split_type by node, MPI_Comm_create, MPI_Comm_compare, MPI_Intercomm_merge with
 * every high flag, MPI_Comm_set_name/get_name, and the error classes of calls that need the
 * other kind of communicator. */
#include "check.h"
#include <string.h>

static int wrank, wsize;

/* The world ranks of `comm`'s local group (remote: of its remote group) into `out`; returns
 * their number. */
static int members(MPI_Comm comm, int remote, int *out) {
    MPI_Group g, world;
    int n;
    if (remote) OK(MPI_Comm_remote_group(comm, &g));
    else OK(MPI_Comm_group(comm, &g));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    OK(MPI_Group_size(g, &n));
    int ranks[64];
    for (int i = 0; i < n; i++) ranks[i] = i;
    OK(MPI_Group_translate_ranks(g, n, ranks, world, out));
    OK(MPI_Group_free(&g));
    OK(MPI_Group_free(&world));
    return n;
}

/* Every process sends (its world rank, the destination's rank) to every remote rank; receives
 * one message from each remote rank by rank, then as many again from MPI_ANY_SOURCE. */
static void check_traffic(MPI_Comm ic) {
    int rank, rsize, remote[64];
    OK(MPI_Comm_rank(ic, &rank));
    OK(MPI_Comm_remote_size(ic, &rsize));
    CHECK(members(ic, 1, remote) == rsize);
    int out[64][2];
    MPI_Request reqs[128];
    for (int round = 0; round < 2; round++) {
        for (int j = 0; j < rsize; j++) {
            out[j][0] = wrank;
            out[j][1] = j;
            OK(MPI_Isend(out[j], 2, MPI_INT, j, 5 + round, ic, &reqs[round * rsize + j]));
        }
    }
    for (int j = 0; j < rsize; j++) {
        int in[2];
        MPI_Status st;
        OK(MPI_Recv(in, 2, MPI_INT, j, 5, ic, &st));
        CHECK(in[0] == remote[j] && in[1] == rank && st.MPI_SOURCE == j && st.MPI_TAG == 5);
    }
    int seen = 0;
    for (int j = 0; j < rsize; j++) {
        int in[2];
        MPI_Status st;
        OK(MPI_Recv(in, 2, MPI_INT, MPI_ANY_SOURCE, 6, ic, &st));
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize);
        CHECK(in[0] == remote[st.MPI_SOURCE] && in[1] == rank);
        seen |= 1 << st.MPI_SOURCE;
    }
    CHECK(seen == (1 << rsize) - 1);
    OK(MPI_Waitall(2 * rsize, reqs, MPI_STATUSES_IGNORE));
    /* A rank of the local group that is past the remote group's size is no destination. */
    int x = 0;
    FAILS(MPI_Send(&x, 1, MPI_INT, rsize, 0, ic), MPI_ERR_RANK);
    OK(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, ic));
}

/* Checks that `ic` joins the world ranks `local[0..nl)` (this process at `rank`) with
 * `remote[0..nr)`, and that messages flow. */
static void check_inter(MPI_Comm ic, int nl, const int *local, int nr, const int *remote) {
    int flag, size, rsize, rank, got[64];
    OK(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag == 1);
    OK(MPI_Comm_size(ic, &size));
    OK(MPI_Comm_remote_size(ic, &rsize));
    OK(MPI_Comm_rank(ic, &rank));
    CHECK(size == nl && rsize == nr && local[rank] == wrank);
    CHECK(members(ic, 0, got) == nl);
    for (int i = 0; i < nl; i++) CHECK(got[i] == local[i]);
    CHECK(members(ic, 1, got) == nr);
    for (int i = 0; i < nr; i++) CHECK(got[i] == remote[i]);
    check_traffic(ic);
}

/* Checks that the intra-communicator `c` holds the world ranks `m[0..n)` in order. */
static void check_intra(MPI_Comm c, int n, const int *m) {
    int flag, size, rank, sum = 0, want = 0;
    OK(MPI_Comm_test_inter(c, &flag));
    OK(MPI_Comm_size(c, &size));
    OK(MPI_Comm_rank(c, &rank));
    CHECK(flag == 0 && size == n && m[rank] == wrank);
    for (int i = 0; i < n; i++) want += m[i] * (i + 1);
    int mine = wrank * (rank + 1);
    OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == want);
}

int main(int argc, char **argv) {
    test_init(&argc, &argv, &wrank, &wsize);
    CHECK(wsize <= 30);
    int flag, n;
    OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    CHECK(flag == 0);
    FAILS(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), MPI_ERR_COMM);
    MPI_Group g;
    FAILS(MPI_Comm_remote_group(MPI_COMM_SELF, &g), MPI_ERR_COMM);
    MPI_Comm bad;
    FAILS(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &bad), MPI_ERR_COMM);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14);
    OK(MPI_Comm_get_name(MPI_COMM_NULL, name, &len));
    CHECK(strcmp(name, "MPI_COMM_NULL") == 0);
    if (wsize < 2) {
        test_finish(wrank, "intercomm");
        return 0;
    }

    /* Groups A (lower half) and B (upper half). */
    int half = wsize / 2, in_a = wrank < half;
    int a[32], b[32], na = half, nb = wsize - half;
    for (int i = 0; i < na; i++) a[i] = i;
    for (int i = 0; i < nb; i++) b[i] = half + i;
    const int *mine = in_a ? a : b, *theirs = in_a ? b : a;
    int nmine = in_a ? na : nb, ntheirs = in_a ? nb : na;
    MPI_Comm local;
    OK(MPI_Comm_split(MPI_COMM_WORLD, !in_a, wrank, &local));
    int lrank;
    OK(MPI_Comm_rank(local, &lrank));

    /* Leaders: rank 0 of each group, meeting on the world. */
    MPI_Comm ic;
    int leader = lrank == 0;
    OK(MPI_Intercomm_create(local, 0, leader ? MPI_COMM_WORLD : MPI_COMM_NULL,
                            leader ? (in_a ? half : 0) : -1, 77, &ic));
    check_inter(ic, nmine, mine, ntheirs, theirs);
    FAILS(MPI_Intercomm_create(ic, 0, MPI_COMM_WORLD, 0, 1, &bad), MPI_ERR_COMM);

    /* Leaders: the last member of each group. */
    MPI_Comm ic2;
    leader = lrank == nmine - 1;
    OK(MPI_Intercomm_create(local, nmine - 1, MPI_COMM_WORLD,
                            in_a ? wsize - 1 : half - 1, 78, &ic2));
    check_inter(ic2, nmine, mine, ntheirs, theirs);

    /* Leaders meeting on the first inter-communicator (the other leader: its remote rank 0). */
    MPI_Comm ic3;
    OK(MPI_Intercomm_create(local, 0, ic, 0, 79, &ic3));
    check_inter(ic3, nmine, mine, ntheirs, theirs);

    /* Compare. */
    int cmp;
    OK(MPI_Comm_compare(ic, ic, &cmp));
    CHECK(cmp == MPI_IDENT);
    OK(MPI_Comm_compare(ic, ic2, &cmp));
    CHECK(cmp == MPI_CONGRUENT);
    OK(MPI_Comm_compare(ic, local, &cmp));
    CHECK(cmp == MPI_UNEQUAL);
    OK(MPI_Comm_compare(MPI_COMM_WORLD, ic, &cmp));
    CHECK(cmp == MPI_UNEQUAL);

    /* Dup: an inter-communicator with the same groups, on its own context. */
    MPI_Comm dup;
    OK(MPI_Comm_set_name(ic, "A-B"));
    OK(MPI_Comm_dup(ic, &dup));
    OK(MPI_Comm_get_name(ic, name, &len));
    CHECK(strcmp(name, "A-B") == 0 && len == 3);
    OK(MPI_Comm_get_name(dup, name, &len)); /* names are not inherited */
    CHECK(len == 0 && name[0] == 0);
    OK(MPI_Comm_compare(ic, dup, &cmp));
    CHECK(cmp == MPI_CONGRUENT);
    int tok = wrank, got = -1;
    /* A message on ic must not reach a receive on dup. */
    MPI_Request r;
    OK(MPI_Irecv(&got, 1, MPI_INT, 0, 9, dup, &r));
    if (lrank == 0) OK(MPI_Send(&tok, 1, MPI_INT, 0, 9, ic));
    if (lrank == 0) {
        int on_ic = -1;
        OK(MPI_Recv(&on_ic, 1, MPI_INT, 0, 9, ic, MPI_STATUS_IGNORE));
        CHECK(on_ic == theirs[0]);
    }
    if (lrank == 0) OK(MPI_Send(&tok, 1, MPI_INT, 0, 9, dup));
    if (lrank == 0) {
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(got == theirs[0]);
    } else {
        OK(MPI_Cancel(&r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    check_inter(dup, nmine, mine, ntheirs, theirs);

    /* Split: color = rank in the group % 2, key reversing the order. */
    MPI_Comm sp;
    OK(MPI_Comm_split(ic, lrank % 2, -lrank, &sp));
    int sl[32], sr[32], nsl = 0, nsr = 0;
    for (int i = nmine - 1; i >= 0; i--)
        if (i % 2 == lrank % 2) sl[nsl++] = mine[i];
    for (int i = ntheirs - 1; i >= 0; i--)
        if (i % 2 == lrank % 2) sr[nsr++] = theirs[i];
    if (nsr == 0) {
        CHECK(sp == MPI_COMM_NULL);
    } else {
        check_inter(sp, nsl, sl, nsr, sr);
        OK(MPI_Comm_free(&sp));
    }
    OK(MPI_Comm_split(ic, in_a ? MPI_UNDEFINED : 0, 0, &sp));
    CHECK(sp == MPI_COMM_NULL);

    /* Create: each group without its rank 0. */
    MPI_Group lg, sub;
    OK(MPI_Comm_group(ic, &lg));
    int zero = 0;
    OK(MPI_Group_excl(lg, 1, &zero, &sub));
    MPI_Comm cr;
    OK(MPI_Comm_create(ic, sub, &cr));
    if (lrank == 0 || nmine == 1 || ntheirs == 1) {
        CHECK(cr == MPI_COMM_NULL);
    } else {
        check_inter(cr, nmine - 1, mine + 1, ntheirs - 1, theirs + 1);
        OK(MPI_Comm_free(&cr));
    }
    if (sub != MPI_GROUP_EMPTY) OK(MPI_Group_free(&sub));
    OK(MPI_Group_free(&lg));

    /* Merge: the group with high = 0 first; with equal flags, A (lower world ranks) first. */
    int world_order[64], b_first[64];
    for (int i = 0; i < wsize; i++) world_order[i] = i;
    for (int i = 0; i < nb; i++) b_first[i] = b[i];
    for (int i = 0; i < na; i++) b_first[nb + i] = a[i];
    MPI_Comm m;
    OK(MPI_Intercomm_merge(ic, !in_a, &m));
    check_intra(m, wsize, world_order);
    OK(MPI_Comm_free(&m));
    OK(MPI_Intercomm_merge(ic2, in_a, &m));
    check_intra(m, wsize, b_first);
    OK(MPI_Comm_free(&m));
    OK(MPI_Intercomm_merge(dup, 1, &m));
    check_intra(m, wsize, world_order);
    OK(MPI_Comm_free(&m));

    /* Split by node (every rank runs on this one): both groups whole, joined again. */
    OK(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sp));
    check_inter(sp, nmine, mine, ntheirs, theirs);
    OK(MPI_Comm_free(&sp));
    OK(MPI_Comm_split_type(ic, MPI_UNDEFINED, 0, MPI_INFO_NULL, &sp));
    CHECK(sp == MPI_COMM_NULL);

    /* Calls for intra-communicators only. */
    MPI_Group wg;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    FAILS(MPI_Comm_create_group(ic, wg, 0, &bad), MPI_ERR_COMM);
    OK(MPI_Group_free(&wg));

    OK(MPI_Comm_free(&dup));
    OK(MPI_Comm_free(&ic3));
    OK(MPI_Comm_free(&ic2));
    OK(MPI_Comm_free(&ic));
    OK(MPI_Comm_free(&local));
    test_finish(wrank, "intercomm");
    return 0;
}
