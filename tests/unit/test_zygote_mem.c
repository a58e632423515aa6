/* The zygote's fork-private memory (daemon/worker/zygote_mem.h): cJSON's trees go to the
 * arena and it rewinds once they are freed; what does not fit goes to malloc; a forked child
 * does not have the arena at all; the heap settles so that new allocations stop landing in
 * old holes; a fork gets the page-table entries of the code a probe child ran, and no others. */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "zygote_mem.h"

static int
setup(void **state)
{
    (void) state;
    struct pf_error *err = NULL;
    if (zygote_mem_arena_init(64 * 1024, &err) < 0) {
        pf_error_free(err);
        return -1;
    }
    return 0;
}

static int
teardown(void **state)
{
    (void) state;
    zygote_mem_arena_release();
    return 0;
}

static cJSON *
spawn_like_message(void)
{
    cJSON *o = cJSON_CreateObject();
    assert_non_null(o);
    assert_non_null(cJSON_AddStringToObject(o, "op", "spawn"));
    assert_non_null(cJSON_AddNumberToObject(o, "job", 42));
    cJSON *h = cJSON_AddObjectToObject(o, "harden");
    assert_non_null(h);
    assert_non_null(cJSON_AddNumberToObject(h, "memory_mb", 256));
    return o;
}

static void
test_trees_come_from_the_arena_and_it_rewinds(void **state)
{
    (void) state;
    struct zygote_mem_arena_stats st;
    cJSON *first = spawn_like_message();
    zygote_mem_arena_get_stats(&st);
    assert_true(st.size >= 64 * 1024);
    assert_int_equal(st.live, 10); /* 5 nodes, 4 keys, the string "spawn" */
    char *text = cJSON_PrintUnformatted(first);
    assert_non_null(text);
    assert_string_equal(text, "{\"op\":\"spawn\",\"job\":42,\"harden\":{\"memory_mb\":256}}");
    cJSON_free(text);
    cJSON_Delete(first);
    zygote_mem_arena_get_stats(&st);
    assert_int_equal(st.live, 0);
    assert_int_equal(st.fallbacks, 0);
    /* Everything freed: the next tree starts where the first did, on the same pages. */
    cJSON *second = spawn_like_message();
    assert_ptr_equal(second, first);
    cJSON_Delete(second);
}

static void
test_too_big_spills_to_malloc(void **state)
{
    (void) state;
    size_t n = 200 * 1024;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, 'x', n);
    big[n] = '\0';
    cJSON *s = cJSON_CreateString(big);
    free(big);
    assert_non_null(s);
    assert_int_equal(strlen(s->valuestring), n);
    struct zygote_mem_arena_stats st;
    zygote_mem_arena_get_stats(&st);
    assert_int_equal(st.fallbacks, 1);
    /* The node is in the arena, its string in malloc's heap: each goes back where it came
     * from (a sanitizer build would catch a free() of arena memory). */
    cJSON_Delete(s);
    zygote_mem_arena_get_stats(&st);
    assert_int_equal(st.live, 0);
}

static void
test_release_waits_for_live_blocks(void **state)
{
    (void) state;
    cJSON *live = spawn_like_message();
    zygote_mem_arena_release();
    struct zygote_mem_arena_stats st;
    zygote_mem_arena_get_stats(&st);
    assert_true(st.size > 0); /* still there: `live` points into it */
    /* Its frees still come back to the arena, not to free() (a sanitizer build would catch
     * that); then the arena can go. */
    cJSON_Delete(live);
    zygote_mem_arena_release();
    zygote_mem_arena_get_stats(&st);
    assert_int_equal(st.size, 0);
}

static void
test_a_forked_child_has_no_arena(void **state)
{
    (void) state;
    cJSON *parents = cJSON_CreateString("the zygote's");
    assert_non_null(parents);
    char *parents_string = parents->valuestring;
    long page = sysconf(_SC_PAGESIZE);
    void *page_of_it = (void *) ((uintptr_t) parents & ~(uintptr_t) (page - 1));
    unsigned char vec;
    assert_int_equal(mincore(page_of_it, (size_t) page, &vec), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        zygote_mem_arena_forget();
        /* MADV_DONTFORK: not mapped here, so nothing the parent writes there is shared. */
        if (mincore(page_of_it, (size_t) page, &vec) == 0)
            _exit(10);
        /* cJSON is back on malloc, and freeing the parent's string is a no-op. */
        struct zygote_mem_arena_stats st;
        zygote_mem_arena_get_stats(&st);
        cJSON *mine = cJSON_CreateObject();
        if (st.size != 0 || !mine)
            _exit(11);
        cJSON_Delete(mine);
        cJSON_free(parents_string);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    cJSON_Delete(parents);
}

static void
test_heap_settles_new_allocations_leave_old_holes_alone(void **state)
{
    (void) state;
    if (mallinfo2().arena == 0) {
        print_message("not glibc's malloc (sanitizer build): nothing to settle\n");
        skip();
    }
    enum { N = 400, SIZE = 200 };
    void *blocks[N];
    for (size_t i = 0; i < N; i++)
        assert_non_null(blocks[i] = malloc(SIZE));
    uintptr_t highest_hole = 0;
    for (size_t i = 0; i < N; i += 2) {
        if ((uintptr_t) blocks[i] > highest_hole)
            highest_hole = (uintptr_t) blocks[i];
        free(blocks[i]);
    }
    /* It counts the sizes it asked for, a little below the holes' chunk sizes. */
    assert_true(zygote_mem_settle_heap(8u << 20) >= (N / 2) * (SIZE - 32));
    /* Without the settling these would reuse the holes (tcache, then the bins). */
    for (size_t i = 0; i < 20; i++) {
        void *p = malloc(SIZE);
        assert_non_null(p);
        assert_true((uintptr_t) p > highest_hole);
        free(p);
    }
    for (size_t i = 1; i < N; i += 2)
        free(blocks[i]);
}

/* Whether the page holding addr has a page-table entry in this process (/proc/self/pagemap
 * bit 63), without touching it. -1 when pagemap cannot be read. */
static int
page_present(uintptr_t addr)
{
    long page = sysconf(_SC_PAGESIZE);
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    uint64_t entry;
    ssize_t n = pread(fd, &entry, sizeof(entry), (off_t) (addr / (uintptr_t) page * 8));
    close(fd);
    return n == (ssize_t) sizeof(entry) ? (int) (entry >> 63) : -1;
}

/* A file-backed read-only mapping of the test's own (code, r-x, or constants, r--), every page
 * of it in the page cache: the pages below are 512 KiB apart, so no fault-around window (64
 * KiB: a fault on a file page maps its cached neighbours in that window too) holds both, and
 * nothing but the test reads them. */
#define TEST_CODE_BYTES (1024 * 1024)
#define PROBED_OFFSET   (128 * 1024)
#define UNPROBED_OFFSET (640 * 1024)
#ifndef MFD_EXEC
#    define MFD_EXEC 0x0010U
#endif
static unsigned char *test_code;
static int test_code_prot = PROT_READ | PROT_EXEC;

static unsigned char *
map_test_code(void)
{
    /* MFD_EXEC where vm.memfd_noexec would seal it otherwise; kernels before 6.3 refuse it. */
    int fd = memfd_create("pf-test-code", MFD_CLOEXEC | MFD_EXEC);
    if (fd < 0)
        fd = memfd_create("pf-test-code", MFD_CLOEXEC);
    if (fd < 0)
        return NULL;
    static unsigned char ret[TEST_CODE_BYTES];
    memset(ret, 0xc3, sizeof(ret)); /* any bytes: the test only reads them */
    void *p = pwrite(fd, ret, sizeof(ret), 0) == (ssize_t) sizeof(ret)
                      ? mmap(NULL, TEST_CODE_BYTES, test_code_prot, MAP_PRIVATE, fd, 0)
                      : MAP_FAILED;
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

static unsigned char
read_byte(size_t offset)
{
    return *(volatile const unsigned char *) (test_code + offset);
}

static void
probe_reads_probed_page(void *userdata)
{
    (void) userdata;
    (void) read_byte(PROBED_OFFSET);
}

static void
probe_fails(void *userdata)
{
    (void) userdata;
    _exit(7);
}

/* 0 when the probed and unprobed pages and cJSON's code are (or are not) in this process's
 * page tables as wanted, else code. */
static int
expect_pages(int want_probed, int want_unprobed, int want_cjson, int code)
{
    if (page_present((uintptr_t) (test_code + PROBED_OFFSET)) != want_probed)
        return code;
    if (page_present((uintptr_t) (test_code + UNPROBED_OFFSET)) != want_unprobed)
        return code + 1;
    if (page_present((uintptr_t) cJSON_Version) != want_cjson)
        return code + 2;
    return 0;
}

/* A fork's view of the three pages: 0 when as wanted, else the failed check's code. */
static int
fork_sees(int want_probed, int want_unprobed, int want_cjson)
{
    pid_t pid = fork();
    if (pid < 0)
        return 90;
    if (pid == 0)
        _exit(expect_pages(want_probed, want_unprobed, want_cjson, 60));
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return 91;
    return WEXITSTATUS(status);
}

/* zygote_mem_share_code is once per process: each scenario runs in a child of its own, and
 * returns 0 or the code of the check that failed. */
static void
assert_scenario(int (*scenario)(void))
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(scenario());
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* Both pages and cJSON's code are read or run here first, as the zygote's start-up runs far
 * more code than its workers will. */
static int
run_all_three(void)
{
    if (!(test_code = map_test_code()))
        return 10;
    if (read_byte(PROBED_OFFSET) != 0xc3 || read_byte(UNPROBED_OFFSET) != 0xc3 || !cJSON_Version())
        return 11;
    return expect_pages(1, 1, 1, 12);
}

/* run_all_three, then zygote_mem_share_code with probe: 0 or the failed step's code. */
static int
run_all_three_and_share(void (*probe)(void *), struct zygote_mem_code_stats *st)
{
    int r = run_all_three();
    if (r)
        return r;
    return zygote_mem_share_code(probe, NULL, st) < 0 ? 20 : 0;
}

static int
scenario_probed(void)
{
    struct zygote_mem_code_stats st;
    int r = run_all_three_and_share(probe_reads_probed_page, &st);
    if (r)
        return r;
    if (!st.probed || st.shared == 0 || st.shared >= st.mappings || st.pages_shared == 0 ||
        st.pages_shared >= st.pages_before)
        return 21;
    /* The zygote keeps the probed page and drops the other of the same mapping; cJSON's
     * mapping, which the probe never ran, keeps its pages but is not shared. */
    if ((r = expect_pages(1, 0, 1, 30)))
        return r;
    /* A fork copies the probed page's entry, and neither of the others. */
    return fork_sees(1, 0, 0);
}

/* The same for a binary's constants (r--p): forks copy the entries of the pages the probe
 * read, and only those. */
static int
scenario_probed_constants(void)
{
    test_code_prot = PROT_READ;
    return scenario_probed();
}

/* A read-only mapping written before it was made so (RELRO, where the dynamic linker wrote
 * relocations) keeps what was written: its pages are not dropped for the file's. */
static int
scenario_written_then_read_only(void)
{
    test_code_prot = PROT_READ | PROT_WRITE;
    int r = run_all_three();
    if (r)
        return r;
    test_code[PROBED_OFFSET] = 0x5a;
    if (mprotect(test_code, TEST_CODE_BYTES, PROT_READ) < 0)
        return 40;
    struct zygote_mem_code_stats st;
    if (zygote_mem_share_code(probe_reads_probed_page, NULL, &st) < 0 || !st.probed)
        return 41;
    return read_byte(PROBED_OFFSET) == 0x5a ? 0 : 42;
}

/* Without a probe's answer, every mapping is shared with every entry the zygote had. */
static int
shares_everything_with(void (*probe)(void *))
{
    struct zygote_mem_code_stats st;
    int r = run_all_three_and_share(probe, &st);
    if (r)
        return r;
    if (st.probed || st.shared != st.mappings)
        return 21;
    return fork_sees(1, 1, 1);
}

static int
scenario_probe_failed(void)
{
    return shares_everything_with(probe_fails);
}

static int
scenario_no_probe(void)
{
    return shares_everything_with(NULL);
}

static void
test_a_fork_gets_the_code_pages_the_probe_ran_and_only_those(void **state)
{
    (void) state;
    assert_scenario(scenario_probed);
}

static void
test_a_fork_gets_the_constants_the_probe_read_and_only_those(void **state)
{
    (void) state;
    assert_scenario(scenario_probed_constants);
}

static void
test_a_written_read_only_mapping_keeps_its_bytes(void **state)
{
    (void) state;
    assert_scenario(scenario_written_then_read_only);
}

static void
test_a_failed_probe_shares_all_the_code_the_parent_ran(void **state)
{
    (void) state;
    assert_scenario(scenario_probe_failed);
}

static void
test_without_a_probe_a_fork_gets_all_the_code_the_parent_ran(void **state)
{
    (void) state;
    assert_scenario(scenario_no_probe);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_trees_come_from_the_arena_and_it_rewinds, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_too_big_spills_to_malloc, setup, teardown),
            cmocka_unit_test_setup_teardown(test_release_waits_for_live_blocks, setup, teardown),
            cmocka_unit_test_setup_teardown(test_a_forked_child_has_no_arena, setup, teardown),
            cmocka_unit_test(test_heap_settles_new_allocations_leave_old_holes_alone),
            cmocka_unit_test(test_a_fork_gets_the_code_pages_the_probe_ran_and_only_those),
            cmocka_unit_test(test_a_fork_gets_the_constants_the_probe_read_and_only_those),
            cmocka_unit_test(test_a_written_read_only_mapping_keeps_its_bytes),
            cmocka_unit_test(test_a_failed_probe_shares_all_the_code_the_parent_ran),
            cmocka_unit_test(test_without_a_probe_a_fork_gets_all_the_code_the_parent_ran),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
