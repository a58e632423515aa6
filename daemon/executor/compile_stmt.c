/* Statements and match patterns, from CPython's AST to the executor's nodes. Also the checks
 * CPython's compiler (not its parser) makes, since PyCF_ONLY_AST stops before them:
 * return/yield outside a function, break/continue outside a loop, nonlocal at module level. */
#include <string.h>

#include "compile_internal.h"

static struct node *
syntax_error(const char *msg)
{
    PyErr_SetString(PyExc_SyntaxError, msg);
    return NULL;
}

struct exec_code *
exec_code_new(struct cstate *cs, int kind, PyObject *name, uint32_t lineno)
{
    struct exec_code *c = exec_arena_alloc(cs->t, sizeof(*c));
    if (!c)
        return NULL;
    memset(c, 0, sizeof(*c));
    c->kind = kind;
    c->name = name;
    c->vararg = c->kwarg = c->class_cell = c->super_slot = -1;
    c->lineno = lineno;
    struct cscope *p = cs->scope;
    if (!p || p->kind == SCOPE_MODULE || !p->code) {
        c->qualname = name;
        return c;
    }
    const char *sep = p->kind == CODE_CLASS ? "." : ".<locals>.";
    c->qualname = exec_keep(cs, PyUnicode_FromFormat("%U%s%U", p->code->qualname, sep, name));
    return c->qualname ? c : NULL;
}

int
exec_conv_defaults(struct cstate *cs, PyObject *args, struct node *n)
{
    struct node **pos, **kw;
    uint32_t npos, nkw;
    if (exec_conv_list(cs, args, "defaults", exec_conv_expr, &pos, &npos) < 0 ||
        exec_conv_list(cs, args, "kw_defaults", exec_conv_expr, &kw, &nkw) < 0)
        return -1;
    n->w = exec_arena_alloc(cs->t, sizeof(*n->w) * (npos + nkw + 1));
    if (!n->w)
        return -1;
    memcpy(n->w, pos, sizeof(*pos) * npos);
    memcpy(n->w + npos, kw, sizeof(*kw) * nkw);
    n->nw = npos + nkw;
    n->op = (int32_t) npos;
    return 0;
}

static int
bind_param_list(struct cstate *cs, PyObject *args, const char *field, uint32_t *ret_count)
{
    PyObject *list = exec_ast_field(args, field);
    if (!list)
        return -1;
    int rc = 0;
    uint32_t count = 0;
    if (list != Py_None) {
        PyObject *one = PyList_Check(list) ? NULL : list; /* vararg/kwarg: one ast.arg */
        Py_ssize_t len = one ? 1 : PyList_GET_SIZE(list);
        for (Py_ssize_t i = 0; rc == 0 && i < len; i++) {
            PyObject *name = exec_mangle(
                    cs, exec_field_str(cs, one ? one : PyList_GET_ITEM(list, i), "arg"));
            rc = name && exec_scope_add(cs->scope, name, SYM_PARAM) == 0 &&
                                 PyList_Append(cs->scope->params, name) == 0
                         ? 0
                         : -1;
            count++;
        }
    }
    Py_DECREF(list);
    *ret_count = count;
    return rc;
}

int
exec_bind_params(struct cstate *cs, PyObject *args, struct exec_code *code)
{
    uint32_t posonly, pos, kwonly, var, kw;
    if (bind_param_list(cs, args, "posonlyargs", &posonly) < 0 ||
        bind_param_list(cs, args, "args", &pos) < 0 ||
        bind_param_list(cs, args, "kwonlyargs", &kwonly) < 0 ||
        bind_param_list(cs, args, "vararg", &var) < 0 ||
        bind_param_list(cs, args, "kwarg", &kw) < 0)
        return -1;
    code->posonlycount = posonly;
    code->argcount = posonly + pos;
    code->kwonlycount = kwonly;
    if (var)
        code->vararg = (int32_t) (posonly + pos + kwonly);
    if (kw)
        code->kwarg = (int32_t) (posonly + pos + kwonly + var);
    return 0;
}

static void
set_doc(struct exec_code *code)
{
    if (code->nbody && code->body[0]->kind == NK_S_EXPR && code->body[0]->a->kind == NK_E_CONST &&
        PyUnicode_Check(code->body[0]->a->obj))
        code->doc = code->body[0]->a->obj;
}

static struct node *
conv_funcdef(struct cstate *cs, PyObject *ast, struct node *n)
{
    n->kind = NK_S_FUNCDEF;
    PyObject *name = exec_field_str(cs, ast, "name");
    PyObject *bound = exec_mangle(cs, name);
    PyObject *args = name ? exec_ast_field(ast, "args") : NULL;
    struct node *ret = NULL;
    if (!args || exec_conv_list(cs, ast, "decorator_list", exec_conv_expr, &n->v, &n->nv) < 0 ||
        !(n->code = exec_code_new(cs, CODE_FUNCTION, name, n->lineno)) ||
        exec_conv_defaults(cs, args, n) < 0 || !bound ||
        !(n->c = exec_name_target(cs, ast, bound)) || !exec_scope_push(cs, CODE_FUNCTION))
        goto out;
    cs->scope->code = n->code;
    if (exec_bind_params(cs, args, n->code) == 0 &&
        exec_conv_list(cs, ast, "body", exec_conv_stmt, &n->code->body, &n->code->nbody) == 0)
        ret = n;
    exec_scope_pop(cs);
    set_doc(n->code);
out:
    Py_XDECREF(args);
    return ret;
}

static struct node *
conv_keyword_node(struct cstate *cs, PyObject *ast)
{
    struct node *n = exec_node_new(cs, ast, NK_KEYWORD);
    if (!n)
        return NULL;
    n->obj = exec_field_str(cs, ast, "arg");
    if (!n->obj && PyErr_Occurred())
        return NULL;
    return exec_conv_field(cs, ast, "value", exec_conv_expr, &n->a) < 0 ? NULL : n;
}

static struct node *
conv_classdef(struct cstate *cs, PyObject *ast, struct node *n)
{
    n->kind = NK_S_CLASSDEF;
    PyObject *name = exec_field_str(cs, ast, "name");
    if (!name || exec_conv_list(cs, ast, "decorator_list", exec_conv_expr, &n->u, &n->nu) < 0 ||
        exec_conv_list(cs, ast, "bases", exec_conv_expr, &n->v, &n->nv) < 0 ||
        exec_conv_list(cs, ast, "keywords", conv_keyword_node, &n->w, &n->nw) < 0 ||
        !(n->code = exec_code_new(cs, CODE_CLASS, name, n->lineno)) ||
        !(n->c = exec_name_target(cs, ast, name)) || !exec_scope_push(cs, CODE_CLASS))
        return NULL;
    cs->scope->code = n->code;
    PyObject *outer_class = cs->class_name;
    cs->class_name = name;
    int rc = exec_conv_list(cs, ast, "body", exec_conv_stmt, &n->code->body, &n->code->nbody);
    cs->class_name = outer_class;
    exec_scope_pop(cs);
    set_doc(n->code);
    return rc < 0 ? NULL : n;
}

static struct node *
conv_handler(struct cstate *cs, PyObject *ast)
{
    struct node *n = exec_node_new(cs, ast, NK_HANDLER);
    if (!n || exec_conv_field(cs, ast, "type", exec_conv_expr, &n->a) < 0)
        return NULL;
    PyObject *name = exec_field_str(cs, ast, "name");
    if (!name && PyErr_Occurred())
        return NULL;
    if (name && !(n->b = exec_name_target(cs, ast, name)))
        return NULL;
    return exec_conv_list(cs, ast, "body", exec_conv_stmt, &n->v, &n->nv) < 0 ? NULL : n;
}

/* except* handlers may not leave by break, continue or return (CPython's compiler rule):
 * loops and functions inside them start afresh. */
static struct node *
conv_star_handler(struct cstate *cs, PyObject *ast)
{
    uint32_t loops = cs->scope->loops;
    bool in_star = cs->scope->in_star;
    cs->scope->loops = 0;
    cs->scope->in_star = true;
    struct node *n = conv_handler(cs, ast);
    cs->scope->loops = loops;
    cs->scope->in_star = in_star;
    return n;
}

static struct node *
conv_block(struct cstate *cs, PyObject *ast, const char *field)
{
    struct node *b = exec_node_new(cs, NULL, NK_BLOCK);
    if (!b || exec_conv_list(cs, ast, field, exec_conv_stmt, &b->v, &b->nv) < 0)
        return NULL;
    return b;
}

static struct node *
conv_withitem(struct cstate *cs, PyObject *ast)
{
    struct node *n = exec_node_new(cs, ast, NK_WITHITEM);
    if (!n || exec_conv_field(cs, ast, "context_expr", exec_conv_expr, &n->a) < 0 ||
        exec_conv_field(cs, ast, "optional_vars", exec_conv_expr, &n->b) < 0)
        return NULL;
    return n;
}

static struct node *conv_pattern(struct cstate *cs, PyObject *ast);

static int
pattern_target(struct cstate *cs, PyObject *ast, const char *field, struct node **ret)
{
    PyObject *name = exec_field_str(cs, ast, field);
    *ret = NULL;
    if (!name)
        return PyErr_Occurred() ? -1 : 0;
    return (*ret = exec_name_target(cs, ast, name)) ? 0 : -1;
}

static struct node *
conv_pattern_inner(struct cstate *cs, PyObject *ast, const char *type, struct node *n)
{
    if (strcmp(type, "MatchValue") == 0) {
        n->kind = NK_P_VALUE;
        return exec_conv_field(cs, ast, "value", exec_conv_expr, &n->a) < 0 ? NULL : n;
    }
    if (strcmp(type, "MatchSingleton") == 0) {
        n->kind = NK_P_SINGLETON;
        return (n->obj = exec_keep(cs, exec_ast_field(ast, "value"))) ? n : NULL;
    }
    if (strcmp(type, "MatchSequence") == 0 || strcmp(type, "MatchOr") == 0) {
        n->kind = type[5] == 'S' ? NK_P_SEQUENCE : NK_P_OR;
        return exec_conv_list(cs, ast, "patterns", conv_pattern, &n->v, &n->nv) < 0 ? NULL : n;
    }
    if (strcmp(type, "MatchMapping") == 0) {
        n->kind = NK_P_MAPPING;
        return exec_conv_list(cs, ast, "keys", exec_conv_expr, &n->v, &n->nv) == 0 &&
                               exec_conv_list(cs, ast, "patterns", conv_pattern, &n->w, &n->nw) ==
                                       0 &&
                               pattern_target(cs, ast, "rest", &n->a) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "MatchClass") == 0) {
        n->kind = NK_P_CLASS;
        if (exec_conv_field(cs, ast, "cls", exec_conv_expr, &n->a) < 0 ||
            exec_conv_list(cs, ast, "patterns", conv_pattern, &n->v, &n->nv) < 0 ||
            exec_conv_list(cs, ast, "kwd_patterns", conv_pattern, &n->w, &n->nw) < 0)
            return NULL;
        PyObject *attrs = exec_ast_field(ast, "kwd_attrs");
        n->obj = attrs ? exec_keep(cs, PySequence_Tuple(attrs)) : NULL;
        Py_XDECREF(attrs);
        return n->obj ? n : NULL;
    }
    if (strcmp(type, "MatchStar") == 0) {
        n->kind = NK_P_STAR;
        return pattern_target(cs, ast, "name", &n->a) < 0 ? NULL : n;
    }
    if (strcmp(type, "MatchAs") == 0) {
        n->kind = NK_P_AS;
        return exec_conv_field(cs, ast, "pattern", conv_pattern, &n->a) == 0 &&
                               pattern_target(cs, ast, "name", &n->b) == 0
                       ? n
                       : NULL;
    }
    PyErr_Format(exec_InterpreterError, "%s is not supported", type);
    return NULL;
}

static struct node *
conv_pattern(struct cstate *cs, PyObject *ast)
{
    if (exec_nesting_enter(cs) < 0)
        return NULL;
    struct node *n = exec_node_new(cs, ast, NK_P_VALUE);
    struct node *ret = n ? conv_pattern_inner(cs, ast, exec_ast_type(ast), n) : NULL;
    cs->depth--;
    return ret;
}

static struct node *
conv_matchcase(struct cstate *cs, PyObject *ast)
{
    struct node *n = exec_node_new(cs, ast, NK_MATCHCASE);
    if (!n || exec_conv_field(cs, ast, "pattern", conv_pattern, &n->a) < 0 ||
        exec_conv_field(cs, ast, "guard", exec_conv_expr, &n->b) < 0 ||
        exec_conv_list(cs, ast, "body", exec_conv_stmt, &n->v, &n->nv) < 0)
        return NULL;
    return n;
}

static struct node *
conv_declaration(struct cstate *cs, PyObject *ast, bool global)
{
    if (!global && cs->scope->kind == SCOPE_MODULE)
        return syntax_error("nonlocal declaration not allowed at module level");
    if (!global && !cs->scope->decl_line) {
        cs->scope->decl_line = cs->lineno;
        cs->scope->decl_col = cs->col;
    }
    PyObject *names = exec_ast_field(ast, "names");
    if (!names)
        return NULL;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(names); i++) {
        PyObject *name = PyList_GET_ITEM(names, i);
        PyObject *sym = PyDict_GetItemWithError(cs->scope->symbols, name);
        long flags = sym ? PyLong_AsLong(sym) : 0;
        if (flags & (SYM_LOCAL | SYM_PARAM)) {
            PyErr_Format(PyExc_SyntaxError, "name '%U' is %s before %s declaration", name,
                         flags & SYM_PARAM ? "parameter and" : "assigned to",
                         global ? "global" : "nonlocal");
            rc = -1;
        } else {
            rc = exec_scope_add(cs->scope, name, global ? SYM_GLOBAL : SYM_NONLOCAL);
        }
    }
    Py_DECREF(names);
    struct node *n = rc < 0 ? NULL : exec_node_new(cs, ast, NK_S_PASS);
    return n;
}

static struct node *
conv_loop(struct cstate *cs, PyObject *ast, const char *type, struct node *n)
{
    n->kind = type[0] == 'W' ? NK_S_WHILE : NK_S_FOR;
    if (n->kind == NK_S_WHILE ? exec_conv_field(cs, ast, "test", exec_conv_expr, &n->a) < 0
                              : exec_conv_field(cs, ast, "target", exec_conv_expr, &n->a) < 0 ||
                                        exec_conv_field(cs, ast, "iter", exec_conv_expr, &n->b) < 0)
        return NULL;
    cs->scope->loops++;
    int rc = exec_conv_list(cs, ast, "body", exec_conv_stmt, &n->v, &n->nv);
    cs->scope->loops--;
    if (rc < 0 || exec_conv_list(cs, ast, "orelse", exec_conv_stmt, &n->w, &n->nw) < 0)
        return NULL;
    return n;
}

static struct node *
conv_stmt_compound(struct cstate *cs, PyObject *ast, const char *type, struct node *n)
{
    if (strcmp(type, "If") == 0) {
        n->kind = NK_S_IF;
        return exec_conv_field(cs, ast, "test", exec_conv_expr, &n->a) == 0 &&
                               exec_conv_list(cs, ast, "body", exec_conv_stmt, &n->v, &n->nv) ==
                                       0 &&
                               exec_conv_list(cs, ast, "orelse", exec_conv_stmt, &n->w, &n->nw) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "While") == 0 || strcmp(type, "For") == 0)
        return conv_loop(cs, ast, type, n);
    if (strcmp(type, "FunctionDef") == 0)
        return conv_funcdef(cs, ast, n);
    if (strcmp(type, "ClassDef") == 0)
        return conv_classdef(cs, ast, n);
    if (strcmp(type, "Try") == 0 || strcmp(type, "TryStar") == 0) {
        n->kind = NK_S_TRY;
        if (type[3] == 'S')
            n->flags |= NF_TRY_STAR;
        PyObject *fin = exec_ast_field(ast, "finalbody");
        bool has_fin = fin && PyList_GET_SIZE(fin) > 0;
        Py_XDECREF(fin);
        return exec_conv_list(cs, ast, "body", exec_conv_stmt, &n->v, &n->nv) == 0 &&
                               exec_conv_list(cs, ast, "handlers",
                                              (n->flags & NF_TRY_STAR) ? conv_star_handler
                                                                       : conv_handler,
                                              &n->w, &n->nw) == 0 &&
                               exec_conv_list(cs, ast, "orelse", exec_conv_stmt, &n->u, &n->nu) ==
                                       0 &&
                               (!has_fin || (n->c = conv_block(cs, ast, "finalbody")))
                       ? n
                       : NULL;
    }
    if (strcmp(type, "With") == 0) {
        n->kind = NK_S_WITH;
        return exec_conv_list(cs, ast, "items", conv_withitem, &n->v, &n->nv) == 0 &&
                               exec_conv_list(cs, ast, "body", exec_conv_stmt, &n->w, &n->nw) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "Match") == 0) {
        n->kind = NK_S_MATCH;
        return exec_conv_field(cs, ast, "subject", exec_conv_expr, &n->a) == 0 &&
                               exec_conv_list(cs, ast, "cases", conv_matchcase, &n->v, &n->nv) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "Import") == 0 || strcmp(type, "ImportFrom") == 0) {
        long level = 0;
        n->kind = type[6] == 'F' ? NK_S_IMPORTFROM : NK_S_IMPORT;
        if (n->kind == NK_S_IMPORTFROM &&
            ((!(n->obj = exec_field_str(cs, ast, "module")) && PyErr_Occurred()) ||
             exec_field_int(ast, "level", &level) < 0))
            return NULL;
        n->op = (int32_t) level;
        PyObject *names = exec_ast_field(ast, "names");
        if (!names)
            return NULL;
        n->nv = (uint32_t) PyList_GET_SIZE(names);
        n->v = exec_arena_alloc(cs->t, sizeof(*n->v) * (n->nv + 1));
        for (uint32_t i = 0; n->v && i < n->nv; i++) {
            PyObject *alias = PyList_GET_ITEM(names, i);
            struct node *a = exec_node_new(cs, alias, NK_ALIAS);
            if (!a || !(a->obj = exec_field_str(cs, alias, "name")) ||
                (!(a->obj2 = exec_field_str(cs, alias, "asname")) && PyErr_Occurred())) {
                n->v = NULL;
                break;
            }
            n->v[i] = a;
            /* the bound name: asname, the first dotted component for `import a.b`, the name */
            PyObject *bound = a->obj2;
            if (!bound && n->kind == NK_S_IMPORT) {
                const char *s = PyUnicode_AsUTF8(a->obj), *dot = strchr(s, '.');
                bound = exec_keep(cs, dot ? PyUnicode_FromStringAndSize(s, dot - s)
                                          : Py_NewRef(a->obj));
            } else if (!bound) {
                bound = a->obj;
            }
            if (!bound || (strcmp(PyUnicode_AsUTF8(bound), "*") != 0 &&
                           !(a->a = exec_name_target(cs, alias, bound))))
                n->v = NULL;
            if (!n->v)
                break;
        }
        Py_DECREF(names);
        return n->v ? n : NULL;
    }
    return NULL;
}

static struct node *
conv_stmt_simple(struct cstate *cs, PyObject *ast, const char *type, struct node *n)
{
    if (strcmp(type, "Expr") == 0) {
        n->kind = NK_S_EXPR;
        return exec_conv_field(cs, ast, "value", exec_conv_expr, &n->a) == 0 ? n : NULL;
    }
    if (strcmp(type, "Assign") == 0) {
        n->kind = NK_S_ASSIGN;
        return exec_conv_field(cs, ast, "value", exec_conv_expr, &n->a) == 0 &&
                               exec_conv_list(cs, ast, "targets", exec_conv_expr, &n->v, &n->nv) ==
                                       0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "AugAssign") == 0) {
        n->kind = NK_S_AUGASSIGN;
        /* the target is read and written: a Name in it is a binding */
        return (n->op = exec_field_binop(ast, "op")) >= 0 &&
                               exec_conv_field(cs, ast, "target", exec_conv_expr, &n->a) == 0 &&
                               exec_conv_field(cs, ast, "value", exec_conv_expr, &n->b) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "AnnAssign") == 0) {
        long simple;
        n->kind = NK_S_ANNASSIGN;
        if (exec_conv_field(cs, ast, "value", exec_conv_expr, &n->b) < 0 ||
            exec_conv_field(cs, ast, "target", exec_conv_expr, &n->a) < 0 ||
            exec_field_int(ast, "simple", &simple) < 0)
            return NULL;
        /* module and class bodies record the annotation (dataclasses, NamedTuple read it) */
        if (simple && n->a->kind == NK_E_NAME &&
            (cs->scope->kind == SCOPE_MODULE || cs->scope->kind == CODE_CLASS) &&
            exec_conv_field(cs, ast, "annotation", exec_conv_expr, &n->c) < 0)
            return NULL;
        return n;
    }
    if (strcmp(type, "Delete") == 0) {
        n->kind = NK_S_DELETE;
        return exec_conv_list(cs, ast, "targets", exec_conv_expr, &n->v, &n->nv) == 0 ? n : NULL;
    }
    if (strcmp(type, "Pass") == 0)
        return n;
    if (strcmp(type, "Break") == 0 || strcmp(type, "Continue") == 0) {
        if (!cs->scope->loops && cs->scope->in_star)
            return syntax_error("'break', 'continue' and 'return' cannot appear in an except* "
                                "block");
        if (!cs->scope->loops)
            return syntax_error(type[0] == 'B' ? "'break' outside loop"
                                               : "'continue' not properly in loop");
        n->kind = type[0] == 'B' ? NK_S_BREAK : NK_S_CONTINUE;
        return n;
    }
    if (strcmp(type, "Return") == 0) {
        if (cs->scope->kind != CODE_FUNCTION)
            return syntax_error("'return' outside function");
        if (cs->scope->in_star)
            return syntax_error("'break', 'continue' and 'return' cannot appear in an except* "
                                "block");
        n->kind = NK_S_RETURN;
        return exec_conv_field(cs, ast, "value", exec_conv_expr, &n->a) == 0 ? n : NULL;
    }
    if (strcmp(type, "Raise") == 0) {
        n->kind = NK_S_RAISE;
        return exec_conv_field(cs, ast, "exc", exec_conv_expr, &n->a) == 0 &&
                               exec_conv_field(cs, ast, "cause", exec_conv_expr, &n->b) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "Assert") == 0) {
        n->kind = NK_S_ASSERT;
        return exec_conv_field(cs, ast, "test", exec_conv_expr, &n->a) == 0 &&
                               exec_conv_field(cs, ast, "msg", exec_conv_expr, &n->b) == 0
                       ? n
                       : NULL;
    }
    if (strcmp(type, "Global") == 0 || strcmp(type, "Nonlocal") == 0)
        return conv_declaration(cs, ast, type[0] == 'G');
    return conv_stmt_compound(cs, ast, type, n);
}

struct node *
exec_conv_stmt(struct cstate *cs, PyObject *ast)
{
    if (exec_nesting_enter(cs) < 0)
        return NULL;
    const char *type = exec_ast_type(ast);
    struct node *n = exec_node_new(cs, ast, NK_S_PASS);
    if (n) {
        cs->lineno = n->lineno;
        cs->col = n->col;
    }
    struct node *ret = n ? conv_stmt_simple(cs, ast, type, n) : NULL;
    if (n && !ret && !PyErr_Occurred()) {
        /* async def, async for, async with: refused when reached */
        n->kind = NK_S_UNSUPPORTED;
        ret = (n->obj = exec_keep(cs, PyUnicode_FromString(exec_construct_name(type)))) ? n : NULL;
    }
    cs->depth--;
    return ret;
}
