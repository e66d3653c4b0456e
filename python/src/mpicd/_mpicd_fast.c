/* _mpicd_fast: the blocking object calls (send, ssend, recv, sendrecv, Message.recv) with the
 * custom datatype's callbacks in C (_mpicd_fast_callbacks.c), so that no Python callback runs
 * for a message whose pickle stream has no out-of-band buffer, and only the receiver's
 * allocation of the regions runs in Python for one that has. This file: the calls and setup.
 *
 * The ctypes path of _pickled.py does the same with Python callbacks (four on the sender, five on
 * the receiver, about 0.5-0.7 us each through ctypes); this module is optional and _fast.py
 * falls back to that path when the module is not built (or MPICD_PY_FAST=0). Behaviour is the
 * same:
 *
 * - One message per object: the pickle stream is the custom type's packed part, each
 *   out-of-band buffer a region. The buffer passed to libmpi is the address of a `fast_op` on
 *   the C stack of the call (the type has no state callback: every callback gets that address
 *   as its `buf`), alive until the blocking call returns.
 * - The receiver learns the shape from the message: the resize callback allocates the stream
 *   (a bytes object, filled in place by the unpack callback) and, when the message has regions,
 *   calls `_fast._resize`, which allocates them as the ctypes path does (receive pool) and
 *   returns the RecvOp that owns them with the region arrays as packed words.
 * - Errors never escape a callback: a failing callback keeps its Python exception on the
 *   operation and returns an MPI error code, which fails the operation on both sides; the call
 *   returns the code and the exception (it becomes the MPI.Exception's __cause__).
 * - Injected faults (tests, `_pickled.inject_fault`) run through `_pickled._fault` with the same
 *   table and the same callback names as the ctypes path.
 * - libmpi's functions are the ones of the library _libmpi.py loaded (their addresses are given
 *   to `setup`), so that the process never holds two MPI libraries. The GIL is released around
 *   every libmpi call; a callback takes it only to allocate, to call into Python or to fail.
 */
#include "_mpicd_fast.h"

/* --- libmpi's functions, from the library the package loaded (setup) ---------------------- */

typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*recv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
typedef int (*sendrecv_fn)(const void *, int, MPI_Datatype, int, int, void *, int, MPI_Datatype,
                           int, int, MPI_Comm, MPI_Status *);
typedef int (*mrecv_fn)(void *, int, MPI_Datatype, MPI_Message *, MPI_Status *);
typedef int (*create_custom_fn)(MPI_Type_custom_state_function *,
                                MPI_Type_custom_state_free_function *,
                                MPI_Type_custom_query_function *, MPI_Type_custom_pack_function *,
                                MPI_Type_custom_unpack_function *,
                                MPI_Type_custom_region_count_function *,
                                MPI_Type_custom_region_function *, void *, int, MPI_Datatype *);
typedef int (*set_resize_fn)(MPI_Datatype, MPIX_Type_custom_resize_function *);
typedef int (*type_free_fn)(MPI_Datatype *);

/* The send calls by the kind number the Python side passes (SEND, SSEND). */
enum { KIND_SEND = 0, KIND_SSEND = 1, KINDS = 2 };

static send_fn p_send[KINDS];
static recv_fn p_recv;
static sendrecv_fn p_sendrecv;
static mrecv_fn p_mrecv;
static create_custom_fn p_create_custom;
static set_resize_fn p_set_resize;
static type_free_fn p_type_free;

static MPI_Datatype fast_type = MPI_DATATYPE_NULL; /* made by create_type after MPI_Init */

/* --- the calls ---------------------------------------------------------------------------- */

static int ready(void) {
    if (fast_type == MPI_DATATYPE_NULL) {
        PyErr_SetString(PyExc_RuntimeError, "mpicd._mpicd_fast: create_type was not called");
        return 0;
    }
    return 1;
}

static int as_handle(PyObject *o, void **out) {
    *out = PyLong_AsVoidPtr(o);
    return !(*out == NULL && PyErr_Occurred());
}

static int as_int(PyObject *o, int *out) {
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred())
        return 0;
    if (v < INT32_MIN || v > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "value out of range of a C int");
        return 0;
    }
    *out = (int)v;
    return 1;
}

/* The faults table to pass to the callbacks: NULL when no fault is armed. */
static PyObject *armed(PyObject *faults) {
    if (faults == Py_None)
        return NULL;
    return faults;
}

/* Sets up a send operation from (stream, nregions, bases, lens, types): bytes objects, held
 * by the caller for the call. */
static int send_op(fast_op *op, PyObject *const *a, PyObject *faults) {
    memset(op, 0, sizeof *op);
    op->kind = OP_SEND;
    op->faults = armed(faults);
    if (!PyBytes_Check(a[0]) || !PyBytes_Check(a[2]) || !PyBytes_Check(a[3]) ||
        !PyBytes_Check(a[4])) {
        PyErr_SetString(PyExc_TypeError, "the stream and the region arrays must be bytes");
        return 0;
    }
    long long n = PyLong_AsLongLong(a[1]);
    if (n == -1 && PyErr_Occurred())
        return 0;
    if (n < 0 || PyBytes_GET_SIZE(a[2]) != 8 * n || PyBytes_GET_SIZE(a[3]) != 8 * n ||
        PyBytes_GET_SIZE(a[4]) != 8 * n) {
        PyErr_Format(PyExc_ValueError, "region arrays do not hold %lld words each", n);
        return 0;
    }
    op->stream = PyBytes_AS_STRING(a[0]);
    op->stream_len = PyBytes_GET_SIZE(a[0]);
    op->nregions = n;
    op->bases = PyBytes_AS_STRING(a[2]);
    op->lens = PyBytes_AS_STRING(a[3]);
    op->types = PyBytes_AS_STRING(a[4]);
    return 1;
}

static void recv_op(fast_op *op, PyObject *faults) {
    memset(op, 0, sizeof *op);
    op->kind = OP_RECV;
    op->faults = armed(faults);
}

/* The writable MPI_Status buffer of a ctypes MPI_Status, or none (status is None). */
static int status_buffer(PyObject *status, Py_buffer *view) {
    view->obj = NULL;
    if (status == Py_None)
        return 1;
    if (PyObject_GetBuffer(status, view, PyBUF_WRITABLE | PyBUF_SIMPLE) < 0)
        return 0;
    if (view->len != (Py_ssize_t)sizeof(MPI_Status)) {
        PyBuffer_Release(view);
        view->obj = NULL;
        PyErr_SetString(PyExc_TypeError, "status must be an MPI_Status structure");
        return 0;
    }
    return 1;
}

/* (code, exception or None) of a finished send operation; drops what it holds. */
static PyObject *send_result(fast_op *op, int code) {
    PyObject *exc = op->exc ? op->exc : Py_NewRef(Py_None);
    op->exc = NULL;
    return Py_BuildValue("(iN)", code, exc);
}

/* (code, stream or None, RecvOp or None, exception or None) of a finished receive. */
static PyObject *recv_result(fast_op *op, int code, MPI_Status *st, Py_buffer *view) {
    PyObject *stream = Py_NewRef(Py_None), *owner = Py_NewRef(Py_None);
    if (code == MPI_SUCCESS) {
        if (op->stream_obj != NULL) {
            Py_SETREF(stream, op->stream_obj);
            op->stream_obj = NULL;
        }
        if (op->shape != NULL)
            Py_SETREF(owner, Py_NewRef(PyTuple_GET_ITEM(op->shape, 0)));
        if (view->obj != NULL)
            memcpy(view->buf, st, sizeof *st);
    }
    Py_CLEAR(op->stream_obj);
    Py_CLEAR(op->shape);
    if (view->obj != NULL)
        PyBuffer_Release(view);
    PyObject *exc = op->exc ? op->exc : Py_NewRef(Py_None);
    op->exc = NULL;
    return Py_BuildValue("(iNNN)", code, stream, owner, exc);
}

PyDoc_STRVAR(send_doc, "send(kind, comm, dest, tag, stream, nregions, bases, lens, types, faults)"
                       " -> (code, exception or None)\n\n"
                       "MPI_Send (kind 0) or MPI_Ssend (kind 1) of one object: its pickle stream "
                       "(bytes) and its regions (64-bit words as bytes).");

static PyObject *fast_send(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "send takes 10 arguments");
        return NULL;
    }
    int kind, dest, tag;
    void *comm;
    if (!ready() || !as_int(args[0], &kind) || !as_handle(args[1], &comm) ||
        !as_int(args[2], &dest) || !as_int(args[3], &tag))
        return NULL;
    if (kind < 0 || kind >= KINDS) {
        PyErr_SetString(PyExc_ValueError, "unknown send kind");
        return NULL;
    }
    fast_op op;
    if (!send_op(&op, args + 4, args[9]))
        return NULL;
    send_fn fn = p_send[kind];
    int code;
    Py_BEGIN_ALLOW_THREADS
    code = fn(&op, 1, fast_type, dest, tag, (MPI_Comm)comm);
    Py_END_ALLOW_THREADS
    return send_result(&op, code);
}

PyDoc_STRVAR(recv_doc, "recv(comm, source, tag, status, faults) -> (code, stream, op, exception)"
                       "\n\nMPI_Recv of one object: its stream (bytes; None for MPI_PROC_NULL), "
                       "the RecvOp that owns its regions (None without regions), the exception "
                       "a callback raised. `status`: a ctypes MPI_Status filled on success, or "
                       "None.");

static PyObject *fast_recv(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "recv takes 5 arguments");
        return NULL;
    }
    int source, tag;
    void *comm;
    Py_buffer view;
    if (!ready() || !as_handle(args[0], &comm) || !as_int(args[1], &source) ||
        !as_int(args[2], &tag) || !status_buffer(args[3], &view))
        return NULL;
    fast_op op;
    recv_op(&op, args[4]);
    MPI_Status st = {0};  /* as the ctypes path: MPI_ERROR stays 0 (MPI_Recv does not set it) */
    int code;
    Py_BEGIN_ALLOW_THREADS
    code = p_recv(&op, 1, fast_type, source, tag, (MPI_Comm)comm, &st);
    Py_END_ALLOW_THREADS
    return recv_result(&op, code, &st, &view);
}

PyDoc_STRVAR(mrecv_doc, "mrecv(message, status, faults) -> (code, message, stream, op, exception)"
                        "\n\nMPI_Mrecv of one object (as recv), with the message handle it "
                        "leaves (MPI_MESSAGE_NULL once received).");

static PyObject *fast_mrecv(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "mrecv takes 3 arguments");
        return NULL;
    }
    void *msg;
    Py_buffer view;
    if (!ready() || !as_handle(args[0], &msg) || !status_buffer(args[1], &view))
        return NULL;
    fast_op op;
    recv_op(&op, args[2]);
    MPI_Status st = {0};  /* as the ctypes path: MPI_ERROR stays 0 (MPI_Recv does not set it) */
    MPI_Message message = (MPI_Message)msg;
    int code;
    Py_BEGIN_ALLOW_THREADS
    code = p_mrecv(&op, 1, fast_type, &message, &st);
    Py_END_ALLOW_THREADS
    PyObject *r = recv_result(&op, code, &st, &view);
    if (r == NULL)
        return NULL;
    return Py_BuildValue("(NN)", PyLong_FromVoidPtr((void *)message), r);
}

PyDoc_STRVAR(sendrecv_doc, "sendrecv(comm, dest, sendtag, stream, nregions, bases, lens, types, "
                           "source, recvtag, status, faults) -> (code, stream, op, exception, "
                           "send exception)\n\nMPI_Sendrecv of one object each way.");

static PyObject *fast_sendrecv(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 12) {
        PyErr_SetString(PyExc_TypeError, "sendrecv takes 12 arguments");
        return NULL;
    }
    int dest, sendtag, source, recvtag;
    void *comm;
    if (!ready() || !as_handle(args[0], &comm) || !as_int(args[1], &dest) ||
        !as_int(args[2], &sendtag) || !as_int(args[8], &source) || !as_int(args[9], &recvtag))
        return NULL;
    fast_op sop, rop;
    if (!send_op(&sop, args + 3, args[11]))
        return NULL;
    Py_buffer view;
    if (!status_buffer(args[10], &view))
        return NULL;
    recv_op(&rop, args[11]);
    MPI_Status st = {0};  /* as the ctypes path: MPI_ERROR stays 0 (MPI_Recv does not set it) */
    int code;
    Py_BEGIN_ALLOW_THREADS
    code = p_sendrecv(&sop, 1, fast_type, dest, sendtag, &rop, 1, fast_type, source, recvtag,
                      (MPI_Comm)comm, &st);
    Py_END_ALLOW_THREADS
    PyObject *sent = send_result(&sop, code);
    PyObject *r = recv_result(&rop, code, &st, &view);
    if (sent == NULL || r == NULL) {
        Py_XDECREF(sent);
        Py_XDECREF(r);
        return NULL;
    }
    PyObject *out = Py_BuildValue("(NO)", r, PyTuple_GET_ITEM(sent, 1));
    Py_DECREF(sent);
    return out;
}

/* --- setup -------------------------------------------------------------------------------- */

static int fn_address(PyObject *o, void **out) {
    *out = PyLong_AsVoidPtr(o);
    if (*out == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "a libmpi function address is NULL");
        return 0;
    }
    return 1;
}

PyDoc_STRVAR(setup_doc, "setup(functions, fault, resize)\n\n`functions`: a dict of libmpi "
                        "function addresses by name (MPI_Send, MPI_Ssend, MPI_Recv, MPI_Sendrecv, "
                        "MPI_Mrecv, MPI_Type_create_custom, MPIX_Type_custom_set_resize, "
                        "MPI_Type_free); `fault` and `resize`: _pickled's hooks.");

static PyObject *fast_setup(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *fns, *fault_fn, *resize_fn;
    if (!PyArg_ParseTuple(args, "O!OO", &PyDict_Type, &fns, &fault_fn, &resize_fn))
        return NULL;
    static const char *names[] = {"MPI_Send", "MPI_Ssend", "MPI_Recv", "MPI_Sendrecv",
                                  "MPI_Mrecv", "MPI_Type_create_custom",
                                  "MPIX_Type_custom_set_resize", "MPI_Type_free"};
    void *addr[8];
    for (int i = 0; i < 8; i++) {
        PyObject *o = PyDict_GetItemString(fns, names[i]);
        if (o == NULL) {
            PyErr_Format(PyExc_KeyError, "no address for %s", names[i]);
            return NULL;
        }
        if (!fn_address(o, &addr[i]))
            return NULL;
    }
    if (!PyCallable_Check(fault_fn) || !PyCallable_Check(resize_fn)) {
        PyErr_SetString(PyExc_TypeError, "the hooks must be callable");
        return NULL;
    }
    p_send[KIND_SEND] = (send_fn)addr[0];
    p_send[KIND_SSEND] = (send_fn)addr[1];
    p_recv = (recv_fn)addr[2];
    p_sendrecv = (sendrecv_fn)addr[3];
    p_mrecv = (mrecv_fn)addr[4];
    p_create_custom = (create_custom_fn)addr[5];
    p_set_resize = (set_resize_fn)addr[6];
    p_type_free = (type_free_fn)addr[7];
    Py_XSETREF(fast_py_fault, Py_NewRef(fault_fn));
    Py_XSETREF(fast_py_resize, Py_NewRef(resize_fn));
    Py_RETURN_NONE;
}

PyDoc_STRVAR(create_type_doc, "create_type() -> (code, handle)\n\nMakes the custom datatype "
                              "whose callbacks are this module's (after MPI_Init).");

static PyObject *fast_create_type(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    if (p_create_custom == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "mpicd._mpicd_fast: setup was not called");
        return NULL;
    }
    MPI_Datatype t = MPI_DATATYPE_NULL;
    /* inorder=0: the unpack callback writes at the offset it is given, in any order. */
    int code = p_create_custom(NULL, NULL, fast_cb_query, fast_cb_pack, fast_cb_unpack,
                               fast_cb_region_count, fast_cb_regions, NULL, 0, &t);
    if (code == MPI_SUCCESS) {
        code = p_set_resize(t, fast_cb_resize);
        if (code != MPI_SUCCESS)
            p_type_free(&t);
        else
            fast_type = t;
    }
    return Py_BuildValue("(iN)", code, PyLong_FromVoidPtr((void *)fast_type));
}

PyDoc_STRVAR(free_type_doc, "free_type() -> code\n\nFrees the datatype (before MPI_Finalize).");

static PyObject *fast_free_type(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    int code = MPI_SUCCESS;
    if (fast_type != MPI_DATATYPE_NULL) {
        code = p_type_free(&fast_type);
        fast_type = MPI_DATATYPE_NULL;
    }
    return PyLong_FromLong(code);
}

PyDoc_STRVAR(callbacks_doc, "callbacks() -> int\n\nHow many times this module's callbacks "
                            "have run (tests: the C path was taken).");

static PyObject *fast_callbacks(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    return PyLong_FromUnsignedLongLong(__atomic_load_n(&fast_n_callbacks, __ATOMIC_RELAXED));
}

static PyMethodDef methods[] = {
    {"setup", fast_setup, METH_VARARGS, setup_doc},
    {"create_type", fast_create_type, METH_NOARGS, create_type_doc},
    {"free_type", fast_free_type, METH_NOARGS, free_type_doc},
    {"send", (PyCFunction)(void (*)(void))fast_send, METH_FASTCALL, send_doc},
    {"recv", (PyCFunction)(void (*)(void))fast_recv, METH_FASTCALL, recv_doc},
    {"mrecv", (PyCFunction)(void (*)(void))fast_mrecv, METH_FASTCALL, mrecv_doc},
    {"sendrecv", (PyCFunction)(void (*)(void))fast_sendrecv, METH_FASTCALL, sendrecv_doc},
    {"callbacks", fast_callbacks, METH_NOARGS, callbacks_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_mpicd_fast",
    "The blocking object calls of mpicd.MPI with the custom datatype's callbacks in C.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__mpicd_fast(void) { return PyModule_Create(&module); }
