/* _mpicd_fast_callbacks.c: the custom datatype's callbacks of mpicd._mpicd_fast. Each one
 * finds its operation (a fast_op on the C stack of the blocking call) at its buffer argument,
 * runs without the GIL, and takes it only to allocate, to call into Python (a message with
 * regions, an injected fault) or to keep the exception of a failure, which it turns into the
 * MPI error code it returns. */
#include "_mpicd_fast.h"

PyObject *fast_py_fault;
PyObject *fast_py_resize;
unsigned long long fast_n_callbacks;

/* With the GIL held: keeps the pending exception on the operation (the first one wins) and
 * returns the MPI error code the callback returns. */
static int keep_error(fast_op *op) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value != NULL && tb != NULL)
        PyException_SetTraceback(value, tb);
    int code = (type != NULL && PyErr_GivenExceptionMatches(type, PyExc_MemoryError))
                   ? MPI_ERR_NO_MEM
                   : MPI_ERR_OTHER;
    if (op->exc == NULL && value != NULL) {
        op->exc = value;
        value = NULL;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return code;
}

/* Fails the operation with a new exception of `type` (takes the GIL). */
static int fail(fast_op *op, PyObject *type, const char *fmt, long long a, long long b) {
    PyGILState_STATE g = PyGILState_Ensure();
    PyErr_Format(type, fmt, a, b);
    int code = keep_error(op);
    PyGILState_Release(g);
    return code;
}

/* A test's injected fault: 0 to go on, else the error code (the exception kept). */
static int fault(fast_op *op, const char *name) {
    PyGILState_STATE g = PyGILState_Ensure();
    int code = MPI_SUCCESS;
    PyObject *r = PyObject_CallFunction(fast_py_fault, "s", name);
    if (r == NULL)
        code = keep_error(op);
    Py_XDECREF(r);
    PyGILState_Release(g);
    return code;
}

/* The operation behind a callback's buffer argument, or NULL (not one of ours). */
static fast_op *op_of(const void *buf) {
    fast_op *op = (fast_op *)buf;
    if (op == NULL || (op->kind != OP_SEND && op->kind != OP_RECV))
        return NULL;
    __atomic_fetch_add(&fast_n_callbacks, 1, __ATOMIC_RELAXED);
    return op;
}

/* --- the callbacks ------------------------------------------------------------------------ */

int fast_cb_query(void *state, const void *buf, MPI_Count count, MPI_Count *packed_size) {
    (void)state, (void)count;
    fast_op *op = op_of(buf);
    if (op == NULL)
        return MPI_ERR_OTHER;
    if (op->kind == OP_SEND) {
        if (op->faults != NULL) {
            int code = fault(op, "query");
            if (code)
                return code;
        }
        *packed_size = op->stream_len;
    } else {
        *packed_size = op->packed;
    }
    return MPI_SUCCESS;
}

int fast_cb_pack(void *state, const void *buf, MPI_Count count, MPI_Count offset, void *dst,
                 MPI_Count dst_size, MPI_Count *used) {
    (void)state, (void)count;
    fast_op *op = op_of(buf);
    if (op == NULL)
        return MPI_ERR_OTHER;
    if (op->kind != OP_SEND)
        return fail(op, PyExc_TypeError, "a receive operation cannot pack (%lld, %lld)",
                    (long long)offset, (long long)dst_size);
    if (op->faults != NULL) {
        int code = fault(op, "pack");
        if (code)
            return code;
    }
    MPI_Count n = op->stream_len - offset;
    if (offset < 0 || n < 0)
        return fail(op, PyExc_ValueError, "pack at offset %lld beyond the %lld-byte stream",
                    (long long)offset, (long long)op->stream_len);
    if (n > dst_size)
        n = dst_size;
    if (n > 0)
        memcpy(dst, op->stream + offset, (size_t)n);
    *used = n;
    return MPI_SUCCESS;
}

int fast_cb_unpack(void *state, void *buf, MPI_Count count, MPI_Count offset, const void *src,
                   MPI_Count src_size) {
    (void)state, (void)count;
    fast_op *op = op_of(buf);
    if (op == NULL)
        return MPI_ERR_OTHER;
    if (op->kind != OP_RECV)
        return fail(op, PyExc_TypeError, "a send operation cannot unpack (%lld, %lld)",
                    (long long)offset, (long long)src_size);
    if (op->faults != NULL) {
        int code = fault(op, "unpack");
        if (code)
            return code;
    }
    if (op->stream_obj == NULL || offset < 0 || src_size < 0 || offset + src_size > op->packed)
        return fail(op, PyExc_ValueError, "%lld packed bytes at offset %lld do not fit the stream",
                    (long long)src_size, (long long)offset);
    if (src_size > 0)
        memcpy(PyBytes_AS_STRING(op->stream_obj) + offset, src, (size_t)src_size);
    return MPI_SUCCESS;
}

int fast_cb_region_count(void *state, void *buf, MPI_Count count, MPI_Count *region_count) {
    (void)state, (void)count;
    fast_op *op = op_of(buf);
    if (op == NULL)
        return MPI_ERR_OTHER;
    *region_count = op->nregions;
    return MPI_SUCCESS;
}

int fast_cb_regions(void *state, void *buf, MPI_Count count, MPI_Count region_count,
                    void **reg_bases, MPI_Count *reg_lens, MPI_Datatype *reg_types) {
    (void)state, (void)count;
    fast_op *op = op_of(buf);
    if (op == NULL)
        return MPI_ERR_OTHER;
    if (op->kind == OP_SEND && op->faults != NULL) {
        int code = fault(op, "region");
        if (code)
            return code;
    }
    if (region_count != op->nregions)
        return fail(op, PyExc_ValueError, "asked for %lld regions, the message has %lld",
                    (long long)region_count, (long long)op->nregions);
    size_t n = 8 * (size_t)region_count;
    if (n) {
        memcpy(reg_bases, op->bases, n);
        memcpy(reg_lens, op->lens, n);
        memcpy(reg_types, op->types, n);
    }
    return MPI_SUCCESS;
}

/* The sender's shape: the stream is allocated here (filled by unpack); regions are allocated
 * by _fast._resize (the receive pool), which also checks for an injected fault. A
 * second call replaces the first allocation. */
int fast_cb_resize(void *state, void *buf, MPI_Count count, MPI_Count packed_size,
                   MPI_Count region_count, const MPI_Count *reg_lens,
                   const MPI_Datatype *reg_types) {
    (void)state, (void)count;
    fast_op *op = op_of(buf);
    if (op == NULL)
        return MPI_ERR_OTHER;
    if (op->kind != OP_RECV)
        return fail(op, PyExc_TypeError, "a send operation cannot be resized (%lld, %lld)",
                    (long long)packed_size, (long long)region_count);
    if (packed_size < 0 || region_count < 0 || packed_size > PY_SSIZE_T_MAX)
        return fail(op, PyExc_ValueError, "invalid shape: %lld packed bytes, %lld regions",
                    (long long)packed_size, (long long)region_count);
    int code = MPI_SUCCESS;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_CLEAR(op->stream_obj);
    Py_CLEAR(op->shape);
    op->nregions = 0;
    op->bases = op->lens = op->types = NULL;
    if (region_count == 0 && op->faults != NULL) {
        PyObject *r = PyObject_CallFunction(fast_py_fault, "s", "resize");
        if (r == NULL)
            goto failed;
        Py_DECREF(r);
    }
    if (region_count > 0) {
        PyObject *shape = PyObject_CallFunction(fast_py_resize, "LLKK", (long long)packed_size,
                                                (long long)region_count,
                                                (unsigned long long)(uintptr_t)reg_lens,
                                                (unsigned long long)(uintptr_t)reg_types);
        if (shape == NULL)
            goto failed;
        Py_ssize_t want = 8 * (Py_ssize_t)region_count;
        if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) != 4 ||
            !PyBytes_Check(PyTuple_GET_ITEM(shape, 1)) ||
            PyBytes_GET_SIZE(PyTuple_GET_ITEM(shape, 1)) != want ||
            !PyBytes_Check(PyTuple_GET_ITEM(shape, 2)) ||
            PyBytes_GET_SIZE(PyTuple_GET_ITEM(shape, 2)) != want ||
            !PyBytes_Check(PyTuple_GET_ITEM(shape, 3)) ||
            PyBytes_GET_SIZE(PyTuple_GET_ITEM(shape, 3)) != want) {
            Py_DECREF(shape);
            PyErr_SetString(PyExc_TypeError,
                            "_fast._resize must return (op, bases, lens, types) of the regions");
            goto failed;
        }
        op->shape = shape;
        op->bases = PyBytes_AS_STRING(PyTuple_GET_ITEM(shape, 1));
        op->lens = PyBytes_AS_STRING(PyTuple_GET_ITEM(shape, 2));
        op->types = PyBytes_AS_STRING(PyTuple_GET_ITEM(shape, 3));
    }
    op->stream_obj = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)packed_size);
    if (op->stream_obj == NULL)
        goto failed;
    op->packed = packed_size;
    op->nregions = region_count;
    PyGILState_Release(g);
    return MPI_SUCCESS;
failed:
    code = keep_error(op);
    PyGILState_Release(g);
    return code;
}
