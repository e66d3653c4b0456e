/* _mpicd_fast.h: what the two C files of mpicd._mpicd_fast share: the operation behind a
 * callback's buffer argument, the custom datatype's callbacks (_mpicd_fast_callbacks.c) and
 * the Python hooks they call (set by setup in _mpicd_fast.c). */
#ifndef MPICD_FAST_H
#define MPICD_FAST_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#include "mpi.h"

#if PY_VERSION_HEX < 0x030A0000 /* Py_NewRef is 3.10's */
static inline PyObject *Py_NewRef(PyObject *o) {
    Py_INCREF(o);
    return o;
}
#endif

/* The operation of one blocking call, on its C stack. */
enum op_kind { OP_SEND = 0x53454e44, OP_RECV = 0x52454356 }; /* checked by every callback */

typedef struct {
    enum op_kind kind;
    PyObject *faults; /* _pickled._faults when it is not empty (borrowed), else NULL */
    PyObject *exc;    /* the first exception a callback raised (owned) */
    /* sender: the stream and the region arrays (the caller's objects hold them) */
    const char *stream;
    MPI_Count stream_len;
    /* both: region arrays of nregions 64-bit words each */
    MPI_Count nregions;
    const char *bases, *lens, *types;
    /* receiver */
    MPI_Count packed;     /* the sender's packed size, once resized */
    PyObject *stream_obj; /* bytes of `packed` bytes, filled by unpack (owned) */
    PyObject *shape;      /* (RecvOp, bases, lens, types) of a message with regions (owned) */
} fast_op;

_Static_assert(sizeof(MPI_Count) == 8 && sizeof(void *) == 8 && sizeof(MPI_Datatype) == 8,
               "region arrays are 64-bit words");

extern PyObject *fast_py_fault;  /* _pickled._fault(name): raises when a fault is due */
extern PyObject *fast_py_resize; /* _fast._resize(packed, n, lens_addr, types_addr) */
extern unsigned long long fast_n_callbacks; /* C callbacks run (tests: this path was taken) */

MPI_Type_custom_query_function fast_cb_query;
MPI_Type_custom_pack_function fast_cb_pack;
MPI_Type_custom_unpack_function fast_cb_unpack;
MPI_Type_custom_region_count_function fast_cb_region_count;
MPI_Type_custom_region_function fast_cb_regions;
MPIX_Type_custom_resize_function fast_cb_resize;

#endif
