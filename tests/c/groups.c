/* groups.c: the group calls on any number of ranks: MPI_Comm_group, size and rank, translation
 * of ranks (MPI_PROC_NULL and MPI_UNDEFINED included), comparison, union, intersection and
 * difference in the standard's order, incl/excl and their range forms (negative strides, a last
 * rank outside the group), MPI_GROUP_EMPTY for every empty result, a group outliving its
 * communicator, and the error classes of bad ranks, bad ranges and bad handles. */
#include "check.h"
#include <stdbool.h>

static int members(MPI_Group g, int *out) {
    int n, world_of[64];
    MPI_Group world;
    OK(MPI_Group_size(g, &n));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    for (int i = 0; i < n; i++) world_of[i] = i;
    OK(MPI_Group_translate_ranks(g, n, world_of, world, out));
    OK(MPI_Group_free(&world));
    return n;
}

static void check_members(MPI_Group g, int n, const int *want) {
    int got[64];
    CHECK(members(g, got) == n);
    for (int i = 0; i < n; i++) CHECK(got[i] == want[i]);
}

static int compare(MPI_Group a, MPI_Group b) {
    int r = -1;
    OK(MPI_Group_compare(a, b, &r));
    return r;
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    CHECK(size <= 64);

    MPI_Group world, self, g, h, u;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    OK(MPI_Comm_group(MPI_COMM_SELF, &self));
    int n = -1, r = -1;
    OK(MPI_Group_size(world, &n));
    OK(MPI_Group_rank(world, &r));
    CHECK(n == size && r == rank);
    OK(MPI_Group_size(self, &n));
    OK(MPI_Group_rank(self, &r));
    CHECK(n == 1 && r == 0);
    OK(MPI_Group_size(MPI_GROUP_EMPTY, &n));
    OK(MPI_Group_rank(MPI_GROUP_EMPTY, &r));
    CHECK(n == 0 && r == MPI_UNDEFINED);

    /* translate: world -> self, with MPI_PROC_NULL */
    int from[66], to[66];
    for (int i = 0; i < size; i++) from[i] = i;
    from[size] = MPI_PROC_NULL;
    OK(MPI_Group_translate_ranks(world, size + 1, from, self, to));
    for (int i = 0; i < size; i++) CHECK(to[i] == (i == rank ? 0 : MPI_UNDEFINED));
    CHECK(to[size] == MPI_PROC_NULL);
    OK(MPI_Group_translate_ranks(world, 0, NULL, self, NULL));

    /* incl (reversed) and compare */
    int rev[64];
    for (int i = 0; i < size; i++) rev[i] = size - 1 - i;
    OK(MPI_Group_incl(world, size, rev, &g));
    check_members(g, size, rev);
    OK(MPI_Group_rank(g, &r));
    CHECK(r == size - 1 - rank);
    CHECK(compare(world, world) == MPI_IDENT);
    CHECK(compare(world, g) == (size == 1 ? MPI_IDENT : MPI_SIMILAR));
    CHECK(compare(world, self) == (size == 1 ? MPI_IDENT : MPI_UNEQUAL));
    CHECK(compare(MPI_GROUP_EMPTY, world) == MPI_UNEQUAL);
    CHECK(compare(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY) == MPI_IDENT);

    /* union: world reversed then self -> still the reversed world; self then world */
    OK(MPI_Group_union(g, self, &u));
    check_members(u, size, rev);
    OK(MPI_Group_free(&u));
    OK(MPI_Group_union(self, g, &u));
    int want[64], k = 0;
    want[k++] = rank;
    for (int i = 0; i < size; i++)
        if (rev[i] != rank) want[k++] = rev[i];
    check_members(u, size, want);
    OK(MPI_Group_free(&u));

    /* excl of the even ranks of the reversed group, intersection and difference */
    int evens[32], ne = 0;
    for (int i = 0; i < size; i += 2) evens[ne++] = i;
    OK(MPI_Group_excl(g, ne, evens, &h)); /* reversed world at odd positions */
    k = 0;
    for (int i = 1; i < size; i += 2) want[k++] = size - 1 - i;
    check_members(h, k, want);
    if (k == 0) CHECK(h == MPI_GROUP_EMPTY);
    OK(MPI_Group_intersection(world, h, &u)); /* in world order */
    int m = 0, inter[64];
    for (int i = 0; i < size; i++)
        for (int j = 0; j < k; j++)
            if (want[j] == i) inter[m++] = i;
    check_members(u, m, inter);
    if (u != MPI_GROUP_EMPTY) OK(MPI_Group_free(&u));
    OK(MPI_Group_difference(world, h, &u));
    int diff[64], d = 0;
    for (int i = 0; i < size; i++) {
        bool in = false;
        for (int j = 0; j < k; j++) in = in || want[j] == i;
        if (!in) diff[d++] = i;
    }
    check_members(u, d, diff);
    OK(MPI_Group_free(&u));
    OK(MPI_Group_difference(world, g, &u));
    CHECK(u == MPI_GROUP_EMPTY);
    OK(MPI_Group_free(&u)); /* freeing MPI_GROUP_EMPTY is allowed */
    CHECK(u == MPI_GROUP_NULL);
    if (h != MPI_GROUP_EMPTY) OK(MPI_Group_free(&h));

    /* ranges: odd ranks ascending, then every third rank descending from the last */
    int ranges[2][3] = {{1, size - 1, 2}, {size - 1, 0, -3}};
    k = 0;
    for (int i = 1; i <= size - 1; i += 2) want[k++] = i;
    if (k > 0) {
        OK(MPI_Group_range_incl(world, 1, ranges, &h));
        check_members(h, k, want);
        OK(MPI_Group_free(&h));
        OK(MPI_Group_range_excl(world, 1, ranges, &h));
        d = 0;
        for (int i = 0; i < size; i += 2) diff[d++] = i;
        check_members(h, d, diff);
        OK(MPI_Group_free(&h));
    }
    OK(MPI_Group_range_incl(world, 1, &ranges[1], &h));
    k = 0;
    for (int i = size - 1; i >= 0; i -= 3) want[k++] = i;
    check_members(h, k, want);
    OK(MPI_Group_free(&h));
    int beyond[1][3] = {{0, size, size + 1}}; /* names rank 0 only */
    OK(MPI_Group_range_incl(world, 1, beyond, &h));
    check_members(h, 1, (int[]){0});
    OK(MPI_Group_free(&h));
    OK(MPI_Group_incl(world, 0, NULL, &h));
    CHECK(h == MPI_GROUP_EMPTY);
    OK(MPI_Group_excl(world, 0, NULL, &h));
    CHECK(compare(h, world) == MPI_IDENT && h != world);
    OK(MPI_Group_free(&h));

    /* a group outlives its communicator */
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_group(dup, &h));
    OK(MPI_Comm_free(&dup));
    CHECK(compare(h, world) == MPI_IDENT);
    OK(MPI_Group_free(&h));
    CHECK(h == MPI_GROUP_NULL);

    /* errors */
    int dupl[2] = {0, 0}, bad[1] = {size}, neg[1] = {-1};
    FAILS(MPI_Group_incl(world, 2, dupl, &h), size == 1 ? MPI_ERR_ARG : MPI_ERR_RANK);
    FAILS(MPI_Group_incl(world, 1, bad, &h), MPI_ERR_RANK);
    FAILS(MPI_Group_excl(world, 1, neg, &h), MPI_ERR_RANK);
    FAILS(MPI_Group_incl(world, -1, dupl, &h), MPI_ERR_ARG);
    FAILS(MPI_Group_incl(world, 1, NULL, &h), MPI_ERR_ARG);
    int zero_stride[1][3] = {{0, 0, 0}}, away[1][3] = {{1, 0, 1}}, outside[1][3] = {{0, size, 1}};
    FAILS(MPI_Group_range_incl(world, 1, zero_stride, &h), MPI_ERR_ARG);
    if (size > 1) FAILS(MPI_Group_range_excl(world, 1, away, &h), MPI_ERR_ARG);
    FAILS(MPI_Group_range_incl(world, 1, outside, &h), MPI_ERR_RANK);
    int twice[2][3] = {{0, 0, 1}, {0, 0, 1}};
    FAILS(MPI_Group_range_excl(world, 2, twice, &h), MPI_ERR_RANK);
    FAILS(MPI_Group_translate_ranks(world, 1, bad, self, to), MPI_ERR_RANK);
    FAILS(MPI_Group_translate_ranks(world, -1, from, self, to), MPI_ERR_ARG);
    FAILS(MPI_Group_size(MPI_GROUP_NULL, &n), MPI_ERR_GROUP);
    FAILS(MPI_Group_compare(world, MPI_GROUP_NULL, &r), MPI_ERR_GROUP);
    FAILS(MPI_Group_union(MPI_GROUP_NULL, world, &h), MPI_ERR_GROUP);
    MPI_Group null_group = MPI_GROUP_NULL, freed = g;
    FAILS(MPI_Group_free(&null_group), MPI_ERR_GROUP);
    OK(MPI_Group_free(&g));
    FAILS(MPI_Group_size(freed, &n), MPI_ERR_GROUP);
    FAILS(MPI_Group_free(&freed), MPI_ERR_GROUP);
    FAILS(MPI_Comm_group(MPI_COMM_NULL, &h), MPI_ERR_COMM);
    FAILS(MPI_Group_size(world, NULL), MPI_ERR_ARG);

    OK(MPI_Group_free(&self));
    OK(MPI_Group_free(&world));
    test_finish(rank, "groups");
    return 0;
}
