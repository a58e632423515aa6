/* The last line of the policy: a CPython audit hook (PEP 578). The walk's checks see what the
 * snippet does; this hook sees what library code does on its behalf while a snippet runs, and
 * refuses what no allowed library needs to do then and what every escape ends with: compiling
 * or running code from a string (typing evaluates string annotations, which are the
 * snippet's), building code objects, swapping a function's code, reaching frames, starting
 * processes or threads, writing files, native calls. Installed once, in the zygote before it
 * forks; inactive outside runs (imports and preloading before them are the daemon's own). */
#include <fcntl.h>
#include <string.h>

#include "exec_internal.h"

static unsigned active;  /* runs in progress */
static bool own_compile; /* the executor parsing a snippet */
/* The Python frame the snippet's code stands on: at a run's top, the run's own __main__ frame
 * (main_frame.c), NULL where none could be made; in snippet code a library called back (a
 * function, a generator resumed), the trampoline frame exec_main_frame_callback put it on. The
 * walk pushes no Python frames, so while the snippet runs this frame stays the current one:
 * an event raised with it current comes from the snippet itself, not from the library code
 * the frame runs, and frames at or below it are not the event's callers. */
static PyFrameObject *snippet_entered_from;
static struct exec_run *running; /* the outermost run in progress */

void
exec_audit_enter(struct exec_run *r)
{
    /* A run's snippet is entered from its __main__ frame (main_frame.c), or none. */
    if (active++ == 0) {
        snippet_entered_from = PyEval_GetFrame();
        running = r;
        /* loaded before any snippet ran (pandas imports it): as it was, then */
        exec_audit_note_imports();
    }
}

void
exec_audit_leave(void)
{
    if (--active == 0) {
        snippet_entered_from = NULL;
        running = NULL;
    }
}

struct exec_run *
exec_audit_snippet_run(void)
{
    return active && PyEval_GetFrame() == snippet_entered_from ? running : NULL;
}

struct exec_run *
exec_audit_running(void)
{
    return running;
}

bool
exec_audit_active(void)
{
    return active > 0;
}

void
exec_audit_own_compile(bool on)
{
    own_compile = on;
}

static bool dataclass_in_progress(void);

int
exec_audit_snippet_may_enter(struct exec_run *r)
{
    if (!dataclass_in_progress())
        return 0;
    exec_fail(r, ABORT_NONE,
              "Forbidden: snippet code called back while dataclasses builds a class (its fields' "
              "names go into source text then)");
    return -1;
}

/* Walks from the current frame: the target is in view if met before or at the snippet's
 * frame. Past it is the library code that called the snippet back (its globals hold the real
 * builtins) or, at a run's top, nothing; a frame never met (no longer running) is out too. */
bool
exec_audit_frame_in_view(PyObject *frame)
{
    if (!frame || !PyFrame_Check(frame))
        return false;
    PyFrameObject *cur = PyEval_GetFrame();
    bool seen = false;
    Py_XINCREF(cur);
    while (cur && !seen) {
        seen = (PyObject *) cur == frame;
        if (cur == snippet_entered_from)
            break;
        Py_SETREF(cur, PyFrame_GetBack(cur));
    }
    Py_XDECREF(cur);
    return seen;
}

PyFrameObject *
exec_audit_snippet_enter(void)
{
    PyFrameObject *before = snippet_entered_from;
    snippet_entered_from = PyEval_GetFrame();
    return before;
}

void
exec_audit_snippet_leave(PyFrameObject *before)
{
    snippet_entered_from = before;
}

static int
refuse(const char *what, const char *event)
{
    PyErr_Format(exec_InterpreterError, "Forbidden while a snippet runs: %s (%s)", what, event);
    return -1;
}

/* The code a frame runs: file and function name (borrowed UTF-8; "" when unknown). */
static void
frame_where(PyFrameObject *f, const char **file, const char **name)
{
    PyCodeObject *co = PyFrame_GetCode(f);
    *file = PyUnicode_AsUTF8(co->co_filename);
    *name = PyUnicode_AsUTF8(co->co_name);
    if (!*file || !*name) {
        PyErr_Clear();
        *file = *name = "";
    }
    Py_DECREF(co); /* the frame keeps it alive */
}

/* Whether f runs code of the module `name` as loaded (its globals are that module's dict):
 * decided by identity, since a file name is whatever compile() was given. */
static bool
frame_in_module(PyFrameObject *f, const char *name)
{
    PyObject *mod = PyDict_GetItemString(PyImport_GetModuleDict(), name); /* borrowed */
    PyObject *globals = PyFrame_GetGlobals(f);
    bool in = mod && PyModule_Check(mod) && PyModule_GetDict(mod) == globals;
    Py_XDECREF(globals);
    return in;
}

/* A frame of the import system itself (frozen into the interpreter). */
static bool
frame_is_importlib(PyFrameObject *f)
{
    return frame_in_module(f, "_frozen_importlib") ||
           frame_in_module(f, "_frozen_importlib_external");
}

/* f runs function `name` of module `module`. */
static bool
frame_is(PyFrameObject *f, const char *module, const char *name)
{
    const char *file, *fname;
    frame_where(f, &file, &fname);
    return strcmp(fname, name) == 0 && frame_in_module(f, module);
}

static bool import_in_progress(void);

bool
exec_audit_stores_checked(void)
{
    return active && !own_compile && !import_in_progress();
}

/* What dataclasses builds source text from, as it was when a snippet first imported it: its
 * namespace (the helpers that write the text: _field_assign, _create_fn, ...) and Field's class
 * dict (the name descriptor). Library code writes into both on a snippet's behalf: copy rebuilds
 * an object into whatever its __reduce_ex__ names, a module included; a Python __init__ runs
 * with any self; typing's aliases forward setattr to the class behind them. Its exec is allowed
 * only while both are exactly as they were. */
static PyObject *dataclasses_ns_then, *field_dict_then;

static PyObject *
dataclasses_module(void)
{
    PyObject *m = PyDict_GetItemString(PyImport_GetModuleDict(), "dataclasses"); /* borrowed */
    return m && PyModule_Check(m) ? m : NULL;
}

static PyTypeObject *
field_class(PyObject *module)
{
    PyObject *f = PyDict_GetItemString(PyModule_GetDict(module), "Field"); /* borrowed */
    return f && PyType_Check(f) ? (PyTypeObject *) f : NULL;
}

void
exec_audit_note_imports(void)
{
    PyObject *m = dataclasses_ns_then ? NULL : dataclasses_module();
    PyTypeObject *field = m ? field_class(m) : NULL;
    if (!field)
        return;
    PyObject *ns = PyDict_Copy(PyModule_GetDict(m));
    PyObject *fd = field->tp_dict ? PyDict_Copy(field->tp_dict) : NULL;
    if (!ns || !fd) {
        Py_XDECREF(ns);
        Py_XDECREF(fd);
        PyErr_Clear(); /* no record: dataclasses' exec stays refused */
        return;
    }
    dataclasses_ns_then = ns;
    field_dict_then = fd;
}

/* now holds exactly then's keys, each bound to the very same object. */
static bool
dict_as_then(PyObject *now, PyObject *then)
{
    if (!now || !then || PyDict_GET_SIZE(now) != PyDict_GET_SIZE(then))
        return false;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(then, &pos, &key, &value))
        if (PyDict_GetItemWithError(now, key) != value) {
            PyErr_Clear();
            return false;
        }
    return true;
}

static bool
dataclasses_as_imported(void)
{
    PyObject *m = dataclasses_module();
    PyTypeObject *field = m ? field_class(m) : NULL;
    return field && dict_as_then(PyModule_GetDict(m), dataclasses_ns_then) &&
           dict_as_then(field->tp_dict, field_dict_then);
}

/* dataclasses writes __init__, __repr__, ... as source text built from the field names, then
 * exec's it: a field name that is not an identifier ("a=__import__('os')...") would be code.
 * The text is built from _process_class's `fields` (name -> Field) with no user code between:
 * each must be an exact dataclasses.Field (a subclass could make .name a property) whose name
 * is an identifier. Nor may a field's name be a dunder a snippet's class may not define
 * (class_dunders.c): __init__ stores it on every instance, where library code's getattr finds
 * it first (copy's getattr(x, '__reduce_ex__')), and a default makes it a class attribute.
 * Fails closed when the frame is not found. Returns 0, or -1 with InterpreterError set. */
static int
refuse_dunder_field(PyObject *locals, PyObject *fname, const char *event)
{
    PyObject *cls = PyDict_GetItemString(locals, "cls"); /* borrowed */
    PyObject *qualname = cls && PyType_Check(cls) ? PyType_GetQualName((PyTypeObject *) cls) : NULL;
    PyErr_Clear();
    PyErr_Format(exec_InterpreterError,
                 "Forbidden while a snippet runs: a dataclass field named %U in class %V: a "
                 "snippet's class may not define that dunder (%s)",
                 fname, qualname, "?", event);
    Py_XDECREF(qualname);
    return -1;
}

static int
check_dataclass_fields(PyFrameObject *f, const char *event)
{
    PyFrameObject *cur = (PyFrameObject *) Py_NewRef(f);
    bool ok = false;
    int rc = 0;
    for (int up = 0; cur && cur != snippet_entered_from && up < 8; up++) {
        if (frame_is(cur, "dataclasses", "_process_class")) {
            PyObject *locals = PyFrame_GetLocals(cur);
            PyObject *fields = locals && PyDict_Check(locals)
                                       ? PyDict_GetItemString(locals, "fields")
                                       : NULL; /* borrowed */
            PyObject *fclass = NULL;
            if (fields && PyDict_CheckExact(fields)) {
                PyObject *mod = exec_import_own("dataclasses");
                fclass = mod ? PyObject_GetAttrString(mod, "Field") : NULL;
                Py_XDECREF(mod);
            }
            ok = fclass != NULL;
            Py_ssize_t pos = 0;
            PyObject *key, *field;
            while (ok && rc == 0 && PyDict_Next(fields, &pos, &key, &field)) {
                PyObject *fname = Py_TYPE(field) == (PyTypeObject *) fclass
                                          ? PyObject_GetAttrString(field, "name")
                                          : NULL;
                ok = fname && PyUnicode_CheckExact(fname) && PyUnicode_IsIdentifier(fname);
                if (ok && !exec_class_dunder_allowed(fname))
                    rc = refuse_dunder_field(locals, fname, event);
                Py_XDECREF(fname);
            }
            Py_XDECREF(fclass);
            Py_XDECREF(locals);
            if (rc == 0)
                PyErr_Clear();
            break;
        }
        Py_SETREF(cur, PyFrame_GetBack(cur));
    }
    Py_XDECREF(cur);
    if (rc < 0 || ok)
        return rc;
    return refuse("a dataclass field whose name is not an identifier", event);
}

/* namedtuple's __new__ is `lambda _cls, a, b: _tuple_new(_cls, (a, b))`, eval'd with empty
 * builtins. Its own checks of the names run on collections' globals (str, _sys.intern), which
 * library code can rebind for a snippet, so they are not trusted: the source compiled must be
 * exactly that text made of field_names, each an exact str and an identifier (no text made of
 * identifiers is anything but parameters and names). The exec that follows the compile (the
 * code object just made, in the same frame) is allowed once. */
static PyFrameObject *namedtuple_compiled;

static bool
namedtuple_text(PyObject *names, PyObject **ret)
{
    *ret = NULL;
    if (!PyTuple_CheckExact(names) || PyTuple_GET_SIZE(names) == 0)
        return false;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); i++) {
        PyObject *n = PyTuple_GET_ITEM(names, i);
        if (!PyUnicode_CheckExact(n) || !PyUnicode_IsIdentifier(n))
            return false;
    }
    PyObject *sep = PyUnicode_FromString(", ");
    PyObject *args = sep ? PyUnicode_Join(sep, names) : NULL;
    Py_XDECREF(sep);
    if (args && PyTuple_GET_SIZE(names) == 1)
        Py_SETREF(args, PyUnicode_FromFormat("%U,", args));
    PyObject *text =
            args ? PyUnicode_FromFormat("lambda _cls, %U: _tuple_new(_cls, (%U))", args, args)
                 : NULL;
    Py_XDECREF(args);
    *ret = text ? PyUnicode_AsUTF8String(text) : NULL;
    Py_XDECREF(text);
    return *ret != NULL;
}

static bool
namedtuple_source_ok(PyFrameObject *f, const char *event, PyObject *args)
{
    if (strcmp(event, "exec") == 0) {
        bool ok = namedtuple_compiled == f;
        namedtuple_compiled = NULL;
        return ok;
    }
    namedtuple_compiled = NULL;
    PyObject *source = PyTuple_GET_SIZE(args) > 0 ? PyTuple_GET_ITEM(args, 0) : NULL;
    PyObject *locals = PyFrame_GetLocals(f);
    PyObject *names = locals && PyDict_Check(locals)
                              ? PyDict_GetItemString(locals, "field_names") /* borrowed */
                              : NULL;
    PyObject *text = NULL;
    bool ok = source && PyBytes_Check(source) && names && namedtuple_text(names, &text) &&
              PyBytes_GET_SIZE(text) == PyBytes_GET_SIZE(source) &&
              memcmp(PyBytes_AS_STRING(text), PyBytes_AS_STRING(source),
                     (size_t) PyBytes_GET_SIZE(text)) == 0;
    Py_XDECREF(text);
    Py_XDECREF(locals);
    PyErr_Clear();
    if (ok)
        namedtuple_compiled = f;
    return ok;
}

/* compile/exec/eval of a string or code object: only where library code builds it from names
 * that are checked here, and while modules load from disk (their code is the installation's). */
static int
check_code_event(const char *event, PyObject *args)
{
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed: the Python code that called compile */
    /* With no frame, or the one the snippet was entered from, the caller is the snippet: a
     * library function calling back into it does not lend it its own permission. */
    if (!f || f == snippet_entered_from)
        return refuse("compiling or running code from a string", event);
    if (import_in_progress())
        return 0;
    /* typing.ForwardRef("Series") only compiles its string, to check it is an expression;
     * running it (ForwardRef._evaluate's eval, an "exec" event) stays refused. pandas builds
     * Union[..., "Series"] at run time in to_datetime. */
    if (strcmp(event, "compile") == 0 && frame_is(f, "typing", "__init__"))
        return 0;
    if (frame_is(f, "collections", "namedtuple")) {
        if (namedtuple_source_ok(f, event, args))
            return 0;
        return refuse("a namedtuple whose source is not made of its field names", event);
    }
    if (frame_is(f, "dataclasses", "_create_fn")) {
        if (!dataclasses_as_imported())
            return refuse("dataclasses or its Field class changed since it was imported", event);
        return check_dataclass_fields(f, event);
    }
    const char *file, *name;
    frame_where(f, &file, &name);
    const char *base = strrchr(file, '/');
    PyErr_Format(exec_InterpreterError,
                 "Forbidden while a snippet runs: compiling or running code from a string (%s "
                 "in %s, %s)",
                 event, base ? base + 1 : file, name);
    return -1;
}

/* open() and os.open(): 1 when the file would be written, 0 when only read (the import system
 * reads), -1 on error. */
static int
open_writes(PyObject *args)
{
    PyObject *mode = PyTuple_GET_SIZE(args) > 1 ? PyTuple_GET_ITEM(args, 1) : Py_None;
    PyObject *flags = PyTuple_GET_SIZE(args) > 2 ? PyTuple_GET_ITEM(args, 2) : Py_None;
    if (mode != Py_None && PyUnicode_Check(mode)) {
        const char *m = PyUnicode_AsUTF8(mode);
        if (!m)
            return -1;
        if (strpbrk(m, "wax+"))
            return 1;
    }
    if (PyLong_Check(flags)) {
        long fl = PyLong_AsLong(flags);
        if (fl == -1 && PyErr_Occurred())
            return -1;
        return (fl & O_ACCMODE) != O_RDONLY || (fl & (O_CREAT | O_TRUNC | O_APPEND));
    }
    return 0;
}

/* An import in progress: modules loading from disk do what modules do at import (types.py
 * reads tb_frame to name FrameType, numpy sets environment variables). Their code is the
 * installation's, run by the import system; the snippet's own code never runs inside it
 * (compile and exec are refused, import hooks are out of its reach). Only frames above the one
 * the snippet was entered from count: an import below it is not what raised the event, the
 * snippet is. Import frames are known by their module, not by a file name a snippet could
 * give compile(). */
static bool
import_in_progress(void)
{
    PyFrameObject *cur = PyEval_GetFrame();
    bool found = false;
    Py_XINCREF(cur);
    for (int up = 0; cur && cur != snippet_entered_from && !found && up < 200; up++) {
        found = frame_is_importlib(cur);
        Py_SETREF(cur, PyFrame_GetBack(cur));
    }
    Py_XDECREF(cur);
    return found;
}

/* dataclasses._process_class runs, called by library code above the snippet's entry: it reads
 * the fields' names into source text, and dataclass_fields_ok reads them again at the exec.
 * Snippet code run between (a str subclass's __format__, a descriptor, a finalizer) could
 * change a name after it went into the text and back before the check, so none runs there. */
static bool
dataclass_in_progress(void)
{
    PyFrameObject *cur = PyEval_GetFrame();
    bool found = false;
    Py_XINCREF(cur);
    for (int up = 0; cur && cur != snippet_entered_from && !found && up < 200; up++) {
        found = frame_is(cur, "dataclasses", "_process_class");
        Py_SETREF(cur, PyFrame_GetBack(cur));
    }
    Py_XDECREF(cur);
    return found;
}

/* The reads CPython 3.11 audits (PY_AUDIT_READ members). f_back is not one of them: frame_view.c
 * checks it, with the frame's globals, builtins and locals. */
static bool
is_frame_attr(PyObject *name)
{
    static const char *const names[] = {"gi_frame", "cr_frame", "ag_frame", "tb_frame"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (PyUnicode_CompareWithASCIIString(name, names[i]) == 0)
            return true;
    return false;
}

/* Events refused outright while a snippet runs, as exact names or "prefix." */
static const char *const refused_events[] = {
        "code.__new__",
        "sys.settrace",
        "sys.setprofile",
        "sys._current_frames",
        "sys.addaudithook",
        "builtins.input",
        "builtins.breakpoint",
        "pickle.find_class",
        "marshal.",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.kill",
        "os.killpg",
        "os.chdir",
        "os.chmod",
        "os.chown",
        "os.chflags",
        "os.link",
        "os.symlink",
        "os.mkdir",
        "os.rmdir",
        "os.remove",
        "os.rename",
        "os.truncate",
        "os.utime",
        "os.putenv",
        "os.unsetenv",
        "os.setxattr",
        "os.removexattr",
        "os.lockf",
        "subprocess.",
        "ctypes.",
        "socket.",
        "shutil.",
        "_thread.start_new_thread",
        "gc.get_",
        "mmap.",
        "resource.",
        "signal.",
        "fcntl.",
        "tempfile.",
        "sqlite3.",
        "syslog.",
        "webbrowser.",
        "urllib.",
        "http.",
        "ftplib.",
        "smtplib.",
        "poplib.",
        "imaplib.",
        "nntplib.",
        "telnetlib.",
        "msvcrt.",
};

static int
audit_hook(const char *event, PyObject *args, void *unused)
{
    if (!active || own_compile)
        return 0;
    if (strcmp(event, "compile") == 0 || strcmp(event, "exec") == 0)
        return check_code_event(event, args);
    if (strcmp(event, "open") == 0) {
        int w = open_writes(args);
        if (w <= 0 || import_in_progress())
            return w < 0 ? -1 : 0;
        return refuse("opening a file for writing", event);
    }
    if (strcmp(event, "object.__getattr__") == 0 || strcmp(event, "object.__setattr__") == 0) {
        /* CPython audits reads of the attributes that lead to frames, and writes of a
         * function's code; library code has no business with either during a run */
        PyObject *name = PyTuple_GET_SIZE(args) > 1 ? PyTuple_GET_ITEM(args, 1) : NULL;
        bool set = event[7] == 's';
        if (name && PyUnicode_Check(name) &&
            (set ? PyUnicode_CompareWithASCIIString(name, "__code__") == 0 : is_frame_attr(name)) &&
            !import_in_progress())
            return refuse("reaching frames or replacing code", event);
        return 0;
    }
    if (strcmp(event, "sys._getframe") == 0) {
        /* down to the snippet's frame: enum and namedtuple read its globals' __name__ */
        PyObject *frame = PyTuple_GET_SIZE(args) > 0 ? PyTuple_GET_ITEM(args, 0) : NULL;
        if (frame && !exec_audit_frame_in_view(frame) && !import_in_progress())
            return refuse("reading a frame past the snippet's (the library code that called it, "
                          "or none)",
                          event);
        return 0;
    }
    for (size_t i = 0; i < sizeof(refused_events) / sizeof(refused_events[0]); i++) {
        const char *e = refused_events[i];
        size_t len = strlen(e);
        if ((e[len - 1] == '.' ? strncmp(event, e, len) == 0 : strcmp(event, e) == 0) &&
            !import_in_progress())
            return refuse("a process, file, thread, network or native operation", event);
    }
    return 0;
}

int
exec_audit_install(void)
{
    static bool installed;
    if (installed)
        return 0;
    installed = true;
    return PySys_AddAuditHook(audit_hook, NULL);
}
