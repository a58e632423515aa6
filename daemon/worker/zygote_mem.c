/* The zygote's memory, laid out for forking. Why: zygote_mem.h. */
#include "zygote_mem.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
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

/* A read-only, file-backed, private mapping of this process (a binary's code or constants):
 * [lo, hi). */
struct code_map {
    uintptr_t lo, hi;
};

/* Up to max read-only file mappings from /proc/self/maps (r-xp or r--p with a path: not
 * [vdso], not anonymous memory). Returns how many, -1 when maps cannot be read. */
static ssize_t
read_code_maps(struct code_map *maps, size_t max)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return -1;
    size_t n = 0;
    char line[4096 + 128]; /* PATH_MAX and the fields before it */
    while (n < max && fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 &&
            (strcmp(perms, "r-xp") == 0 || strcmp(perms, "r--p") == 0) && strchr(line, '/'))
            maps[n++] = (struct code_map){.lo = lo, .hi = hi};
    }
    fclose(f);
    return (ssize_t) n;
}

static size_t
page_size(void)
{
    return (size_t) sysconf(_SC_PAGESIZE);
}

static size_t
map_pages(const struct code_map *m)
{
    return (m->hi - m->lo) / page_size();
}

static bool
bit_get(const unsigned char *bits, size_t i)
{
    return bits[i / 8] & (1u << (i % 8));
}

/* Counts the pages of m that have a page-table entry in this process, read from its
 * /proc/self/pagemap (pagemap_fd): bit 63 of each page's entry; with bits, also sets one bit
 * for each of them, from offset on; with written, counts there those that are no longer the
 * file's (bit 61 clear: a private copy). -1 on a read error. */
static ssize_t
mark_present_pages(int pagemap_fd, const struct code_map *m, unsigned char *bits, size_t offset,
                   size_t *written)
{
    uint64_t entries[512];
    size_t pages = map_pages(m), done = 0, present = 0;
    while (done < pages) {
        size_t want = pages - done < 512 ? pages - done : 512;
        off_t at = (off_t) ((m->lo / page_size() + done) * sizeof(uint64_t));
        ssize_t got = pread(pagemap_fd, entries, want * sizeof(uint64_t), at);
        if (got <= 0 || got % (ssize_t) sizeof(uint64_t) != 0)
            return -1;
        for (size_t i = 0; i < (size_t) got / sizeof(uint64_t); i++, done++)
            if (entries[i] >> 63) {
                size_t b = offset + done;
                if (bits)
                    bits[b / 8] |= (unsigned char) (1u << (b % 8));
                if (written && !((entries[i] >> 61) & 1))
                    (*written)++;
                present++;
            }
    }
    return (ssize_t) present;
}

/* Drops from maps, keeping their order, the mappings with a page written before they were made
 * read-only (RELRO, text relocations): dropping their pages (MADV_DONTNEED) would put the
 * file's bytes back, and a fork copies their entries already. Returns how many are left, -1
 * when pagemap cannot be read. */
static ssize_t
keep_unwritten_maps(struct code_map *maps, size_t n_maps)
{
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t kept = 0;
    for (size_t m = 0; m < n_maps; m++) {
        size_t written = 0;
        if (mark_present_pages(fd, &maps[m], NULL, 0, &written) < 0) {
            close(fd);
            return -1;
        }
        if (written == 0)
            maps[kept++] = maps[m];
    }
    close(fd);
    return (ssize_t) kept;
}

/* Gives the mapping at lo one private page holding the bytes it had (read and written back
 * through /proc/self/mem: no permission change), which makes each fork copy the mapping's
 * page-table entries. */
static bool
give_private_page(int mem_fd, uintptr_t lo)
{
    unsigned char b;
    return pread(mem_fd, &b, 1, (off_t) lo) == 1 && pwrite(mem_fd, &b, 1, (off_t) lo) == 1;
}

/* In the probe child: runs the probe, then records which code pages it has. Never returns. */
static _Noreturn void
probe_child(pid_t parent, void (*probe)(void *), void *userdata, const struct code_map *maps,
            size_t n_maps, unsigned char *bits)
{
    /* It dies with its parent: nobody would read its answer. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
        _exit(3);
    probe(userdata);
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    size_t offset = 0;
    for (size_t m = 0; fd >= 0 && m < n_maps; offset += map_pages(&maps[m]), m++)
        if (mark_present_pages(fd, &maps[m], bits, offset, NULL) < 0)
            _exit(2);
    _exit(fd >= 0 ? 0 : 1);
}

/* Runs the probe in a child and fills bits (one per page of maps, in order) with the code
 * pages the child had when it finished. false when the child could not say. */
static bool
probe_code_pages(void (*probe)(void *), void *userdata, const struct code_map *maps, size_t n_maps,
                 unsigned char *bits)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0)
        probe_child(parent, probe, userdata, maps, n_maps, bits);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Maps the page at addr in by reading its first byte. Not instrumented by AddressSanitizer:
 * that byte can be in the red zone it keeps between two constants of a binary's read-only
 * data, which only the program's own accesses must respect. */
__attribute__((no_sanitize_address)) static void
touch_page(uintptr_t addr)
{
    (void) *(volatile const unsigned char *) addr;
}

/* Keeps, of the pages of m the zygote has mapped, only those the probe ran (bits from offset
 * on), so that forks copy no entries a worker would not use. */
static void
trim_to_probed_pages(const struct code_map *m, const unsigned char *bits, size_t offset)
{
    if (madvise((void *) m->lo, m->hi - m->lo, MADV_DONTNEED) < 0)
        return; /* then it keeps all it had: more to copy, nothing wrong */
    for (size_t i = 0; i < map_pages(m); i++)
        if (bit_get(bits, offset + i))
            touch_page(m->lo + i * page_size());
}

#define MAX_CODE_MAPS 1024

/* The code pages this process has mapped in maps (all of them, or those with a bit in only). */
static size_t
count_present_pages(const struct code_map *maps, size_t n_maps, const bool *only)
{
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    size_t n = 0;
    for (size_t m = 0; fd >= 0 && m < n_maps; m++) {
        ssize_t r = only && !only[m] ? 0 : mark_present_pages(fd, &maps[m], NULL, 0, NULL);
        n += r > 0 ? (size_t) r : 0;
    }
    if (fd >= 0)
        close(fd);
    return n;
}

int
zygote_mem_share_code(void (*probe)(void *), void *userdata, struct zygote_mem_code_stats *ret)
{
    *ret = (struct zygote_mem_code_stats){0};
    struct code_map maps[MAX_CODE_MAPS];
    bool shared[MAX_CODE_MAPS] = {false};
    ssize_t n_maps = read_code_maps(maps, MAX_CODE_MAPS);
    if (n_maps > 0)
        n_maps = keep_unwritten_maps(maps, (size_t) n_maps);
    if (n_maps <= 0)
        return -1;
    ret->mappings = (size_t) n_maps;
    ret->pages_before = count_present_pages(maps, (size_t) n_maps, NULL);
    size_t total_pages = 0;
    for (ssize_t m = 0; m < n_maps; m++)
        total_pages += map_pages(&maps[m]);
    /* Shared with the probe child, which writes its answer there. */
    size_t bits_size = round_to_pages(total_pages / 8 + 1);
    unsigned char *bits =
            probe ? mmap(NULL, bits_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)
                  : MAP_FAILED;
    ret->probed =
            bits != MAP_FAILED && probe_code_pages(probe, userdata, maps, (size_t) n_maps, bits);
    int mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
    size_t offset = 0;
    for (ssize_t m = 0; mem >= 0 && m < n_maps; offset += map_pages(&maps[m]), m++) {
        size_t ran = 0;
        for (size_t i = 0; ret->probed && i < map_pages(&maps[m]); i++)
            ran += bit_get(bits, offset + i);
        if (ret->probed && ran == 0)
            continue; /* a worker that ever runs it faults in what it runs */
        if (ret->probed)
            trim_to_probed_pages(&maps[m], bits, offset);
        shared[m] = give_private_page(mem, maps[m].lo);
        ret->shared += shared[m];
    }
    if (bits != MAP_FAILED)
        munmap(bits, bits_size);
    if (mem < 0)
        return -1;
    close(mem);
    ret->pages_shared = count_present_pages(maps, (size_t) n_maps, shared);
    return 0;
}
