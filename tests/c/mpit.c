/* mpit.c: the tool information interface (MPI_T). Before MPI_T_init_thread every call fails
 * with MPI_T_ERR_NOT_INITIALIZED; MPI_T works before MPI_Init, during, and after
 * MPI_Finalize, reference-counted. Every control variable, performance variable, category,
 * enumeration, event type and source is enumerated and its information checked (each index
 * found again by name, the string length rules); every control variable is read; the ones
 * mpicd's configuration sets match the environment (the test sets MPICD_ZCOPY_DEPTH before
 * MPI_Init, and a change after init does not show: the value in effect does); only
 * MPICD_COLL_ALGORITHMS can be written, while MPI runs, and an allreduce's messages show it
 * took effect. The message counters count a known ring exchange exactly (the custom-typed
 * ones: a message whole in its lead, a zero-copy region), start and stop, reset and readreset
 * behave, continuous and read-only variables refuse what they must. The error classes of bad
 * indices, handles, sessions and names. Prints nothing unless failing. */
#include "check.h"
#include <string.h>
#include <unistd.h>

static void before_init(void) {
    int n, provided;
    FAILS(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    FAILS(MPI_T_pvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    FAILS(MPI_T_category_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    FAILS(MPI_T_event_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    FAILS(MPI_T_source_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    FAILS(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(provided == MPI_THREAD_SINGLE);
    OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE);
    OK(MPI_T_finalize()); /* one of two: still initialized */
    OK(MPI_T_cvar_get_num(&n));
    CHECK(n > 0);
}

/* Reads control variable `name` (an unsigned long long). */
static unsigned long long read_ull(const char *name) {
    int i, count;
    MPI_T_cvar_handle h;
    unsigned long long v = 0;
    OK(MPI_T_cvar_get_index(name, &i));
    OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    CHECK(count == 1);
    OK(MPI_T_cvar_read(h, &v));
    OK(MPI_T_cvar_handle_free(&h));
    CHECK(h == MPI_T_CVAR_HANDLE_NULL);
    return v;
}

static void check_cvars(void) {
    int n, ncat;
    OK(MPI_T_cvar_get_num(&n));
    OK(MPI_T_category_get_num(&ncat));
    int in_categories = 0;
    for (int c = 0; c < ncat; c++) {
        int nc = -1, np = -1, nsub = -1;
        OK(MPI_T_category_get_info(c, NULL, NULL, NULL, NULL, &nc, &np, &nsub));
        in_categories += nc;
        CHECK(nsub == 0);
    }
    CHECK(in_categories == n); /* each variable in one category */
    for (int i = 0; i < n; i++) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope, count, j;
        MPI_Datatype dt;
        MPI_T_enum en;
        OK(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &en, desc, &desc_len,
                               &bind, &scope));
        CHECK(name_len == (int)strlen(name) + 1 && desc_len == (int)strlen(desc) + 1);
        CHECK(strncmp(name, "MPICD_", 6) == 0 || strncmp(name, "UCX_", 4) == 0);
        CHECK(bind == MPI_T_BIND_NO_OBJECT);
        int writable = strcmp(name, "MPICD_COLL_ALGORITHMS") == 0;
        CHECK(scope == (writable ? MPI_T_SCOPE_ALL_EQ : scope));
        CHECK(writable || scope == MPI_T_SCOPE_CONSTANT || scope == MPI_T_SCOPE_READONLY);
        CHECK(verbosity >= MPI_T_VERBOSITY_USER_BASIC && verbosity <= MPI_T_VERBOSITY_MPIDEV_ALL);
        OK(MPI_T_cvar_get_index(name, &j));
        CHECK(j == i);
        MPI_T_cvar_handle h;
        OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        if (dt == MPI_CHAR) {
            char *v = malloc(count);
            OK(MPI_T_cvar_read(h, v));
            CHECK((int)strlen(v) == count - 1 || (writable && (int)strlen(v) < count));
            const char *env = getenv(name);
            if (env && strncmp(name, "MPICD_", 6) == 0) CHECK(strcmp(v, env) == 0);
            free(v);
        } else if (dt == MPI_INT) {
            int v = -1;
            OK(MPI_T_cvar_read(h, &v));
            CHECK(count == 1);
            if (en != MPI_T_ENUM_NULL) {
                int items, value, len = sizeof desc;
                char item[64];
                int ilen = sizeof item, found = 0;
                OK(MPI_T_enum_get_info(en, &items, desc, &len));
                CHECK(items == 4 && strcmp(desc, "MPICD_WAIT") == 0);
                for (int k = 0; k < items; k++) {
                    ilen = sizeof item;
                    OK(MPI_T_enum_get_item(en, k, &value, item, &ilen));
                    const char *env = getenv(name);
                    if (value == v) found = !env || strcmp(env, item) == 0;
                }
                CHECK(found);
                FAILS(MPI_T_enum_get_item(en, items, &value, item, &ilen),
                      MPI_T_ERR_INVALID_INDEX);
            } else {
                CHECK(v == 0 || v == 1);
                const char *env = getenv(name);
                if (env) CHECK(v == atoi(env));
            }
        } else {
            CHECK(dt == MPI_UNSIGNED_LONG_LONG && count == 1);
            unsigned long long v;
            OK(MPI_T_cvar_read(h, &v));
            const char *env = getenv(name);
            if (env) CHECK(v == strtoull(env, NULL, 10));
        }
        if (!writable) FAILS(MPI_T_cvar_write(h, desc), MPI_T_ERR_CVAR_SET_NEVER);
        OK(MPI_T_cvar_handle_free(&h));
    }
    /* The string rules: truncation, the length alone, NULL len. */
    char small[4] = "xyz";
    int len = sizeof small;
    OK(MPI_T_cvar_get_info(0, small, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(strcmp(small, "MPI") == 0 && len > 4);
    int need = 0;
    OK(MPI_T_cvar_get_info(0, NULL, &need, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(need == len);
    OK(MPI_T_cvar_get_info(0, small, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    /* Bad indices, names and handles. */
    int i;
    MPI_T_cvar_handle h;
    FAILS(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);
    FAILS(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);
    FAILS(MPI_T_cvar_handle_alloc(n, NULL, &h, &i), MPI_T_ERR_INVALID_INDEX);
    FAILS(MPI_T_cvar_get_index("MPICD_NO_SUCH_KNOB", &i), MPI_T_ERR_INVALID_NAME);
    FAILS(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, &i), MPI_T_ERR_INVALID_HANDLE);
    FAILS(MPI_T_category_get_index("no such category", &i), MPI_T_ERR_INVALID_NAME);
    FAILS(MPI_T_category_get_info(ncat, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);
    FAILS(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &i, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    /* The categories by name, and their members. */
    for (int c = 0; c < ncat; c++) {
        char name[64];
        int l = sizeof name, j, nc, members[64];
        OK(MPI_T_category_get_info(c, name, &l, NULL, NULL, &nc, NULL, NULL));
        OK(MPI_T_category_get_index(name, &j));
        CHECK(j == c && nc <= 64);
        OK(MPI_T_category_get_cvars(c, nc, members));
        for (int k = 0; k < nc; k++) CHECK(members[k] >= 0 && members[k] < n);
    }
}

/* Writes the forced collective algorithms; MPI_SUCCESS or the error. */
static int write_algorithms(const char *text) {
    int i, count;
    MPI_T_cvar_handle h;
    OK(MPI_T_cvar_get_index("MPICD_COLL_ALGORITHMS", &i));
    OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    CHECK(count >= 256);
    int rc = MPI_T_cvar_write(h, text);
    char now[256];
    OK(MPI_T_cvar_read(h, now));
    if (rc == MPI_SUCCESS) CHECK(strcmp(now, text) == 0);
    OK(MPI_T_cvar_handle_free(&h));
    return rc;
}

static unsigned long long pvar_read(MPI_T_pvar_session s, MPI_T_pvar_handle h);
static MPI_T_pvar_handle pvar(MPI_T_pvar_session s, const char *name, int cls);

/* Messages this process sends in an allreduce of 64 ints. */
static unsigned long long allreduce_messages(void) {
    MPI_T_pvar_session s;
    OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle sent = pvar(s, "mpicd_messages_sent", MPI_T_PVAR_CLASS_COUNTER);
    int in[64], out[64];
    for (int k = 0; k < 64; k++) in[k] = k;
    OK(MPI_T_pvar_start(s, sent));
    OK(MPI_Allreduce(in, out, 64, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    OK(MPI_T_pvar_stop(s, sent));
    int size;
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(out[5] == 5 * size);
    unsigned long long n = pvar_read(s, sent);
    OK(MPI_T_pvar_session_free(&s));
    return n;
}

/* MPICD_COLL_ALGORITHMS written at run time takes effect at the next collective: at 2 ranks a
 * small allreduce sends one message (recursive doubling), two once the ring is forced; none
 * where it goes through the node's shared memory (2 ranks on this 2-core node, unless
 * MPICD_COLL_NODE is 0), which a forced algorithm overrides. */
static void check_write(int size) {
    /* The communicator's first collective agrees on its shared memory, with messages of its own. */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    unsigned long long by_default = allreduce_messages();
    OK(write_algorithms("allreduce=ring"));
    unsigned long long by_ring = allreduce_messages();
    FAILS(write_algorithms("allreduce=nonsense"), MPI_T_ERR_INVALID);
    OK(write_algorithms(""));
    CHECK(allreduce_messages() == by_default);
    const char *node = getenv("MPICD_COLL_NODE");
    int by_node = !(node && strcmp(node, "0") == 0);
    if (size == 2) CHECK(by_default == (by_node ? 0 : 1) && by_ring == 2);
}

/* A pvar handle of `name` (class `cls`) in `s`. */
static MPI_T_pvar_handle pvar(MPI_T_pvar_session s, const char *name, int cls) {
    int i, count;
    MPI_T_pvar_handle h;
    OK(MPI_T_pvar_get_index(name, cls, &i));
    OK(MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count));
    CHECK(count == 1);
    return h;
}

static unsigned long long pvar_read(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
    unsigned long long v = ~0ull;
    OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

static void check_pvars(int rank, int size) {
    int n;
    OK(MPI_T_pvar_get_num(&n));
    for (int i = 0; i < n; i++) {
        char name[128];
        int len = sizeof name, verbosity, cls, bind, ro, cont, atomic, j;
        MPI_Datatype dt;
        MPI_T_enum en;
        OK(MPI_T_pvar_get_info(i, name, &len, &verbosity, &cls, &dt, &en, NULL, NULL, &bind,
                               &ro, &cont, &atomic));
        CHECK(dt == MPI_UNSIGNED_LONG_LONG && en == MPI_T_ENUM_NULL);
        CHECK(bind == MPI_T_BIND_NO_OBJECT);
        OK(MPI_T_pvar_get_index(name, cls, &j));
        CHECK(j == i);
        int other = cls == MPI_T_PVAR_CLASS_TIMER ? MPI_T_PVAR_CLASS_STATE : MPI_T_PVAR_CLASS_TIMER;
        FAILS(MPI_T_pvar_get_index(name, other, &j), MPI_T_ERR_INVALID_NAME);
    }
    MPI_T_pvar_session s, s2;
    OK(MPI_T_pvar_session_create(&s));
    OK(MPI_T_pvar_session_create(&s2));
    MPI_T_pvar_handle sent = pvar(s, "mpicd_messages_sent", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle bytes = pvar(s, "mpicd_bytes_sent", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle recvd = pvar(s, "mpicd_messages_received", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle rbytes = pvar(s, "mpicd_bytes_received", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle level = pvar(s, "mpicd_requests_pending", MPI_T_PVAR_CLASS_LEVEL);
    MPI_T_pvar_handle peak =
        pvar(s, "mpicd_requests_pending_peak", MPI_T_PVAR_CLASS_HIGHWATERMARK);
    MPI_T_pvar_handle other = pvar(s2, "mpicd_messages_sent", MPI_T_PVAR_CLASS_COUNTER);
    CHECK(pvar_read(s, sent) == 0); /* stopped until started */
    OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    /* A ring: each rank sends 3 messages of 100 ints to the next and receives 3. */
    enum { ROUNDS = 3, INTS = 100 };
    int out[INTS], in[ROUNDS][INTS];
    MPI_Request req[ROUNDS];
    for (int k = 0; k < INTS; k++) out[k] = rank * 1000 + k;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int r = 0; r < ROUNDS; r++)
        OK(MPI_Irecv(in[r], INTS, MPI_INT, prev, r, MPI_COMM_WORLD, &req[r]));
    CHECK(pvar_read(s, level) >= ROUNDS && pvar_read(s, peak) >= ROUNDS);
    for (int r = 0; r < ROUNDS; r++) OK(MPI_Send(out, INTS, MPI_INT, next, r, MPI_COMM_WORLD));
    OK(MPI_Waitall(ROUNDS, req, MPI_STATUSES_IGNORE));
    for (int r = 0; r < ROUNDS; r++) CHECK(in[r][7] == prev * 1000 + 7);
    OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    CHECK(pvar_read(s, sent) == ROUNDS);
    CHECK(pvar_read(s, bytes) == ROUNDS * INTS * sizeof(int));
    CHECK(pvar_read(s, recvd) == ROUNDS);
    CHECK(pvar_read(s, rbytes) == ROUNDS * INTS * sizeof(int));
    CHECK(pvar_read(s2, other) == 0); /* another session's handle was never started */
    /* Stopped: nothing more counts. */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(pvar_read(s, sent) == ROUNDS);
    unsigned long long v = 0;
    OK(MPI_T_pvar_readreset(s, sent, &v));
    CHECK(v == ROUNDS && pvar_read(s, sent) == 0);
    v = 40;
    OK(MPI_T_pvar_write(s, bytes, &v));
    CHECK(pvar_read(s, bytes) == 40);
    OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES)); /* the read-only ones are skipped */
    CHECK(pvar_read(s, bytes) == 0 && pvar_read(s, recvd) == 0);
    /* Continuous, read-only variables. */
    FAILS(MPI_T_pvar_start(s, level), MPI_T_ERR_PVAR_NO_STARTSTOP);
    FAILS(MPI_T_pvar_stop(s, peak), MPI_T_ERR_PVAR_NO_STARTSTOP);
    FAILS(MPI_T_pvar_reset(s, level), MPI_T_ERR_PVAR_NO_WRITE);
    FAILS(MPI_T_pvar_write(s, peak, &v), MPI_T_ERR_PVAR_NO_WRITE);
    FAILS(MPI_T_pvar_readreset(s, level, &v), MPI_T_ERR_PVAR_NO_WRITE);
    /* Bad handles and sessions. */
    FAILS(MPI_T_pvar_read(s, other, &v), MPI_T_ERR_INVALID_HANDLE);
    FAILS(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    FAILS(MPI_T_pvar_read(MPI_T_PVAR_SESSION_NULL, sent, &v), MPI_T_ERR_INVALID_SESSION);
    FAILS(MPI_T_pvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                              NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);
    MPI_T_pvar_handle h;
    int count;
    FAILS(MPI_T_pvar_handle_alloc(s, n, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    FAILS(MPI_T_pvar_get_index("no_such_pvar", MPI_T_PVAR_CLASS_COUNTER, &count),
          MPI_T_ERR_INVALID_NAME);
    OK(MPI_T_pvar_handle_free(s, &sent));
    CHECK(sent == MPI_T_PVAR_HANDLE_NULL);
    FAILS(MPI_T_pvar_handle_free(s, &other), MPI_T_ERR_INVALID_HANDLE);
    OK(MPI_T_pvar_session_free(&s));
    CHECK(s == MPI_T_PVAR_SESSION_NULL);
    FAILS(MPI_T_pvar_read(s, bytes, &v), MPI_T_ERR_INVALID_SESSION);
    OK(MPI_T_pvar_session_free(&s2));
}

/* A custom type whose one element is one region of `region_bytes` bytes at the buffer. */
static MPI_Count region_bytes;
static int byte_region(void *state, void *buf, MPI_Count count, MPI_Count region_count,
                       void *reg_bases[], MPI_Count reg_lens[], MPI_Datatype reg_types[]) {
    (void)state;
    if (count != 1 || region_count != 1) return MPI_ERR_ARG;
    reg_bases[0] = buf;
    reg_lens[0] = region_bytes;
    reg_types[0] = MPI_BYTE;
    return MPI_SUCCESS;
}

/* The custom-typed counters: a 16-byte message goes whole in its lead, 1 MiB does not, and
 * travels as a zero-copy region when the peer is treated as remote (MPICD_NODE_LOCAL=0). */
static void check_custom_pvars(int rank, int size) {
    enum { BIG = 1 << 20 };
    MPI_T_pvar_session s;
    OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle sends = pvar(s, "mpicd_custom_sends", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle inl = pvar(s, "mpicd_custom_sends_inline", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle zc = pvar(s, "mpicd_custom_zcopy_regions", MPI_T_PVAR_CLASS_COUNTER);
    MPI_Datatype t;
    OK(MPI_Type_create_custom(NULL, NULL, NULL, NULL, NULL, one_region_per_element,
                              byte_region, NULL, 1, &t));
    char *out = malloc(BIG), *in = malloc(BIG);
    memset(out, rank + 1, BIG);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    MPI_Count lens[2] = {16, BIG};
    for (int k = 0; k < 2; k++) {
        MPI_Request r;
        region_bytes = lens[k];
        memset(in, 0, BIG);
        OK(MPI_Irecv(in, 1, t, prev, 50 + k, MPI_COMM_WORLD, &r));
        OK(MPI_Send(out, 1, t, next, 50 + k, MPI_COMM_WORLD));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(in[0] == prev + 1 && in[lens[k] - 1] == prev + 1);
    }
    OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    CHECK(pvar_read(s, sends) == 2 && pvar_read(s, inl) == 1);
    /* The 1 MiB region travels apart to another node (MPICD_NODE_LOCAL=0 here), or on this
     * node where processes outnumber cores (MPICD_WAIT unset or auto: as the engine decides,
     * all ranks on this node); else it is coalesced into the stream. */
    const char *local = getenv("MPICD_NODE_LOCAL"), *wait = getenv("MPICD_WAIT");
    int remote = local && strcmp(local, "0") == 0;
    int auto_wait = !wait || strcmp(wait, "auto") == 0;
    int shared = auto_wait ? size > sysconf(_SC_NPROCESSORS_ONLN) : strcmp(wait, "spin") != 0;
    unsigned long long zcopy = pvar_read(s, zc);
    if (size > 1) CHECK(zcopy == (remote || shared ? 1u : 0u));
    else CHECK(zcopy <= 1);
    OK(MPI_Type_free(&t));
    free(out);
    free(in);
    OK(MPI_T_pvar_session_free(&s));
}

static int calls;
static void on_event(MPI_T_event_instance e, MPI_T_event_registration r, MPI_T_cb_safety s,
                     void *data) {
    (void)e, (void)r, (void)s, (void)data;
    calls++;
}
static int freed;
static void on_free(MPI_T_event_registration r, MPI_T_cb_safety s, void *data) {
    (void)r, (void)s;
    freed = *(int *)data;
}

static void check_events(void) {
    int n, i, num = 4, ns;
    char name[64];
    int len = sizeof name;
    MPI_Datatype types[4];
    MPI_Aint disps[4];
    MPI_Info info;
    OK(MPI_T_source_get_num(&ns));
    CHECK(ns == 1);
    MPI_T_source_order order;
    MPI_Count tps, max, t0, t1;
    OK(MPI_T_source_get_info(0, name, &len, NULL, NULL, &order, &tps, &max, &info));
    CHECK(order == MPI_T_SOURCE_ORDERED && tps == 1000000000 && max > 0);
    OK(MPI_Info_free(&info));
    OK(MPI_T_source_get_timestamp(0, &t0));
    OK(MPI_T_source_get_timestamp(0, &t1));
    CHECK(t1 >= t0);
    FAILS(MPI_T_source_get_timestamp(1, &t0), MPI_T_ERR_INVALID_INDEX);
    FAILS(MPI_T_source_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
          MPI_T_ERR_INVALID_INDEX);
    OK(MPI_T_event_get_num(&n));
    CHECK(n >= 1);
    len = sizeof name;
    OK(MPI_T_event_get_info(0, name, &len, NULL, types, disps, &num, NULL, &info, NULL, NULL,
                            NULL));
    CHECK(strcmp(name, "mpicd_peer_failed") == 0 && num == 1 && types[0] == MPI_INT);
    CHECK(disps[0] == 0);
    OK(MPI_Info_free(&info));
    OK(MPI_T_event_get_index("mpicd_peer_failed", &i));
    CHECK(i == 0);
    FAILS(MPI_T_event_get_index("no_such_event", &i), MPI_T_ERR_INVALID_NAME);
    FAILS(MPI_T_event_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                               NULL),
          MPI_T_ERR_INVALID_INDEX);
    MPI_T_event_registration reg;
    FAILS(MPI_T_event_handle_alloc(n, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
    OK(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg));
    OK(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, NULL,
                                     on_event));
    FAILS(MPI_T_event_register_callback(reg, 5, MPI_INFO_NULL, NULL, on_event),
          MPI_T_ERR_INVALID);
    OK(MPI_T_event_handle_get_info(reg, &info));
    OK(MPI_T_event_handle_set_info(reg, info));
    OK(MPI_Info_free(&info));
    OK(MPI_T_event_callback_get_info(reg, MPI_T_CB_REQUIRE_MPI_RESTRICTED, &info));
    OK(MPI_T_event_callback_set_info(reg, MPI_T_CB_REQUIRE_MPI_RESTRICTED, info));
    OK(MPI_Info_free(&info));
    OK(MPI_T_event_set_dropped_handler(reg, NULL));
    /* No instance outside a callback. */
    MPI_Count ts;
    FAILS(MPI_T_event_get_timestamp(MPI_T_EVENT_INSTANCE_NULL, &ts), MPI_T_ERR_INVALID_HANDLE);
    FAILS(MPI_T_event_read(MPI_T_EVENT_INSTANCE_NULL, 0, &i), MPI_T_ERR_INVALID_HANDLE);
    FAILS(MPI_T_event_get_source(MPI_T_EVENT_INSTANCE_NULL, &i), MPI_T_ERR_INVALID_HANDLE);
    FAILS(MPI_T_event_copy(MPI_T_EVENT_INSTANCE_NULL, &i), MPI_T_ERR_INVALID_HANDLE);
    int token = 42;
    OK(MPI_T_event_handle_free(reg, &token, on_free));
    CHECK(freed == 42 && calls == 0); /* no process failed */
    FAILS(MPI_T_event_handle_free(reg, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    FAILS(MPI_T_event_handle_set_info(reg, MPI_INFO_NULL), MPI_T_ERR_INVALID_HANDLE);
}

int main(int argc, char **argv) {
    int rank, size;
    before_init();
    setenv("MPICD_ZCOPY_DEPTH", "7", 1);
    CHECK(read_ull("MPICD_ZCOPY_DEPTH") == 7); /* before MPI_Init: what init would take */
    FAILS(write_algorithms("bcast=linear"), MPI_T_ERR_CVAR_SET_NOT_NOW);
    test_init(&argc, &argv, &rank, &size);
    setenv("MPICD_ZCOPY_DEPTH", "9", 1);
    CHECK(read_ull("MPICD_ZCOPY_DEPTH") == 7); /* the value in effect */
    setenv("MPICD_ZCOPY_DEPTH", "7", 1);
    check_cvars();
    check_write(size);
    check_pvars(rank, size);
    check_custom_pvars(rank, size);
    check_events();
    OK(MPI_T_finalize());
    int n;
    FAILS(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    test_finish(rank, "mpit");
    /* After MPI_Finalize: the interface still works, the variables are still readable. */
    int provided;
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    if (read_ull("MPICD_ZCOPY_DEPTH") != 7 ||
        write_algorithms("bcast=linear") != MPI_T_ERR_CVAR_SET_NOT_NOW) {
        fprintf(stderr, "mpit: after MPI_Finalize, MPICD_ZCOPY_DEPTH is not 7 or written\n");
        return 1;
    }
    OK(MPI_T_finalize());
    return 0;
}
