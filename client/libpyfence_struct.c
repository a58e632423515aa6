/* libpyfence: the structs of pyfence.h a caller allocates, read and written at the size the
 * caller compiled them with (libpyfence_internal.h), and their _init_size functions. */
#include <stdlib.h>
#include <string.h>

#include "libpyfence_internal.h"
#include "pf_cleanup.h"
#include "pyfence.h"

/* The largest size a caller's struct may claim: more is an uninitialised one, not a newer
 * header's, and reading that far could run off its memory. */
#define STRUCT_MAX_SIZE 4096

/* struct_out() and libpyfence_struct_in() find the size at the start of every struct. */
_Static_assert(offsetof(struct pyfence_exec_options, size) == 0 &&
                       offsetof(struct pyfence_session_options, size) == 0 &&
                       offsetof(struct pyfence_result, size) == 0 &&
                       offsetof(struct pyfence_server_info, size) == 0,
               "a caller-allocated struct begins with its size");

/* The strings a struct pyfence_result owns. */
static const size_t result_strings[] = {
        offsetof(struct pyfence_result, outcome),
        offsetof(struct pyfence_result, output_json),
        offsetof(struct pyfence_result, output_repr),
        offsetof(struct pyfence_result, logs),
        offsetof(struct pyfence_result, error.code),
        offsetof(struct pyfence_result, error.type),
        offsetof(struct pyfence_result, error.message),
        offsetof(struct pyfence_result, error.source),
        offsetof(struct pyfence_result, reply_json),
};

static const size_t server_info_strings[] = {offsetof(struct pyfence_server_info, reply_json)};

int
libpyfence_struct_check(size_t size, const char *name, struct pyfence_error *err)
{
    if (size >= sizeof(size_t) && size <= STRUCT_MAX_SIZE)
        return 0;
    return libpyfence_fail_named(err, PYFENCE_E_BAD_REQUEST, NULL,
                                 "%s.size is %zu%s: initialise it with %s_init()", name, size,
                                 size == 0               ? ""
                                 : size < sizeof(size_t) ? ", too small to hold even the size"
                                                         : ", more than any pyfence.h makes it",
                                 name);
}

int
libpyfence_struct_in(void *dst, size_t dst_size, const void *src, const char *name,
                     struct pyfence_error *err)
{
    if (!src)
        return 0;
    size_t size;
    memcpy(&size, src, sizeof(size));
    int r = libpyfence_struct_check(size, name, err);
    if (r < 0)
        return r;
    for (size_t i = dst_size; i < size; i++)
        if (((const unsigned char *) src)[i] != 0)
            return libpyfence_fail_named(
                    err, PYFENCE_E_BAD_REQUEST, NULL,
                    "%s: byte %zu is set, but this libpyfence (%s) knows only its first %zu "
                    "bytes: the program was built against a newer pyfence.h and sets an option "
                    "this library does not know",
                    name, i, PYFENCE_VERSION_STRING, dst_size);
    memcpy(dst, src, size < dst_size ? size : dst_size);
    return 0;
}

/* Writes src (src_size bytes, this library's struct) to the caller's struct at dst, of
 * dst_size bytes, and no further: its size becomes dst_size, and the bytes past src_size,
 * fields of a newer pyfence.h, are zeroed ("unset"). */
static void
struct_out(void *dst, size_t dst_size, const void *src, size_t src_size)
{
    size_t n = dst_size < src_size ? dst_size : src_size;
    memcpy(dst, src, n);
    memcpy(dst, &dst_size, n < sizeof(size_t) ? n : sizeof(size_t));
    memset((char *) dst + n, 0, dst_size - n);
}

/* Frees the strings of s (at offsets) that lie whole within its first `size` bytes, or with
 * `outside`, those that do not. */
static void
free_strings(void *s, const size_t *offsets, size_t n, size_t size, bool outside)
{
    for (size_t i = 0; i < n; i++)
        if ((offsets[i] + sizeof(char *) <= size) != outside)
            free(*(char **) ((char *) s + offsets[i]));
}

void
pyfence_exec_options_init_size(struct pyfence_exec_options *opts, size_t size)
{
    static const struct pyfence_exec_options defaults = {.stream = true};
    struct_out(opts, size, &defaults, sizeof(defaults));
}

void
pyfence_session_options_init_size(struct pyfence_session_options *opts, size_t size)
{
    static const struct pyfence_session_options defaults = {0};
    struct_out(opts, size, &defaults, sizeof(defaults));
}

void
pyfence_server_info_init_size(struct pyfence_server_info *info, size_t size)
{
    static const struct pyfence_server_info defaults = {0};
    struct_out(info, size, &defaults, sizeof(defaults));
}

void
pyfence_result_init_size(struct pyfence_result *result, size_t size)
{
    static const struct pyfence_result defaults = {0};
    struct_out(result, size, &defaults, sizeof(defaults));
}

void
pyfence_result_finish(struct pyfence_result *result)
{
    size_t size = result->size;
    /* Not initialised: whatever it holds was not written by this library. */
    if (libpyfence_struct_check(size, "pyfence_result", NULL) < 0)
        return;
    free_strings(result, result_strings, PF_ELEMENTSOF(result_strings), size, false);
    pyfence_result_init_size(result, size);
}

void
libpyfence_result_set(struct pyfence_result *result, struct pyfence_result *full)
{
    size_t size = result->size;
    pyfence_result_finish(result);
    struct_out(result, size, full, sizeof(*full));
    free_strings(full, result_strings, PF_ELEMENTSOF(result_strings), size, true);
}

void
libpyfence_server_info_set(struct pyfence_server_info *info, struct pyfence_server_info *full)
{
    size_t size = info->size;
    struct_out(info, size, full, sizeof(*full));
    free_strings(full, server_info_strings, PF_ELEMENTSOF(server_info_strings), size, true);
}
