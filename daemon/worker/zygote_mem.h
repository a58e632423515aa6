/* The zygote's memory, laid out for forking (zygote_mem.c).
 *
 * Every fork shares the zygote's pages with the new worker, copy-on-write, and every page a
 * worker writes or first reads is a page fault: on a saturated daemon they were most of the
 * kernel's work per job (perf: ~275 faults per job before this module, ~115 after). Three
 * things here cut them, each done once before the first fork:
 *
 * - The arena: what the zygote writes per job while workers are alive (the control messages
 *   it parses and builds with cJSON, and malloc's bookkeeping for them) cost it a page copy
 *   for every page a live worker still shared, and the chunks it freed were left scattered in
 *   the heap, where the next worker's first mallocs walked malloc's free lists through them,
 *   copying each page again (~40 faults per job in the zygote, ~25 in each worker). The arena
 *   is one mapping marked MADV_DONTFORK: a worker does not get it at all, so writing it never
 *   copies anything. cJSON's allocator points at it, handing memory out with a bump pointer
 *   that rewinds whenever everything allocated from it has been freed, which is the case
 *   between two control packets (the zygote keeps no cJSON tree across them). A request it
 *   cannot hold falls back to malloc. The state is process-wide because cJSON's hooks are;
 *   the zygote is single-threaded.
 * - The settled heap: the free chunks start-up left behind are taken out of use, so that
 *   workers' mallocs come from the heap's top instead of from pages they would each copy
 *   (~25 faults per worker).
 * - Shared code: a fork copies no page-table entries of a file mapping that has no private
 *   page, so each worker faulted in the code it ran again (~50 faults per worker, 16 pages
 *   each). Giving each code mapping one private page (the same bytes) makes every fork copy
 *   the entries the zygote has, and a worker runs that code without a fault. But every entry
 *   a fork copies, its exit tears down again, and the zygote had mapped far more code than a
 *   worker runs (start-up, imports): so a probe child runs a worker's path once, and the
 *   zygote keeps mapped, and shares, only the code pages that child ran (~2,000 of ~3,300 code
 *   pages here; 5-6% less CPU per job). The binaries' constants (their r--p mappings:
 *   libpython's tables and strings, libc's locale data) are shared the same way, which took
 *   ~12 more read faults off each worker (~110 to ~100 per job, ~4% less CPU per job on a
 *   host where faults are dear). A read-only mapping with a page written before it was made
 *   so (RELRO: the relocations the dynamic linker wrote) is left alone: dropping its pages
 *   would put the file's bytes back, and forks copy its entries anyway.
 *
 * Not done, measured: the same trimming for data. Copying the zygote's writable data (heap,
 * pymalloc arenas, libpython's .data and .bss: ~1,670 pages) into a sealed memfd mapped
 * privately in place leaves forks nothing to copy but what the zygote touches again, yet a
 * worker's warm-up reads or writes ~985 of those pages: faulted in one by one, they cost more
 * than the entries saved (131 faults per job instead of 99, throughput unchanged); kept
 * mapped for the ~985 a probe touched, a fork copies ~250 entries fewer, ~2% of a job's CPU,
 * not worth remapping CPython's memory under it. Nor transparent huge pages: pymalloc's
 * arenas carved from a 2 MiB-aligned MADV_HUGEPAGE reservation (two huge pages, so a fork
 * copies two entries for them instead of ~560) left faults per job unchanged, since a
 * worker's first write splits each huge page back into 512 entries, and moved throughput by
 * at most ~5% in six alternating pairs, within this host's noise. Code cannot be mapped huge
 * at all: libpython's text is not 2 MiB aligned, and file THP needs a kernel option
 * (READ_ONLY_THP_FOR_FS) distributions do not all set. */
#ifndef DAEMON_WORKER_ZYGOTE_MEM_H
#define DAEMON_WORKER_ZYGOTE_MEM_H

#include <stdbool.h>
#include <stddef.h>

#include "pf_error.h"

/* size bytes (rounded up to pages) of memory no fork copies, zeroed; NULL with *err.
 * Released with zygote_mem_private_free. */
void *zygote_mem_private_alloc(size_t size, struct pf_error **err);
void zygote_mem_private_free(void *p, size_t size);

/* Once, after start-up and before the first fork: cJSON allocates from a new arena of size
 * bytes from then on. Returns -1 with *err (cJSON then still uses malloc). */
int zygote_mem_arena_init(size_t size, struct pf_error **err);

/* In a worker, first thing after the fork: the arena is not mapped there, so cJSON goes back
 * to malloc, and a free of arena memory (none is expected) is ignored instead of handing
 * free() a pointer it never gave out. */
void zygote_mem_arena_forget(void);

/* Back to malloc and the mapping released (the zygote's exit path); nothing while blocks
 * from it are still live. */
void zygote_mem_arena_release(void);

/* Once, before the first fork: takes every free chunk out of malloc's free lists (up to
 * max_bytes), so that workers' mallocs come from the top of the heap instead of from chunks
 * scattered over pages they would each copy. Returns the bytes taken. */
size_t zygote_mem_settle_heap(size_t max_bytes);

struct zygote_mem_code_stats {
    size_t mappings;     /* read-only file mappings (code, constants) never written */
    size_t shared;       /* of them, those whose page-table entries every fork copies */
    size_t pages_before; /* code pages the zygote had mapped before */
    size_t pages_shared; /* code pages whose entries every fork copies now */
    bool probed;         /* false: no probe, or it failed, and every mapping is shared whole */
};

/* Once, before the first fork: makes each fork copy the page-table entries of the code (and
 * read-only data: "code" below means both) its worker will use, and no others. probe(userdata) runs
 * in a child forked for it, and should run what a worker runs; the code pages that child has when
 * the probe returns (read from its /proc/self/pagemap) are the only ones the zygote keeps mapped,
 * and each code mapping it ran gets one private copy of its first page (written through
 * /proc/self/mem with the byte already there: no permission changes), which makes forks copy that
 * mapping's entries. A mapping the probe never ran is left as it is: forks copy none of its
 * entries. Without a probe (NULL), or when it fails, every code mapping is shared with all the
 * entries the zygote has. Returns -1 when /proc/self/maps, pagemap or mem cannot be used (then
 * workers fault their code in: slower, same safety); *ret says what was done. */
int zygote_mem_share_code(void (*probe)(void *), void *userdata, struct zygote_mem_code_stats *ret);

struct zygote_mem_arena_stats {
    size_t size;      /* bytes mapped, 0 when no arena */
    size_t live;      /* allocations not yet freed */
    size_t high;      /* highest bump offset reached */
    size_t fallbacks; /* allocations that went to malloc because the arena was full */
};
void zygote_mem_arena_get_stats(struct zygote_mem_arena_stats *ret);

#endif
