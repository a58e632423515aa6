/* Scope-bound ownership (systemd's cleanup-fundamental.h, crun's cleanup_*): every type we hold
 * has a _cleanup_ helper, and ownership is handed out explicitly with TAKE_PTR / TAKE_FD. */
#ifndef PF_CLEANUP_H
#define PF_CLEANUP_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func) \
    static inline void func##p(type *p)         \
    {                                           \
        if (*p)                                 \
            func(*p);                           \
    }

static inline void
pf_freep(void *p)
{
    free(*(void **) p);
}
#define _cleanup_free_ _cleanup_(pf_freep)

/* Closes an fd, keeping errno. Returns -1 so `fd = pf_close(fd);` always works. */
static inline int
pf_close(int fd)
{
    if (fd >= 0) {
        int saved = errno;
        close(fd);
        errno = saved;
    }
    return -1;
}
static inline void
pf_closep(int *fd)
{
    pf_close(*fd);
}
#define _cleanup_close_ _cleanup_(pf_closep)

/* Takes a pointer (or fd) out of a cleanup variable, leaving NULL (or -1) behind. */
#define TAKE_PTR(p)                 \
    ({                              \
        __typeof__(p) _taken = (p); \
        (p) = NULL;                 \
        _taken;                     \
    })
#define TAKE_FD(fd)        \
    ({                     \
        int _taken = (fd); \
        (fd) = -1;         \
        _taken;            \
    })

#define pf_container_of(ptr, type, member) ((type *) ((char *) (ptr) -offsetof(type, member)))
#define PF_ELEMENTSOF(a)                   (sizeof(a) / sizeof((a)[0]))

#endif
