/* The executor against native CPython, same process, same run: each workload is timed natively
 * (compile excluded) and through exec_env_run (parse and compile of the snippet included, a fresh
 * exec_env per run), best of N runs each. Prints a table and the geometric mean ratio. Not a test:
 * scripts/bench runs it.
 *
 *   bench_executor [-n RUNS] [-k SUBSTRING] */
#include <Python.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec.h"
#include "exec_case.h"

struct workload {
    const char *name;
    const char *code;
};

static const struct workload workloads[] = {
        {"count_loop", "total = 0\n"
                       "for i in range(300000):\n"
                       "    total += i\n"
                       "total\n"},
        {"while_arith", "i = 0\n"
                        "acc = 0\n"
                        "while i < 150000:\n"
                        "    acc = (acc + i * 3) % 1000003\n"
                        "    i += 1\n"
                        "acc\n"},
        {"recursion_fib", "def fib(n):\n"
                          "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
                          "fib(21)\n"},
        {"comprehensions", "rows = [[x * y for y in range(60)] for x in range(600)]\n"
                           "evens = {v for row in rows for v in row if v % 2 == 0}\n"
                           "index = {i: sum(row) for i, row in enumerate(rows)}\n"
                           "len(evens) + len(index)\n"},
        {"string_building", "parts = []\n"
                            "for i in range(30000):\n"
                            "    parts.append(str(i))\n"
                            "s = ','.join(parts)\n"
                            "t = ''\n"
                            "for i in range(10000):\n"
                            "    t += 'x'\n"
                            "len(s) + len(t)\n"},
        {"dict_counting", "words = [str(i % 97) for i in range(60000)]\n"
                          "counts = {}\n"
                          "for w in words:\n"
                          "    counts[w] = counts.get(w, 0) + 1\n"
                          "max(counts.values())\n"},
        {"classes_methods", "class Point:\n"
                            "    def __init__(self, x, y):\n"
                            "        self.x = x\n"
                            "        self.y = y\n"
                            "    def add(self, o):\n"
                            "        return Point(self.x + o.x, self.y + o.y)\n"
                            "    def norm1(self):\n"
                            "        return abs(self.x) + abs(self.y)\n"
                            "p = Point(0, 0)\n"
                            "step = Point(1, -2)\n"
                            "for _ in range(30000):\n"
                            "    p = p.add(step)\n"
                            "p.norm1()\n"},
        {"sort_key_lambda", "data = [(i * 7919) % 10007 for i in range(40000)]\n"
                            "out = sorted(data, key=lambda v: (v % 100, v))\n"
                            "out[:3]\n"},
        {"matmul_nested", "n = 45\n"
                          "a = [[(i + j) % 7 for j in range(n)] for i in range(n)]\n"
                          "b = [[(i * j) % 5 for j in range(n)] for i in range(n)]\n"
                          "c = [[0] * n for _ in range(n)]\n"
                          "for i in range(n):\n"
                          "    for j in range(n):\n"
                          "        s = 0\n"
                          "        for k in range(n):\n"
                          "            s += a[i][k] * b[k][j]\n"
                          "        c[i][j] = s\n"
                          "c[n - 1][n - 1]\n"},
        {"exceptions_loop", "caught = 0\n"
                            "for i in range(30000):\n"
                            "    try:\n"
                            "        if i % 3 == 0:\n"
                            "            raise ValueError(i)\n"
                            "        caught -= 1\n"
                            "    except ValueError:\n"
                            "        caught += 2\n"
                            "caught\n"},
        {"sieve", "n = 200000\n"
                  "is_p = [True] * (n + 1)\n"
                  "is_p[0] = is_p[1] = False\n"
                  "i = 2\n"
                  "while i * i <= n:\n"
                  "    if is_p[i]:\n"
                  "        for j in range(i * i, n + 1, i):\n"
                  "            is_p[j] = False\n"
                  "    i += 1\n"
                  "sum(is_p)\n"},
        {"nested_data", "users = [{'id': i, 'tags': ['t%d' % (i % 5), 'all'], 'score': i % 13}\n"
                        "         for i in range(20000)]\n"
                        "by_tag = {}\n"
                        "for u in users:\n"
                        "    for t in u['tags']:\n"
                        "        by_tag.setdefault(t, []).append(u['score'])\n"
                        "{t: sum(v) for t, v in by_tag.items()}\n"},
        {"generators", "def squares(n):\n"
                       "    for i in range(n):\n"
                       "        yield i * i\n"
                       "def evens(it):\n"
                       "    for v in it:\n"
                       "        if v % 2 == 0:\n"
                       "            yield v\n"
                       "sum(evens(squares(100000)))\n"},
        {"string_methods", "line = 'The Quick brown fox, jumps over the lazy dog'\n"
                           "n = 0\n"
                           "for i in range(15000):\n"
                           "    w = line.lower().replace(',', '').split()\n"
                           "    if w[i % len(w)].startswith('t'):\n"
                           "        n += len(' '.join(w).upper())\n"
                           "n\n"},
        {"float_math", "import math\n"
                       "acc = 0.0\n"
                       "for i in range(1, 100000):\n"
                       "    x = i * 0.001\n"
                       "    acc += math.sin(x) * math.sqrt(x) / (1.0 + x * x)\n"
                       "round(acc, 6)\n"},
        {"closures", "def make_adder(k):\n"
                     "    def add(v):\n"
                     "        return v + k\n"
                     "    return add\n"
                     "adders = [make_adder(k) for k in range(10)]\n"
                     "t = 0\n"
                     "for i in range(20000):\n"
                     "    t = adders[i % 10](t)\n"
                     "t\n"},
        {"fstrings", "out = []\n"
                     "for i in range(20000):\n"
                     "    out.append(f'{i:05d}|{i * 0.5:.2f}|{i % 7!r}')\n"
                     "len(''.join(out))\n"},
};

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Best time in seconds of `runs` executor runs, or -1 with *why set when the executor does not
 * run the workload to an "ok" outcome. */
static double
executor_time(const char *code, int runs, char *why, size_t whylen)
{
    struct exec_case c = {.src = (char *) code};
    double best = -1;
    for (int i = 0; i < runs; i++) {
        struct pf_error *err = NULL;
        double t0 = now_s();
        cJSON *res = exec_case_run(&c, &err);
        double dt = now_s() - t0;
        if (!res) {
            snprintf(why, whylen, "%s", err ? err->msg : "?");
            pf_error_free(err);
            return -1;
        }
        const cJSON *outcome = cJSON_GetObjectItemCaseSensitive(res, "outcome");
        if (!cJSON_IsString(outcome) || strcmp(outcome->valuestring, "ok") != 0) {
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(res, "error");
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "type");
            snprintf(why, whylen, "%s", cJSON_IsString(t) ? t->valuestring : "?");
            cJSON_Delete(res);
            return -1;
        }
        cJSON_Delete(res);
        if (best < 0 || dt < best)
            best = dt;
    }
    return best;
}

int
main(int argc, char **argv)
{
    int runs = 5, opt;
    const char *filter = NULL;
    while ((opt = getopt(argc, argv, "n:k:")) != -1) {
        if (opt == 'n')
            runs = atoi(optarg) > 0 ? atoi(optarg) : 1;
        else if (opt == 'k')
            filter = optarg;
        else {
            fprintf(stderr, "usage: %s [-n RUNS] [-k SUBSTRING]\n", argv[0]);
            return 2;
        }
    }
    struct pf_error *err = NULL;
    if (exec_case_init(&err) < 0) {
        fprintf(stderr, "cannot start: %s\n", err ? err->msg : "?");
        return 1;
    }
    printf("%-18s %11s %13s %8s   (best of %d; executor includes parsing)\n", "workload",
           "native ms", "executor ms", "ratio", runs);
    double log_sum = 0;
    int n_ratios = 0, n_unsupported = 0;
    for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++) {
        const struct workload *w = &workloads[i];
        if (filter && !strstr(w->name, filter))
            continue;
        double native = exec_case_native_time(w->code, runs);
        char why[128] = "";
        double ex = executor_time(w->code, runs, why, sizeof(why));
        if (native <= 0 || ex < 0) {
            printf("%-18s %11.2f %13s %8s   (%s)\n", w->name, native * 1e3, "-", "unsupported",
                   native <= 0 ? "native run failed" : why);
            n_unsupported++;
            continue;
        }
        double ratio = ex / native;
        log_sum += log(ratio);
        n_ratios++;
        printf("%-18s %11.2f %13.2f %7.2fx\n", w->name, native * 1e3, ex * 1e3, ratio);
    }
    if (n_ratios)
        printf("geometric mean ratio: %.2fx over %d workloads (%d unsupported)\n",
               exp(log_sum / n_ratios), n_ratios, n_unsupported);
    else
        printf("geometric mean ratio: n/a (%d unsupported)\n", n_unsupported);
    return 0;
}
