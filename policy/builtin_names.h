/* The builtins a snippet has by default and those a profile may add or remove: one list for
 * the profile loader (which refuses a name outside it, naming the file and field) and for the
 * executor (which builds the namespace from it). Besides these, snippets get every builtin
 * exception class (found by type, not listed here). */
#ifndef POLICY_BUILTIN_NAMES_H
#define POLICY_BUILTIN_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* CPython builtins handed to snippets as they are. */
#define POLICY_SAFE_BUILTINS                                                                       \
    "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr",          \
            "complex", "dict", "divmod", "enumerate", "filter", "float", "format", "frozenset",    \
            "hash", "hex", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", \
            "min", "next", "object", "oct", "ord", "pow", "range", "repr", "reversed", "round",    \
            "set", "slice", "sorted", "str", "sum", "tuple", "type", "zip", "NotImplemented",      \
            "Ellipsis", "property", "staticmethod", "classmethod"

/* The executor's own versions of CPython builtins, bound to the snippet's environment. */
#define POLICY_ENV_BUILTINS \
    "print", "final_answer", "getattr", "hasattr", "setattr", "delattr", "super", "http_request"

/* Off by default; a profile may add them (builtins_add). Nothing else can be added: eval, exec,
 * compile, open, globals, vars, breakpoint and the like would run code or reach state outside
 * the executor's checks. */
#define POLICY_ADDABLE_BUILTINS "id", "memoryview"

/* Whether name is one of the n names of list. */
static inline bool
policy_builtin_listed(const char *const *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], name) == 0)
            return true;
    return false;
}

#endif
