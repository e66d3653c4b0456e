/* errhandlers.c: user error handlers and user error codes. A handler made by
 * MPI_Comm_create_errhandler is called with the failing communicator's handle and the error
 * code (a call on the communicator, a wait on one of its requests, MPI_Comm_call_errhandler),
 * a dup inherits it, it lives on while a communicator uses it after MPI_Errhandler_free, and
 * errors tied to no communicator go to MPI_COMM_SELF's handler. Error classes, codes and
 * strings added by the program round-trip through MPI_Error_class / MPI_Error_string and
 * MPI_LASTUSEDCODE, take the same values on every rank, and can be removed (MPI 4.1). Runs on
 * any number of ranks. */
#include "check.h"
#include <string.h>

static int calls;
static MPI_Comm seen_comm;
static int seen_code, seen_class;

/* Records what it was called with; calls MPI itself, as handlers may. */
static void record(MPI_Comm *comm, int *code, ...) {
    calls++;
    seen_comm = *comm;
    seen_code = *code;
    seen_class = -1;
    MPI_Error_class(*code, &seen_class);
}

/* Expects one call of `record` since the last reset, on `comm` with `code`. */
static void expect_call(MPI_Comm comm, int code) {
    CHECK(calls == 1);
    CHECK(seen_comm == comm);
    CHECK(seen_code == code);
    calls = 0;
}

static void handlers(int size) {
    int x = 0;
    MPI_Errhandler eh, got;
    MPI_Comm dup, dup2;

    OK(MPI_Comm_create_errhandler(record, &eh));
    CHECK(eh != MPI_ERRHANDLER_NULL && eh != MPI_ERRORS_RETURN && eh != MPI_ERRORS_ARE_FATAL);

    /* a failing call on the communicator calls the handler, then returns the code */
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_set_errhandler(dup, eh));
    OK(MPI_Comm_get_errhandler(dup, &got));
    CHECK(got == eh);
    OK(MPI_Errhandler_free(&got)); /* the reference get_errhandler gave */
    CHECK(got == MPI_ERRHANDLER_NULL);
    calls = 0;
    CHECK(MPI_Send(&x, 1, MPI_INT, size, 0, dup) == MPI_ERR_RANK);
    expect_call(dup, MPI_ERR_RANK);
    CHECK(seen_class == MPI_ERR_RANK);
    CHECK(MPI_Comm_rank(dup, NULL) == MPI_ERR_ARG);
    expect_call(dup, MPI_ERR_ARG);
    OK(MPI_Comm_rank(dup, &x)); /* success: no call */
    CHECK(calls == 0);

    /* MPI_Comm_call_errhandler: the handler gets the code, the call returns MPI_SUCCESS */
    OK(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
    expect_call(dup, MPI_ERR_OTHER);

    /* a dup inherits the handler; freeing the handle leaves it working for both */
    OK(MPI_Comm_dup(dup, &dup2));
    OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL);
    CHECK(MPI_Send(&x, 1, MPI_INT, -5, 0, dup2) == MPI_ERR_RANK);
    expect_call(dup2, MPI_ERR_RANK);
    OK(MPI_Comm_call_errhandler(dup, MPI_ERR_COUNT));
    expect_call(dup, MPI_ERR_COUNT);
    OK(MPI_Comm_get_errhandler(dup2, &got)); /* still a valid handle while in use */
    CHECK(got != MPI_ERRHANDLER_NULL);
    MPI_Comm dup3;
    OK(MPI_Comm_dup(MPI_COMM_SELF, &dup3));
    OK(MPI_Comm_set_errhandler(dup3, got));
    OK(MPI_Errhandler_free(&got));
    OK(MPI_Comm_call_errhandler(dup3, MPI_ERR_TAG));
    expect_call(dup3, MPI_ERR_TAG);

    /* a wait on a request calls its communicator's handler */
    int big[3] = {1, 2, 3};
    MPI_Request r[2];
    OK(MPI_Isend(big, 3, MPI_INT, 0, 5, dup3, &r[0]));
    OK(MPI_Irecv(&x, 1, MPI_INT, 0, 5, dup3, &r[1]));
    CHECK(MPI_Wait(&r[1], MPI_STATUS_IGNORE) == MPI_ERR_TRUNCATE);
    expect_call(dup3, MPI_ERR_TRUNCATE);
    OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));

    /* the last users go; then the handler is gone */
    OK(MPI_Comm_free(&dup3));
    OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    OK(MPI_Comm_get_errhandler(dup, &got));
    CHECK(got == MPI_ERRORS_RETURN);
    OK(MPI_Errhandler_free(&got)); /* freeing a predefined handler is allowed */
    CHECK(got == MPI_ERRHANDLER_NULL);
    OK(MPI_Comm_get_errhandler(dup2, &got));
    OK(MPI_Comm_free(&dup2));
    MPI_Errhandler stale = got;
    OK(MPI_Errhandler_free(&got)); /* the last reference */
    FAILS(MPI_Comm_set_errhandler(dup, stale), MPI_ERR_ERRHANDLER);
    FAILS(MPI_Errhandler_free(&stale), MPI_ERR_ERRHANDLER);

    /* MPI_ERRORS_RETURN: call_errhandler just returns */
    OK(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
    CHECK(calls == 0);

    /* invalid arguments */
    MPI_Errhandler null = MPI_ERRHANDLER_NULL;
    FAILS(MPI_Errhandler_free(&null), MPI_ERR_ERRHANDLER);
    FAILS(MPI_Errhandler_free(NULL), MPI_ERR_ARG);
    FAILS(MPI_Comm_set_errhandler(dup, MPI_ERRHANDLER_NULL), MPI_ERR_ERRHANDLER);
    FAILS(MPI_Comm_create_errhandler(NULL, &got), MPI_ERR_ARG);
    FAILS(MPI_Comm_create_errhandler(record, NULL), MPI_ERR_ARG);
    FAILS(MPI_Comm_call_errhandler(MPI_COMM_NULL, MPI_ERR_OTHER), MPI_ERR_COMM);
    FAILS(MPI_Comm_get_errhandler(dup, NULL), MPI_ERR_ARG);
    OK(MPI_Comm_free(&dup));

    /* errors tied to no communicator go to MPI_COMM_SELF's handler */
    OK(MPI_Comm_create_errhandler(record, &eh));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
    OK(MPI_Errhandler_free(&eh));
    CHECK(MPI_Type_size(MPI_DATATYPE_NULL, &x) == MPI_ERR_TYPE);
    expect_call(MPI_COMM_SELF, MPI_ERR_TYPE);
    CHECK(MPI_Comm_size(MPI_COMM_NULL, &x) == MPI_ERR_COMM);
    expect_call(MPI_COMM_SELF, MPI_ERR_COMM);
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK(MPI_Type_size(MPI_DATATYPE_NULL, &x) == MPI_ERR_TYPE);
    CHECK(calls == 0);
}

static void codes(int size) {
    int cls, code, code2, other, len, flag, *last;
    char text[MPI_MAX_ERROR_STRING];

    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag == 1 && *last >= MPI_ERR_LASTCODE);
    int before = *last;

    OK(MPI_Add_error_class(&cls));
    CHECK(cls > MPI_ERR_LASTCODE && cls > before);
    OK(MPI_Add_error_code(cls, &code));
    OK(MPI_Add_error_code(MPI_ERR_ARG, &code2)); /* a code of a predefined class */
    CHECK(code > cls && code2 > code);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag == 1 && *last == code2);

    /* the same values on every rank (each adds them in the same order) */
    int mine[3] = {cls, code, code2}, all[3 * 4];
    if (size <= 4) {
        OK(MPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, MPI_COMM_WORLD));
        for (int i = 0; i < 3 * size; i++) CHECK(all[i] == mine[i % 3]);
    }

    /* classes */
    OK(MPI_Error_class(cls, &other));
    CHECK(other == cls);
    OK(MPI_Error_class(code, &other));
    CHECK(other == cls);
    OK(MPI_Error_class(code2, &other));
    CHECK(other == MPI_ERR_ARG);

    /* strings: empty until added; replaced by a second call */
    OK(MPI_Error_string(cls, text, &len));
    CHECK(len == 0 && text[0] == '\0');
    OK(MPI_Add_error_string(code, "first text"));
    OK(MPI_Add_error_string(code, "my own error\n"));
    OK(MPI_Add_error_string(cls, "my class"));
    OK(MPI_Error_string(code, text, &len));
    CHECK(strcmp(text, "my own error\n") == 0 && len == (int)strlen(text));
    OK(MPI_Error_string(cls, text, &len));
    CHECK(strcmp(text, "my class") == 0);
    OK(MPI_Error_string(MPI_ERR_RANK, text, &len));
    CHECK(strstr(text, "MPI_ERR_RANK") != NULL);

    /* a user handler gets the program's own code */
    MPI_Errhandler eh;
    OK(MPI_Comm_create_errhandler(record, &eh));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    OK(MPI_Errhandler_free(&eh));
    OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, code));
    expect_call(MPI_COMM_WORLD, code);
    CHECK(seen_class == cls);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    /* invalid codes and classes */
    FAILS(MPI_Error_string(0x7fffff00, text, &len), MPI_ERR_ARG);
    FAILS(MPI_Error_string(-1, text, &len), MPI_ERR_ARG);
    FAILS(MPI_Error_class(0x7fffff00, &other), MPI_ERR_ARG);
    FAILS(MPI_Add_error_code(code, &other), MPI_ERR_ARG);  /* a code is no class */
    FAILS(MPI_Add_error_code(MPI_SUCCESS, &other), MPI_ERR_ARG);
    FAILS(MPI_Add_error_code(0x7fffff00, &other), MPI_ERR_ARG);
    FAILS(MPI_Add_error_string(MPI_ERR_ARG, "predefined"), MPI_ERR_ARG);
    FAILS(MPI_Add_error_string(0x7fffff00, "unknown"), MPI_ERR_ARG);
    FAILS(MPI_Add_error_class(NULL), MPI_ERR_ARG);
    static char longtext[MPI_MAX_ERROR_STRING + 1];
    memset(longtext, 'x', MPI_MAX_ERROR_STRING);
    FAILS(MPI_Add_error_string(code, longtext), MPI_ERR_ARG);

    /* removal (MPI 4.1): strings before their code or class, codes before their class */
    FAILS(MPI_Remove_error_code(code), MPI_ERR_ARG);   /* has a string */
    FAILS(MPI_Remove_error_class(cls), MPI_ERR_ARG);   /* has a code */
    FAILS(MPI_Remove_error_class(code), MPI_ERR_ARG);  /* not a class */
    FAILS(MPI_Remove_error_code(cls), MPI_ERR_ARG);    /* not a code */
    FAILS(MPI_Remove_error_string(code2), MPI_ERR_ARG); /* has none */
    FAILS(MPI_Remove_error_class(MPI_ERR_ARG), MPI_ERR_ARG);
    OK(MPI_Remove_error_string(code));
    OK(MPI_Error_string(code, text, &len));
    CHECK(len == 0);
    OK(MPI_Remove_error_code(code));
    OK(MPI_Remove_error_code(code2));
    FAILS(MPI_Error_class(code, &other), MPI_ERR_ARG);
    FAILS(MPI_Remove_error_class(cls), MPI_ERR_ARG); /* has a string */
    OK(MPI_Remove_error_string(cls));
    OK(MPI_Remove_error_class(cls));
    FAILS(MPI_Error_class(cls, &other), MPI_ERR_ARG);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(*last == before);

    /* many adds and removes reuse the values */
    for (int k = 0; k < 1000; k++) {
        int c, d;
        OK(MPI_Add_error_class(&c));
        OK(MPI_Add_error_code(c, &d));
        CHECK(c == before + 1 && d == before + 2);
        OK(MPI_Remove_error_code(d));
        OK(MPI_Remove_error_class(c));
    }
}

int main(int argc, char **argv) {
    int rank, size, cls, len;
    char text[MPI_MAX_ERROR_STRING];
    /* MPI_Error_class and MPI_Error_string work before MPI_Init (MPI 4) */
    CHECK(MPI_Error_class(MPI_ERR_RANK, &cls) == MPI_SUCCESS && cls == MPI_ERR_RANK);
    CHECK(MPI_Error_string(MPI_ERR_TAG, text, &len) == MPI_SUCCESS && len > 0);
    test_init(&argc, &argv, &rank, &size);
    handlers(size);
    codes(size);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    test_finish(rank, "errhandlers");
    return 0;
}
