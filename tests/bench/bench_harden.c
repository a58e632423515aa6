/* bench_harden: what hardening adds to a worker's fork, measured against a plain fork in the
 * same run (the Hardened-workers issue: p50 and p99 next to each other, target <= 0.5 ms added
 * at p50). Runs as root, like the zygote: harden_zygote_init() once with the zygote's default
 * configuration, then, alternating so that both see the same machine load,
 *   plain:    fork -> child writes one byte to a pipe -> parent reads it -> child exits -> wait
 *   hardened: harden_job_prepare -> fork -> child runs worker_harden() with the default
 *             profile's levels and limits, then writes the byte -> read -> wait ->
 *             harden_job_finish
 * "ready" is the byte read; "round trip" adds the exit, the reap and (hardened) the job's finish,
 * where the worker's namespaces are torn down and its cgroup counters read.
 * Then a breakdown: the layers applied one by one, in worker_harden()'s order, each timed inside
 * the child, with what each did (applied, skipped and why, off).
 *
 * The figures are printed, never asserted: scripts/bench runs this.
 *   bench_harden [--runs N]    (default 500) */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harden_internal.h"
#include "harden_params.h"
#include "harden_zygote.h"
#include "load.h"
#include "pf_cleanup.h"
#include "pf_log.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct policy *, policy_free)

#define DEFAULT_RUNS 500
#define WARMUP_RUNS  20

static double
now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec * 1e3 + (double) t.tv_nsec / 1e6;
}

/* What the daemon would send for a job of the built-in "default" profile run by root
 * (op_exec.c resolve_spec and job.c job_harden_params): its levels, mapped by name, and its
 * job limits. */
static int
default_profile_params(struct harden_params *p, struct pf_error **err)
{
    _cleanup_(policy_freep) struct policy *pol = NULL;
    if (policy_load_builtin(&pol, err) < 0)
        return -1;
    const struct policy_profile *prof = policy_find(pol, "default");
    if (!prof)
        return pf_error_set(err, PF_E_INTERNAL, "the built-in policy has no \"default\" profile");
    memset(p, 0, sizeof(*p));
    for (int i = 0; i < _POLICY_LAYER_MAX; i++) {
        enum harden_layer l = harden_layer_from_name(policy_layer_name((enum policy_layer) i));
        enum harden_level v = harden_level_from_name(policy_level_name(prof->hardening[i]));
        if (l == _HARDEN_LAYER_INVALID || v == _HARDEN_LEVEL_INVALID)
            return pf_error_set(err, PF_E_INTERNAL, "profile layer %d has no worker counterpart",
                                i);
        p->level[l] = v;
    }
    p->cpu_ms = (uint64_t) prof->limits.v[POLICY_LIMIT_CPU_MS];
    p->memory_mb = (uint64_t) prof->limits.v[POLICY_LIMIT_MEMORY_MB];
    p->file_size_mb = (uint64_t) prof->limits.v[POLICY_LIMIT_FILE_SIZE_MB];
    p->scratch_mb = (uint64_t) prof->limits.v[POLICY_LIMIT_SCRATCH_MB];
    p->open_files = (uint64_t) prof->limits.v[POLICY_LIMIT_OPEN_FILES];
    p->pids = (uint64_t) prof->limits.v[POLICY_LIMIT_PIDS];
    return 0;
}

/* ---- one timed job ------------------------------------------------------------------------ */

struct sample {
    double ready_ms; /* before prepare/fork -> the byte read */
    double total_ms; /* ... -> reaped (and finished) */
};

static struct harden_params params;

static _Noreturn void
child_body(int wfd, bool harden)
{
    int fd = wfd;
    if (harden) {
        struct pf_error *err = NULL;
        fd = worker_harden(&params, wfd, &err);
        if (fd < 0)
            _exit(2);
    }
    char c = 'r';
    _exit(write(fd, &c, 1) == 1 ? 0 : 3);
}

static int
read_byte(int fd)
{
    char c;
    for (;;) {
        ssize_t n = read(fd, &c, 1);
        if (n == 1)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        return -1;
    }
}

static int
reap(pid_t pid, int *ret_status)
{
    while (waitpid(pid, ret_status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

static int
one_job(bool harden, struct sample *ret, struct pf_error **err)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "pipe2");
    double t0 = now_ms();
    struct harden_job *job = NULL;
    if (harden && harden_job_prepare(&params, &job, err) < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(pfd[0]);
        child_body(pfd[1], harden);
    }
    int saved = errno;
    close(pfd[1]);
    if (pid < 0) {
        close(pfd[0]);
        harden_job_finish(job, NULL);
        return pf_error_set_errno(err, PF_E_INTERNAL, saved, "fork");
    }
    int rr = read_byte(pfd[0]);
    double t1 = now_ms();
    close(pfd[0]);
    int status = 0;
    int wr = reap(pid, &status);
    harden_job_finish(job, NULL);
    double t2 = now_ms();
    if (rr < 0 || wr < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return pf_error_set(err, PF_E_INTERNAL,
                            "%s worker did not get ready (status 0x%x): run the unit tests of "
                            "the suite 'harden' to see which layer fails",
                            harden ? "hardened" : "plain", (unsigned) status);
    *ret = (struct sample){.ready_ms = t1 - t0, .total_ms = t2 - t1 + (t1 - t0)};
    return 0;
}

/* ---- statistics --------------------------------------------------------------------------- */

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

struct stats {
    double p50, p99, mean;
};

/* Sorts v in place. */
static struct stats
stats_of(double *v, size_t n)
{
    qsort(v, n, sizeof(v[0]), cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    size_t i99 = (n * 99 + 99) / 100;
    return (struct stats){
            .p50 = v[n / 2], .p99 = v[i99 >= n ? n - 1 : i99 - 1], .mean = sum / (double) n};
}

static void
print_row(const char *what, const struct stats *s)
{
    printf("  %-22s %9.3f %9.3f %9.3f\n", what, s->p50, s->p99, s->mean);
}

/* ---- the per-layer breakdown -------------------------------------------------------------- */

/* worker_harden()'s order (harden.c), with its one extra step: the parent-death signal set
 * again after identity. Kept in step with harden.c by hand; the layer enum is that order. */
static const harden_apply_fn layer_fns[_HARDEN_LAYER_MAX] = {
        [HARDEN_LAYER_CGROUP] = harden_cgroup_apply,
        [HARDEN_LAYER_NAMESPACES] = harden_namespaces_apply,
        [HARDEN_LAYER_RLIMITS] = harden_rlimits_apply,
        [HARDEN_LAYER_FDS] = harden_fds_apply,
        [HARDEN_LAYER_IDENTITY] = harden_identity_apply,
        [HARDEN_LAYER_PRIVILEGES] = harden_privileges_apply,
        [HARDEN_LAYER_LANDLOCK] = harden_landlock_apply,
        [HARDEN_LAYER_SECCOMP] = harden_seccomp_apply,
};

enum layer_result { LAYER_OFF, LAYER_APPLIED, LAYER_SKIPPED, LAYER_FAILED };

/* What a breakdown child writes on its channel: one pipe write, atomic (< PIPE_BUF). Times are
 * CLOCK_MONOTONIC, which a pid namespace shares with its parent. */
struct breakdown {
    double start_ms; /* the child's first instruction after fork (absolute) */
    double move_ms;  /* moving the channel to fd 3 */
    double layer_ms[_HARDEN_LAYER_MAX];
    double refresh_ms; /* PR_SET_PDEATHSIG again after identity */
    double sent_ms;    /* just before the write (absolute) */
    unsigned char result[_HARDEN_LAYER_MAX];
    char why[_HARDEN_LAYER_MAX][56]; /* the first words of a skipped layer's error */
};

_Static_assert(sizeof(struct breakdown) <= 4096, "one atomic pipe write");

/* What the parent saw of the same job. */
struct breakdown_job {
    struct breakdown child;
    double prepare_ms, fork_ms, harden_ms, wake_ms, reap_ms, finish_ms;
};

static _Noreturn void
breakdown_child(int wfd, bool harden)
{
    struct breakdown b = {.start_ms = now_ms()};
    struct pf_error *err = NULL;
    int fd = wfd;
    double t = now_ms();
    if (harden && (fd = harden_fds_move_channel(wfd, &err)) < 0)
        _exit(2);
    b.move_ms = now_ms() - t;
    for (int l = 0; harden && l < _HARDEN_LAYER_MAX; l++) {
        if (params.level[l] == HARDEN_OFF)
            continue;
        t = now_ms();
        int r = layer_fns[l](&params, &err);
        b.layer_ms[l] = now_ms() - t;
        b.result[l] = r >= 0                                  ? LAYER_APPLIED
                      : params.level[l] == HARDEN_BEST_EFFORT ? LAYER_SKIPPED
                                                              : LAYER_FAILED;
        if (r < 0) {
            snprintf(b.why[l], sizeof(b.why[l]), "%s", err ? err->msg : "?");
            err = pf_error_free(err);
        }
        if (b.result[l] == LAYER_FAILED)
            break;
        if (l == HARDEN_LAYER_IDENTITY && params.level[HARDEN_LAYER_FDS] != HARDEN_OFF) {
            t = now_ms();
            if (harden_fds_die_with_parent(&err) < 0)
                _exit(4);
            b.refresh_ms = now_ms() - t;
        }
    }
    b.sent_ms = now_ms();
    _exit(write(fd, &b, sizeof(b)) == (ssize_t) sizeof(b) ? 0 : 3);
}

static int
one_breakdown(bool harden, struct breakdown_job *ret, struct pf_error **err)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "pipe2");
    struct harden_job *job = NULL;
    double t0 = now_ms();
    if (harden && harden_job_prepare(&params, &job, err) < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    double t1 = now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        close(pfd[0]);
        breakdown_child(pfd[1], harden);
    }
    close(pfd[1]);
    ssize_t n = pid > 0 ? read(pfd[0], &ret->child, sizeof(ret->child)) : -1;
    double t2 = now_ms();
    close(pfd[0]);
    int status = 0;
    if (pid > 0)
        reap(pid, &status);
    double t3 = now_ms();
    harden_job_finish(job, NULL);
    double t4 = now_ms();
    if (n != (ssize_t) sizeof(ret->child))
        return pf_error_set(err, PF_E_INTERNAL, "breakdown worker: no report (status 0x%x)",
                            (unsigned) status);
    ret->prepare_ms = t1 - t0;
    ret->fork_ms = ret->child.start_ms - t1;
    ret->harden_ms = ret->child.sent_ms - ret->child.start_ms;
    ret->wake_ms = t2 - ret->child.sent_ms;
    ret->reap_ms = t3 - t2;
    ret->finish_ms = t4 - t3;
    return 0;
}

/* p50 of one double field of each job (v: scratch of n). */
static double
p50_of(const struct breakdown_job *all, size_t n, size_t offset, double *v)
{
    for (size_t i = 0; i < n; i++)
        v[i] = *(const double *) ((const char *) &all[i] + offset);
    return stats_of(v, n).p50;
}

#define P50(field)       p50_of(all, runs, offsetof(struct breakdown_job, field), v)
#define P50_PLAIN(field) p50_of(plain, runs, offsetof(struct breakdown_job, field), v)

static void
print_layers(const struct breakdown_job *all, size_t runs, double *v)
{
    static const char *const result_names[] = {"off", "applied", "skipped", "FAILED"};
    const struct breakdown *last = &all[runs - 1].child;
    double sum = P50(child.move_ms);
    printf("  %-14s %8.3f\n", "  channel->fd3", sum);
    for (int l = 0; l < _HARDEN_LAYER_MAX; l++) {
        for (size_t i = 0; i < runs; i++)
            v[i] = all[i].child.layer_ms[l];
        double p = stats_of(v, runs).p50;
        sum += p;
        printf("  %-14s %8.3f  %s (%s)%s%s\n", harden_layer_name((enum harden_layer) l), p,
               result_names[last->result[l]], harden_level_name(params.level[l]),
               last->why[l][0] ? ": " : "", last->why[l]);
        if (l == HARDEN_LAYER_IDENTITY) {
            double r = P50(child.refresh_ms);
            sum += r;
            printf("  %-14s %8.3f  PR_SET_PDEATHSIG again after identity\n", "  pdeathsig", r);
        }
    }
    printf("  %-14s %8.3f  (sum of the p50s above)\n", "all layers", sum);
}

static int
print_breakdown(size_t runs, struct pf_error **err)
{
    _cleanup_free_ double *v = calloc(runs, sizeof(double));
    _cleanup_free_ struct breakdown_job *all = calloc(runs, sizeof(*all));
    _cleanup_free_ struct breakdown_job *plain = calloc(runs, sizeof(*plain));
    if (!v || !all || !plain)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    for (size_t i = 0; i < runs; i++)
        if (one_breakdown(false, &plain[i], err) < 0 || one_breakdown(true, &all[i], err) < 0)
            return -1;
    printf("\nwhere the time goes (p50 of %zu, ms)      plain  hardened\n", runs);
    printf("  %-36s %8s %9.3f\n", "harden_job_prepare (zygote)", "-", P50(prepare_ms));
    printf("  %-36s %8.3f %9.3f\n", "fork -> child runs", P50_PLAIN(fork_ms), P50(fork_ms));
    printf("  %-36s %8s %9.3f\n", "worker_harden (layers below)", "-", P50(harden_ms));
    printf("  %-36s %8.3f %9.3f\n", "child writes -> parent reads", P50_PLAIN(wake_ms),
           P50(wake_ms));
    printf("  %-36s %8.3f %9.3f\n", "-> exit and reap", P50_PLAIN(reap_ms), P50(reap_ms));
    printf("  %-36s %8s %9.3f\n", "harden_job_finish (zygote)", "-", P50(finish_ms));
    printf("inside the worker, worker_harden()'s order:\n");
    print_layers(all, runs, v);
    return 0;
}

/* ---- main --------------------------------------------------------------------------------- */

static int
measure(size_t runs, struct pf_error **err)
{
    _cleanup_free_ double *v = calloc(4 * runs, sizeof(double));
    if (!v)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    double *plain_ready = v, *plain_total = v + runs, *hard_ready = v + 2 * runs,
           *hard_total = v + 3 * runs;
    struct sample s;
    for (size_t i = 0; i < WARMUP_RUNS; i++)
        if (one_job(false, &s, err) < 0 || one_job(true, &s, err) < 0)
            return -1;
    /* Alternating, so that a burst of load elsewhere hits both columns alike. */
    for (size_t i = 0; i < runs; i++) {
        if (one_job(false, &s, err) < 0)
            return -1;
        plain_ready[i] = s.ready_ms;
        plain_total[i] = s.total_ms;
        if (one_job(true, &s, err) < 0)
            return -1;
        hard_ready[i] = s.ready_ms;
        hard_total[i] = s.total_ms;
    }
    struct stats pr = stats_of(plain_ready, runs), hr = stats_of(hard_ready, runs);
    struct stats pt = stats_of(plain_total, runs), ht = stats_of(hard_total, runs);
    printf("%zu runs each, alternating (ms)  %9s %9s %9s\n", runs, "p50", "p99", "mean");
    printf("fork-to-ready:\n");
    print_row("plain fork", &pr);
    print_row("hardened (default)", &hr);
    printf("round trip (ready + exit + reap + finish):\n");
    print_row("plain fork", &pt);
    print_row("hardened (default)", &ht);
    printf("hardening adds %.3f ms at p50 to fork-to-ready (target <= 0.5 ms: %s), %.3f ms to the "
           "round trip\n",
           hr.p50 - pr.p50, hr.p50 - pr.p50 <= 0.5 ? "met" : "NOT met", ht.p50 - pt.p50);
    return 0;
}

static void
usage(FILE *f)
{
    fprintf(f, "usage: bench_harden [--runs N]   (default %d; needs root)\n", DEFAULT_RUNS);
}

int
main(int argc, char **argv)
{
    size_t runs = DEFAULT_RUNS;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            long n = strtol(argv[++i], &end, 10);
            if (*end || n < 10 || n > 1000000) {
                fprintf(stderr, "bench_harden: --runs: %s is not a number from 10 to 1000000\n",
                        argv[i]);
                return 2;
            }
            runs = (size_t) n;
        } else if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (geteuid() != 0) {
        printf("bench_harden: the hardened worker needs root (like pyfenced's zygote): skipping\n");
        return 77;
    }
    pf_log_init(PF_LOG_WARNING, "bench_harden");
    struct pf_error *err = NULL;
    if (default_profile_params(&params, &err) < 0) {
        fprintf(stderr, "bench_harden: %s\n", err->msg);
        pf_error_free(err);
        return 1;
    }
    struct harden_zygote_config config = {.cgroup_mode = "auto"};
    if (harden_zygote_init(&config, &err) < 0) {
        fprintf(stderr, "bench_harden: harden_zygote_init: %s\n", err->msg);
        pf_error_free(err);
        return 1;
    }
    harden_expect_parent(getpid());
    printf("profile \"default\"; cgroup backend: %s; namespaces: netns %s, mount view %s; "
           "landlock ABI %d\n",
           harden_cgroup_backend_name(), harden_ns_have_netns() ? "yes" : "no",
           harden_ns_have_mount_view() ? "yes" : "no", harden_landlock_abi());
    fflush(stdout);
    int r = measure(runs, &err);
    if (r >= 0)
        r = print_breakdown(runs < 200 ? runs : 200, &err);
    harden_zygote_finish();
    if (r < 0) {
        fprintf(stderr, "bench_harden: %s\n", err->msg);
        pf_error_free(err);
        return 1;
    }
    return 0;
}
