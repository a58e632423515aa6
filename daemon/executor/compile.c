/* From CPython's AST (PyCF_ONLY_AST) to the executor's compact node tree, once per snippet.
 * Everything the walk would otherwise look up each time is resolved here: operator kinds,
 * interned names, constants, keyword-name tuples for vectorcall, forbidden attribute names. */
#include <string.h>

#include "exec_internal.h"

struct arena_chunk {
    struct arena_chunk *next;
    size_t used, size;
    max_align_t data[];
};

struct cstate {
    struct exec_tree *t;
    uint32_t depth;
};

typedef struct node *(*conv_fn)(struct cstate *cs, PyObject *ast);

static void *
arena_alloc(struct exec_tree *t, size_t size)
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

/* Keeps obj alive as long as the tree; returns it borrowed. Steals the reference. */
static PyObject *
keep(struct cstate *cs, PyObject *obj)
{
    if (!obj)
        return NULL;
    int r = PyList_Append(cs->t->objs, obj);
    Py_DECREF(obj);
    return r < 0 ? NULL : obj;
}

static const char *
ast_type(PyObject *ast)
{
    return _PyType_Name(Py_TYPE(ast));
}

static int
field_int(PyObject *ast, const char *name, long *ret)
{
    PyObject *v = PyObject_GetAttrString(ast, name);
    if (!v)
        return -1;
    long x = v == Py_None ? 0 : PyLong_AsLong(v);
    Py_DECREF(v);
    if (x == -1 && PyErr_Occurred())
        return -1;
    *ret = x;
    return 0;
}

static struct node *
node_new(struct cstate *cs, PyObject *ast, enum node_kind kind)
{
    struct node *n = arena_alloc(cs->t, sizeof(*n));
    if (!n)
        return NULL;
    n->kind = kind;
    long lineno = 0, col = 0, end_lineno = 0, end_col = 0;
    if (PyObject_HasAttrString(ast, "lineno")) {
        if (field_int(ast, "lineno", &lineno) < 0 || field_int(ast, "col_offset", &col) < 0 ||
            field_int(ast, "end_lineno", &end_lineno) < 0 ||
            field_int(ast, "end_col_offset", &end_col) < 0)
            return NULL;
    }
    n->lineno = (uint32_t) lineno;
    n->col = (uint32_t) col;
    n->end_lineno = (uint32_t) end_lineno;
    n->end_col = (uint32_t) end_col;
    return n;
}

static struct node *conv_expr(struct cstate *cs, PyObject *ast);
static struct node *conv_stmt(struct cstate *cs, PyObject *ast);

/* Converts an optional child field (None gives NULL without error). */
static int
conv_field(struct cstate *cs, PyObject *ast, const char *name, conv_fn fn, struct node **ret)
{
    PyObject *v = PyObject_GetAttrString(ast, name);
    if (!v)
        return -1;
    if (v == Py_None) {
        Py_DECREF(v);
        *ret = NULL;
        return 0;
    }
    struct node *n = fn(cs, v);
    Py_DECREF(v);
    if (!n)
        return -1;
    *ret = n;
    return 0;
}

/* Converts a list field; None entries stay NULL (dict display keys for **). */
static int
conv_list(struct cstate *cs, PyObject *ast, const char *name, conv_fn fn, struct node ***ret,
          uint32_t *ret_n)
{
    PyObject *v = PyObject_GetAttrString(ast, name);
    if (!v)
        return -1;
    if (!PyList_Check(v)) {
        Py_DECREF(v);
        PyErr_Format(PyExc_TypeError, "AST field %s is not a list", name);
        return -1;
    }
    Py_ssize_t len = PyList_GET_SIZE(v);
    struct node **arr = arena_alloc(cs->t, sizeof(*arr) * (size_t) (len ? len : 1));
    if (!arr) {
        Py_DECREF(v);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *item = PyList_GET_ITEM(v, i);
        if (item == Py_None) {
            arr[i] = NULL;
            continue;
        }
        arr[i] = fn(cs, item);
        if (!arr[i]) {
            Py_DECREF(v);
            return -1;
        }
    }
    Py_DECREF(v);
    *ret = arr;
    *ret_n = (uint32_t) len;
    return 0;
}

static int
find_name(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return (int) i;
    return -1;
}

static const char *const binop_names[_BOP_MAX] = {
        [BOP_ADD] = "Add",       [BOP_SUB] = "Sub",         [BOP_MULT] = "Mult",
        [BOP_MATMULT] = "MatMult", [BOP_DIV] = "Div",       [BOP_MOD] = "Mod",
        [BOP_POW] = "Pow",       [BOP_LSHIFT] = "LShift",   [BOP_RSHIFT] = "RShift",
        [BOP_BITOR] = "BitOr",   [BOP_BITXOR] = "BitXor",   [BOP_BITAND] = "BitAnd",
        [BOP_FLOORDIV] = "FloorDiv",
};
static const char *const unop_names[_UOP_MAX] = {
        [UOP_INVERT] = "Invert", [UOP_NOT] = "Not", [UOP_UADD] = "UAdd", [UOP_USUB] = "USub"};
static const char *const cmpop_names[_CMP_MAX] = {
        [CMP_EQ] = "Eq", [CMP_NOTEQ] = "NotEq", [CMP_LT] = "Lt",   [CMP_LTE] = "LtE",
        [CMP_GT] = "Gt", [CMP_GTE] = "GtE",     [CMP_IS] = "Is",   [CMP_ISNOT] = "IsNot",
        [CMP_IN] = "In", [CMP_NOTIN] = "NotIn",
};

static int
field_op(PyObject *ast, const char *field, const char *const *names, size_t n)
{
    PyObject *v = PyObject_GetAttrString(ast, field);
    if (!v)
        return -1;
    int op = find_name(names, n, ast_type(v));
    Py_DECREF(v);
    if (op < 0)
        PyErr_Format(PyExc_SyntaxError, "unknown operator in %s", ast_type(ast));
    return op;
}

static int
set_ctx(struct node *n, PyObject *ast)
{
    PyObject *ctx = PyObject_GetAttrString(ast, "ctx");
    if (!ctx)
        return -1;
    const char *c = ast_type(ctx);
    if (strcmp(c, "Store") == 0)
        n->flags |= NF_STORE;
    else if (strcmp(c, "Del") == 0)
        n->flags |= NF_DEL;
    Py_DECREF(ctx);
    return 0;
}

static PyObject *
field_str(struct cstate *cs, PyObject *ast, const char *name)
{
    PyObject *v = PyObject_GetAttrString(ast, name);
    if (!v || v == Py_None) {
        Py_XDECREF(v);
        return NULL;
    }
    if (PyUnicode_Check(v))
        PyUnicode_InternInPlace(&v);
    return keep(cs, v);
}

static struct node *
conv_unsupported(struct cstate *cs, PyObject *ast, enum node_kind kind)
{
    struct node *n = node_new(cs, ast, kind);
    if (!n || !(n->obj = keep(cs, PyUnicode_FromString(ast_type(ast)))))
        return NULL;
    return n;
}

static struct node *
conv_keyword(struct cstate *cs, PyObject *ast)
{
    struct node *n = node_new(cs, ast, NK_KEYWORD);
    if (!n)
        return NULL;
    n->obj = field_str(cs, ast, "arg");
    if (!n->obj && PyErr_Occurred())
        return NULL;
    if (conv_field(cs, ast, "value", conv_expr, &n->a) < 0)
        return NULL;
    return n;
}

static struct node *
conv_call(struct cstate *cs, PyObject *ast, struct node *n)
{
    if (conv_field(cs, ast, "func", conv_expr, &n->a) < 0 ||
        conv_list(cs, ast, "args", conv_expr, &n->v, &n->nv) < 0 ||
        conv_list(cs, ast, "keywords", conv_keyword, &n->w, &n->nw) < 0)
        return NULL;
    for (uint32_t i = 0; i < n->nv; i++)
        if (n->v[i]->kind == NK_E_STARRED)
            n->flags |= NF_HAS_STAR;
    for (uint32_t i = 0; i < n->nw; i++)
        if (!n->w[i]->obj)
            n->flags |= NF_HAS_STAR;
    if (!(n->flags & NF_HAS_STAR) && n->nw) {
        /* vectorcall wants the keyword names as one tuple: build it once */
        PyObject *names = PyTuple_New(n->nw);
        if (!names)
            return NULL;
        for (uint32_t i = 0; i < n->nw; i++) {
            Py_INCREF(n->w[i]->obj);
            PyTuple_SET_ITEM(names, i, n->w[i]->obj);
        }
        if (!(n->obj = keep(cs, names)))
            return NULL;
    }
    return n;
}

static struct node *
conv_compare(struct cstate *cs, PyObject *ast, struct node *n)
{
    if (conv_field(cs, ast, "left", conv_expr, &n->a) < 0 ||
        conv_list(cs, ast, "comparators", conv_expr, &n->v, &n->nv) < 0)
        return NULL;
    PyObject *ops = PyObject_GetAttrString(ast, "ops");
    if (!ops)
        return NULL;
    n->iv = arena_alloc(cs->t, sizeof(int32_t) * (n->nv ? n->nv : 1));
    for (uint32_t i = 0; n->iv && i < n->nv && i < (uint32_t) PyList_GET_SIZE(ops); i++) {
        int op = find_name(cmpop_names, _CMP_MAX, ast_type(PyList_GET_ITEM(ops, i)));
        if (op < 0) {
            PyErr_SetString(PyExc_SyntaxError, "unknown comparison operator");
            n->iv = NULL;
        } else {
            n->iv[i] = op;
        }
    }
    Py_DECREF(ops);
    return n->iv ? n : NULL;
}

static struct node *
conv_attribute(struct cstate *cs, PyObject *ast, struct node *n)
{
    if (conv_field(cs, ast, "value", conv_expr, &n->a) < 0 || set_ctx(n, ast) < 0 ||
        !(n->obj = field_str(cs, ast, "attr")))
        return NULL;
    if (exec_dunder_forbidden(PyUnicode_AsUTF8(n->obj)))
        n->flags |= NF_FORBIDDEN;
    return n;
}

/* Expression kinds whose fields are all of the a/b/c or v shape. */
static struct node *
conv_expr_simple(struct cstate *cs, PyObject *ast, const char *type, struct node *n)
{
    if (strcmp(type, "Constant") == 0) {
        n->kind = NK_E_CONST;
        n->obj = keep(cs, PyObject_GetAttrString(ast, "value"));
        return n->obj ? n : NULL;
    }
    if (strcmp(type, "Name") == 0) {
        n->kind = NK_E_NAME;
        return (n->obj = field_str(cs, ast, "id")) && set_ctx(n, ast) == 0 ? n : NULL;
    }
    if (strcmp(type, "Subscript") == 0) {
        n->kind = NK_E_SUBSCRIPT;
        return conv_field(cs, ast, "value", conv_expr, &n->a) == 0 &&
                               conv_field(cs, ast, "slice", conv_expr, &n->b) == 0 &&
                               set_ctx(n, ast) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "Slice") == 0) {
        n->kind = NK_E_SLICE;
        return conv_field(cs, ast, "lower", conv_expr, &n->a) == 0 &&
                               conv_field(cs, ast, "upper", conv_expr, &n->b) == 0 &&
                               conv_field(cs, ast, "step", conv_expr, &n->c) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "UnaryOp") == 0) {
        n->kind = NK_E_UNARY;
        return (n->op = field_op(ast, "op", unop_names, _UOP_MAX)) >= 0 &&
                               conv_field(cs, ast, "operand", conv_expr, &n->a) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "BinOp") == 0) {
        n->kind = NK_E_BINOP;
        return (n->op = field_op(ast, "op", binop_names, _BOP_MAX)) >= 0 &&
                               conv_field(cs, ast, "left", conv_expr, &n->a) == 0 &&
                               conv_field(cs, ast, "right", conv_expr, &n->b) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "BoolOp") == 0) {
        static const char *const names[] = {"And", "Or"};
        n->kind = NK_E_BOOLOP;
        int op = field_op(ast, "op", names, 2);
        if (op == 1)
            n->flags |= NF_BOOL_OR;
        return op >= 0 && conv_list(cs, ast, "values", conv_expr, &n->v, &n->nv) == 0 ? n : NULL;
    }
    if (strcmp(type, "IfExp") == 0) {
        n->kind = NK_E_IFEXP;
        return conv_field(cs, ast, "test", conv_expr, &n->a) == 0 &&
                               conv_field(cs, ast, "body", conv_expr, &n->b) == 0 &&
                               conv_field(cs, ast, "orelse", conv_expr, &n->c) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "Starred") == 0) {
        n->kind = NK_E_STARRED;
        return conv_field(cs, ast, "value", conv_expr, &n->a) == 0 && set_ctx(n, ast) == 0 ? n
                                                                                            : NULL;
    }
    if (strcmp(type, "JoinedStr") == 0) {
        n->kind = NK_E_JOINEDSTR;
        return conv_list(cs, ast, "values", conv_expr, &n->v, &n->nv) == 0 ? n : NULL;
    }
    if (strcmp(type, "FormattedValue") == 0) {
        long conv;
        n->kind = NK_E_FORMATTED;
        if (field_int(ast, "conversion", &conv) < 0)
            return NULL;
        n->op = (int32_t) conv;
        return conv_field(cs, ast, "value", conv_expr, &n->a) == 0 &&
                               conv_field(cs, ast, "format_spec", conv_expr, &n->b) == 0
                       ? n
                       : NULL;
    }
    return n; /* kind stays NK_E_UNSUPPORTED */
}

static struct node *
conv_expr(struct cstate *cs, PyObject *ast)
{
    if (++cs->depth > EXEC_MAX_NESTING) {
        PyErr_Format(exec_InterpreterError,
                     "the code nests deeper than %d levels; split it into smaller expressions",
                     EXEC_MAX_NESTING);
        return NULL;
    }
    const char *type = ast_type(ast);
    struct node *n = node_new(cs, ast, NK_E_UNSUPPORTED);
    struct node *ret = NULL;
    if (!n)
        goto out;
    if (strcmp(type, "Attribute") == 0) {
        n->kind = NK_E_ATTR;
        ret = conv_attribute(cs, ast, n);
    } else if (strcmp(type, "Call") == 0) {
        n->kind = NK_E_CALL;
        ret = conv_call(cs, ast, n);
    } else if (strcmp(type, "Compare") == 0) {
        n->kind = NK_E_COMPARE;
        ret = conv_compare(cs, ast, n);
    } else if (strcmp(type, "List") == 0 || strcmp(type, "Tuple") == 0 ||
               strcmp(type, "Set") == 0) {
        n->kind = type[0] == 'L' ? NK_E_LIST : type[0] == 'T' ? NK_E_TUPLE : NK_E_SET;
        if (conv_list(cs, ast, "elts", conv_expr, &n->v, &n->nv) < 0 ||
            (n->kind != NK_E_SET && set_ctx(n, ast) < 0))
            goto out;
        for (uint32_t i = 0; i < n->nv; i++)
            if (n->v[i]->kind == NK_E_STARRED)
                n->flags |= NF_HAS_STAR;
        ret = n;
    } else if (strcmp(type, "Dict") == 0) {
        n->kind = NK_E_DICT;
        ret = conv_list(cs, ast, "keys", conv_expr, &n->v, &n->nv) == 0 &&
                              conv_list(cs, ast, "values", conv_expr, &n->w, &n->nw) == 0
                      ? n
                      : NULL;
    } else {
        ret = conv_expr_simple(cs, ast, type, n);
        if (ret && ret->kind == NK_E_UNSUPPORTED)
            ret->obj = keep(cs, PyUnicode_FromString(type));
        if (ret && !ret->obj && ret->kind == NK_E_UNSUPPORTED)
            ret = NULL;
    }
out:
    cs->depth--;
    return ret;
}

static struct node *
conv_alias(struct cstate *cs, PyObject *ast)
{
    struct node *n = node_new(cs, ast, NK_ALIAS);
    if (!n || !(n->obj = field_str(cs, ast, "name")))
        return NULL;
    n->obj2 = field_str(cs, ast, "asname");
    return n->obj2 || !PyErr_Occurred() ? n : NULL;
}

static struct node *
conv_stmt_body(struct cstate *cs, PyObject *ast, const char *type, struct node *n)
{
    if (strcmp(type, "If") == 0 || strcmp(type, "While") == 0) {
        n->kind = type[0] == 'I' ? NK_S_IF : NK_S_WHILE;
        return conv_field(cs, ast, "test", conv_expr, &n->a) == 0 &&
                               conv_list(cs, ast, "body", conv_stmt, &n->v, &n->nv) == 0 &&
                               conv_list(cs, ast, "orelse", conv_stmt, &n->w, &n->nw) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "For") == 0) {
        n->kind = NK_S_FOR;
        return conv_field(cs, ast, "target", conv_expr, &n->a) == 0 &&
                               conv_field(cs, ast, "iter", conv_expr, &n->b) == 0 &&
                               conv_list(cs, ast, "body", conv_stmt, &n->v, &n->nv) == 0 &&
                               conv_list(cs, ast, "orelse", conv_stmt, &n->w, &n->nw) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "Import") == 0) {
        n->kind = NK_S_IMPORT;
        return conv_list(cs, ast, "names", conv_alias, &n->v, &n->nv) == 0 ? n : NULL;
    }
    if (strcmp(type, "ImportFrom") == 0) {
        long level;
        n->kind = NK_S_IMPORTFROM;
        n->obj = field_str(cs, ast, "module");
        if (PyErr_Occurred() || field_int(ast, "level", &level) < 0)
            return NULL;
        n->op = (int32_t) level;
        return conv_list(cs, ast, "names", conv_alias, &n->v, &n->nv) == 0 ? n : NULL;
    }
    return conv_unsupported(cs, ast, NK_S_UNSUPPORTED);
}

static struct node *
conv_stmt(struct cstate *cs, PyObject *ast)
{
    if (++cs->depth > EXEC_MAX_NESTING) {
        PyErr_Format(exec_InterpreterError, "the code nests deeper than %d levels",
                     EXEC_MAX_NESTING);
        return NULL;
    }
    const char *type = ast_type(ast);
    struct node *n = node_new(cs, ast, NK_S_PASS);
    struct node *ret = NULL;
    if (!n)
        goto out;
    if (strcmp(type, "Expr") == 0) {
        n->kind = NK_S_EXPR;
        ret = conv_field(cs, ast, "value", conv_expr, &n->a) == 0 ? n : NULL;
    } else if (strcmp(type, "Assign") == 0) {
        n->kind = NK_S_ASSIGN;
        ret = conv_list(cs, ast, "targets", conv_expr, &n->v, &n->nv) == 0 &&
                              conv_field(cs, ast, "value", conv_expr, &n->a) == 0
                      ? n
                      : NULL;
    } else if (strcmp(type, "AugAssign") == 0) {
        n->kind = NK_S_AUGASSIGN;
        ret = (n->op = field_op(ast, "op", binop_names, _BOP_MAX)) >= 0 &&
                              conv_field(cs, ast, "target", conv_expr, &n->a) == 0 &&
                              conv_field(cs, ast, "value", conv_expr, &n->b) == 0
                      ? n
                      : NULL;
    } else if (strcmp(type, "AnnAssign") == 0) {
        n->kind = NK_S_ANNASSIGN;
        ret = conv_field(cs, ast, "target", conv_expr, &n->a) == 0 &&
                              conv_field(cs, ast, "value", conv_expr, &n->b) == 0
                      ? n
                      : NULL;
    } else if (strcmp(type, "Delete") == 0) {
        n->kind = NK_S_DELETE;
        ret = conv_list(cs, ast, "targets", conv_expr, &n->v, &n->nv) == 0 ? n : NULL;
    } else if (strcmp(type, "Pass") == 0 || strcmp(type, "Break") == 0 ||
               strcmp(type, "Continue") == 0) {
        n->kind = type[0] == 'P' ? NK_S_PASS : type[0] == 'B' ? NK_S_BREAK : NK_S_CONTINUE;
        ret = n;
    } else {
        ret = conv_stmt_body(cs, ast, type, n);
    }
out:
    cs->depth--;
    return ret;
}

static int
index_lines(struct exec_tree *t)
{
    uint32_t lines = 1;
    for (size_t i = 0; i < t->code_len; i++)
        lines += t->code[i] == '\n';
    t->line_off = calloc(lines + 2, sizeof(*t->line_off));
    if (!t->line_off)
        return -1;
    uint32_t l = 1;
    t->line_off[1] = 0;
    for (size_t i = 0; i < t->code_len; i++)
        if (t->code[i] == '\n')
            t->line_off[++l] = i + 1;
    t->nlines = lines;
    return 0;
}

struct exec_tree *
exec_tree_compile(const char *code)
{
    struct exec_tree *t = calloc(1, sizeof(*t));
    if (!t || !(t->code = strdup(code)) || !(t->objs = PyList_New(0))) {
        exec_tree_free(t);
        PyErr_NoMemory();
        return NULL;
    }
    t->code_len = strlen(code);
    if (index_lines(t) < 0) {
        exec_tree_free(t);
        PyErr_NoMemory();
        return NULL;
    }
    PyCompilerFlags flags = {.cf_flags = PyCF_ONLY_AST, .cf_feature_version = PY_MINOR_VERSION};
    PyObject *mod = Py_CompileStringExFlags(code, "<code>", Py_file_input, &flags, -1);
    if (!mod) {
        exec_tree_free(t);
        return NULL;
    }
    struct cstate cs = {.t = t};
    int r = conv_list(&cs, mod, "body", conv_stmt, &t->body, &t->nbody);
    Py_DECREF(mod);
    if (r < 0)
        return exec_tree_free(t);
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
