/* rma_basic.c: windows of every flavor and the basic one-sided calls: MPI_Win_create /
 * _allocate / _allocate_shared (+ shared_query, load/store across ranks) / _create_dynamic
 * (+ attach/detach), fence epochs with put and get (also with derived datatypes on both
 * sides), passive-target lock/unlock with put, get, flush, lock_all, PSCW, the predefined
 * attributes, name, group, info, toint, request-based Rput/Rget mixed with p2p requests, and
 * the error classes (MPI_ERR_RANK, MPI_ERR_RMA_RANGE, MPI_ERR_RMA_SYNC, MPI_ERR_WIN,
 * MPI_ERR_LOCKTYPE; MPI_ERR_RMA_SYNC also for a lock inside a PSCW access epoch, a window freed
 * inside an epoch, communication after a lock ended a fence's epoch). Works with any number of ranks (a singleton too). */
#include "check.h"
#include <string.h>

#define N 16

static void fence_put_get(int rank, int size) {
    int *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(N * size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                        &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < N * size; i++) CHECK(mem[i] == 0); /* allocated memory is zeroed */
    OK(MPI_Win_fence(0, win));
    int out[N];
    for (int i = 0; i < N; i++) out[i] = rank * 1000 + i;
    /* Each rank writes its block into every rank's window, at its own slot. */
    for (int t = 0; t < size; t++) OK(MPI_Put(out, N, MPI_INT, t, rank * N, N, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++) CHECK(mem[r * N + i] == r * 1000 + i);
    /* MPI 4.1: the query answers for any window; another rank's memory is there when this
     * process reaches it by load and store (mpicd: one node, shared memory), else size 0. */
    for (int r = 0; r < size; r++) {
        MPI_Aint qsz;
        int qunit, *q;
        OK(MPI_Win_shared_query(win, r, &qsz, &qunit, &q));
        CHECK(qsz == 0 || (qsz == (MPI_Aint)(N * size * sizeof(int)) && qunit == sizeof(int)));
        CHECK(r != rank || (qsz > 0 && q == mem));
        for (int k = 0; qsz > 0 && k < size; k++)
            for (int i = 0; i < N; i++) CHECK(q[k * N + i] == k * 1000 + i); /* plain loads */
    }
    /* Get the next rank's slot of its own rank back. */
    int next = (rank + 1) % size, in[N];
    memset(in, 0, sizeof in);
    OK(MPI_Get(in, N, MPI_INT, next, next * N, N, MPI_INT, win));
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < N; i++) CHECK(in[i] == next * 1000 + i);
    /* Outside an epoch now. */
    FAILS(MPI_Put(out, 1, MPI_INT, next, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    OK(MPI_Win_fence(0, win));
    FAILS(MPI_Put(out, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    FAILS(MPI_Put(out, 2, MPI_INT, next, N * size - 1, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    FAILS(MPI_Get(in, 1, MPI_INT, next, -1, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    OK(MPI_Put(out, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL);
}

static void derived_types(int rank, int size) {
    /* A window of 4x4 doubles; each rank puts column `rank % 4` of the next rank from a
     * contiguous origin, and gets a row into a strided origin. */
    double mem[16], col[4], row[8];
    for (int i = 0; i < 16; i++) mem[i] = rank * 100 + i;
    MPI_Win win;
    OK(MPI_Win_create(mem, sizeof mem, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Datatype column, strided;
    OK(MPI_Type_vector(4, 1, 4, MPI_DOUBLE, &column));
    OK(MPI_Type_commit(&column));
    OK(MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &strided));
    OK(MPI_Type_commit(&strided));
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int i = 0; i < 4; i++) col[i] = -(rank + 1) * 10.0 - i;
    for (int i = 0; i < 8; i++) row[i] = -1;
    OK(MPI_Win_fence(0, win));
    OK(MPI_Get(row, 1, strided, next, 8, 4, MPI_DOUBLE, win)); /* row 2, before the put */
    OK(MPI_Win_fence(0, win));
    OK(MPI_Put(col, 4, MPI_DOUBLE, next, rank % 4, 1, column, win));
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; i++) {
        CHECK(row[2 * i] == next * 100 + 8 + i);
        CHECK(row[2 * i + 1] == -1);
    }
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            double want = c == prev % 4 ? -(prev + 1) * 10.0 - r : rank * 100 + r * 4 + c;
            CHECK(mem[r * 4 + c] == want);
        }
    OK(MPI_Win_free(&win));
    OK(MPI_Type_free(&column));
    OK(MPI_Type_free(&strided));
}

static void passive(int rank, int size) {
    long *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(size * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                        &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    long v = rank + 1;
    FAILS(MPI_Put(&v, 1, MPI_LONG, 0, rank, 1, MPI_LONG, win), MPI_ERR_RMA_SYNC);
    FAILS(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC);
    FAILS(MPI_Win_lock(12345, 0, 0, win), MPI_ERR_LOCKTYPE);
    /* A lock ends the epoch a fence opened: after the unlock, communication needs a fence. */
    OK(MPI_Win_fence(0, win));
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    OK(MPI_Win_unlock(rank, win));
    FAILS(MPI_Put(&v, 1, MPI_LONG, rank, rank, 1, MPI_LONG, win), MPI_ERR_RMA_SYNC);
    for (int t = 0; t < size; t++) {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        FAILS(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win), MPI_ERR_RMA_SYNC);
        /* Not freed while locked; compare-and-swap takes no floating-point type. */
        MPI_Win kept = win;
        FAILS(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
        CHECK(win == kept);
        double d = 1, dz = 0, dr = -1;
        FAILS(MPI_Compare_and_swap(&d, &dz, &dr, MPI_DOUBLE, t, 0, win), MPI_ERR_TYPE);
        OK(MPI_Put(&v, 1, MPI_LONG, t, rank, 1, MPI_LONG, win));
        OK(MPI_Win_flush(t, win));
        long back = 0;
        OK(MPI_Get(&back, 1, MPI_LONG, t, rank, 1, MPI_LONG, win));
        OK(MPI_Win_unlock(t, win));
        CHECK(back == v);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win)); /* local access under a lock */
    for (int r = 0; r < size; r++) CHECK(mem[r] == r + 1);
    OK(MPI_Win_unlock(rank, win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* lock_all: read everyone's slot of rank 0; request-based calls mixed with p2p. */
    OK(MPI_Win_lock_all(0, win));
    long got[64];
    MPI_Request reqs[3];
    OK(MPI_Rget(got, size, MPI_LONG, (rank + 1) % size, 0, size, MPI_LONG, win, &reqs[0]));
    int token = rank, incoming = -1;
    OK(MPI_Irecv(&incoming, 1, MPI_INT, (rank + size - 1) % size, 5, MPI_COMM_WORLD, &reqs[1]));
    OK(MPI_Isend(&token, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD, &reqs[2]));
    OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
    for (int r = 0; r < size; r++) CHECK(got[r] == r + 1);
    CHECK(incoming == (rank + size - 1) % size);
    OK(MPI_Win_flush_all(win));
    OK(MPI_Win_flush_local_all(win));
    OK(MPI_Win_sync(win));
    OK(MPI_Win_unlock_all(win));
    FAILS(MPI_Rput(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win, &reqs[0]), MPI_ERR_RMA_SYNC);
    OK(MPI_Win_free(&win));
}

static void pscw(int rank, int size) {
    int mem[2] = {-1, -1};
    MPI_Win win;
    MPI_Group world, peers;
    OK(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    /* A ring: rank exposes to prev, accesses next (a singleton: both itself). */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int round = 0; round < 3; round++) {
        OK(MPI_Group_incl(world, 1, &prev, &peers));
        OK(MPI_Win_post(peers, 0, win));
        OK(MPI_Group_free(&peers));
        OK(MPI_Group_incl(world, 1, &next, &peers));
        OK(MPI_Win_start(peers, 0, win));
        OK(MPI_Group_free(&peers));
        /* No lock inside an access epoch, no free inside either. */
        FAILS(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win), MPI_ERR_RMA_SYNC);
        MPI_Win kept = win;
        FAILS(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
        CHECK(win == kept);
        int v[2] = {rank, round};
        OK(MPI_Put(v, 2, MPI_INT, next, 0, 2, MPI_INT, win));
        OK(MPI_Win_complete(win));
        if (round == 2) {
            int flag = 0;
            while (!flag) OK(MPI_Win_test(win, &flag));
        } else {
            OK(MPI_Win_wait(win));
        }
        CHECK(mem[0] == prev && mem[1] == round);
    }
    OK(MPI_Group_free(&world));
    OK(MPI_Win_free(&win));
}

static void shared(int rank, int size) {
    MPI_Comm node;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nrank, nsize;
    OK(MPI_Comm_rank(node, &nrank));
    OK(MPI_Comm_size(node, &nsize));
    int *mine;
    MPI_Win win;
    OK(MPI_Win_allocate_shared((nrank + 1) * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine,
                               &win));
    OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i <= nrank; i++) mine[i] = nrank * 10 + i;
    OK(MPI_Win_sync(win));
    OK(MPI_Barrier(node));
    OK(MPI_Win_sync(win));
    for (int r = 0; r < nsize; r++) {
        MPI_Aint sz;
        int unit;
        int *p;
        OK(MPI_Win_shared_query(win, r, &sz, &unit, &p));
        CHECK(sz == (MPI_Aint)((r + 1) * sizeof(int)) && unit == (int)sizeof(int));
        for (int i = 0; i <= r; i++) CHECK(p[i] == r * 10 + i); /* plain loads */
    }
    OK(MPI_Win_unlock_all(win));
    MPI_Aint sz;
    int unit, *p;
    OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &unit, &p));
    CHECK(sz == sizeof(int));
    OK(MPI_Win_free(&win));
    OK(MPI_Comm_free(&node));
    (void)rank;
    (void)size;
}

static void dynamic(int rank, int size) {
    MPI_Win win;
    OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int *buf = calloc(8, sizeof(int));
    OK(MPI_Win_attach(win, buf, 8 * sizeof(int)));
    MPI_Aint mine, *all = malloc(size * sizeof(MPI_Aint));
    OK(MPI_Get_address(buf, &mine));
    OK(MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD));
    int next = (rank + 1) % size, v = 40 + rank;
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win));
    OK(MPI_Put(&v, 1, MPI_INT, next, all[next] + 3 * sizeof(int), 1, MPI_INT, win));
    FAILS(MPI_Put(&v, 1, MPI_INT, next, all[next] + 8 * sizeof(int), 1, MPI_INT, win),
          MPI_ERR_RMA_RANGE);
    OK(MPI_Win_unlock(next, win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(buf[3] == 40 + (rank + size - 1) % size);
    OK(MPI_Win_detach(win, buf));
    FAILS(MPI_Win_detach(win, buf), MPI_ERR_RMA_ATTACH);
    OK(MPI_Win_free(&win));
    free(buf);
    free(all);
}

static void describe(int rank, int size) {
    char mem[24];
    MPI_Win win;
    OK(MPI_Win_create(mem, sizeof mem, 2, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    void *base;
    MPI_Aint *sz;
    int *unit, *flavor, *model, flag;
    OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == mem);
    OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
    CHECK(flag && *sz == 24);
    OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
    CHECK(flag && *unit == 2);
    OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE);
    OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && *model == MPI_WIN_UNIFIED);
    int key;
    OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &key, NULL));
    OK(MPI_Win_set_attr(win, key, (void *)&mem[3]));
    void *got;
    OK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag && got == &mem[3]);
    OK(MPI_Win_free_keyval(&key));
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 0);
    OK(MPI_Win_set_name(win, "my window"));
    OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 9 && strcmp(name, "my window") == 0);
    MPI_Group g, wg;
    int cmp;
    OK(MPI_Win_get_group(win, &g));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    OK(MPI_Group_compare(g, wg, &cmp));
    CHECK(cmp == MPI_IDENT);
    OK(MPI_Group_free(&g));
    OK(MPI_Group_free(&wg));
    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "no_locks", "false"));
    OK(MPI_Win_set_info(win, info));
    OK(MPI_Info_free(&info));
    OK(MPI_Win_get_info(win, &info));
    char v[MPI_MAX_INFO_VAL];
    OK(MPI_Info_get(info, "no_locks", MPI_MAX_INFO_VAL - 1, v, &flag));
    CHECK(flag && strcmp(v, "false") == 0);
    OK(MPI_Info_free(&info));
    CHECK(MPI_Win_fromint(MPI_Win_toint(win)) == win);
    CHECK(MPI_Win_f2c(MPI_Win_c2f(win)) == win);
    MPI_Errhandler e;
    OK(MPI_Win_get_errhandler(win, &e));
    CHECK(e == MPI_ERRORS_ARE_FATAL);
    OK(MPI_Errhandler_free(&e));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER)); /* MPI_ERRORS_RETURN: returns */
    OK(MPI_Win_free(&win));
    /* MPI_WIN_NULL: MPI_ERR_WIN (the error goes to MPI_COMM_SELF's handler: returns). */
    FAILS(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
    (void)rank;
    (void)size;
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    fence_put_get(rank, size);
    derived_types(rank, size);
    passive(rank, size);
    pscw(rank, size);
    shared(rank, size);
    dynamic(rank, size);
    describe(rank, size);
    OK(MPI_Finalize());
    if (rank == 0) printf("rma_basic: all checks passed\n");
    return 0;
}
