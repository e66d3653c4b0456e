/* reduce_ops.c: reductions beyond the element-wise numeric ones, on any number of ranks:
 * MPI_SUM and MPI_PROD on complex numbers (float and double), MINLOC and MAXLOC on every
 * value-index pair type (MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT)
 * with ties broken by the lower index, through Reduce and Allreduce (in place too), and the
 * errors of ops a type does not define. */
#include "check.h"
#include <complex.h>

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
    test_finish(rank, "reduce_ops");
    return 0;
}
