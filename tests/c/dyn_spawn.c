/* dyn_spawn.c: MPI_Comm_spawn of copies of this program. The parents (all of the world)
 * spawn two children with arguments; every child finds its parents with
 * MPI_Comm_get_parent, and parents and children exchange data over the inter-communicator
 * (each parent with each child; a custom-typed message large enough to travel in private
 * messages after its lead), merge it (parents first) and reduce over the merged
 * communicator, then disconnect; MPI_Comm_get_parent is then MPI_COMM_NULL. A singleton (no
 * launcher) cannot spawn: it checks MPI_ERR_SPAWN and its error codes. */
#include "check.h"
#include <stdlib.h>
#include <string.h>

#define CHILDREN 2
#define BIG 50000

/* A custom datatype whose one object is an array of BIG ints sent as one region: large
 * enough to travel in messages after its lead (private tags, which name the sender by the id
 * the receiver gave it). */
static int big_region(void *state, void *buf, MPI_Count count, MPI_Count region_count,
                      void *bases[], MPI_Count lens[], MPI_Datatype types[]) {
    (void)state;
    if (count != 1 || region_count != 1) return MPI_ERR_ARG;
    bases[0] = buf;
    lens[0] = BIG;
    types[0] = MPI_INT;
    return MPI_SUCCESS;
}

static MPI_Datatype big_type(void) {
    MPI_Datatype t;
    OK(MPI_Type_create_custom(NULL, NULL, NULL, NULL, NULL, one_region_per_element, big_region,
                              NULL, 1, &t));
    return t;
}

static void child(char **argv) {
    MPI_Comm parent;
    int crank, csize, psize;
    OK(MPI_Comm_get_parent(&parent));
    CHECK(parent != MPI_COMM_NULL);
    CHECK(argv[1] && strcmp(argv[1], "child") == 0 && argv[2] && strcmp(argv[2], "x y") == 0);
    OK(MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &crank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &csize));
    OK(MPI_Comm_remote_size(parent, &psize));
    CHECK(csize == CHILDREN);
    for (int p = 0; p < psize; p++) {
        int v = -1;
        OK(MPI_Recv(&v, 1, MPI_INT, p, 1, parent, MPI_STATUS_IGNORE));
        CHECK(v == 100 * p + crank);
        v = -v;
        OK(MPI_Send(&v, 1, MPI_INT, p, 2, parent));
    }
    /* A custom-typed message from parent 0, sent back doubled. */
    MPI_Datatype t = big_type();
    int *big = malloc(BIG * sizeof(int));
    OK(MPI_Recv(big, 1, t, 0, 3, parent, MPI_STATUS_IGNORE));
    for (int i = 0; i < BIG; i++) {
        CHECK(big[i] == i + crank);
        big[i] *= 2;
    }
    OK(MPI_Send(big, 1, t, 0, 4, parent));
    free(big);
    OK(MPI_Type_free(&t));
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Comm_get_name(parent, name, &len));
    CHECK(strcmp(name, "MPI_COMM_PARENT") == 0);
    MPI_Comm merged;
    int mrank, msize, sum = 0, one = 1;
    OK(MPI_Intercomm_merge(parent, 1, &merged));
    OK(MPI_Comm_rank(merged, &mrank));
    OK(MPI_Comm_size(merged, &msize));
    CHECK(msize == psize + CHILDREN && mrank == psize + crank);
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == msize);
    OK(MPI_Comm_free(&merged));
    OK(MPI_Comm_disconnect(&parent));
    OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL);
}

static void parent_side(char *self, int rank, int size) {
    char *args[] = {"child", "x y", NULL};
    int codes[CHILDREN] = {-1, -1};
    MPI_Comm inter;
    OK(MPI_Comm_spawn(self, args, CHILDREN, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes));
    for (int i = 0; i < CHILDREN; i++) CHECK(codes[i] == MPI_SUCCESS);
    OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    int rsize = -1, flag = 0;
    OK(MPI_Comm_test_inter(inter, &flag));
    OK(MPI_Comm_remote_size(inter, &rsize));
    CHECK(flag == 1 && rsize == CHILDREN);
    for (int c = 0; c < CHILDREN; c++) {
        int v = 100 * rank + c, back = 0;
        OK(MPI_Send(&v, 1, MPI_INT, c, 1, inter));
        OK(MPI_Recv(&back, 1, MPI_INT, c, 2, inter, MPI_STATUS_IGNORE));
        CHECK(back == -v);
    }
    if (rank == 0) {
        MPI_Datatype t = big_type();
        int *big = malloc(BIG * sizeof(int));
        for (int c = 0; c < CHILDREN; c++) {
            for (int i = 0; i < BIG; i++) big[i] = i + c;
            OK(MPI_Send(big, 1, t, c, 3, inter));
            OK(MPI_Recv(big, 1, t, c, 4, inter, MPI_STATUS_IGNORE));
            for (int i = 0; i < BIG; i++) CHECK(big[i] == 2 * (i + c));
        }
        free(big);
        OK(MPI_Type_free(&t));
    }
    MPI_Comm merged;
    int mrank, msize, sum = 0, one = 1;
    OK(MPI_Intercomm_merge(inter, 0, &merged));
    OK(MPI_Comm_rank(merged, &mrank));
    OK(MPI_Comm_size(merged, &msize));
    CHECK(msize == size + CHILDREN && mrank == rank);
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == msize);
    OK(MPI_Comm_free(&merged));
    OK(MPI_Comm_disconnect(&inter));
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    MPI_Comm parent;
    OK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        child(argv);
        OK(MPI_Finalize());
        return 0;
    }
    if (getenv("PMIX_NAMESPACE") == NULL) {
        /* A singleton: no launcher to start processes. */
        int codes[CHILDREN] = {-1, -1};
        MPI_Comm inter = MPI_COMM_NULL;
        FAILS(MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, CHILDREN, MPI_INFO_NULL, 0, MPI_COMM_SELF,
                             &inter, codes),
              MPI_ERR_SPAWN);
        CHECK(inter == MPI_COMM_NULL && codes[0] == MPI_ERR_SPAWN && codes[1] == MPI_ERR_SPAWN);
    } else {
        parent_side(argv[0], rank, size);
    }
    test_finish(rank, "dyn_spawn");
    return 0;
}
