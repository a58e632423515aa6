/* The compiled tree as a whole: its arena, the entry point that parses a snippet and converts
 * it (compile.c, compile_stmt.c, scope.c do the work), and the source text of a node for error
 * messages. */
#include <string.h>

#include "compile_internal.h"

struct arena_chunk {
    struct arena_chunk *next;
    size_t used, size;
    max_align_t data[];
};

void *
exec_arena_alloc(struct exec_tree *t, size_t size)
{
    size = (size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    struct arena_chunk *c = t->chunks;
    if (!c || c->size - c->used < size) {
        size_t cap = size > 16384 ? size : 16384;
        c = calloc(1, sizeof(*c) + cap);
        if (!c) {
            PyErr_NoMemory();
            return NULL;
        }
        c->size = cap;
        c->next = t->chunks;
        t->chunks = c;
    }
    void *p = (char *) c->data + c->used;
    c->used += size;
    return p;
}

/* CPython's tokenizer ends a line at "\n", "\r\n" and a lone "\r" (it translates the last two
 * before parsing), so node line numbers count lines that way and so must the index. */
static bool
ends_line(const struct exec_tree *t, size_t i)
{
    return t->code[i] == '\n' || (t->code[i] == '\r' && t->code[i + 1] != '\n');
}

static int
index_lines(struct exec_tree *t)
{
    uint32_t lines = 1;
    for (size_t i = 0; i < t->code_len; i++)
        lines += ends_line(t, i);
    t->line_off = calloc(lines + 2, sizeof(*t->line_off));
    if (!t->line_off)
        return -1;
    uint32_t l = 1;
    t->line_off[1] = 0;
    for (size_t i = 0; i < t->code_len; i++)
        if (ends_line(t, i))
            t->line_off[++l] = i + 1;
    t->nlines = lines;
    return 0;
}

/* Errors found by the executor's compiler (CPython's compiler would have found them) get
 * the position a SyntaxError from the parser has. */
static void
locate_error(struct exec_tree *t, const struct cstate *cs)
{
    if (!PyErr_ExceptionMatches(PyExc_SyntaxError) || !cs->lineno)
        return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PySyntaxErrorObject *se = (PySyntaxErrorObject *) value;
    if ((se->lineno && se->lineno != Py_None) || cs->lineno > t->nlines) {
        PyErr_Restore(type, value, tb);
        return;
    }
    size_t from = t->line_off[cs->lineno], to = from;
    while (to < t->code_len && t->code[to] != '\n' && t->code[to] != '\r')
        to++;
    PyObject *msg = PyObject_Str(value);
    PyObject *exc =
            msg ? PyObject_CallFunction(type, "O(sins#)", msg, "<code>", (int) cs->lineno,
                                        (int) cs->col + 1, t->code + from, (Py_ssize_t) (to - from))
                : NULL;
    Py_XDECREF(msg);
    if (exc) {
        PyErr_SetObject(type, exc);
        Py_DECREF(exc);
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

struct exec_tree *
exec_tree_compile(const char *code)
{
    struct exec_tree *t = calloc(1, sizeof(*t));
    if (!t || !(t->code = strdup(code)) || !(t->objs = PyList_New(0)) ||
        ((t->code_len = strlen(code)), index_lines(t) < 0)) {
        exec_tree_free(t);
        PyErr_NoMemory();
        return NULL;
    }
    PyCompilerFlags flags = {.cf_flags = PyCF_ONLY_AST, .cf_feature_version = PY_MINOR_VERSION};
    exec_audit_own_compile(true); /* the audit hook lets the executor's own parse through */
    PyObject *mod = Py_CompileStringExFlags(code, "<code>", Py_file_input, &flags, -1);
    exec_audit_own_compile(false);
    if (!mod)
        return exec_tree_free(t);
    struct cstate cs = {.t = t};
    int r = -1;
    if (exec_scope_push(&cs, SCOPE_MODULE)) {
        PyObject *name = exec_keep(&cs, Py_XNewRef(exec_interned_name("<module>")));
        t->module = name ? exec_code_new(&cs, CODE_FUNCTION, name, 1) : NULL;
        cs.scope->code = t->module;
        if (t->module && exec_conv_list(&cs, mod, "body", exec_conv_stmt, &t->body, &t->nbody) == 0)
            r = exec_scope_resolve(&cs);
    }
    exec_scope_free_all(&cs);
    Py_DECREF(mod);
    if (r < 0) {
        locate_error(t, &cs);
        return exec_tree_free(t);
    }
    return t;
}

struct exec_tree *
exec_tree_free(struct exec_tree *t)
{
    if (!t)
        return NULL;
    while (t->chunks) {
        struct arena_chunk *c = t->chunks;
        t->chunks = c->next;
        free(c);
    }
    Py_XDECREF(t->objs);
    free(t->code);
    free(t->line_off);
    free(t);
    return NULL;
}

static size_t
offset_of(const struct exec_tree *t, uint32_t line, uint32_t col)
{
    if (line < 1 || line > t->nlines)
        return t->code_len;
    size_t off = t->line_off[line] + col;
    return off > t->code_len ? t->code_len : off;
}

char *
exec_tree_segment(const struct exec_tree *t, const struct node *n)
{
    size_t from = offset_of(t, n->lineno, n->col);
    size_t to = offset_of(t, n->end_lineno, n->end_col);
    if (to < from)
        to = from;
    return strndup(t->code + from, to - from);
}
