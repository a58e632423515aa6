/* Executor internals shared by its files: the compact node tree (compile.c), the walk
 * (eval_expr.c, eval_stmt.c), the policy checks (policy.c), the builtins (builtins.c) and the
 * environment (env.c). Not a contract: only exec.h is. */
#ifndef DAEMON_EXECUTOR_EXEC_INTERNAL_H
#define DAEMON_EXECUTOR_EXEC_INTERNAL_H

#ifndef PY_SSIZE_T_CLEAN
#    define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>
/* after Python.h, which they need */
#include <frameobject.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

#include "exec.h"

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* How deep the compiled tree may nest: the walk recurses once per level, so this bounds the C
 * stack the walk of one statement can use. */
#define EXEC_MAX_NESTING 1000 /* CPython's own AST construction stops near there too */
/* The clock is read once per this many operations. */
#define EXEC_CLOCK_EVERY 1024

enum node_kind {
    /* statements */
    NK_S_EXPR,
    NK_S_ASSIGN,
    NK_S_AUGASSIGN,
    NK_S_ANNASSIGN,
    NK_S_DELETE,
    NK_S_IF,
    NK_S_FOR,
    NK_S_WHILE,
    NK_S_BREAK,
    NK_S_CONTINUE,
    NK_S_PASS,
    NK_S_IMPORT,
    NK_S_IMPORTFROM,
    NK_S_UNSUPPORTED,
    NK_S_FUNCDEF,  /* code, c = name target, v = decorators, w = defaults (op = positional ones) */
    NK_S_CLASSDEF, /* code, c = name target, v = bases, w = keywords, u = decorators */
    NK_S_RETURN,   /* a = value or NULL */
    NK_S_TRY,      /* v = body, w = handlers, u = orelse, c = NK_BLOCK finalbody or NULL */
    NK_S_RAISE,    /* a = exc or NULL, b = cause or NULL */
    NK_S_ASSERT,   /* a = test, b = msg or NULL */
    NK_S_WITH,     /* v = NK_WITHITEMs, w = body */
    NK_S_MATCH,    /* a = subject, v = NK_MATCHCASEs */
    /* expressions */
    NK_E_CONST,
    NK_E_NAME,
    NK_E_ATTR,
    NK_E_SUBSCRIPT,
    NK_E_SLICE,
    NK_E_UNARY,
    NK_E_BINOP,
    NK_E_BOOLOP,
    NK_E_COMPARE,
    NK_E_IFEXP,
    NK_E_LIST,
    NK_E_TUPLE,
    NK_E_SET,
    NK_E_DICT,
    NK_E_STARRED,
    NK_E_JOINEDSTR,
    NK_E_FORMATTED,
    NK_E_CALL,
    NK_E_UNSUPPORTED,
    NK_E_LAMBDA,    /* code, w = defaults (op = positional ones) */
    NK_E_NAMEDEXPR, /* a = target name, b = value */
    NK_E_COMP,      /* code, op = kind (COMP_*), a = elt/key, b = value, v = NK_COMPREHENSIONs */
    NK_E_YIELD,     /* a = value or NULL */
    NK_E_YIELDFROM, /* a = iterable */
    /* patterns (match statement) */
    NK_P_VALUE,     /* a = expr */
    NK_P_SINGLETON, /* obj */
    NK_P_SEQUENCE,  /* v = patterns */
    NK_P_MAPPING,   /* v = key exprs, w = patterns, a = rest target or NULL */
    NK_P_CLASS,     /* a = class expr, v = patterns, w = keyword patterns, obj = names */
    NK_P_STAR,      /* a = target or NULL */
    NK_P_AS,        /* a = pattern or NULL, b = target or NULL */
    NK_P_OR,        /* v = patterns */
    /* helpers that never stand alone */
    NK_BLOCK,         /* v = statements */
    NK_HANDLER,       /* a = type or NULL, b = name target or NULL, v = body */
    NK_WITHITEM,      /* a = context expression, b = target or NULL */
    NK_COMPREHENSION, /* a = target, b = iter, v = ifs */
    NK_MATCHCASE,     /* a = pattern, b = guard or NULL, v = body */
    NK_KEYWORD,       /* obj = name or NULL for **, a = value */
    NK_ALIAS,         /* obj = dotted name, obj2 = asname or NULL */
    _NK_MAX,
    _NK_INVALID = -1,
};

enum exec_binop {
    BOP_ADD,
    BOP_SUB,
    BOP_MULT,
    BOP_MATMULT,
    BOP_DIV,
    BOP_MOD,
    BOP_POW,
    BOP_LSHIFT,
    BOP_RSHIFT,
    BOP_BITOR,
    BOP_BITXOR,
    BOP_BITAND,
    BOP_FLOORDIV,
    _BOP_MAX,
    _BOP_INVALID = -1,
};

enum exec_unop {
    UOP_INVERT,
    UOP_NOT,
    UOP_UADD,
    UOP_USUB,
    _UOP_MAX,
    _UOP_INVALID = -1,
};

enum exec_cmpop {
    CMP_EQ,
    CMP_NOTEQ,
    CMP_LT,
    CMP_LTE,
    CMP_GT,
    CMP_GTE,
    CMP_IS,
    CMP_ISNOT,
    CMP_IN,
    CMP_NOTIN,
    _CMP_MAX,
    _CMP_INVALID = -1,
};

/* Node flags (node->flags). */
#define NF_HAS_STAR  0x1 /* a display or call holds *x or **x: take the slow path */
#define NF_STORE     0x2 /* a Name/Attribute/Subscript/Tuple/List in store context */
#define NF_DEL       0x4 /* ... in del context */
#define NF_FORBIDDEN 0x8 /* an attribute whose name the policy refuses (dunder, gi_frame) */
#define NF_BOOL_OR   0x10
#define NF_PRIVATE   0x20 /* an attribute named _x: refused on modules */
#define NF_TRY_STAR  0x40 /* try ... except* */

enum comp_kind { COMP_LIST, COMP_SET, COMP_DICT, COMP_GEN };

/* Where a name lives, resolved at compile time (scope.c), in node->op of a Name. */
enum name_scope {
    NAME_GLOBAL, /* the snippet's namespace, then the builtins */
    NAME_FAST,   /* frame slot */
    NAME_DEREF,  /* frame slot holding a cell (captured by, or from, another function) */
    NAME_CLASS,  /* class body namespace, then globals, then builtins */
};

enum code_kind { CODE_FUNCTION, CODE_LAMBDA, CODE_CLASS, CODE_COMP };

/* A function, lambda, class body or comprehension, compiled: its frame layout and parameters.
 * Parameters take the first slots: positional (posonly first), keyword-only, *args, **kwargs. */
struct exec_code {
    int kind;                        /* enum code_kind */
    PyObject *name, *qualname, *doc; /* borrowed from the tree */
    struct node **body;
    uint32_t nbody;
    struct node *expr; /* lambda body, or NULL */
    uint32_t nslots;
    PyObject *varnames; /* tuple: the name of each slot */
    uint32_t argcount, posonlycount, kwonlycount;
    int32_t vararg, kwarg; /* slot, or -1 */
    uint32_t *cells;       /* slots that hold cells this frame creates */
    uint32_t ncells;
    uint32_t *frees;        /* slots filled from the closure, in order */
    uint32_t *closure_from; /* ... and where each comes from in the defining frame */
    uint32_t nfree;
    int32_t class_cell; /* class body: slot of the __class__ cell, or -1 */
    int32_t super_slot; /* function: slot of the free __class__ cell for super(), or -1 */
    bool is_generator;
    uint32_t lineno;
};

/* One node of the compact tree. The meaning of a, b, c, v, w and obj is per kind (compile.c's
 * converters document each). PyObjects are owned by the tree (struct exec_tree.objs); nodes
 * hold borrowed pointers into it. */
struct node {
    uint16_t kind;                             /* enum node_kind */
    uint16_t flags;                            /* NF_* */
    int32_t op;                                /* operator, conversion, level: per kind */
    uint32_t lineno, col, end_lineno, end_col; /* col offsets are UTF-8 byte offsets */
    struct node *a, *b, *c;
    struct node **v;
    struct node **w;
    uint32_t nv, nw;
    struct node **u;
    uint32_t nu;
    uint32_t slot; /* Name: frame slot (NAME_FAST, NAME_DEREF) */
    int32_t *iv;   /* per-child ints (comparison operators) */
    PyObject *obj, *obj2;
    struct exec_code *code;
};

/* A compiled snippet: its nodes live in one arena, freed together. */
struct exec_tree {
    struct arena_chunk *chunks;
    struct exec_code *module; /* module-level code (no slots) */
    PyObject *objs;           /* list: every PyObject the nodes point to */
    struct node **body;
    uint32_t nbody;
    char *code; /* the source, for error messages */
    size_t code_len;
    size_t *line_off; /* byte offset of each line start, 1-based lines */
    uint32_t nlines;
};

/* Compiles code. On a syntax error returns NULL with a Python exception set (a SyntaxError
 * from the parser, or an InterpreterError for nesting beyond EXEC_MAX_NESTING). */
struct exec_tree *exec_tree_compile(const char *code);
struct exec_tree *exec_tree_free(struct exec_tree *tree);
/* The source text of a node (what ast.get_source_segment returns); malloc'd, NULL on OOM. */
char *exec_tree_segment(const struct exec_tree *tree, const struct node *n);

/* Outcomes that end a run whatever the snippet tries (it cannot catch them). */
enum exec_abort {
    ABORT_NONE,
    ABORT_ERROR, /* a budget (ops, while) or policy refusal that must not be caught */
    ABORT_TIMEOUT,
    ABORT_OUTPUT,
    ABORT_CANCEL, /* policy.cancel_flag was set */
    _ABORT_MAX,
    _ABORT_INVALID = -1,
};

/* Statement completion codes. */
enum exec_flow {
    FLOW_ERROR = -1,
    FLOW_NEXT = 0,
    FLOW_BREAK,
    FLOW_CONTINUE,
    FLOW_RETURN, /* the value is in r->retval */
};

/* A running function, class body or comprehension. */
struct exec_frame {
    PyObject **slots; /* nslots owned references (NULL: unbound) */
    PyObject *ns;     /* class body namespace, or NULL */
    const struct exec_code *code;
    struct exec_frame *back;
    PyObject *tree_ref; /* borrowed: the capsule owning the tree `code` lives in */
};

struct exec_run;
struct exec_generator;

/* Owned by the env's capsule; emptied by exec_env_free() so that objects outliving their
 * environment (functions, generators) fail cleanly instead of touching freed memory. */
struct env_handle {
    struct exec_env *env;
};

struct exec_env {
    struct exec_policy policy; /* imports point into import_names */
    char **import_names;
    PyObject *globals;         /* the snippet's namespace, kept across runs (sessions) */
    PyObject *builtins;        /* name -> object: what the snippet may use without importing */
    PyObject *frame_builtins;  /* the run's frame's (main_frame.c), made from builtins */
    PyObject *main_fn;         /* the trampoline a run's frame runs (main_frame.c) */
    struct exec_run *run;      /* the run in progress; NULL between runs */
    struct env_handle *handle; /* owned by capsule; see builtins.c */
    PyObject *capsule;         /* "pyfence.env": lets function objects find the env */
    struct exec_run *rs;       /* the run state, reused by each run: generators keep a pointer */
    struct exec_generator *live_gens; /* suspended generators, closed by exec_env_free */
    PyObject *formatter_type; /* string.Formatter's checking subclass for this env (guard.c) */
};

/* A function defined by the snippet (function.c). */
struct exec_function {
    PyObject_HEAD vectorcallfunc vectorcall;
    const struct exec_code *code; /* lives in the tree that tree_ref keeps alive */
    PyObject *tree_ref;
    PyObject *env_capsule;
    struct env_handle *handle; /* inside env_capsule */
    PyObject *defaults;        /* tuple or NULL */
    PyObject *kwdefaults;      /* dict or NULL */
    PyObject *closure;         /* tuple of cells or NULL */
    PyObject *name, *qualname, *doc, *module;
    PyObject *dict;
    PyObject *weakreflist;
};
extern PyTypeObject exec_function_type;
/* v may answer t's __new__ (function.c): a function, plain or as a static or class method.
 * -1 with InterpreterError set (r may be NULL). */
int exec_check_new_value(struct exec_run *r, PyTypeObject *t, PyObject *v);

/* State of one exec_env_run. */
struct exec_run {
    struct exec_env *env;
    const struct exec_tree *tree;
    PyObject *tree_ref; /* capsule owning tree, shared with the functions it defines */
    PyObject *globals;  /* borrowed from env */
    PyObject *builtins; /* borrowed from env */
    uint64_t ops;
    uint64_t ops_check_at; /* the next op count at which budget_slow() runs */
    uint64_t max_ops;
    uint64_t deadline_ns; /* CLOCK_MONOTONIC; 0 = none */
    uint64_t start_ns;
    int abort;                  /* enum exec_abort */
    PyObject *abort_msg;        /* the message of the refusal that set abort */
    uint32_t depth;             /* executor function calls in progress */
    struct exec_frame *frame;   /* NULL at module level */
    PyObject *retval;           /* FLOW_RETURN's value */
    PyObject *handling;         /* the exception an except block is handling (bare raise) */
    PyObject *outer_handled;    /* borrowed: sys.exc_info() outside the body's except blocks:
                                 * nothing at the run's start, a generator's resumer's */
    struct exec_generator *gen; /* the generator whose body is running, or NULL */
    char *stack_limit;          /* the C stack must not grow below this */
    exec_output_cb cb;
    void *userdata;
    char *logs;
    size_t logs_len, logs_cap;
    uint64_t out_bytes;
};

/* audit.c: the audit hook, refusing what library code must not do while a snippet runs */
int exec_audit_install(void);
void exec_audit_enter(struct exec_run *r);
void exec_audit_leave(void);
/* The run whose snippet code is the caller now (the walk, or C code it called: the Python frame
 * current is the one the snippet was entered from), or NULL (no run, or library code's frame). */
struct exec_run *exec_audit_snippet_run(void);
/* The outermost run in progress, whoever's code is current, or NULL. */
struct exec_run *exec_audit_running(void);
/* A snippet's run is in progress (the hook and str.format's check act only then). */
bool exec_audit_active(void);
void exec_audit_own_compile(bool on);
/* Around snippet code entered from C (a snippet function called, a snippet generator resumed):
 * the Python frame current then is a library's that called back, not the snippet's caller, and
 * lends the snippet none of its permissions. enter returns what leave restores; may_enter,
 * asked first, refuses (-1, InterpreterError set) where no snippet code may run. */
int exec_audit_snippet_may_enter(struct exec_run *r);
/* At a run's start and after each import statement: the first time dataclasses is found
 * loaded, records what its exec allowance requires to stay as it is (audit.c). */
void exec_audit_note_imports(void);
PyFrameObject *exec_audit_snippet_enter(void);
/* A snippet runs, and neither an import (modules loading set attributes everywhere) nor the
 * executor's own parse (CPython's _ast module readies its classes at the first) is in
 * progress: guard_store.c checks stores of modules' and classes' attributes then. */
bool exec_audit_stores_checked(void);
void exec_audit_snippet_leave(PyFrameObject *before);
/* frame is on the current stack, at or above the frame the snippet stands on: what library code
 * may see of the stack while a snippet runs (frame_view.c). */
bool exec_audit_frame_in_view(PyObject *frame);

/* frame_view.c: frame objects' f_back, f_globals, f_builtins and f_locals checked while a
 * snippet runs; installed once, before any run. */
int exec_frame_view_install(void);

/* main_frame.c: the Python frame a run stands on, whose globals say __main__ (library code
 * naming a class's module after its caller's: enum, namedtuple, typing). init compiles its
 * code once, before any run; call runs fn(arg) inside it (directly if it cannot be made). */
int exec_main_frame_init(void);
/* An environment's trampoline, whose globals hold builtins (its frame builtins). New
 * reference, or NULL with an exception set. */
PyObject *exec_main_frame_new(PyObject *builtins);
void exec_main_frame_call(PyObject *main_fn, PyObject *builtins, void (*fn)(void *arg), void *arg);
/* Runs fn(arg), snippet code entered from C (a call, a generator's resume): as it is when the
 * snippet's own frame is current (the walk called it, or C code the walk called), else on a
 * trampoline frame of env's, which the audit hook then takes for the snippet's: so code called
 * back by library Python code does not stand on that library's frame. What fn leaves raised
 * stays raised. 0, or -1 with an exception set (fn not run) when no frame could be made. */
int exec_main_frame_callback(struct exec_env *env, void (*fn)(void *arg), void *arg);
/* The frame's builtins for an environment whose snippet has snippet_builtins: CPython's own
 * objects among those, and an __import__ of the lazy imports of C code and the run's allowed
 * modules only, answering None. New reference, or NULL with an exception set. */
PyObject *exec_main_frame_builtins_new(PyObject *snippet_builtins);
/* Brings frame_builtins[name] in step with snippet_builtins[name] after an environment's
 * configuration added or removed it: the zygote makes the frame's builtins with the prebuilt
 * environment, so a worker does not take a reference to (and copy the page of) every builtin.
 * 0, or -1 with an exception set. */
int exec_main_frame_builtins_update(PyObject *frame_builtins, PyObject *snippet_builtins,
                                    const char *name);
/* v is that __import__ (refused as a value, like the real one). */
bool exec_main_frame_is_import(PyObject *v);
/* The executor's own import of module name (new reference, or NULL with an exception set),
 * whatever frame is current: PyImport_ImportModule would ask the run frame's __import__, which
 * loads only what C code called by the snippet may (a result's bytes need binascii). */
PyObject *exec_import_own(const char *name);

/* class_dunders.c: the dunders a snippet's class may define */
/* name is no dunder, or one of the allow-list's (name: any str). */
bool exec_class_dunder_allowed(PyObject *name);
/* name may be in an object's own state, answer a lookup from there and be written there by
 * library code (an instance dict, a __slots__ member, copy's state, a function's attributes):
 * a dunder a snippet's class may define, or one the walk lets the snippet set on an object
 * itself (__name__, __wrapped__, __notes__: a library writing it gives nothing the snippet's
 * own store could not). name: any str. */
bool exec_class_dunder_instance_allowed(PyObject *name);
/* Every key of a class namespace the snippet filled (a class body's, the dict handed to
 * type(name, bases, ns) or type.__new__) is a plain str and no refused dunder; a namespace
 * that is no dict is refused. clsname names the class in the message (NULL or no str: "?").
 * Returns 0, or -1 with InterpreterError set. */
int exec_check_class_namespace(struct exec_run *r, PyObject *ns, PyObject *clsname);
/* Replaces type.__new__ (once, before any library is imported) by a version checking the
 * namespaces library code makes classes from while a snippet runs. */
int exec_class_dunders_install(void);
/* fn(t), then the same for every subclass of t, found through type's own __subclasses__.
 * Returns 0, or -1 with an exception set. */
int exec_type_tree_apply(PyTypeObject *t, void (*fn)(PyTypeObject *));
/* pred holds for t or a subclass of it (or the subclasses could not be listed). */
bool exec_type_tree_any(PyTypeObject *t, bool (*pred)(PyTypeObject *));
/* Setting name (__eq__, __ne__, __hash__) on t, a metaclass or a base of one, is refused: -1
 * with InterpreterError set; 0 for any other store. */
int exec_check_class_identity_store(struct exec_run *r, PyTypeObject *t, PyObject *name);

/* dunder_read.c: dunders read but never set or deleted (__class__, __bases__, __mro__,
 * __members__, __init_subclass__). The read check (exec_check_attr_name) lets them pass. */
bool exec_is_read_only_dunder(PyObject *name);
/* The check for a name the snippet sets or deletes: exec_check_attr_name's, and none of those.
 * Returns 0, or -1 with InterpreterError set. */
int exec_check_attr_store_name(struct exec_run *r, PyObject *name);
/* A value read under such a name: __init_subclass__ only object's or bound to the snippet's
 * class. Returns 0, or -1 with InterpreterError set. */
int exec_check_read_only_dunder_value(struct exec_run *r, PyObject *name, PyObject *v);

/* new_class.c: types.new_class replaced, once, before any library is imported. A class it made
 * while a snippet runs, named after types, is recorded as its caller's (class_maker.c). */
int exec_new_class_install(void);

/* class_maker.c: which module's code made each class made while a snippet ran (outside
 * imports). install makes the record, once, before any library is imported. now answers the
 * module of the code running now (new reference: "__main__" for the snippet's frame), or NULL
 * without an exception (code of no module). note records now's answer as t's maker, remember
 * records maker (a str) over what is there; both return 0, or -1 with an exception set.
 * exec_class_maker answers t's maker (borrowed from the record, valid while t lives), or NULL:
 * not made while a snippet ran, or by code of no module. */
int exec_class_maker_install(void);
PyObject *exec_class_maker_now(void);
int exec_class_maker_note(PyTypeObject *t);
int exec_class_maker_remember(PyTypeObject *t, PyObject *maker);
const char *exec_class_maker(PyTypeObject *t);

/* class_getattr.c: no class's __getattr__ is asked for dunders a snippet's class may not
 * define (a library's only while a snippet runs) */
/* Gives t (a class made while a snippet runs) the checking __getattr__ dispatcher, if CPython
 * gave it its own, or the checking generic lookup, if a heap type has CPython's: a refused
 * dunder is answered by the class alone, not by the instance's own state. */
void exec_class_getattr_guard(PyTypeObject *t);
/* Gives t (any other class) the dispatcher that checks while a snippet runs (outside
 * imports), if CPython gave it its own. */
void exec_class_getattr_guard_library(PyTypeObject *t);
/* The same for t and its subclasses, after a store on t (CPython resets the slot then).
 * Return 0, or -1 with an exception set. */
int exec_class_getattr_guard_tree(PyTypeObject *t);
int exec_class_getattr_guard_library_tree(PyTypeObject *t);
/* Gives v, if a class, and v's class the checking dispatcher if they still have CPython's own:
 * a class type.__new__ has not returned yet, handed to a __set_name__ or __init_subclass__;
 * the checking generic lookup only to the snippet's own classes (__main__). */
void exec_class_getattr_guard_value(PyObject *v);
/* PyObject_GetAttr(obj, name) for the snippet's own read, after the walk's checks of name: a
 * library's __getattr__ answers it as in CPython. */
PyObject *exec_class_getattr_own_read(PyObject *obj, PyObject *name);
/* A store of name on a class makes CPython reset its and its subclasses' dispatcher. */
bool exec_class_getattr_store_resets(PyObject *name);
/* Reads CPython's dispatcher from a probe class and gives the classes made so far the library
 * one; once, before any library is imported. */
int exec_class_getattr_install(void);

/* scope.c: final_answer (and any tool the executor is given): no snippet binding replaces it */
bool exec_is_tool_name(PyObject *name);

/* policy.c */
extern PyObject *exec_InterpreterError;
extern PyObject *exec_FinalAnswerException;
int exec_policy_init_types(void);
bool exec_import_allowed(const struct exec_env *env, const char *name);
/* Raises InterpreterError with the allow-list, as smolagents words it. */
void exec_raise_import_refused(const struct exec_env *env, const char *name);
/* A dunder outside the allow-list, or an introspection attribute (gi_frame, f_globals, co_*):
 * refused by name on every route. */
bool exec_dunder_forbidden(const char *name);
/* The name of the module whose own namespace globals is (its __name__ names a module in
 * sys.modules whose dict is globals itself), borrowed from globals, or NULL, no error set.
 * Decided by identity: code exec'd with a namespace of its own (namedtuple's) may carry any
 * __name__. */
PyObject *exec_globals_module(PyObject *globals);
/* The same for the code frame f runs (NULL f: NULL). Code compiled from a string (file name
 * "<string>") is no module's own, whatever globals it was given: dataclasses runs the methods
 * it generates for a snippet class in the embedding's __main__ namespace, real builtins and
 * all, and they are not that module's code. */
PyObject *exec_frame_module(PyFrameObject *f);
/* exec_globals_module of a Python function's globals, as UTF-8 (borrowed), or NULL. */
const char *exec_function_module(PyObject *func);
/* name as a plain str (new reference): a str subclass could fake its hash and == */
PyObject *exec_exact_str(PyObject *name);
bool exec_is_allowed_dunder(const char *name);
/* The same for a str, decided on its characters (name: any object; false for no str). */
bool exec_is_allowed_dunder_str(PyObject *name);
/* For names the snippet computes (str, possibly with lone surrogates): a refused dunder sets
 * InterpreterError and returns -1. */
int exec_check_attr_name(struct exec_run *r, PyObject *name);
/* obj may have attribute name set or deleted: not a module, nor a class the snippet did not
 * make. Returns 0, or -1 with InterpreterError set. */
int exec_check_attr_owner(struct exec_run *r, PyObject *obj, PyObject *name, bool deleting);
/* Functions of module `name` may be held: it, the public module it implements (posix: os), or
 * a package it belongs to is allowed. */
bool exec_module_functions_allowed(const struct exec_env *env, const char *name);
/* name is a module whose code hands out its caller's frame's namespace (pandas' Scope): no
 * wildcard and no allowed package covers it, nor a subclass of its classes. */
bool exec_module_reads_caller_frames(const char *name);
/* policy_class.c: a class is refused when its module (type.__module__) is not allowed, a C
 * method when the class defining it is. Each returns 0, or -1 with InterpreterError set. */
int exec_check_class_slow(struct exec_run *r, PyTypeObject *t);
/* Refuses setting or deleting (what: "assignment to", "deletion of") attribute name of class t
 * unless the snippet made it (a heap type whose module is __main__): a library's class is read
 * by the library's own code, which trusts what it finds there. */
int exec_check_class_writable(struct exec_run *r, PyTypeObject *t, PyObject *name,
                              const char *what);
bool exec_class_is_snippets(PyTypeObject *t);
/* t's module as type.__module__ reads it, into buf; false when it names none that fits. */
bool exec_class_module(PyTypeObject *t, char *buf, size_t size);
int exec_check_c_method_slow(struct exec_run *r, PyTypeObject *owner, const char *name);
/* A slot wrapper (int.__add__, obj.__init__): __init__ only bound to an object of the
 * snippet's own class, or of a C class whose init fills the object's contents alone. self:
 * what an unbound one (a wrapper descriptor) is about to be called on, or NULL. */
int exec_check_slot_wrapper(struct exec_run *r, PyObject *v, PyObject *self);
/* A class made while a snippet runs (r: by the snippet, NULL: by library code) derives from
 * none of typing's internal classes (typing._Final's). -1 with InterpreterError set. */
int exec_check_class_bases(struct exec_run *r, PyObject *bases, PyObject *clsname);
/* typing._Final, the base of typing's internal classes, if typing is loaded (borrowed), else
 * NULL. */
PyTypeObject *exec_typing_final(void);
/* obj is one of typing's special forms or aliases (an instance of typing._Final's). */
static inline bool
exec_is_typing_object(PyObject *obj)
{
    PyTypeObject *final = exec_typing_final();
    return final && PyObject_TypeCheck(obj, final);
}
/* The __origin__ a typing alias holds in its own dict (new reference), or NULL, no error set. */
PyObject *exec_typing_origin(PyObject *v);
/* guard_typing.c, once before any run (it imports typing): no code sets a special form's
 * attributes through its class while a snippet runs. -1 with an exception set. */
int exec_guard_typing_install(void);
/* At a run's start: special form classes made since (typing_extensions') get the slot too. */
int exec_guard_typing_refresh(void);
/* guard_pprint.c, once before any run (it imports pprint): each of pprint's printers formats
 * only the objects pprint files it for, whoever files or calls it. -1 with an exception set. */
int exec_guard_pprint_install(void);
/* obj is one of typing's aliases (typing._BaseGenericAlias's: List[int], Optional[int]), which
 * pass reads and stores of plain names on to their __origin__. */
bool exec_is_typing_alias(PyObject *obj);
/* A C function bound to an object that is no module (obj.method read as a value). */
int exec_check_bound_c_method(struct exec_run *r, PyObject *func);
/* A builtin type (str, list, dict): every profile allows its class and methods. */
static inline bool
exec_class_is_builtin(PyTypeObject *t)
{
    return !(t->tp_flags & Py_TPFLAGS_HEAPTYPE) && !strchr(t->tp_name, '.');
}
static inline int
exec_check_class(struct exec_run *r, PyTypeObject *t)
{
    return exec_class_is_builtin(t) ? 0 : exec_check_class_slow(r, t);
}
static inline int
exec_check_c_method(struct exec_run *r, PyTypeObject *owner, const char *name)
{
    return exec_class_is_builtin(owner) ? 0 : exec_check_c_method_slow(r, owner, name);
}
/* "_x" that is not an allowed dunder: a module's private name. */
bool exec_str_is_private(PyObject *name);
/* Refuses values the snippet must never hold: modules outside the allow-list, functions of
 * such modules (bound methods by their function), frames, code objects, tracebacks. Returns 0, or
 * -1 with InterpreterError set. */
int exec_check_value_slow(struct exec_run *r, PyObject *v);
/* Values the checks never refuse, decided by exact type. */
static inline bool
exec_value_is_plain(PyObject *v)
{
    PyTypeObject *t = Py_TYPE(v);
    return t == &PyLong_Type || t == &PyUnicode_Type || t == &PyFloat_Type || t == &PyList_Type ||
           t == &PyTuple_Type || t == &PyBool_Type || v == Py_None;
}

static inline int
exec_check_value(struct exec_run *r, PyObject *v)
{
    if (likely(exec_value_is_plain(v)))
        return 0;
    return exec_check_value_slow(r, v);
}
/* Attribute read/write/delete with the dunder and module checks (used by the . operator and by
 * the getattr family of builtins). */
PyObject *exec_getattr(struct exec_run *r, PyObject *obj, PyObject *name);
PyObject *exec_getattr_result(struct exec_run *r, PyObject *obj, PyObject *name, PyObject *v);
int exec_setattr(struct exec_run *r, PyObject *obj, PyObject *name, PyObject *value);
/* guard.c: replaces operator.attrgetter/methodcaller and string.Formatter by checking
 * versions bound to r's environment; steals v. */
PyObject *exec_guard_getters(struct exec_run *r, PyObject *v);
/* Once, before any run: str.format and format_map check their fields for every caller while a
 * snippet runs (library code included). Returns -1 with an exception set. */
int exec_guard_str_format_install(void);
/* guard_type.c, once before any run: type(x) called with the snippet's frame current (by C code
 * the snippet called: map(type, objs)) has its answer checked as a value. -1 with an
 * exception set. */
int exec_guard_type_install(void);
/* guard_builtins.c, once before any run: the real __import__, getattr, setattr, delattr, vars
 * and open refuse a call made with the snippet's frame current (by C code the snippet called,
 * holding one some route leaked). -1 with an exception set. */
int exec_guard_builtins_install(void);
/* The name of the real builtin f is, if it is one of those (its method table is ours), else
 * NULL. */
const char *exec_guard_builtins_name(PyObject *f);
/* guard_function.c, once before any run: while a snippet runs (outside imports) no code makes a
 * function from a code object (function.__new__ has no audit event). -1 with an exception
 * set. */
int exec_guard_function_install(void);
/* guard_store.c, once before any library is imported: while a snippet runs, setting or deleting
 * an attribute of a module or of a library's class is allowed only to that module's (package's)
 * own code, whoever makes the store; copy never rebuilds an object as a module. -1 with an
 * exception set. */
int exec_guard_store_install(void);
/* guard_copy.c, from exec_guard_store_install: copy._reconstruct and copy._keep_alive replaced
 * by checking versions. -1 with an exception set. */
int exec_guard_copy_install(void);
/* The unchecked attrgetter, methodcaller or Formatter class, update_wrapper or wraps function:
 * refused as values (wraps(f).func is the real update_wrapper). */
bool exec_is_unguarded_class(PyObject *v);
bool exec_is_unguarded_function(PyObject *v);
/* Raises InterpreterError (fmt is PyUnicode_FromFormat's: %U, %R...). Unless abort is
 * ABORT_NONE, also ends the run: the snippet cannot catch it (r may be NULL then). */
PyObject *exec_fail(struct exec_run *r, int abort, const char *fmt, ...);
/* Budget checks beyond the fast counter compare: clock, max_ops, pending abort. */
int exec_budget_slow(struct exec_run *r);
static inline int
exec_tick(struct exec_run *r)
{
    if (unlikely(++r->ops >= r->ops_check_at))
        return exec_budget_slow(r);
    return 0;
}
uint64_t exec_now_ns(void);
/* The lowest address the walk may use on the current (main) stack. */
char *exec_stack_limit_here(void);

/* eval_expr.c */
PyObject *exec_eval(struct exec_run *r, const struct node *n);
PyObject *exec_call(struct exec_run *r, const struct node *n);
/* No keyword of a call is a dunder a snippet's class may not define (eval_call.c). Returns 0,
 * or -1 with InterpreterError set. */
int exec_check_keyword_names(struct exec_run *r, PyObject *kwargs);
PyObject *exec_eval_attr(struct exec_run *r, const struct node *n);
PyObject *exec_binop(int op, PyObject *a, PyObject *b, bool inplace);

/* eval_stmt.c */
int exec_stmt(struct exec_run *r, const struct node *s);
int exec_block(struct exec_run *r, struct node *const *stmts, uint32_t n);
int exec_assign(struct exec_run *r, const struct node *target, PyObject *value);

/* function.c, eval_def.c */
int exec_function_init_type(void);
PyObject *exec_function_new(struct exec_run *r, const struct node *n);
PyObject *exec_closure_new(struct exec_run *r, const struct exec_code *c);
int exec_frame_cells(const struct exec_code *c, PyObject **slots, PyObject *closure);
void exec_slots_free(PyObject **slots, uint32_t n);
int exec_enter_call(struct exec_run *r);
PyObject *exec_run_frame(struct exec_run *r, struct exec_frame *frame);
int exec_funcdef(struct exec_run *r, const struct node *s);
int exec_classdef(struct exec_run *r, const struct node *s);
PyObject *exec_builtin_super(PyObject *self, PyObject *args, PyObject *kwargs);
/* http.c */
PyObject *exec_builtin_http_request(PyObject *self, PyObject *args, PyObject *kwargs);
/* The run in progress of the environment whose handle capsule self is; NULL with an exception
 * when none is (builtins.c). */
struct exec_run *exec_run_of(PyObject *self);

/* eval_try.c */
int exec_try(struct exec_run *r, const struct node *s);
/* The pending exception gets context as its __context__ unless it has one. */
void exec_chain_context(PyObject *context);
/* An except block has ended: what native code sees as handled (sys.exc_info()) goes back to
 * the enclosing block's exception, or outside every block to what the body started with: not
 * what it was when the block began, which in a generator was its resumer's at that time. */
void exec_handled_leave(struct exec_run *r, PyObject *enclosing);
/* except* handlers (eval_trystar.c): the body failed with the pending exception. */
int exec_handle_star(struct exec_run *r, const struct node *s);
int exec_raise(struct exec_run *r, const struct node *s);
int exec_with(struct exec_run *r, const struct node *s);
int exec_assert(struct exec_run *r, const struct node *s);

/* eval_comp.c, match.c */
PyObject *exec_eval_comp(struct exec_run *r, const struct node *n);
int exec_match(struct exec_run *r, const struct node *s);

/* generator.c: takes ownership of slots (heap, code->nslots) in every case */
PyObject *exec_generator_new(struct exec_run *r, const struct exec_code *c, const struct node *comp,
                             PyObject **slots, PyObject *tree_ref, PyObject *name,
                             PyObject *qualname);
PyObject *exec_eval_yield(struct exec_run *r, const struct node *n);
/* Suspends the running generator with value (stolen); returns what it is resumed with. */
PyObject *exec_gen_yield(struct exec_run *r, PyObject *value);
int exec_generator_init_type(void);
/* Closes the environment's suspended generators (exec_env_free). */
void exec_generators_close_all(struct exec_env *env);
int exec_comp_body(struct exec_run *r, const struct node *n, PyObject *acc);

static inline PyObject *
exec_cur_tree(const struct exec_run *r)
{
    return r->frame ? r->frame->tree_ref : r->tree_ref;
}

/* names (eval_stmt.c) */
PyObject *exec_name_load(struct exec_run *r, const struct node *n, bool for_call);
int exec_name_store(struct exec_run *r, const struct node *n, PyObject *v);
int exec_name_delete(struct exec_run *r, const struct node *n);

/* run.c */
cJSON *exec_env_value_json(struct exec_env *env, PyObject *v);

/* builtins.c */
struct exec_env *exec_handle_env(PyObject *capsule);
PyObject *exec_builtins_new(struct exec_env *env);
void exec_builtins_detach(struct exec_env *env);
/* Applies the policy's builtins_add and builtins_remove to env's namespace. */
int exec_builtins_adjust(struct exec_env *env, const struct exec_policy *p, struct pf_error **err);
/* Appends printed text to the logs, streams it to the callback and enforces
 * max_output_bytes. Returns 0, or -1 with an exception set. */
int exec_output(struct exec_run *r, const char *data, size_t len);

/* stdio.c: sys.stdin, sys.stdout and sys.stderr replaced by streams that write to the running
 * snippet's logs (to CPython's own streams outside runs) and have nothing else to hand out.
 * Once, before any library is imported. */
int exec_stdio_install(void);

#endif
