/* bench_exec: submit-to-result time of a trivial snippet (`1+1`) run as a fresh ephemeral job
 * through libpyfence, side by side with the spawn time of `/usr/bin/python3 -c pass` measured
 * in the same run (posix_spawn + waitpid). Run by scripts/bench; never asserted in tests.
 * Usage: bench_exec [--socket PATH] [--runs N] [--spawn-runs N] [--code SNIPPET] */
#include <errno.h>
#include <getopt.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pyfence.h"

extern char **environ;

#define WARMUP_RUNS 20

struct summary {
    double p50, p99, mean, min, max;
};

static double
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static struct summary
summarize(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    /* Nearest-rank percentiles. */
    size_t i50 = (n * 50 + 99) / 100, i99 = (n * 99 + 99) / 100;
    return (struct summary){
            .p50 = v[i50 ? i50 - 1 : 0],
            .p99 = v[i99 ? i99 - 1 : 0],
            .mean = sum / (double) n,
            .min = v[0],
            .max = v[n - 1],
    };
}

static int
bench_pyfence(const char *socket_path, const char *code, double *samples, size_t runs,
              double *ret_queue_ms, double *ret_run_ms)
{
    struct pyfence_error err = {0};
    struct pyfence_conn *conn = NULL;
    struct pyfence_result res;
    pyfence_result_init(&res);
    if (pyfence_connect(socket_path, &conn, &err) < 0) {
        fprintf(stderr, "bench_exec: %s\n", err.message);
        return -1;
    }
    double queue = 0, run = 0;
    for (size_t i = 0; i < runs + WARMUP_RUNS; i++) {
        double t0 = now_ms();
        if (pyfence_exec(conn, code, NULL, NULL, NULL, &res, &err) < 0) {
            fprintf(stderr, "bench_exec: run %zu: %s\n", i, err.message);
            goto fail;
        }
        double t1 = now_ms();
        if (!res.ok) {
            fprintf(stderr, "bench_exec: run %zu: %s: %s\n", i, res.outcome,
                    res.error.message ? res.error.message : "");
            goto fail;
        }
        if (i >= WARMUP_RUNS) {
            samples[i - WARMUP_RUNS] = t1 - t0;
            queue += res.stats.queue_ms;
            run += res.stats.run_ms;
        }
    }
    *ret_queue_ms = queue / (double) runs;
    *ret_run_ms = run / (double) runs;
    pyfence_result_finish(&res);
    pyfence_close(conn);
    return 0;
fail:
    pyfence_result_finish(&res);
    pyfence_close(conn);
    return -1;
}

static int
bench_spawn(double *samples, size_t runs)
{
    char *argv[] = {"python3", "-c", "pass", NULL};
    for (size_t i = 0; i < runs; i++) {
        pid_t pid;
        int status;
        double t0 = now_ms();
        int r = posix_spawn(&pid, "/usr/bin/python3", NULL, NULL, argv, environ);
        if (r != 0) {
            fprintf(stderr, "bench_exec: posix_spawn /usr/bin/python3: %s\n", strerror(r));
            return -1;
        }
        while (waitpid(pid, &status, 0) < 0)
            if (errno != EINTR) {
                fprintf(stderr, "bench_exec: waitpid: %s\n", strerror(errno));
                return -1;
            }
        samples[i] = now_ms() - t0;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "bench_exec: /usr/bin/python3 -c pass failed (status %d)\n", status);
            return -1;
        }
    }
    return 0;
}

static void
print_row(const char *name, size_t runs, const struct summary *s)
{
    printf("%-34s %7zu %9.3f %9.3f %9.3f %9.3f %9.3f\n", name, runs, s->p50, s->p99, s->mean,
           s->min, s->max);
}

static long
parse_count(const char *arg, const char *flag)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || end == arg || *end || v < 1 || v > 10000000) {
        fprintf(stderr, "bench_exec: %s '%s' is not a count in 1..10000000\n", flag, arg);
        exit(2);
    }
    return v;
}

int
main(int argc, char **argv)
{
    static const struct option longopts[] = {
            {"socket", required_argument, NULL, 's'},
            {"runs", required_argument, NULL, 'n'},
            {"spawn-runs", required_argument, NULL, 'm'},
            {"code", required_argument, NULL, 'c'},
            {"help", no_argument, NULL, 'h'},
            {0},
    };
    const char *socket_path = NULL, *code = "1+1";
    size_t runs = 1000, spawn_runs = 0;
    int c;
    while ((c = getopt_long(argc, argv, "s:n:m:c:h", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            socket_path = optarg;
            break;
        case 'n':
            runs = (size_t) parse_count(optarg, "--runs");
            break;
        case 'm':
            spawn_runs = (size_t) parse_count(optarg, "--spawn-runs");
            break;
        case 'c':
            code = optarg;
            break;
        case 'h':
            printf("Usage: bench_exec [--socket PATH] [--runs N] [--spawn-runs N] "
                   "[--code SNIPPET]\n"
                   "Times N ephemeral execs of SNIPPET (default 1+1, N default 1000) against\n"
                   "spawning /usr/bin/python3 -c pass (default max(100, N/10) times).\n");
            return 0;
        default:
            return 2;
        }
    }
    if (!spawn_runs)
        spawn_runs = runs / 10 > 100 ? runs / 10 : 100;

    double *ex = calloc(runs, sizeof(double)), *sp = calloc(spawn_runs, sizeof(double));
    double queue_ms = 0, run_ms = 0;
    if (!ex || !sp) {
        fprintf(stderr, "bench_exec: out of memory\n");
        return 1;
    }
    if (bench_pyfence(socket_path, code, ex, runs, &queue_ms, &run_ms) < 0 ||
        bench_spawn(sp, spawn_runs) < 0)
        return 1;
    struct summary se = summarize(ex, runs), ss = summarize(sp, spawn_runs);

    printf("%-34s %7s %9s %9s %9s %9s %9s\n", "milliseconds", "runs", "p50", "p99", "mean", "min",
           "max");
    char label[64];
    snprintf(label, sizeof(label), "pyfence exec '%.16s' (fresh job)", code);
    print_row(label, runs, &se);
    print_row("posix_spawn python3 -c pass", spawn_runs, &ss);
    printf("\nratio spawn/exec: p50 %.1fx, mean %.1fx\n", ss.p50 / se.p50, ss.mean / se.mean);
    printf("daemon-side means per exec: queue %.3f ms, executor run %.3f ms\n", queue_ms, run_ms);
    free(ex);
    free(sp);
    return 0;
}
