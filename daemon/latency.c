#include "latency.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void
latency_record(struct latency *l, double ms)
{
    l->ms[l->next] = ms;
    l->next = (l->next + 1) % LATENCY_RING;
    if (l->n < LATENCY_RING)
        l->n++;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* Sorted copy of the samples into out (LATENCY_RING entries); returns how many. */
static size_t
sorted(const struct latency *l, double *out)
{
    memcpy(out, l->ms, l->n * sizeof(double));
    qsort(out, l->n, sizeof(double), cmp_double);
    return l->n;
}

static double
rank(const double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    size_t k = (size_t) ceil(p / 100.0 * (double) n);
    return v[k ? k - 1 : 0];
}

double
latency_percentile(const struct latency *l, double p)
{
    double v[LATENCY_RING];
    return rank(v, sorted(l, v), p);
}

/* Three decimals: microseconds are all a reader can use. */
static double
round_us(double ms)
{
    return round(ms * 1000) / 1000;
}

cJSON *
latency_json(const struct latency *l)
{
    double v[LATENCY_RING];
    size_t n = sorted(l, v);
    cJSON *o = cJSON_CreateObject();
    if (o && cJSON_AddNumberToObject(o, "samples", (double) n) &&
        cJSON_AddNumberToObject(o, "p50_ms", round_us(rank(v, n, 50))) &&
        cJSON_AddNumberToObject(o, "p99_ms", round_us(rank(v, n, 99))) &&
        cJSON_AddNumberToObject(o, "max_ms", round_us(n ? v[n - 1] : 0)))
        return o;
    cJSON_Delete(o);
    return NULL;
}
