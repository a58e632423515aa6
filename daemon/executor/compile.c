/* From CPython's AST (PyCF_ONLY_AST) to the executor's compact node tree, once per snippet.
 * Everything the walk would otherwise look up each time is resolved here: operator kinds,
 * interned names, where each name lives (scope.c), constants, keyword-name tuples for
 * vectorcall, forbidden attribute names. This file: infrastructure and expressions;
 * compile_stmt.c: statements and patterns; tree.c: the arena and the entry point. */
#include <string.h>

#include "compile_internal.h"

/* Keeps obj alive as long as the tree; returns it borrowed. Steals the reference. */
PyObject *
exec_keep(struct cstate *cs, PyObject *obj)
{
    if (!obj)
        return NULL;
    int r = PyList_Append(cs->t->objs, obj);
    Py_DECREF(obj);
    return r < 0 ? NULL : obj;
}

const char *
exec_ast_type(PyObject *ast)
{
    return _PyType_Name(Py_TYPE(ast));
}

const char *
exec_construct_name(const char *ast_type)
{
    static const char *const names[][2] = {
            {"AsyncFunctionDef", "async def"},
            {"AsyncFor", "async for"},
            {"AsyncWith", "async with"},
            {"Await", "await"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(names[i][0], ast_type) == 0)
            return names[i][1];
    return ast_type;
}

/* AST field names, and the few names compiling makes, as interned strings, each made once per
 * process (in the zygote, for the names its warm-up meets). CPython's type attribute cache only
 * hits for the very name object it stored: a name made afresh per lookup (PyObject_GetAttrString)
 * misses every time and rewrites the cache entry, which in a worker is a copy-on-write fault on a
 * page it shares with the zygote. ~60 names exist; the table has room for four times that. */
#define FIELD_SLOTS 256
static PyObject *field_names[FIELD_SLOTS];

static uint32_t
field_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char) *s) * 16777619u;
    return h;
}

PyObject *
exec_interned_name(const char *s)
{
    uint32_t h = field_hash(s);
    for (uint32_t i = 0; i < FIELD_SLOTS; i++) {
        PyObject **slot = &field_names[(h + i) % FIELD_SLOTS];
        if (!*slot)
            return (*slot = PyUnicode_InternFromString(s));
        if (PyUnicode_CompareWithASCIIString(*slot, s) == 0)
            return *slot;
    }
    PyErr_Format(PyExc_SystemError, "more than %d AST field and compile names", FIELD_SLOTS);
    return NULL;
}

PyObject *
exec_ast_field(PyObject *ast, const char *name)
{
    PyObject *n = exec_interned_name(name);
    return n ? PyObject_GetAttr(ast, n) : NULL;
}

int
exec_field_int(PyObject *ast, const char *name, long *ret)
{
    PyObject *v = exec_ast_field(ast, name);
    if (!v)
        return -1;
    long x = v == Py_None ? 0 : PyLong_AsLong(v);
    Py_DECREF(v);
    if (x == -1 && PyErr_Occurred())
        return -1;
    *ret = x;
    return 0;
}

PyObject *
exec_field_str(struct cstate *cs, PyObject *ast, const char *name)
{
    PyObject *v = exec_ast_field(ast, name);
    if (!v || v == Py_None) {
        Py_XDECREF(v);
        return NULL;
    }
    if (PyUnicode_Check(v))
        PyUnicode_InternInPlace(&v);
    return exec_keep(cs, v);
}

struct node *
exec_node_new(struct cstate *cs, PyObject *ast, enum node_kind kind)
{
    struct node *n = exec_arena_alloc(cs->t, sizeof(*n));
    if (!n)
        return NULL;
    memset(n, 0, sizeof(*n));
    n->kind = kind;
    long lineno = 0, col = 0, end_lineno = 0, end_col = 0;
    PyObject *lineno_name = ast ? exec_interned_name("lineno") : NULL;
    if (ast && !lineno_name)
        return NULL;
    if (ast && PyObject_HasAttr(ast, lineno_name)) {
        if (exec_field_int(ast, "lineno", &lineno) < 0 ||
            exec_field_int(ast, "col_offset", &col) < 0 ||
            exec_field_int(ast, "end_lineno", &end_lineno) < 0 ||
            exec_field_int(ast, "end_col_offset", &end_col) < 0)
            return NULL;
    }
    n->lineno = (uint32_t) lineno;
    n->col = (uint32_t) col;
    n->end_lineno = (uint32_t) end_lineno;
    n->end_col = (uint32_t) end_col;
    return n;
}

/* Converts an optional child field (None gives NULL without error). */
int
exec_conv_field(struct cstate *cs, PyObject *ast, const char *name, conv_fn fn, struct node **ret)
{
    PyObject *v = exec_ast_field(ast, name);
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
int
exec_conv_list(struct cstate *cs, PyObject *ast, const char *name, conv_fn fn, struct node ***ret,
               uint32_t *ret_n)
{
    PyObject *v = exec_ast_field(ast, name);
    if (!v)
        return -1;
    if (!PyList_Check(v)) {
        Py_DECREF(v);
        PyErr_Format(PyExc_TypeError, "AST field %s is not a list", name);
        return -1;
    }
    Py_ssize_t len = PyList_GET_SIZE(v);
    struct node **arr = exec_arena_alloc(cs->t, sizeof(*arr) * (size_t) (len ? len : 1));
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

int
exec_nesting_enter(struct cstate *cs)
{
    if (++cs->depth <= EXEC_MAX_NESTING)
        return 0;
    PyErr_Format(PyExc_SyntaxError,
                 "the code nests deeper than %d levels; split it into smaller pieces",
                 EXEC_MAX_NESTING);
    return -1;
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
        [BOP_ADD] = "Add",           [BOP_SUB] = "Sub",       [BOP_MULT] = "Mult",
        [BOP_MATMULT] = "MatMult",   [BOP_DIV] = "Div",       [BOP_MOD] = "Mod",
        [BOP_POW] = "Pow",           [BOP_LSHIFT] = "LShift", [BOP_RSHIFT] = "RShift",
        [BOP_BITOR] = "BitOr",       [BOP_BITXOR] = "BitXor", [BOP_BITAND] = "BitAnd",
        [BOP_FLOORDIV] = "FloorDiv",
};
static const char *const unop_names[_UOP_MAX] = {
        [UOP_INVERT] = "Invert", [UOP_NOT] = "Not", [UOP_UADD] = "UAdd", [UOP_USUB] = "USub"};
static const char *const cmpop_names[_CMP_MAX] = {
        [CMP_EQ] = "Eq", [CMP_NOTEQ] = "NotEq", [CMP_LT] = "Lt", [CMP_LTE] = "LtE",
        [CMP_GT] = "Gt", [CMP_GTE] = "GtE",     [CMP_IS] = "Is", [CMP_ISNOT] = "IsNot",
        [CMP_IN] = "In", [CMP_NOTIN] = "NotIn",
};

static int
field_op(PyObject *ast, const char *field, const char *const *names, size_t n)
{
    PyObject *v = exec_ast_field(ast, field);
    if (!v)
        return -1;
    int op = find_name(names, n, exec_ast_type(v));
    Py_DECREF(v);
    if (op < 0)
        PyErr_Format(PyExc_SyntaxError, "unknown operator in %s", exec_ast_type(ast));
    return op;
}

int
exec_field_binop(PyObject *ast, const char *field)
{
    return field_op(ast, field, binop_names, _BOP_MAX);
}

static int
set_ctx(struct node *n, PyObject *ast)
{
    PyObject *ctx = exec_ast_field(ast, "ctx");
    if (!ctx)
        return -1;
    const char *c = exec_ast_type(ctx);
    if (strcmp(c, "Store") == 0)
        n->flags |= NF_STORE;
    else if (strcmp(c, "Del") == 0)
        n->flags |= NF_DEL;
    Py_DECREF(ctx);
    return 0;
}

PyObject *
exec_mangle(struct cstate *cs, PyObject *name)
{
    if (!cs->class_name || !name)
        return name;
    const char *s = PyUnicode_AsUTF8(name);
    size_t len = s ? strlen(s) : 0;
    if (len < 3 || s[0] != '_' || s[1] != '_' || (s[len - 1] == '_' && s[len - 2] == '_') ||
        strchr(s, '.'))
        return name;
    const char *cls = PyUnicode_AsUTF8(cs->class_name);
    while (cls && *cls == '_')
        cls++;
    if (!cls || !*cls)
        return name;
    PyObject *m = PyUnicode_FromFormat("_%s%s", cls, s);
    if (m)
        PyUnicode_InternInPlace(&m);
    return exec_keep(cs, m);
}

struct node *
exec_name_target(struct cstate *cs, PyObject *ast, PyObject *name)
{
    struct node *n = exec_node_new(cs, ast, NK_E_NAME);
    if (!n)
        return NULL;
    n->obj = name;
    n->flags |= NF_STORE;
    if (exec_scope_add(cs->scope, name, SYM_LOCAL) < 0 || exec_scope_use(cs, cs->scope, n) < 0)
        return NULL;
    return n;
}

static struct node *
conv_name(struct cstate *cs, PyObject *ast, struct node *n)
{
    n->kind = NK_E_NAME;
    if (!(n->obj = exec_mangle(cs, exec_field_str(cs, ast, "id"))) || set_ctx(n, ast) < 0)
        return NULL;
    if (!(n->flags & (NF_STORE | NF_DEL)) &&
        PyUnicode_CompareWithASCIIString(n->obj, "__debug__") == 0) {
        /* a compile-time constant in CPython (True without -O) */
        n->kind = NK_E_CONST;
        n->obj = Py_True;
        return n;
    }
    if ((n->flags & (NF_STORE | NF_DEL)) && exec_scope_add(cs->scope, n->obj, SYM_LOCAL) < 0)
        return NULL;
    if (strcmp(PyUnicode_AsUTF8(n->obj), "super") == 0)
        cs->scope->uses_super = true;
    return exec_scope_use(cs, cs->scope, n) < 0 ? NULL : n;
}

static struct node *
conv_keyword(struct cstate *cs, PyObject *ast)
{
    struct node *n = exec_node_new(cs, ast, NK_KEYWORD);
    if (!n)
        return NULL;
    n->obj = exec_field_str(cs, ast, "arg");
    if (!n->obj && PyErr_Occurred())
        return NULL;
    if (exec_conv_field(cs, ast, "value", exec_conv_expr, &n->a) < 0)
        return NULL;
    return n;
}

/* keyword nodes -> NF_HAS_STAR for **, else the names tuple vectorcall wants (in n->obj). A
 * keyword named as a refused class dunder (f(__deepcopy__=x)) takes the ** path too, whose
 * keywords are checked at the call (exec_check_keyword_names). */
int
exec_keywords_prepare(struct cstate *cs, struct node *n, struct node **kw, uint32_t nkw)
{
    for (uint32_t i = 0; i < nkw; i++)
        if (!kw[i]->obj || !exec_class_dunder_allowed(kw[i]->obj))
            n->flags |= NF_HAS_STAR;
    if ((n->flags & NF_HAS_STAR) || !nkw)
        return 0;
    PyObject *names = PyTuple_New(nkw);
    if (!names)
        return -1;
    for (uint32_t i = 0; i < nkw; i++)
        PyTuple_SET_ITEM(names, i, Py_NewRef(kw[i]->obj));
    return (n->obj = exec_keep(cs, names)) ? 0 : -1;
}

static struct node *
conv_call(struct cstate *cs, PyObject *ast, struct node *n)
{
    n->kind = NK_E_CALL;
    if (exec_conv_field(cs, ast, "func", exec_conv_expr, &n->a) < 0 ||
        exec_conv_list(cs, ast, "args", exec_conv_expr, &n->v, &n->nv) < 0 ||
        exec_conv_list(cs, ast, "keywords", conv_keyword, &n->w, &n->nw) < 0)
        return NULL;
    for (uint32_t i = 0; i < n->nv; i++)
        if (n->v[i]->kind == NK_E_STARRED)
            n->flags |= NF_HAS_STAR;
    return exec_keywords_prepare(cs, n, n->w, n->nw) < 0 ? NULL : n;
}

static struct node *
conv_compare(struct cstate *cs, PyObject *ast, struct node *n)
{
    n->kind = NK_E_COMPARE;
    if (exec_conv_field(cs, ast, "left", exec_conv_expr, &n->a) < 0 ||
        exec_conv_list(cs, ast, "comparators", exec_conv_expr, &n->v, &n->nv) < 0)
        return NULL;
    PyObject *ops = exec_ast_field(ast, "ops");
    if (!ops)
        return NULL;
    n->iv = exec_arena_alloc(cs->t, sizeof(int32_t) * (n->nv ? n->nv : 1));
    for (uint32_t i = 0; n->iv && i < n->nv && i < (uint32_t) PyList_GET_SIZE(ops); i++) {
        int op = find_name(cmpop_names, _CMP_MAX, exec_ast_type(PyList_GET_ITEM(ops, i)));
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
    n->kind = NK_E_ATTR;
    if (exec_conv_field(cs, ast, "value", exec_conv_expr, &n->a) < 0 || set_ctx(n, ast) < 0 ||
        !(n->obj = exec_mangle(cs, exec_field_str(cs, ast, "attr"))))
        return NULL;
    const char *name = PyUnicode_AsUTF8(n->obj);
    if (exec_dunder_forbidden(name))
        n->flags |= NF_FORBIDDEN;
    if (name[0] == '_')
        n->flags |= NF_PRIVATE;
    return n;
}

static struct node *
conv_comprehension(struct cstate *cs, PyObject *ast)
{
    struct node *n = exec_node_new(cs, ast, NK_COMPREHENSION);
    long is_async;
    if (!n || exec_field_int(ast, "is_async", &is_async) < 0)
        return NULL;
    if (is_async) {
        /* only valid inside async functions, which the executor refuses (CPython's
         * compiler rejects them elsewhere with this message) */
        PyErr_SetString(PyExc_SyntaxError,
                        "asynchronous comprehension outside of an asynchronous function");
        return NULL;
    }
    if (exec_conv_field(cs, ast, "target", exec_conv_expr, &n->a) < 0 ||
        exec_conv_list(cs, ast, "ifs", exec_conv_expr, &n->v, &n->nv) < 0)
        return NULL;
    return n;
}

/* A comprehension runs in its own scope, except its first iterable (CPython's rule). */
static struct node *
conv_comp(struct cstate *cs, PyObject *ast, struct node *n, const char *type)
{
    n->kind = NK_E_COMP;
    n->op = type[0] == 'L'   ? COMP_LIST
            : type[0] == 'S' ? COMP_SET
            : type[0] == 'D' ? COMP_DICT
                             : COMP_GEN;
    PyObject *gens = exec_ast_field(ast, "generators");
    if (!gens)
        return NULL;
    struct node *first_iter = NULL;
    uint32_t ngens = (uint32_t) PyList_GET_SIZE(gens);
    if (!ngens ||
        exec_conv_field(cs, PyList_GET_ITEM(gens, 0), "iter", exec_conv_expr, &first_iter) < 0) {
        Py_DECREF(gens);
        return NULL;
    }
    static const char *const names[] = {"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"};
    PyObject *name = exec_keep(cs, PyUnicode_FromString(names[n->op]));
    struct exec_code *code = name ? exec_code_new(cs, CODE_COMP, name, n->lineno) : NULL;
    struct cscope *s = code ? exec_scope_push(cs, CODE_COMP) : NULL;
    PyObject *dot0 = s ? exec_keep(cs, Py_XNewRef(exec_interned_name(".0"))) : NULL;
    struct node *ret = NULL;
    if (s)
        s->code = code;
    if (!dot0 || exec_scope_add(s, dot0, SYM_PARAM) < 0 || PyList_Append(s->params, dot0) < 0)
        goto out;
    code->argcount = 1;
    code->is_generator = n->op == COMP_GEN;
    n->code = code;
    n->v = exec_arena_alloc(cs->t, sizeof(*n->v) * ngens);
    if (!n->v)
        goto out;
    n->nv = ngens;
    for (uint32_t i = 0; i < ngens; i++) {
        PyObject *g = PyList_GET_ITEM(gens, i);
        if (!(n->v[i] = conv_comprehension(cs, g)))
            goto out;
        if (i == 0)
            n->v[i]->b = first_iter;
        else if (exec_conv_field(cs, g, "iter", exec_conv_expr, &n->v[i]->b) < 0)
            goto out;
    }
    if (n->op == COMP_DICT) {
        if (exec_conv_field(cs, ast, "key", exec_conv_expr, &n->a) < 0 ||
            exec_conv_field(cs, ast, "value", exec_conv_expr, &n->b) < 0)
            goto out;
    } else if (exec_conv_field(cs, ast, "elt", exec_conv_expr, &n->a) < 0) {
        goto out;
    }
    ret = n;
out:
    if (s)
        exec_scope_pop(cs);
    Py_DECREF(gens);
    return ret;
}

static struct node *
conv_lambda(struct cstate *cs, PyObject *ast, struct node *n)
{
    n->kind = NK_E_LAMBDA;
    PyObject *name = exec_keep(cs, Py_XNewRef(exec_interned_name("<lambda>")));
    PyObject *args = name ? exec_ast_field(ast, "args") : NULL;
    struct node *ret = NULL;
    if (!args || !(n->code = exec_code_new(cs, CODE_LAMBDA, name, n->lineno)) ||
        exec_conv_defaults(cs, args, n) < 0 || !exec_scope_push(cs, CODE_LAMBDA))
        goto out;
    cs->scope->code = n->code;
    if (exec_bind_params(cs, args, n->code) == 0 &&
        exec_conv_field(cs, ast, "body", exec_conv_expr, &n->code->expr) == 0)
        ret = n;
    exec_scope_pop(cs);
out:
    Py_XDECREF(args);
    return ret;
}

static struct node *
conv_yield(struct cstate *cs, PyObject *ast, struct node *n, bool from)
{
    int k = cs->scope->kind;
    if (k != CODE_FUNCTION && k != CODE_LAMBDA) {
        PyErr_SetString(PyExc_SyntaxError, k == CODE_COMP ? "'yield' inside comprehension"
                                                          : "'yield' outside function");
        return NULL;
    }
    cs->scope->code->is_generator = true;
    n->kind = from ? NK_E_YIELDFROM : NK_E_YIELD;
    return exec_conv_field(cs, ast, "value", exec_conv_expr, &n->a) < 0 ? NULL : n;
}

static struct node *
conv_namedexpr(struct cstate *cs, PyObject *ast, struct node *n)
{
    n->kind = NK_E_NAMEDEXPR;
    if (exec_conv_field(cs, ast, "value", exec_conv_expr, &n->b) < 0)
        return NULL;
    PyObject *target = exec_ast_field(ast, "target");
    if (!target)
        return NULL;
    struct node *t = exec_node_new(cs, target, NK_E_NAME);
    t = t && (t->obj = exec_field_str(cs, target, "id")) ? t : NULL;
    Py_DECREF(target);
    if (!t)
        return NULL;
    t->flags |= NF_STORE;
    /* a walrus in a comprehension binds in the enclosing function (PEP 572) */
    struct cscope *s = cs->scope;
    while (s->kind == CODE_COMP)
        s = s->parent;
    if (s->kind == CODE_CLASS) {
        PyErr_SetString(PyExc_SyntaxError,
                        "assignment expression within a comprehension cannot be used in a class "
                        "body");
        return NULL;
    }
    if (exec_scope_add(s, t->obj, SYM_LOCAL) < 0 || exec_scope_use(cs, cs->scope, t) < 0)
        return NULL;
    n->a = t;
    return n;
}

/* f'abc' and the spec of f'{x:>5}' are constants: join them once here, not at each run. */
static int
fold_constant_fstring(struct cstate *cs, struct node *n)
{
    for (uint32_t i = 0; i < n->nv; i++)
        if (n->v[i]->kind != NK_E_CONST || !PyUnicode_Check(n->v[i]->obj))
            return 0;
    PyObject *parts = PyList_New(n->nv);
    if (!parts)
        return -1;
    for (uint32_t i = 0; i < n->nv; i++)
        PyList_SET_ITEM(parts, i, Py_NewRef(n->v[i]->obj));
    PyObject *empty = PyUnicode_FromString("");
    PyObject *joined = empty ? PyUnicode_Join(empty, parts) : NULL;
    Py_XDECREF(empty);
    Py_DECREF(parts);
    if (!(n->obj = exec_keep(cs, joined)))
        return -1;
    n->kind = NK_E_CONST;
    return 0;
}

/* Expression kinds whose fields are all of the a/b/c or v shape. */
static struct node *
conv_expr_simple(struct cstate *cs, PyObject *ast, const char *type, struct node *n)
{
    if (strcmp(type, "Constant") == 0) {
        n->kind = NK_E_CONST;
        n->obj = exec_keep(cs, exec_ast_field(ast, "value"));
        return n->obj ? n : NULL;
    }
    if (strcmp(type, "Subscript") == 0) {
        n->kind = NK_E_SUBSCRIPT;
        return exec_conv_field(cs, ast, "value", exec_conv_expr, &n->a) == 0 &&
                               exec_conv_field(cs, ast, "slice", exec_conv_expr, &n->b) == 0 &&
                               set_ctx(n, ast) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "Slice") == 0) {
        n->kind = NK_E_SLICE;
        return exec_conv_field(cs, ast, "lower", exec_conv_expr, &n->a) == 0 &&
                               exec_conv_field(cs, ast, "upper", exec_conv_expr, &n->b) == 0 &&
                               exec_conv_field(cs, ast, "step", exec_conv_expr, &n->c) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "UnaryOp") == 0) {
        n->kind = NK_E_UNARY;
        return (n->op = field_op(ast, "op", unop_names, _UOP_MAX)) >= 0 &&
                               exec_conv_field(cs, ast, "operand", exec_conv_expr, &n->a) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "BinOp") == 0) {
        n->kind = NK_E_BINOP;
        return (n->op = field_op(ast, "op", binop_names, _BOP_MAX)) >= 0 &&
                               exec_conv_field(cs, ast, "left", exec_conv_expr, &n->a) == 0 &&
                               exec_conv_field(cs, ast, "right", exec_conv_expr, &n->b) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "BoolOp") == 0) {
        static const char *const names[] = {"And", "Or"};
        n->kind = NK_E_BOOLOP;
        int op = field_op(ast, "op", names, 2);
        if (op == 1)
            n->flags |= NF_BOOL_OR;
        return op >= 0 && exec_conv_list(cs, ast, "values", exec_conv_expr, &n->v, &n->nv) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "IfExp") == 0) {
        n->kind = NK_E_IFEXP;
        return exec_conv_field(cs, ast, "test", exec_conv_expr, &n->a) == 0 &&
                               exec_conv_field(cs, ast, "body", exec_conv_expr, &n->b) == 0 &&
                               exec_conv_field(cs, ast, "orelse", exec_conv_expr, &n->c) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "Starred") == 0) {
        n->kind = NK_E_STARRED;
        return exec_conv_field(cs, ast, "value", exec_conv_expr, &n->a) == 0 && set_ctx(n, ast) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "JoinedStr") == 0) {
        n->kind = NK_E_JOINEDSTR;
        if (exec_conv_list(cs, ast, "values", exec_conv_expr, &n->v, &n->nv) < 0)
            return NULL;
        return fold_constant_fstring(cs, n) < 0 ? NULL : n;
    }
    if (strcmp(type, "FormattedValue") == 0) {
        long conv;
        n->kind = NK_E_FORMATTED;
        if (exec_field_int(ast, "conversion", &conv) < 0)
            return NULL;
        n->op = (int32_t) conv;
        return exec_conv_field(cs, ast, "value", exec_conv_expr, &n->a) == 0 &&
                               exec_conv_field(cs, ast, "format_spec", exec_conv_expr, &n->b) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "Lambda") == 0)
        return conv_lambda(cs, ast, n);
    if (strcmp(type, "NamedExpr") == 0)
        return conv_namedexpr(cs, ast, n);
    if (strcmp(type, "Yield") == 0 || strcmp(type, "YieldFrom") == 0)
        return conv_yield(cs, ast, n, type[5] == 'F');
    if (strcmp(type, "ListComp") == 0 || strcmp(type, "SetComp") == 0 ||
        strcmp(type, "DictComp") == 0 || strcmp(type, "GeneratorExp") == 0)
        return conv_comp(cs, ast, n, type);
    return n; /* kind stays NK_E_UNSUPPORTED (Await) */
}

struct node *
exec_conv_expr(struct cstate *cs, PyObject *ast)
{
    if (exec_nesting_enter(cs) < 0)
        return NULL;
    const char *type = exec_ast_type(ast);
    struct node *n = exec_node_new(cs, ast, NK_E_UNSUPPORTED);
    struct node *ret = NULL;
    if (!n)
        goto out;
    if (strcmp(type, "Name") == 0) {
        ret = conv_name(cs, ast, n);
    } else if (strcmp(type, "Attribute") == 0) {
        ret = conv_attribute(cs, ast, n);
    } else if (strcmp(type, "Call") == 0) {
        ret = conv_call(cs, ast, n);
    } else if (strcmp(type, "Compare") == 0) {
        ret = conv_compare(cs, ast, n);
    } else if (strcmp(type, "List") == 0 || strcmp(type, "Tuple") == 0 ||
               strcmp(type, "Set") == 0) {
        n->kind = type[0] == 'L' ? NK_E_LIST : type[0] == 'T' ? NK_E_TUPLE : NK_E_SET;
        if (exec_conv_list(cs, ast, "elts", exec_conv_expr, &n->v, &n->nv) < 0 ||
            (n->kind != NK_E_SET && set_ctx(n, ast) < 0))
            goto out;
        for (uint32_t i = 0; i < n->nv; i++)
            if (n->v[i]->kind == NK_E_STARRED)
                n->flags |= NF_HAS_STAR;
        ret = n;
    } else if (strcmp(type, "Dict") == 0) {
        n->kind = NK_E_DICT;
        ret = exec_conv_list(cs, ast, "keys", exec_conv_expr, &n->v, &n->nv) == 0 &&
                              exec_conv_list(cs, ast, "values", exec_conv_expr, &n->w, &n->nw) == 0
                      ? n
                      : NULL;
    } else {
        ret = conv_expr_simple(cs, ast, type, n);
        if (ret && ret->kind == NK_E_UNSUPPORTED &&
            !(ret->obj = exec_keep(cs, PyUnicode_FromString(exec_construct_name(type)))))
            ret = NULL;
    }
out:
    cs->depth--;
    return ret;
}
