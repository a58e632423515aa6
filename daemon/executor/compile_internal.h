/* Shared by the compiler's files: compile.c (infrastructure, expressions), compile_stmt.c
 * (statements, patterns) and scope.c (where each name lives). */
#ifndef DAEMON_EXECUTOR_COMPILE_INTERNAL_H
#define DAEMON_EXECUTOR_COMPILE_INTERNAL_H

#include "exec_internal.h"

#define SCOPE_MODULE (-1)

/* Symbol flags, per name per scope. */
#define SYM_LOCAL    0x01 /* bound here (assignment, def, import, for, with, except, match) */
#define SYM_PARAM    0x02
#define SYM_GLOBAL   0x04 /* `global` */
#define SYM_NONLOCAL 0x08 /* `nonlocal` */
#define SYM_CELL     0x10 /* bound here and captured by an inner function */
#define SYM_FREE     0x20 /* a variable of an enclosing function, reached through a cell */

struct cscope {
    struct cscope *parent, *next_all;
    int kind;           /* enum code_kind, or SCOPE_MODULE */
    PyObject *symbols;  /* name -> int flags */
    PyObject *slots;    /* name -> slot */
    PyObject *params;   /* list of parameter names, in slot order */
    struct node **uses; /* Name nodes to resolve */
    uint32_t nuses, capuses;
    struct exec_code *code;
    uint32_t loops; /* loops around the statement being converted, for break/continue */
    bool in_star;   /* inside an except* handler */
    uint32_t decl_line, decl_col; /* of a nonlocal declaration, for its error */
    bool uses_super;
};

struct cstate {
    struct exec_tree *t;
    uint32_t depth;
    struct cscope *scope; /* the scope being converted */
    struct cscope *all;   /* every scope, for resolution */
    uint32_t lineno, col; /* of the statement being converted, for errors */
    PyObject *class_name; /* innermost enclosing class, for __private name mangling */
};

typedef struct node *(*conv_fn)(struct cstate *cs, PyObject *ast);

void *exec_arena_alloc(struct exec_tree *t, size_t size);
PyObject *exec_keep(struct cstate *cs, PyObject *obj);
const char *exec_ast_type(PyObject *ast);
/* "async def" for AsyncFunctionDef: what a refusal names (the AST type name otherwise). */
const char *exec_construct_name(const char *ast_type);
/* ast.<name> (a new reference), looked up by an interned name made once per process. */
PyObject *exec_ast_field(PyObject *ast, const char *name);
/* A borrowed interned name, made once per process (a worker making it afresh would write the
 * shared interned table and the name's page); NULL with an exception set. */
PyObject *exec_interned_name(const char *s);
int exec_field_int(PyObject *ast, const char *name, long *ret);
PyObject *exec_field_str(struct cstate *cs, PyObject *ast, const char *name);
struct node *exec_node_new(struct cstate *cs, PyObject *ast, enum node_kind kind);
int exec_conv_field(struct cstate *cs, PyObject *ast, const char *name, conv_fn fn,
                    struct node **ret);
int exec_conv_list(struct cstate *cs, PyObject *ast, const char *name, conv_fn fn,
                   struct node ***ret, uint32_t *ret_n);
struct node *exec_conv_expr(struct cstate *cs, PyObject *ast);
struct node *exec_conv_stmt(struct cstate *cs, PyObject *ast);
int exec_nesting_enter(struct cstate *cs);
/* __x inside class C becomes _C__x (CPython's private name mangling); returns a kept name. */
PyObject *exec_mangle(struct cstate *cs, PyObject *name);
/* A Name node in store context bound in the current scope (def, class, import, except...). */
struct node *exec_name_target(struct cstate *cs, PyObject *ast, PyObject *name);
/* Defaults of an ast.arguments into n->w (n->op = how many are positional), in the current
 * scope; then, inside the function's scope, its parameters. Shared by def and lambda. */
int exec_conv_defaults(struct cstate *cs, PyObject *args, struct node *n);
int exec_bind_params(struct cstate *cs, PyObject *args, struct exec_code *code);
int exec_field_binop(PyObject *ast, const char *field);
int exec_keywords_prepare(struct cstate *cs, struct node *n, struct node **kw, uint32_t nkw);
/* Converts a function/lambda/class/comprehension body in a new scope. */
struct exec_code *exec_code_new(struct cstate *cs, int kind, PyObject *name, uint32_t lineno);

/* scope.c */
struct cscope *exec_scope_push(struct cstate *cs, int kind);
void exec_scope_pop(struct cstate *cs);
int exec_scope_add(struct cscope *s, PyObject *name, int flags);
int exec_scope_use(struct cstate *cs, struct cscope *s, struct node *name_node);
/* After the whole tree is converted: resolves every Name, lays out every frame. */
int exec_scope_resolve(struct cstate *cs);
void exec_scope_free_all(struct cstate *cs);

#endif
