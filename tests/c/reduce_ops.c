/* reduce_ops.c: reductions beyond the element-wise numeric ones, on any number of ranks: user
 * ops (MPI_Op_create, _c, commutative or not: a non-commutative one combines in rank order
 * whatever the root), MPI_Scan and MPI_Exscan (in place too), MPI_Reduce_local,
 * MPI_Op_commutative and MPI_Op_free;
 * MPI_SUM and MPI_PROD on complex numbers (float and double), MINLOC and MAXLOC on every
 * value-index pair type (MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT)
 * with ties broken by the lower index, through Reduce and Allreduce (in place too), and the
 * errors of ops a type does not define. */
#include "check.h"
#include <complex.h>
#include <string.h>

/* |a - b|^2 <= tol^2 |b|^2 (relative), without libm */
static int close_to(double complex a, double complex b, double tol) {
    double complex d = a - b;
    double dd = creal(d) * creal(d) + cimag(d) * cimag(d);
    double bb = creal(b) * creal(b) + cimag(b) * cimag(b);
    return dd <= tol * tol * (1 + bb);
}

struct float_int { float v; int i; };
struct double_int { double v; int i; };
struct long_int { long v; int i; };
struct two_int { int v; int i; };
struct short_int { short v; int i; };

/* A non-commutative (associative) op: products of 2x2 integer matrices, each an element of a
 * contiguous type of 4 long longs: inout = in * inout. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    long long *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        long long r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                          a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        for (int i = 0; i < 4; i++) b[i] = r[i];
    }
}

/* A commutative one with an MPI_Count length: sums of ints. */
static void sum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt) {
    (void)dt;
    int *a = in, *b = inout;
    for (MPI_Count i = 0; i < *len; i++) b[i] += a[i];
}

/* Sums over elements of MPI_Type_vector(2, 1, 2, MPI_INT): ints 0 and 2 of every 3 (its
 * extent); ints 1 of each must not be touched. */
static void strided_sum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        b[3 * i] += a[3 * i];
        b[3 * i + 2] += a[3 * i + 2];
    }
}

static void matrix_of(int r, long long m[4]) {
    m[0] = r + 1, m[1] = 1, m[2] = 1, m[3] = 0;
}

/* Stores v in *p with its padding zeroed: an assignment stores only the value's bytes (10 of 16
 * on x86-64), and undefined padding sent over tcp is what valgrind reports. (A result's padding
 * stays as the caller had it.) The barrier keeps the compiler from dropping the memset as a dead
 * store. */
static void set_long_double(long double *p, long double v) {
    memset(p, 0, sizeof *p);
    __asm__ volatile("" ::: "memory");
    *p = v;
}

static void user_ops(int rank, int size, MPI_Comm comm) {
    MPI_Op mul, sum;
    OK(MPI_Op_create(matmul, 0, &mul));
    OK(MPI_Op_create_c(sum_c, 1, &sum));
    int c;
    OK(MPI_Op_commutative(mul, &c));
    CHECK(!c);
    OK(MPI_Op_commutative(sum, &c));
    CHECK(c);
    OK(MPI_Op_commutative(MPI_SUM, &c));
    CHECK(c);
    MPI_Datatype mat;
    OK(MPI_Type_contiguous(4, MPI_LONG_LONG, &mat));
    OK(MPI_Type_commit(&mat));
    /* The product M_0 M_1 ... M_{size-1}, in rank order whatever the root. */
    long long want[4] = {1, 0, 0, 1};
    for (int r = 0; r < size; r++) {
        long long m[4];
        matrix_of(r, m);
        int one = 1;
        matmul(want, m, &one, &mat);
        for (int i = 0; i < 4; i++) want[i] = m[i];
    }
    for (int root = 0; root < size; root++) {
        long long mine[8], res[8];
        matrix_of(rank, mine);
        matrix_of(rank, mine + 4);
        OK(MPI_Reduce(mine, res, 2, mat, mul, root, comm));
        if (rank == root)
            for (int i = 0; i < 8; i++) CHECK(res[i] == want[i % 4]);
    }
    long long mine[4], all[4];
    matrix_of(rank, mine);
    OK(MPI_Allreduce(mine, all, 1, mat, mul, comm));
    for (int i = 0; i < 4; i++) CHECK(all[i] == want[i]);
    int v[3] = {rank, 1, -rank}, t[3];
    OK(MPI_Allreduce(v, t, 3, MPI_INT, sum, comm));
    CHECK(t[0] == size * (size - 1) / 2 && t[1] == size && t[2] == -t[0]);
    /* Scan and Exscan: prefixes in rank order, for a commutative and a non-commutative op */
    int sv[2] = {rank + 1, 1}, sr[2];
    OK(MPI_Scan(sv, sr, 2, MPI_INT, MPI_SUM, comm));
    CHECK(sr[0] == (rank + 1) * (rank + 2) / 2 && sr[1] == rank + 1);
    OK(MPI_Scan(MPI_IN_PLACE, sv, 2, MPI_INT, sum, comm));
    CHECK(sv[0] == (rank + 1) * (rank + 2) / 2 && sv[1] == rank + 1);
    int ex[2] = {-5, -5}, one_each[2] = {rank + 1, 1};
    OK(MPI_Exscan(one_each, ex, 2, MPI_INT, MPI_SUM, comm));
    if (rank > 0) CHECK(ex[0] == rank * (rank + 1) / 2 && ex[1] == rank);
    else CHECK(ex[0] == -5 && ex[1] == -5); /* nothing precedes rank 0: left as it was */
    long long pre[4] = {1, 0, 0, 1}, prod[4], exprod[4];
    for (int r = 0; r <= rank; r++) {
        long long m[4];
        matrix_of(r, m);
        int one = 1;
        if (r == rank) for (int i = 0; i < 4; i++) exprod[i] = pre[i];
        matmul(pre, m, &one, &mat);
        for (int i = 0; i < 4; i++) pre[i] = m[i];
    }
    long long my[4];
    matrix_of(rank, my);
    OK(MPI_Scan(my, prod, 1, mat, mul, comm));
    for (int i = 0; i < 4; i++) CHECK(prod[i] == pre[i]);
    OK(MPI_Exscan(my, prod, 1, mat, mul, comm));
    if (rank > 0)
        for (int i = 0; i < 4; i++) CHECK(prod[i] == exprod[i]);

    /* The same, long (128 KiB: a chain of the members past 64 KiB, every member's prefix
     * passed on to the next), in place too; element k of rank r is matrix_of(r + k % 5). */
    {
        enum { N = 4096 };
        long long(*mine_l)[4] = malloc(sizeof(long long[N][4]));
        long long(*out_l)[4] = malloc(sizeof(long long[N][4]));
        long long want_in[5][4], want_ex[5][4];
        CHECK(mine_l && out_l);
        for (int j = 0; j < 5; j++) {
            long long p[4] = {1, 0, 0, 1};
            for (int r = 0; r <= rank; r++) {
                long long m[4];
                matrix_of(r + j, m);
                int one = 1;
                if (r == rank) memcpy(want_ex[j], p, sizeof p);
                matmul(p, m, &one, &mat);
                memcpy(p, m, sizeof p);
            }
            memcpy(want_in[j], p, sizeof p);
        }
        for (int pass = 0; pass < 4; pass++) {
            int exclusive = pass >= 2, in_place = pass % 2;
            for (int k = 0; k < N; k++) {
                matrix_of(rank + k % 5, mine_l[k]);
                for (int i = 0; i < 4; i++) out_l[k][i] = -7;
            }
            long long(*into)[4] = in_place ? mine_l : out_l;
            const void *from = in_place ? MPI_IN_PLACE : (const void *)mine_l;
            if (exclusive)
                OK(MPI_Exscan(from, into, N, mat, mul, comm));
            else
                OK(MPI_Scan(from, into, N, mat, mul, comm));
            if (!exclusive || rank > 0)
                for (int k = 0; k < N; k++)
                    for (int i = 0; i < 4; i++)
                        CHECK(into[k][i] == (exclusive ? want_ex : want_in)[k % 5][i]);
        }
        free(mine_l);
        free(out_l);
    }

    /* Reduce_local: inout = in op inout */
    long long a[4] = {1, 2, 3, 4}, b[4] = {0, 1, 1, 0};
    OK(MPI_Reduce_local(a, b, 1, mat, mul));
    CHECK(b[0] == 2 && b[1] == 1 && b[2] == 4 && b[3] == 3);
    int x[2] = {1, 2}, y[2] = {10, 20};
    OK(MPI_Reduce_local(x, y, 2, MPI_INT, MPI_SUM));
    CHECK(y[0] == 11 && y[1] == 22);
    /* A user op on a type with gaps sees the elements where they lie; the gaps stay as they
     * were */
    MPI_Datatype strided;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &strided));
    OK(MPI_Type_commit(&strided));
    MPI_Op ssum;
    OK(MPI_Op_create(strided_sum, 1, &ssum));
    int w[6] = {rank, -1, 2 * rank, 3 * rank, -1, 4 * rank}, z[6] = {7, 7, 7, 7, 7, 7};
    OK(MPI_Allreduce(w, z, 2, strided, ssum, comm));
    int ranks = size * (size - 1) / 2;
    CHECK(z[0] == ranks && z[1] == 7 && z[2] == 2 * ranks);
    CHECK(z[3] == 3 * ranks && z[4] == 7 && z[5] == 4 * ranks);
    OK(MPI_Op_free(&ssum));
    OK(MPI_Type_free(&strided));
    /* long double: sums, maxima and MINLOC on MPI_LONG_DOUBLE_INT, computed in extended
     * precision (1 + 2^-60 is not a double) */
    long double ld, lds, ldm;
    set_long_double(&ld, 1.0L + (long double)rank / 1152921504606846976.0L);
    set_long_double(&lds, 0);
    set_long_double(&ldm, 0);
    OK(MPI_Allreduce(&ld, &lds, 1, MPI_LONG_DOUBLE, MPI_SUM, comm));
    CHECK(lds == (long double)size + (long double)ranks / 1152921504606846976.0L);
    OK(MPI_Allreduce(&ld, &ldm, 1, MPI_LONG_DOUBLE, MPI_MAX, comm));
    CHECK(ldm == 1.0L + (long double)(size - 1) / 1152921504606846976.0L);
    struct { long double v; int i; } lp, lpm;
    memset(&lp, 0, sizeof lp);
    memset(&lpm, 0, sizeof lpm);
    set_long_double(&lp.v, -ld);
    lp.i = rank;
    OK(MPI_Allreduce(&lp, &lpm, 1, MPI_LONG_DOUBLE_INT, MPI_MINLOC, comm));
    /* The first rank holding the least value (all ranks tie where long double arithmetic runs
     * at double precision, as under valgrind) */
    int want_i = 0;
    for (int r = 1; r < size; r++)
        if (-(1.0L + (long double)r / 1152921504606846976.0L) <
            -(1.0L + (long double)want_i / 1152921504606846976.0L))
            want_i = r;
    CHECK(lpm.v == -ldm && lpm.i == want_i);
    OK(MPI_Type_free(&mat));
    OK(MPI_Op_free(&mul));
    CHECK(mul == MPI_OP_NULL);
    OK(MPI_Op_free(&sum));
    MPI_Op predefined = MPI_SUM;
    FAILS(MPI_Op_free(&predefined), MPI_ERR_OP);
    FAILS(MPI_Op_create(NULL, 1, &mul), MPI_ERR_ARG);
}

int main(int argc, char **argv) {
    int rank, size;
    test_init(&argc, &argv, &rank, &size);
    MPI_Comm comm = MPI_COMM_WORLD;

    /* complex sums and products: rank r contributes (r + 1) + i */
    double complex z = (rank + 1) + 1.0 * I, zs, zp;
    OK(MPI_Allreduce(&z, &zs, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, comm));
    OK(MPI_Allreduce(&z, &zp, 1, MPI_C_DOUBLE_COMPLEX, MPI_PROD, comm));
    double complex want_s = 0, want_p = 1;
    for (int r = 0; r < size; r++) want_s += (r + 1) + 1.0 * I, want_p *= (r + 1) + 1.0 * I;
    CHECK(close_to(zs, want_s, 1e-12) && close_to(zp, want_p, 1e-12));
    float complex f[2] = {rank + 0.5f * I, 2.0f}, fp[2];
    OK(MPI_Reduce(f, fp, 2, MPI_C_FLOAT_COMPLEX, MPI_PROD, 0, comm));
    if (rank == 0) {
        float complex w = 1, two = 1;
        for (int r = 0; r < size; r++) w *= r + 0.5f * I, two *= 2;
        CHECK(close_to(fp[0], w, 1e-5) && close_to(fp[1], two, 1e-6));
    }
    FAILS(MPI_Allreduce(&z, &zs, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, comm), MPI_ERR_OP);

    /* MINLOC/MAXLOC: value = rank % 2 (ties on every other rank), index = rank */
    for (int root = 0; root < size; root++) {
        struct double_int d = {rank % 2, rank}, dmin, dmax;
        OK(MPI_Reduce(&d, &dmin, 1, MPI_DOUBLE_INT, MPI_MINLOC, root, comm));
        OK(MPI_Reduce(&d, &dmax, 1, MPI_DOUBLE_INT, MPI_MAXLOC, root, comm));
        if (rank == root) {
            CHECK(dmin.v == 0 && dmin.i == 0);
            CHECK(size == 1 ? (dmax.v == 0 && dmax.i == 0) : (dmax.v == 1 && dmax.i == 1));
        }
    }
    struct float_int fi[2] = {{-(float)rank, rank}, {(float)(rank % 3), 10 + rank}};
    OK(MPI_Allreduce(MPI_IN_PLACE, fi, 2, MPI_FLOAT_INT, MPI_MINLOC, comm));
    CHECK(fi[0].v == -(float)(size - 1) && fi[0].i == size - 1);
    CHECK(fi[1].v == 0 && fi[1].i == 10);
    struct long_int li = {1000L - rank, rank}, lr;
    OK(MPI_Allreduce(&li, &lr, 1, MPI_LONG_INT, MPI_MAXLOC, comm));
    CHECK(lr.v == 1000 && lr.i == 0);
    struct two_int ti = {rank / 2, rank}, tr;
    OK(MPI_Allreduce(&ti, &tr, 1, MPI_2INT, MPI_MAXLOC, comm));
    CHECK(tr.v == (size - 1) / 2 && tr.i == 2 * ((size - 1) / 2));
    struct short_int si = {(short)(5 - rank), rank}, sr;
    OK(MPI_Allreduce(&si, &sr, 1, MPI_SHORT_INT, MPI_MINLOC, comm));
    CHECK(sr.v == 5 - (size - 1) && sr.i == size - 1);

    /* MINLOC on a plain type, SUM on a pair type: not defined */
    int x = rank, y;
    FAILS(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MINLOC, comm), MPI_ERR_OP);
    FAILS(MPI_Allreduce(&ti, &tr, 1, MPI_2INT, MPI_SUM, comm), MPI_ERR_OP);
    user_ops(rank, size, comm);
    test_finish(rank, "reduce_ops");
    return 0;
}
