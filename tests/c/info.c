/* info.c: info objects, before MPI_Init, between init and finalize, and after finalize:
 * set/get/get_string/get_valuelen, the keys' order (nthkey), replacing and deleting, dup,
 * truncation by MPI_Info_get and MPI_Info_get_string (buflen in and out), the length limits
 * (MPI_MAX_INFO_KEY - 1 and MPI_MAX_INFO_VAL - 1 characters), MPI_INFO_ENV and
 * MPI_Info_create_env, and the error classes (MPI_ERR_INFO_KEY, _VALUE, _NOKEY, MPI_ERR_INFO,
 * MPI_ERR_ARG). Local calls only: the same on every rank. */
#include "check.h"
#include <string.h>

static int get_flag(MPI_Info info, const char *key, char *value, int len) {
    int flag = -1;
    OK(MPI_Info_get(info, key, len, value, &flag));
    return flag;
}

static void check_value(MPI_Info info, const char *key, const char *want) {
    char v[MPI_MAX_INFO_VAL];
    int len = -1, flag = 0;
    CHECK(get_flag(info, key, v, MPI_MAX_INFO_VAL - 1) == 1 && strcmp(v, want) == 0);
    OK(MPI_Info_get_valuelen(info, key, &len, &flag));
    CHECK(flag == 1 && len == (int)strlen(want));
}

/* What every phase checks: a fresh object, filled, read, changed, copied and freed. */
static void exercise(void) {
    MPI_Info info, copy;
    int n = -1, flag = -1, len;
    char key[MPI_MAX_INFO_KEY], v[MPI_MAX_INFO_VAL];
    OK(MPI_Info_create(&info));
    OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 0);
    OK(MPI_Info_set(info, "zeta", "1"));
    OK(MPI_Info_set(info, "alpha", "two"));
    OK(MPI_Info_set(info, "mid", "three three"));
    OK(MPI_Info_set(info, "zeta", "replaced")); /* keeps its place */
    OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 3);
    const char *order[3] = {"zeta", "alpha", "mid"};
    for (int i = 0; i < 3; i++) {
        OK(MPI_Info_get_nthkey(info, i, key));
        CHECK(strcmp(key, order[i]) == 0);
    }
    check_value(info, "zeta", "replaced");
    check_value(info, "mid", "three three");
    strcpy(v, "untouched");
    CHECK(get_flag(info, "absent", v, 20) == 0 && strcmp(v, "untouched") == 0);
    len = 77;
    OK(MPI_Info_get_valuelen(info, "absent", &len, &flag));
    CHECK(flag == 0 && len == 77);

    /* truncation: MPI_Info_get writes valuelen characters and a NUL */
    memset(v, 'x', sizeof v);
    CHECK(get_flag(info, "zeta", v, 3) == 1);
    CHECK(strcmp(v, "rep") == 0 && v[4] == 'x');
    /* MPI_Info_get_string: buflen counts the NUL, and comes back as the size needed */
    int buflen = 4;
    memset(v, 'x', sizeof v);
    OK(MPI_Info_get_string(info, "zeta", &buflen, v, &flag));
    CHECK(flag == 1 && buflen == 9 && strcmp(v, "rep") == 0 && v[4] == 'x');
    buflen = 0;
    OK(MPI_Info_get_string(info, "zeta", &buflen, NULL, &flag));
    CHECK(flag == 1 && buflen == 9);
    buflen = 9;
    OK(MPI_Info_get_string(info, "zeta", &buflen, v, &flag));
    CHECK(flag == 1 && buflen == 9 && strcmp(v, "replaced") == 0);
    buflen = 5;
    strcpy(v, "same");
    OK(MPI_Info_get_string(info, "nope", &buflen, v, &flag));
    CHECK(flag == 0 && strcmp(v, "same") == 0);

    /* dup is a separate copy */
    OK(MPI_Info_dup(info, &copy));
    OK(MPI_Info_delete(info, "alpha"));
    OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 2);
    OK(MPI_Info_get_nthkey(info, 1, key));
    CHECK(strcmp(key, "mid") == 0);
    OK(MPI_Info_get_nkeys(copy, &n));
    CHECK(n == 3);
    check_value(copy, "alpha", "two");
    FAILS(MPI_Info_delete(info, "alpha"), MPI_ERR_INFO_NOKEY);

    /* limits: MPI_MAX_INFO_KEY - 1 and MPI_MAX_INFO_VAL - 1 characters fit, one more does not */
    char longkey[MPI_MAX_INFO_KEY + 1], longval[MPI_MAX_INFO_VAL + 1];
    memset(longkey, 'k', MPI_MAX_INFO_KEY);
    longkey[MPI_MAX_INFO_KEY - 1] = 0;
    memset(longval, 'v', MPI_MAX_INFO_VAL);
    longval[MPI_MAX_INFO_VAL - 1] = 0;
    OK(MPI_Info_set(info, longkey, longval));
    check_value(info, longkey, longval);
    OK(MPI_Info_get_nthkey(info, 2, key));
    CHECK(strcmp(key, longkey) == 0);
    OK(MPI_Info_set(info, longkey, ""));
    check_value(info, longkey, "");
    longkey[MPI_MAX_INFO_KEY - 1] = 'k';
    longkey[MPI_MAX_INFO_KEY] = 0;
    longval[MPI_MAX_INFO_VAL - 1] = 'v';
    longval[MPI_MAX_INFO_VAL] = 0;
    FAILS(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY);
    FAILS(MPI_Info_get(info, longkey, 10, v, &flag), MPI_ERR_INFO_KEY);
    FAILS(MPI_Info_set(info, "k", longval), MPI_ERR_INFO_VALUE);
    FAILS(MPI_Info_set(info, "", "v"), MPI_ERR_INFO_KEY);
    FAILS(MPI_Info_set(info, NULL, "v"), MPI_ERR_INFO_KEY);
    FAILS(MPI_Info_set(info, "k", NULL), MPI_ERR_INFO_VALUE);
    FAILS(MPI_Info_get_nthkey(info, 3, key), MPI_ERR_ARG);
    FAILS(MPI_Info_get_nthkey(info, -1, key), MPI_ERR_ARG);
    FAILS(MPI_Info_get(info, "zeta", -1, v, &flag), MPI_ERR_ARG);
    buflen = -1;
    FAILS(MPI_Info_get_string(info, "zeta", &buflen, v, &flag), MPI_ERR_ARG);
    FAILS(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO);
    FAILS(MPI_Info_set(MPI_INFO_ENV, "k", "v"), MPI_ERR_INFO);

    /* MPI_Get_hw_resource_info: the node's shared memory */
    MPI_Info hw;
    OK(MPI_Get_hw_resource_info(&hw));
    buflen = MPI_MAX_INFO_VAL;
    OK(MPI_Info_get_string(hw, "mpi_hw_resource_type", &buflen, v, &flag));
    CHECK(flag == 1 && strcmp(v, "mpi_shared_memory") == 0);
    OK(MPI_Info_free(&hw));

    /* MPI_INFO_ENV: the command is this program */
    buflen = MPI_MAX_INFO_VAL;
    OK(MPI_Info_get_string(MPI_INFO_ENV, "command", &buflen, v, &flag));
    CHECK(flag == 1 && strstr(v, "info") != NULL);
    MPI_Info env;
    OK(MPI_Info_dup(MPI_INFO_ENV, &env));
    OK(MPI_Info_set(env, "extra", "1"));
    OK(MPI_Info_free(&env));
    MPI_Info env_info = MPI_INFO_ENV;
    FAILS(MPI_Info_free(&env_info), MPI_ERR_INFO);

    MPI_Info stale = copy;
    OK(MPI_Info_free(&copy));
    CHECK(copy == MPI_INFO_NULL);
    FAILS(MPI_Info_free(&stale), MPI_ERR_INFO);
    FAILS(MPI_Info_dup(stale, &copy), MPI_ERR_INFO);
    OK(MPI_Info_free(&info));
}

int main(int argc, char **argv) {
    /* Before MPI_Init: calls that succeed (an error would be fatal, as no handler is set). */
    MPI_Info early, made;
    OK(MPI_Info_create(&early));
    OK(MPI_Info_set(early, "phase", "before init"));
    OK(MPI_Info_create_env(argc, argv, &made));
    char v[MPI_MAX_INFO_VAL];
    CHECK(get_flag(made, "command", v, MPI_MAX_INFO_VAL - 1) == 1 && strcmp(v, argv[0]) == 0);
    OK(MPI_Info_free(&made));

    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    check_value(early, "phase", "before init");
    exercise();
    OK(MPI_Info_set(early, "phase", "after finalize"));
    OK(MPI_Finalize());

    /* After MPI_Finalize */
    check_value(early, "phase", "after finalize");
    MPI_Info late;
    OK(MPI_Info_dup(early, &late));
    OK(MPI_Info_free(&early));
    OK(MPI_Info_delete(late, "phase"));
    OK(MPI_Info_free(&late));
    if (rank == 0) printf("info: all checks passed\n");
    return 0;
}
