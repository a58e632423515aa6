/* The zygote's memory, laid out for forking. Why: zygote_mem.h. */
#include "zygote_mem.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* malloc's alignment: a cJSON node holds doubles and pointers. */
#define ARENA_ALIGN 16u

static struct {
    unsigned char *base; /* NULL: no arena (not made yet, or forgotten in a worker) */
    uintptr_t lo, hi;    /* the mapping's range, kept after a worker forgets it */
    size_t size, top, live, high, fallbacks;
} arena;

static size_t
round_to_pages(size_t size)
{
    size_t page = (size_t) sysconf(_SC_PAGESIZE);
    return (size + page - 1) / page * page;
}

void *
zygote_mem_private_alloc(size_t size, struct pf_error **err)
{
    size = round_to_pages(size);
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        pf_error_set_errno(err, PF_E_INTERNAL, errno, "zygote scratch memory: mmap of %zu bytes",
                           size);
        return NULL;
    }
    if (madvise(p, size, MADV_DONTFORK) < 0) {
        int saved = errno;
        munmap(p, size);
        pf_error_set_errno(err, PF_E_INTERNAL, saved, "zygote scratch memory: MADV_DONTFORK");
        return NULL;
    }
    return p;
}

void
zygote_mem_private_free(void *p, size_t size)
{
    if (p)
        munmap(p, round_to_pages(size));
}

static bool
in_arena(const void *p)
{
    return (uintptr_t) p >= arena.lo && (uintptr_t) p < arena.hi;
}

static void *
arena_malloc(size_t size)
{
    size_t need = (size + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    if (!arena.base || need < size || need > arena.size - arena.top) {
        if (arena.base)
            arena.fallbacks++;
        return malloc(size);
    }
    void *p = arena.base + arena.top;
    arena.top += need;
    arena.live++;
    if (arena.top > arena.high)
        arena.high = arena.top;
    return p;
}

static void
arena_free(void *p)
{
    if (!in_arena(p)) {
        free(p);
        return;
    }
    /* In a worker the range is not mapped: nothing there to give back. */
    if (!arena.base)
        return;
    if (--arena.live == 0)
        arena.top = 0;
}

int
zygote_mem_arena_init(size_t size, struct pf_error **err)
{
    if (arena.base)
        return pf_error_set(err, PF_E_INTERNAL, "the zygote's cJSON arena is already set up");
    void *p = zygote_mem_private_alloc(size, err);
    if (!p)
        return -1;
    arena.base = p;
    arena.size = round_to_pages(size);
    arena.lo = (uintptr_t) p;
    arena.hi = arena.lo + arena.size;
    arena.top = arena.live = arena.high = arena.fallbacks = 0;
    cJSON_InitHooks(&(cJSON_Hooks){.malloc_fn = arena_malloc, .free_fn = arena_free});
    return 0;
}

void
zygote_mem_arena_forget(void)
{
    arena.base = NULL;
    arena.size = arena.top = arena.live = 0;
}

void
zygote_mem_arena_release(void)
{
    /* Blocks still live would dangle, and cJSON must keep routing their frees here: then the
     * arena stays as it is (the process is on its way out). */
    if (!arena.base || arena.live != 0)
        return;
    cJSON_InitHooks(NULL);
    zygote_mem_private_free(arena.base, arena.size);
    memset(&arena, 0, sizeof(arena));
}

void
zygote_mem_arena_get_stats(struct zygote_mem_arena_stats *ret)
{
    *ret = (struct zygote_mem_arena_stats){.size = arena.base ? arena.size : 0,
                                           .live = arena.live,
                                           .high = arena.high,
                                           .fallbacks = arena.fallbacks};
}

/* malloc's top chunk starts here: the heap's end minus the top chunk's size. */
static uintptr_t
heap_top_start(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (uintptr_t) sbrk(0) - mi.keepcost;
}

size_t
zygote_mem_settle_heap(size_t max_bytes)
{
    /* Not glibc's allocator (a sanitizer's): nothing we know how to settle. */
    if (mallinfo2().arena == 0)
        return 0;
    malloc_trim(0);
    size_t pinned = 0;
    /* Largest first, so that big free chunks go in few pieces; then every small size class,
     * each of which has its own cache of freed chunks. */
    for (size_t size = 64 * 1024;
         size >= 16 && pinned<max_bytes; size = size> 1024 ? size / 2 : size - 16) {
        while (pinned < max_bytes) {
            uintptr_t top = heap_top_start();
            void *p = malloc(size);
            if (!p)
                return pinned;
            if ((uintptr_t) p >= top) {
                free(p);
                break;
            }
            /* Deliberately never freed: out of use for the zygote's life. */
            pinned += size;
        }
    }
    return pinned;
}

/* Whether a /proc/self/maps line is a file-backed code mapping; its start in *ret_lo. */
static bool
is_code_mapping(const char *line, unsigned long *ret_lo)
{
    unsigned long lo, hi;
    char perms[5];
    if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3 || strcmp(perms, "r-xp") != 0)
        return false;
    /* A path, not [vdso] or an anonymous executable mapping. */
    if (!strchr(line, '/'))
        return false;
    *ret_lo = lo;
    return true;
}

size_t
zygote_mem_share_code(void)
{
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps)
        return 0;
    int mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
    size_t n = 0;
    char line[4096 + 128]; /* PATH_MAX and the fields before it */
    while (mem >= 0 && fgets(line, sizeof(line), maps)) {
        unsigned long lo;
        unsigned char b;
        if (is_code_mapping(line, &lo) && pread(mem, &b, 1, (off_t) lo) == 1 &&
            pwrite(mem, &b, 1, (off_t) lo) == 1)
            n++;
    }
    if (mem >= 0)
        close(mem);
    fclose(maps);
    return n;
}
