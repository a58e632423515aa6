/* The interpreter's standard streams as the snippet and library code see them. What is written
 * to sys.stdout or sys.stderr while a snippet runs goes to the run's logs, counted against
 * max_output_bytes as print is (pprint.pprint, a library's warnings); sys.stdin is empty.
 * Outside runs, writes go on to the streams CPython made (the daemon's own messages).
 *
 * Why not CPython's own streams: they are _io objects over the worker's fds, and library code
 * hands them out (pprint.PrettyPrinter()._stream). The snippet could not call their close, but
 * could make library code do it (queue's `with self.not_full`, a `yield from` closed early) or
 * store its own write on them for pprint to call. These objects have no close, no buffer and
 * no instance dict; installed before the zygote preloads anything, so library objects made at
 * import hold them too. */
#include <stdbool.h>

#include "exec_internal.h"

enum stdio_role { STDIO_IN, STDIO_OUT, STDIO_ERR };

struct stdio_stream {
    PyObject_HEAD enum stdio_role role;
    PyObject *real; /* the stream CPython made, written to outside runs; may be None */
};

static PyObject *
unsupported(const char *what)
{
    static PyObject *unsupported_operation;
    if (!unsupported_operation) {
        PyObject *io = exec_import_own("io");
        unsupported_operation = io ? PyObject_GetAttrString(io, "UnsupportedOperation") : NULL;
        Py_XDECREF(io);
        if (!unsupported_operation)
            return NULL;
    }
    PyErr_SetString(unsupported_operation, what);
    return NULL;
}

static PyObject *
stream_write(PyObject *self, PyObject *text)
{
    struct stdio_stream *s = (struct stdio_stream *) self;
    if (s->role == STDIO_IN)
        return unsupported("not writable");
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "write() argument must be str, not %.200s",
                     Py_TYPE(text)->tp_name);
        return NULL;
    }
    struct exec_run *r = exec_audit_running();
    if (!r)
        return s->real == Py_None ? PyLong_FromSsize_t(PyUnicode_GET_LENGTH(text))
                                  : PyObject_CallMethod(s->real, "write", "O", text);
    /* as print encodes: lone surrogates shown escaped */
    PyObject *bytes = PyUnicode_AsEncodedString(text, "utf-8", "backslashreplace");
    if (!bytes)
        return NULL;
    int rc = exec_output(r, PyBytes_AS_STRING(bytes), (size_t) PyBytes_GET_SIZE(bytes));
    Py_DECREF(bytes);
    return rc < 0 ? NULL : PyLong_FromSsize_t(PyUnicode_GET_LENGTH(text));
}

static PyObject *
stream_flush(PyObject *self, PyObject *unused)
{
    struct stdio_stream *s = (struct stdio_stream *) self;
    if (s->role == STDIO_IN || exec_audit_running() || s->real == Py_None)
        return Py_NewRef(Py_None);
    return PyObject_CallMethod(s->real, "flush", NULL);
}

/* read() and readline(): the snippet has no input, as at the end of a file */
static PyObject *
stream_read(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (((struct stdio_stream *) self)->role != STDIO_IN)
        return unsupported("not readable");
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "expected at most 1 argument, got %zd", nargs);
        return NULL;
    }
    return PyUnicode_FromStringAndSize("", 0);
}

static PyObject *
stream_readlines(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *empty = stream_read(self, args, nargs);
    if (!empty)
        return NULL;
    Py_DECREF(empty);
    return PyList_New(0);
}

/* writelines(lines): each written as write() writes it */
static PyObject *
stream_writelines(PyObject *self, PyObject *lines)
{
    PyObject *it = PyObject_GetIter(lines);
    PyObject *line;
    while (it && (line = PyIter_Next(it)) != NULL) {
        PyObject *n = stream_write(self, line);
        Py_DECREF(line);
        if (!n) {
            Py_CLEAR(it);
            break;
        }
        Py_DECREF(n);
    }
    if (!it || PyErr_Occurred()) {
        Py_XDECREF(it);
        return NULL;
    }
    Py_DECREF(it);
    Py_RETURN_NONE;
}

static PyObject *
stream_readable(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(((struct stdio_stream *) self)->role == STDIO_IN);
}

static PyObject *
stream_writable(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(((struct stdio_stream *) self)->role != STDIO_IN);
}

static PyObject *
stream_false(PyObject *self, PyObject *unused)
{
    Py_RETURN_FALSE;
}

static PyObject *
stream_fileno(PyObject *self, PyObject *unused)
{
    return unsupported("the snippet's standard streams have no file descriptor");
}

static PyObject *
stream_name(PyObject *self, void *closure)
{
    static const char *const names[] = {"<stdin>", "<stdout>", "<stderr>"};
    return PyUnicode_FromString(names[((struct stdio_stream *) self)->role]);
}

static PyObject *
stream_encoding(PyObject *self, void *closure)
{
    return PyUnicode_FromString("utf-8");
}

static PyObject *
stream_errors(PyObject *self, void *closure)
{
    return PyUnicode_FromString("backslashreplace");
}

static PyObject *
stream_closed(PyObject *self, void *closure)
{
    Py_RETURN_FALSE;
}

static PyObject *
stream_repr(PyObject *self)
{
    PyObject *name = stream_name(self, NULL);
    PyObject *r = name ? PyUnicode_FromFormat("<pyfence.StdStream name=%R>", name) : NULL;
    Py_XDECREF(name);
    return r;
}

static void
stream_dealloc(PyObject *self)
{
    Py_XDECREF(((struct stdio_stream *) self)->real);
    Py_TYPE(self)->tp_free(self);
}

static PyMethodDef stream_methods[] = {
        {"write", stream_write, METH_O, "write(text) -> len(text): to the run's logs"},
        {"flush", stream_flush, METH_NOARGS, "flush() -> None"},
        {"read", (PyCFunction) (void (*)(void)) stream_read, METH_FASTCALL, "read() -> ''"},
        {"readline", (PyCFunction) (void (*)(void)) stream_read, METH_FASTCALL, "readline() -> ''"},
        {"readlines", (PyCFunction) (void (*)(void)) stream_readlines, METH_FASTCALL,
         "readlines() -> []"},
        {"writelines", stream_writelines, METH_O, "writelines(lines): each to the run's logs"},
        {"readable", stream_readable, METH_NOARGS, NULL},
        {"writable", stream_writable, METH_NOARGS, NULL},
        {"seekable", stream_false, METH_NOARGS, NULL},
        {"isatty", stream_false, METH_NOARGS, NULL},
        {"fileno", stream_fileno, METH_NOARGS, NULL},
        {NULL, NULL, 0, NULL},
};

static PyGetSetDef stream_getset[] = {
        {"name", stream_name, NULL, NULL, NULL},
        {"encoding", stream_encoding, NULL, NULL, NULL},
        {"errors", stream_errors, NULL, NULL, NULL},
        {"closed", stream_closed, NULL, NULL, NULL},
        {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject stream_type = {
        PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pyfence.StdStream",
        .tp_basicsize = sizeof(struct stdio_stream),
        .tp_dealloc = stream_dealloc,
        .tp_repr = stream_repr,
        .tp_flags = Py_TPFLAGS_DEFAULT,
        .tp_doc = "A snippet's standard stream: output goes to the run's logs, input is empty",
        .tp_methods = stream_methods,
        .tp_getset = stream_getset,
};

static int
install_one(const char *name, enum stdio_role role)
{
    PyObject *real = PySys_GetObject(name); /* borrowed; NULL when CPython made none */
    if (real && Py_IS_TYPE(real, &stream_type))
        return 0; /* installed by an earlier call */
    struct stdio_stream *s = PyObject_New(struct stdio_stream, &stream_type);
    if (!s)
        return -1;
    s->role = role;
    s->real = Py_NewRef(real ? real : Py_None);
    int rc = PySys_SetObject(name, (PyObject *) s);
    Py_DECREF(s);
    return rc;
}

int
exec_stdio_install(void)
{
    if (PyType_Ready(&stream_type) < 0)
        return -1;
    return install_one("stdin", STDIO_IN) < 0 || install_one("stdout", STDIO_OUT) < 0 ||
                           install_one("stderr", STDIO_ERR) < 0
                   ? -1
                   : 0;
}
