/* coll_pieces.c: collectives longer than the node area's share (MPICD_COLL_NODE, 128 KiB),
 * which go through the node's memory in pieces (mpicd/src/schedule/node/caller.rs):
 * - MPI_Allreduce of every element size, 1 to 32 bytes, at lengths around the share and its
 *   multiples. Each piece is cut into one block of whole elements per member, which that member
 *   reduces; a last piece that does not split so (3 members, 1000003 bytes) is reduced whole by
 *   every member. coll_node.c checks a non-commutative op across the pieces.
 * - MPI_Allgather of blocks longer than the share, where processes outnumber cores (3-4 ranks
 *   on 2 cores; elsewhere the blocks are read in place or go by messages): piece k is bytes
 *   k * share.. of every block.
 * Every element of every result is checked against what is computed here, in place and not. */
#include "check.h"
#include <complex.h>
#include <string.h>

static int rank, size;

/* The operand of rank r at element i: small values, so that no sum or product overflows. */
static long value(long i, int r) { return (i * 7 + r * 3) % 11 + 1; }

/* One allreduce of n elements of `ctype` (MPI type `mtype`, op `op`; `fold(acc, x)` is the op
 * here), in place or not, checked element by element. */
#define CHECKED(name, ctype, mtype, op, fold)                                              \
    static void name(long n, int in_place) {                                               \
        /* Zeroed, and only the real parts stored: a long double's padding bytes, which    \
         * travel with it, stay defined (valgrind). */                                     \
        ctype *a = calloc((size_t)n, sizeof(ctype)), *b = calloc((size_t)n, sizeof(ctype)); \
        CHECK(a && b);                                                                     \
        for (long i = 0; i < n; i++) __real__ a[i] = value(i, rank);                       \
        if (in_place) {                                                                    \
            memcpy(b, a, sizeof(ctype) * (size_t)n);                                       \
            OK(MPI_Allreduce(MPI_IN_PLACE, b, (int)n, mtype, op, MPI_COMM_WORLD));         \
        } else {                                                                           \
            OK(MPI_Allreduce(a, b, (int)n, mtype, op, MPI_COMM_WORLD));                    \
        }                                                                                  \
        for (long i = 0; i < n; i++) {                                                     \
            ctype acc = (ctype)value(i, 0);                                                \
            for (int r = 1; r < size; r++) {                                               \
                ctype x = (ctype)value(i, r);                                              \
                acc = fold;                                                                \
            }                                                                              \
            CHECK(b[i] == acc);                                                            \
        }                                                                                  \
        free(a);                                                                           \
        free(b);                                                                           \
    }

CHECKED(of_char, signed char, MPI_SIGNED_CHAR, MPI_MAX, x > acc ? x : acc)
CHECKED(of_short, short, MPI_SHORT, MPI_SUM, (short)(acc + x))
CHECKED(of_int, int, MPI_INT, MPI_PROD, acc * x)
CHECKED(of_double, double, MPI_DOUBLE, MPI_SUM, acc + x)
CHECKED(of_long_double, long double, MPI_LONG_DOUBLE, MPI_MIN, x < acc ? x : acc)
CHECKED(of_complex, double _Complex, MPI_C_DOUBLE_COMPLEX, MPI_SUM, acc + x)
CHECKED(of_long_complex, long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD, acc * x)

/* An allgather of `len`-byte blocks, in place or not: byte i of rank r's block is
 * (i * 13 + r * 7) % 251. */
static void allgather(long len, int in_place) {
    unsigned char *mine = malloc((size_t)len), *all = malloc((size_t)len * (size_t)size);
    CHECK(mine && all);
    for (long i = 0; i < len; i++) mine[i] = (unsigned char)((i * 13 + rank * 7) % 251);
    memset(all, 0xEE, (size_t)len * (size_t)size);
    if (in_place) {
        memcpy(all + (size_t)rank * (size_t)len, mine, (size_t)len);
        OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, (int)len, MPI_BYTE,
                         MPI_COMM_WORLD));
    } else {
        OK(MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len, MPI_BYTE, MPI_COMM_WORLD));
    }
    for (int r = 0; r < size; r++)
        for (long i = 0; i < len; i++)
            CHECK(all[(size_t)r * (size_t)len + (size_t)i] == (unsigned char)((i * 13 + r * 7) % 251));
    free(mine);
    free(all);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const long bytes[] = {131072 - 8, 131072, 131072 + 8, 3 * 131072 + 40, 1000003};
    for (int k = 0; k < (int)(sizeof bytes / sizeof bytes[0]); k++)
        for (int in_place = 0; in_place < 2; in_place++) {
            long b = bytes[k];
            of_char(b, in_place);
            of_short(b / 2, in_place);
            of_int(b / 4, in_place);
            of_double(b / 8, in_place);
            of_long_double(b / 16, in_place);
            of_complex(b / 16, in_place);
            of_long_complex(b / 32 + 1, in_place);
        }
    const long blocks[] = {131072, 131072 + 8, 3 * 131072 + 41, 1 << 20};
    for (int k = 0; k < (int)(sizeof blocks / sizeof blocks[0]); k++)
        for (int in_place = 0; in_place < 2; in_place++) allgather(blocks[k], in_place);
    if (rank == 0) printf("coll_pieces: all checks passed\n");
    MPI_Finalize();
    return 0;
}
