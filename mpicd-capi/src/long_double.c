/* long_double.c: reductions on C's long double (x86-64's 80-bit extended type, stored in 16
 * bytes), which Rust cannot compute in: MPI_SUM, MPI_PROD, MPI_MAX and MPI_MIN on
 * MPI_LONG_DOUBLE, MPI_SUM and MPI_PROD on MPI_C_LONG_DOUBLE_COMPLEX, and the comparison that
 * MINLOC and MAXLOC on MPI_LONG_DOUBLE_INT need. Likewise on IEEE binary128 (Fortran's
 * REAL16 and COMPLEX32: GCC's __float128, or long double where that is binary128). Operands lie in packed buffers, possibly
 * unaligned: every element is copied in and out with memcpy. Called from reductions.rs. */
#include <complex.h>
#include <stddef.h>
#include <string.h>

enum { LD_SUM = 0, LD_PROD = 1, LD_MAX = 2, LD_MIN = 3 };

/* The bytes of a long double that hold its value: x86's 80-bit type leaves the last 6 of its
 * 16 as padding, which a computed value (a complex product's, returned in registers) need not
 * define. A result is written back over these bytes only, so the operand's padding stays as it
 * was (defined, for valgrind, when the caller's was). */
#if defined(__LDBL_MANT_DIG__) && __LDBL_MANT_DIG__ == 64
enum { LD_VALUE = 10 };
#else
enum { LD_VALUE = sizeof(long double) };
#endif

/* acc[i] = acc[i] op inc[i] for n long doubles; returns 0, or -1 for an unknown op. */
int mpicd_long_double_reduce(int op, unsigned char *acc, const unsigned char *inc, size_t n) {
    for (size_t i = 0; i < n; i++) {
        long double a, b;
        memcpy(&a, acc + i * sizeof a, sizeof a);
        memcpy(&b, inc + i * sizeof b, sizeof b);
        switch (op) {
        case LD_SUM: a = a + b; break;
        case LD_PROD: a = a * b; break;
        case LD_MAX: a = b > a ? b : a; break;
        case LD_MIN: a = b < a ? b : a; break;
        default: return -1;
        }
        memcpy(acc + i * sizeof a, &a, LD_VALUE);
    }
    return 0;
}

/* acc[i] = acc[i] op inc[i] for n long double complex numbers (sum or product). */
int mpicd_long_double_complex_reduce(int op, unsigned char *acc, const unsigned char *inc,
                                     size_t n) {
    for (size_t i = 0; i < n; i++) {
        long double complex a, b;
        memcpy(&a, acc + i * sizeof a, sizeof a);
        memcpy(&b, inc + i * sizeof b, sizeof b);
        switch (op) {
        case LD_SUM: a = a + b; break;
        case LD_PROD: a = a * b; break;
        default: return -1;
        }
        long double re = creall(a), im = cimagl(a);
        memcpy(acc + i * sizeof a, &re, LD_VALUE);
        memcpy(acc + i * sizeof a + sizeof re, &im, LD_VALUE);
    }
    return 0;
}

/* -1, 0 or 1 as the long double at a is below, equal to or above the one at b. */
int mpicd_long_double_compare(const unsigned char *a, const unsigned char *b) {
    long double x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return (x > y) - (x < y);
}

#if defined(__SIZEOF_FLOAT128__)
typedef __float128 quad;
#define HAVE_QUAD 1
#elif defined(__LDBL_MANT_DIG__) && __LDBL_MANT_DIG__ == 113
typedef long double quad;
#define HAVE_QUAD 1
#endif

/* 1 if this build computes in binary128, else 0 (the functions below then fail). */
int mpicd_float128_supported(void) {
#ifdef HAVE_QUAD
    return 1;
#else
    return 0;
#endif
}

/* acc[i] = acc[i] op inc[i] for n binary128 numbers; returns 0, or -1 for an unknown op. */
int mpicd_float128_reduce(int op, unsigned char *acc, const unsigned char *inc, size_t n) {
#ifdef HAVE_QUAD
    for (size_t i = 0; i < n; i++) {
        quad a, b;
        memcpy(&a, acc + i * 16, 16);
        memcpy(&b, inc + i * 16, 16);
        switch (op) {
        case LD_SUM: a = a + b; break;
        case LD_PROD: a = a * b; break;
        case LD_MAX: a = b > a ? b : a; break;
        case LD_MIN: a = b < a ? b : a; break;
        default: return -1;
        }
        memcpy(acc + i * 16, &a, 16);
    }
    return 0;
#else
    (void)op; (void)acc; (void)inc; (void)n;
    return -1;
#endif
}

/* acc[i] = acc[i] op inc[i] for n complex numbers of two binary128 parts (sum or product). */
int mpicd_float128_complex_reduce(int op, unsigned char *acc, const unsigned char *inc,
                                  size_t n) {
#ifdef HAVE_QUAD
    for (size_t i = 0; i < n; i++) {
        quad a[2], b[2], r[2];
        memcpy(a, acc + i * 32, 32);
        memcpy(b, inc + i * 32, 32);
        switch (op) {
        case LD_SUM: r[0] = a[0] + b[0]; r[1] = a[1] + b[1]; break;
        case LD_PROD:
            r[0] = a[0] * b[0] - a[1] * b[1];
            r[1] = a[0] * b[1] + a[1] * b[0];
            break;
        default: return -1;
        }
        memcpy(acc + i * 32, r, 32);
    }
    return 0;
#else
    (void)op; (void)acc; (void)inc; (void)n;
    return -1;
#endif
}
