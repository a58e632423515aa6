/* The zygote's per-job memory, kept out of the heap its workers share (zygote_arena.c).
 *
 * Every fork shares the zygote's pages with the new worker, copy-on-write. Whatever the zygote
 * writes per job while workers are alive (the control messages it parses and builds with
 * cJSON, and malloc's bookkeeping for them) costs it a page copy for every page a live worker
 * still shares; and the chunks it frees are left scattered in the heap, where the next
 * worker's first mallocs walk malloc's free lists through them, copying each page again.
 * Measured with perf on a saturated daemon, that was about 40 page faults per job in the
 * zygote and 25 in each worker.
 *
 * The arena is one mapping marked MADV_DONTFORK: a worker does not get it at all, so writing
 * it never copies anything. cJSON's allocator points at it, handing memory out with a bump
 * pointer that rewinds whenever everything allocated from it has been freed — which is the
 * case between two control packets, since the zygote keeps no cJSON tree across them. A
 * request it cannot hold falls back to malloc. Single-threaded, like the zygote: the state is
 * process-wide because cJSON's hooks are. */
#ifndef DAEMON_WORKER_ZYGOTE_ARENA_H
#define DAEMON_WORKER_ZYGOTE_ARENA_H

#include <stdbool.h>
#include <stddef.h>

#include "pf_error.h"

/* size bytes (rounded up to pages) of memory no fork copies, zeroed; NULL with *err.
 * Released with zygote_private_free. */
void *zygote_private_alloc(size_t size, struct pf_error **err);
void zygote_private_free(void *p, size_t size);

/* Once, after start-up and before the first fork: cJSON allocates from a new arena of size
 * bytes from then on. Returns -1 with *err (cJSON then still uses malloc). */
int zygote_arena_init(size_t size, struct pf_error **err);

/* In a worker, first thing after the fork: the arena is not mapped there, so cJSON goes back
 * to malloc, and a free of arena memory (none is expected) is ignored instead of handing
 * free() a pointer it never gave out. */
void zygote_arena_forget(void);

/* Back to malloc and the mapping released (the zygote's exit path). */
void zygote_arena_release(void);

/* Once, before the first fork: takes every free chunk out of malloc's free lists (up to
 * max_bytes), so that workers' mallocs come from the top of the heap instead of from chunks
 * scattered over pages they would each copy. Returns the bytes taken. */
size_t zygote_heap_settle(size_t max_bytes);

struct zygote_arena_stats {
    size_t size;      /* bytes mapped, 0 when no arena */
    size_t live;      /* allocations not yet freed */
    size_t high;      /* highest bump offset reached */
    size_t fallbacks; /* allocations that went to malloc because the arena was full */
};
void zygote_arena_get_stats(struct zygote_arena_stats *ret);

#endif
