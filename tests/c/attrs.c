/* attrs.c: attribute caching on communicators and datatypes. The predefined attributes
 * (MPI_TAG_UB ... MPI_LASTUSEDCODE); keyvals with counting copy and delete callbacks and their
 * extra_state; set / get / overwrite / delete; what a dup copies (copy flag 1 and 0,
 * MPI_COMM_DUP_FN, MPI_COMM_NULL_COPY_FN); the reverse order of deletion at a free; a keyval
 * freed while attributes use it; a failing copy callback (the dup fails with its code and gives
 * MPI_COMM_NULL) and a failing delete callback (set, delete and free fail, the attribute
 * stays); callbacks that call MPI on the same object; the deprecated MPI-1 forms; the error
 * classes (MPI_ERR_KEYVAL, MPI_ERR_ARG, MPI_ERR_COMM); and MPI_Finalize, which deletes the
 * attributes of MPI_COMM_SELF (last set first) and then of MPI_COMM_WORLD while MPI is still
 * live. */
#include "check.h"
#include <string.h>

static int copies, deletes;
static MPI_Aint extra_seen;

/* Copies with flag 1 and the value plus one, counting. */
static int copy_plus_one(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag) {
    (void)comm;
    (void)keyval;
    extra_seen = *(MPI_Aint *)extra;
    copies++;
    *(MPI_Aint *)out = (MPI_Aint)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

/* Declines the copy (flag 0). */
static int copy_declined(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag) {
    (void)comm, (void)keyval, (void)extra, (void)in, (void)out;
    copies++;
    *flag = 0;
    return MPI_SUCCESS;
}

static int copy_fails(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag) {
    (void)comm, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = 1;
    return MPI_ERR_OTHER;
}

static MPI_Aint last_deleted;
static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)keyval, (void)extra;
    int flag = -1;
    /* the communicator is still valid while its attributes are deleted */
    CHECK(MPI_Comm_test_inter(comm, &flag) == MPI_SUCCESS && flag == 0);
    deletes++;
    last_deleted = (MPI_Aint)value;
    return MPI_SUCCESS;
}

/* The order of deletions: each delete callback appends its value. */
static MPI_Aint order[16];
static int norder;
static int record_order(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm, (void)keyval, (void)extra;
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (finalized || norder == 16) return MPI_ERR_OTHER;
    order[norder++] = (MPI_Aint)value;
    return MPI_SUCCESS;
}

static int refuse = 1;
static int delete_refuses(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm, (void)keyval, (void)value, (void)extra;
    deletes++;
    return refuse ? MPI_ERR_ARG : MPI_SUCCESS;
}

/* Deletes attribute *extra of the same communicator and frees its own keyval. */
static int delete_other(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)value;
    deletes++;
    OK(MPI_Comm_delete_attr(comm, *(int *)extra));
    OK(MPI_Comm_free_keyval(&keyval));
    return MPI_SUCCESS;
}

static int get(MPI_Comm comm, int keyval, MPI_Aint *value) {
    void *v = NULL;
    int flag = -1;
    OK(MPI_Comm_get_attr(comm, keyval, &v, &flag));
    CHECK(flag == 0 || flag == 1);
    *value = (MPI_Aint)v;
    return flag;
}

static void predefined(int size) {
    int *v = NULL, flag = -1;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag == 1 && *v >= 32767);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag == 1 && (*v == MPI_PROC_NULL || (*v >= 0 && *v < size)));
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag == 1 && (*v == MPI_ANY_SOURCE || *v == MPI_PROC_NULL || (*v >= 0 && *v < size)));
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    CHECK(flag == 1 && (*v == 0 || *v == 1));
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    CHECK(flag == 0 || *v >= 0);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    CHECK(flag == 0 || *v >= size);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag == 1 && *v >= MPI_ERR_LASTCODE);
    OK(MPI_Attr_get(MPI_COMM_SELF, MPI_TAG_UB, &v, &flag));
    CHECK(flag == 1 && *v >= 32767);
    /* they cannot be set, deleted or freed */
    int key = MPI_TAG_UB;
    FAILS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL);
    FAILS(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_HOST), MPI_ERR_KEYVAL);
    FAILS(MPI_Comm_free_keyval(&key), MPI_ERR_KEYVAL);
    CHECK(key == MPI_TAG_UB);
}

/* set, get, overwrite, delete, and the callbacks they run */
static void basics(int rank) {
    MPI_Comm comm;
    MPI_Aint extra = 4242, v;
    int key;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    OK(MPI_Comm_create_keyval(copy_plus_one, count_delete, &key, &extra));
    CHECK(key != MPI_KEYVAL_INVALID);
    copies = deletes = 0;
    CHECK(get(comm, key, &v) == 0);
    OK(MPI_Comm_set_attr(comm, key, (void *)(MPI_Aint)(100 + rank)));
    CHECK(get(comm, key, &v) == 1 && v == 100 + rank);
    CHECK(get(MPI_COMM_WORLD, key, &v) == 0); /* attributes belong to one communicator */
    OK(MPI_Comm_set_attr(comm, key, (void *)(MPI_Aint)(200 + rank))); /* overwrite */
    CHECK(deletes == 1 && last_deleted == 100 + rank);
    CHECK(get(comm, key, &v) == 1 && v == 200 + rank);
    OK(MPI_Comm_delete_attr(comm, key));
    CHECK(deletes == 2 && last_deleted == 200 + rank);
    CHECK(get(comm, key, &v) == 0);
    OK(MPI_Comm_delete_attr(comm, key)); /* not set: nothing to do */
    CHECK(deletes == 2);
    OK(MPI_Comm_set_attr(comm, key, (void *)(MPI_Aint)7));
    OK(MPI_Comm_free(&comm));
    CHECK(deletes == 3 && last_deleted == 7 && copies == 0);
    OK(MPI_Comm_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID);
}

/* what MPI_Comm_dup copies */
static void copying(void) {
    MPI_Aint extra = 77, v;
    int plus, declined, dup, none;
    MPI_Comm comm, copy, copy2;
    OK(MPI_Comm_create_keyval(copy_plus_one, count_delete, &plus, &extra));
    OK(MPI_Comm_create_keyval(copy_declined, count_delete, &declined, NULL));
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &dup, NULL));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &none, NULL));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    OK(MPI_Comm_set_attr(comm, plus, (void *)(MPI_Aint)10));
    OK(MPI_Comm_set_attr(comm, declined, (void *)(MPI_Aint)20));
    OK(MPI_Comm_set_attr(comm, dup, (void *)(MPI_Aint)30));
    OK(MPI_Comm_set_attr(comm, none, (void *)(MPI_Aint)40));
    copies = deletes = 0;
    extra_seen = 0;
    OK(MPI_Comm_dup(comm, &copy));
    CHECK(copies == 2 && extra_seen == 77);
    CHECK(get(copy, plus, &v) == 1 && v == 11);
    CHECK(get(copy, declined, &v) == 0);
    CHECK(get(copy, dup, &v) == 1 && v == 30);
    CHECK(get(copy, none, &v) == 0);
    CHECK(get(comm, plus, &v) == 1 && v == 10); /* the original is untouched */
    OK(MPI_Comm_dup(copy, &copy2));             /* a copy of a copy */
    CHECK(copies == 3 && get(copy2, plus, &v) == 1 && v == 12);
    OK(MPI_Comm_free(&copy2));
    CHECK(deletes == 1 && last_deleted == 12);
    OK(MPI_Comm_free(&copy));
    CHECK(deletes == 2 && last_deleted == 11);
    OK(MPI_Comm_free(&comm));
    CHECK(deletes == 5); /* plus, declined, none */
    OK(MPI_Comm_free_keyval(&plus));
    OK(MPI_Comm_free_keyval(&declined));
    OK(MPI_Comm_free_keyval(&dup));
    OK(MPI_Comm_free_keyval(&none));
}

/* deletion order at a free: the last set first; an overwrite counts as the last set */
static void free_order(void) {
    MPI_Comm comm;
    int keys[4];
    OK(MPI_Comm_dup(MPI_COMM_SELF, &comm));
    for (int i = 0; i < 4; i++) {
        OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_order, &keys[i], NULL));
        OK(MPI_Comm_set_attr(comm, keys[i], (void *)(MPI_Aint)(i + 1)));
    }
    norder = 0;
    OK(MPI_Comm_set_attr(comm, keys[1], (void *)(MPI_Aint)5)); /* deletes 2 */
    OK(MPI_Comm_free(&comm));
    MPI_Aint want[5] = {2, 5, 4, 3, 1};
    CHECK(norder == 5 && memcmp(order, want, sizeof want) == 0);
    for (int i = 0; i < 4; i++) OK(MPI_Comm_free_keyval(&keys[i]));
}

/* a keyval freed while attributes use it lives on until they are deleted */
static void keyval_lifetime(void) {
    MPI_Comm a, b;
    MPI_Aint v;
    int key, copy;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    OK(MPI_Comm_create_keyval(copy_plus_one, count_delete, &key, &v));
    v = 0;
    OK(MPI_Comm_set_attr(a, key, (void *)(MPI_Aint)1));
    copy = key;
    OK(MPI_Comm_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID);
    copies = deletes = 0;
    CHECK(get(a, copy, &v) == 1 && v == 1);
    OK(MPI_Comm_dup(a, &b)); /* still copied */
    CHECK(copies == 1 && get(b, copy, &v) == 1 && v == 2);
    FAILS(MPI_Comm_set_attr(a, copy, NULL), MPI_ERR_KEYVAL); /* no new attributes */
    int again = copy;
    OK(MPI_Comm_free_keyval(&again)); /* freeing it again while it lives on: nothing */
    OK(MPI_Comm_free(&a));
    CHECK(deletes == 1 && last_deleted == 1);
    OK(MPI_Comm_delete_attr(b, copy));
    CHECK(deletes == 2 && last_deleted == 2);
    /* its last attribute is gone: so is the keyval */
    void *p;
    int flag;
    FAILS(MPI_Comm_get_attr(b, copy, &p, &flag), MPI_ERR_KEYVAL);
    again = copy;
    FAILS(MPI_Comm_free_keyval(&again), MPI_ERR_KEYVAL);
    OK(MPI_Comm_free(&b));
}

/* failing callbacks fail the call that ran them */
static void failing_callbacks(void) {
    MPI_Comm comm, copy = MPI_COMM_WORLD;
    MPI_Aint v;
    int counted, bad_copy, bad_delete;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &counted, NULL));
    OK(MPI_Comm_create_keyval(copy_fails, MPI_COMM_NULL_DELETE_FN, &bad_copy, NULL));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_refuses, &bad_delete, NULL));
    OK(MPI_Comm_set_attr(comm, counted, (void *)(MPI_Aint)1));
    OK(MPI_Comm_set_attr(comm, bad_copy, (void *)(MPI_Aint)2));
    deletes = 0;
    /* the copy fails: the dup too, with the callback's code; what was copied is deleted */
    FAILS(MPI_Comm_dup(comm, &copy), MPI_ERR_OTHER);
    CHECK(copy == MPI_COMM_NULL && deletes == 1);
    OK(MPI_Comm_delete_attr(comm, bad_copy));
    /* the delete fails: overwrite, delete and free fail, and the attribute stays */
    OK(MPI_Comm_set_attr(comm, bad_delete, (void *)(MPI_Aint)3));
    refuse = 1;
    deletes = 0;
    FAILS(MPI_Comm_set_attr(comm, bad_delete, (void *)(MPI_Aint)4), MPI_ERR_ARG);
    CHECK(get(comm, bad_delete, &v) == 1 && v == 3);
    FAILS(MPI_Comm_delete_attr(comm, bad_delete), MPI_ERR_ARG);
    CHECK(get(comm, bad_delete, &v) == 1 && v == 3);
    MPI_Comm keep = comm;
    FAILS(MPI_Comm_free(&comm), MPI_ERR_ARG);
    CHECK(comm == keep && get(comm, bad_delete, &v) == 1);
    refuse = 0;
    OK(MPI_Comm_free(&comm));
    CHECK(comm == MPI_COMM_NULL);
    OK(MPI_Comm_free_keyval(&counted));
    OK(MPI_Comm_free_keyval(&bad_copy));
    OK(MPI_Comm_free_keyval(&bad_delete));
}

/* a delete callback that deletes another attribute of its communicator and frees its keyval */
static void reentrant_callbacks(void) {
    MPI_Comm comm;
    MPI_Aint v;
    int plain, chained;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &plain, NULL));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_other, &chained, &plain));
    OK(MPI_Comm_set_attr(comm, plain, (void *)(MPI_Aint)1));
    OK(MPI_Comm_set_attr(comm, chained, (void *)(MPI_Aint)2));
    deletes = 0;
    OK(MPI_Comm_delete_attr(comm, chained));
    CHECK(deletes == 2 && get(comm, plain, &v) == 0);
    void *p;
    int flag;
    FAILS(MPI_Comm_get_attr(comm, chained, &p, &flag), MPI_ERR_KEYVAL); /* freed by itself */
    OK(MPI_Comm_free(&comm));
    CHECK(deletes == 2);
    OK(MPI_Comm_free_keyval(&plain));
}

static int type_copies, type_deletes;
static int type_copy(MPI_Datatype t, int keyval, void *extra, void *in, void *out, int *flag) {
    (void)t, (void)keyval, (void)extra;
    type_copies++;
    *(MPI_Aint *)out = (MPI_Aint)in * 2;
    *flag = 1;
    return MPI_SUCCESS;
}
static int type_copy_fails(MPI_Datatype t, int keyval, void *extra, void *in, void *out,
                           int *flag) {
    (void)t, (void)keyval, (void)extra, (void)in, (void)out, (void)flag;
    return MPI_ERR_TYPE;
}
static int type_delete(MPI_Datatype t, int keyval, void *value, void *extra) {
    (void)keyval, (void)value, (void)extra;
    int size = -1;
    CHECK(MPI_Type_size(t, &size) == MPI_SUCCESS);
    CHECK(size == (int)sizeof(int) || size == 2 * (int)sizeof(int));
    type_deletes++;
    return MPI_SUCCESS;
}

static void datatypes(void) {
    MPI_Datatype t, copy, failed = MPI_INT;
    int key, bad, comm_key, same, never, flag;
    void *v;
    OK(MPI_Type_create_keyval(type_copy, type_delete, &key, NULL));
    OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &same, NULL));
    OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &never, NULL));
    OK(MPI_Type_create_keyval(type_copy_fails, MPI_TYPE_NULL_DELETE_FN, &bad, NULL));
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &comm_key, NULL));
    /* predefined types carry attributes too */
    type_copies = type_deletes = 0;
    OK(MPI_Type_set_attr(MPI_INT, key, (void *)(MPI_Aint)5));
    OK(MPI_Type_get_attr(MPI_INT, key, &v, &flag));
    CHECK(flag == 1 && (MPI_Aint)v == 5);
    OK(MPI_Type_get_attr(MPI_DOUBLE, key, &v, &flag));
    CHECK(flag == 0);
    OK(MPI_Type_delete_attr(MPI_INT, key));
    CHECK(type_deletes == 1);
    OK(MPI_Type_get_attr(MPI_INT, key, &v, &flag));
    CHECK(flag == 0);

    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    OK(MPI_Type_set_attr(t, key, (void *)(MPI_Aint)21));
    OK(MPI_Type_set_attr(t, same, (void *)(MPI_Aint)22));
    OK(MPI_Type_set_attr(t, never, (void *)(MPI_Aint)23));
    type_copies = type_deletes = 0;
    OK(MPI_Type_dup(t, &copy));
    CHECK(type_copies == 1);
    OK(MPI_Type_get_attr(copy, key, &v, &flag));
    CHECK(flag == 1 && (MPI_Aint)v == 42);
    OK(MPI_Type_get_attr(copy, same, &v, &flag));
    CHECK(flag == 1 && (MPI_Aint)v == 22);
    OK(MPI_Type_get_attr(copy, never, &v, &flag));
    CHECK(flag == 0);
    OK(MPI_Type_free(&copy));
    CHECK(type_deletes == 1);
    OK(MPI_Type_set_attr(t, bad, NULL));
    FAILS(MPI_Type_dup(t, &failed), MPI_ERR_TYPE);
    CHECK(failed == MPI_DATATYPE_NULL && type_deletes == 2); /* the partial copy is deleted */
    /* keyvals of the wrong kind */
    FAILS(MPI_Type_set_attr(t, comm_key, NULL), MPI_ERR_KEYVAL);
    FAILS(MPI_Type_get_attr(t, comm_key, &v, &flag), MPI_ERR_KEYVAL);
    FAILS(MPI_Comm_set_attr(MPI_COMM_WORLD, key, NULL), MPI_ERR_KEYVAL);
    FAILS(MPI_Comm_get_attr(MPI_COMM_WORLD, key, &v, &flag), MPI_ERR_KEYVAL);
    FAILS(MPI_Type_get_attr(t, MPI_TAG_UB, &v, &flag), MPI_ERR_KEYVAL);
    int k = key;
    FAILS(MPI_Comm_free_keyval(&k), MPI_ERR_KEYVAL);
    k = comm_key;
    FAILS(MPI_Type_free_keyval(&k), MPI_ERR_KEYVAL);
    FAILS(MPI_Type_get_attr(MPI_DATATYPE_NULL, key, &v, &flag), MPI_ERR_TYPE);
    FAILS(MPI_Type_get_attr(t, key, NULL, &flag), MPI_ERR_ARG);
    OK(MPI_Type_free(&t));
    CHECK(type_deletes == 3);
    OK(MPI_Type_free_keyval(&key));
    OK(MPI_Type_free_keyval(&bad));
    OK(MPI_Type_free_keyval(&same));
    OK(MPI_Type_free_keyval(&never));
    OK(MPI_Comm_free_keyval(&comm_key));
}

/* the deprecated MPI-1 forms */
static void mpi1_forms(void) {
    MPI_Comm comm, copy;
    int key, flag;
    void *v;
    OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &key, NULL));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    OK(MPI_Attr_put(comm, key, (void *)(MPI_Aint)9));
    OK(MPI_Attr_get(comm, key, &v, &flag));
    CHECK(flag == 1 && (MPI_Aint)v == 9);
    OK(MPI_Comm_dup(comm, &copy));
    OK(MPI_Attr_get(copy, key, &v, &flag));
    CHECK(flag == 1 && (MPI_Aint)v == 9);
    OK(MPI_Attr_delete(copy, key));
    OK(MPI_Attr_get(copy, key, &v, &flag));
    CHECK(flag == 0);
    OK(MPI_Keyval_free(&key));
    CHECK(key == MPI_KEYVAL_INVALID);
    OK(MPI_Comm_free(&copy));
    OK(MPI_Comm_free(&comm));
    OK(MPI_Keyval_create(MPI_NULL_COPY_FN, count_delete, &key, NULL));
    OK(MPI_Keyval_free(&key));
}

static void errors(void) {
    int key, flag;
    void *v;
    FAILS(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, NULL, NULL),
          MPI_ERR_ARG);
    FAILS(MPI_Comm_free_keyval(NULL), MPI_ERR_ARG);
    key = MPI_KEYVAL_INVALID;
    FAILS(MPI_Comm_free_keyval(&key), MPI_ERR_KEYVAL);
    FAILS(MPI_Comm_set_attr(MPI_COMM_WORLD, 12345, NULL), MPI_ERR_KEYVAL);
    FAILS(MPI_Comm_get_attr(MPI_COMM_WORLD, 12345, &v, &flag), MPI_ERR_KEYVAL);
    FAILS(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID), MPI_ERR_KEYVAL);
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    FAILS(MPI_Comm_get_attr(MPI_COMM_WORLD, key, NULL, &flag), MPI_ERR_ARG);
    FAILS(MPI_Comm_get_attr(MPI_COMM_WORLD, key, &v, NULL), MPI_ERR_ARG);
    FAILS(MPI_Comm_set_attr(MPI_COMM_NULL, key, NULL), MPI_ERR_COMM);
    FAILS(MPI_Comm_get_attr(MPI_COMM_NULL, key, &v, &flag), MPI_ERR_COMM);
    OK(MPI_Comm_free_keyval(&key));
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    predefined(size);
    basics(rank);
    copying();
    free_order();
    keyval_lifetime();
    failing_callbacks();
    reentrant_callbacks();
    datatypes();
    mpi1_forms();
    errors();

    /* at MPI_Finalize: MPI_COMM_SELF's attributes, last set first, then MPI_COMM_WORLD's */
    int keys[4];
    for (int i = 0; i < 4; i++) {
        OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_order, &keys[i], NULL));
    }
    OK(MPI_Comm_set_attr(MPI_COMM_WORLD, keys[0], (void *)(MPI_Aint)100));
    OK(MPI_Comm_set_attr(MPI_COMM_SELF, keys[1], (void *)(MPI_Aint)1));
    OK(MPI_Comm_set_attr(MPI_COMM_SELF, keys[2], (void *)(MPI_Aint)2));
    OK(MPI_Comm_set_attr(MPI_COMM_SELF, keys[3], (void *)(MPI_Aint)3));
    for (int i = 0; i < 4; i++) OK(MPI_Comm_free_keyval(&keys[i])); /* they live on */
    norder = 0;
    OK(MPI_Finalize());
    MPI_Aint want[4] = {3, 2, 1, 100};
    if (norder != 4 || memcmp(order, want, sizeof want) != 0) {
        fprintf(stderr, "[rank %d] attributes deleted at finalize: %d, order", rank, norder);
        for (int i = 0; i < norder; i++) fprintf(stderr, " %ld", (long)order[i]);
        fprintf(stderr, " (expected 3 2 1 100)\n");
        return 1;
    }
    if (rank == 0) printf("attrs: all checks passed\n");
    return 0;
}
