#include "cli_status.h"

#include <stdbool.h>
#include <time.h>

#include "cli_common.h"

static const cJSON *
get(const cJSON *obj, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(obj, name);
}

static void
workers_rows(FILE *out, const cJSON *st)
{
    const cJSON *w = get(st, "workers"), *q = get(st, "queue"), *lat = get(st, "latency");
    if (cJSON_IsNumber(get(st, "peers")))
        fprintf(out, "  %-14s %.0f\n", "peers (uids)", cli_num(st, "peers"));
    if (cJSON_IsNumber(get(st, "sessions")))
        fprintf(out, "  %-14s %.0f\n", "sessions", cli_num(st, "sessions"));
    if (cJSON_IsObject(w))
        fprintf(out,
                "  %-14s %.0f live: %.0f idle, %.0f busy (max %.0f, %.0f for sessions, %.0f of "
                "them per uid)\n",
                "workers", cli_num(w, "live"), cli_num(w, "idle"), cli_num(w, "busy"),
                cli_num(w, "max"), cli_num(w, "session_max"), cli_num(w, "session_max_per_uid"));
    if (cJSON_IsObject(q))
        fprintf(out,
                "  %-14s %.0f waiting, %.0f running (max %.0f waiting, %.0f per uid; %.0f "
                "running per uid)\n",
                "queue", cli_num(q, "queued"), cli_num(q, "running"), cli_num(q, "max_queued"),
                cli_num(q, "max_queued_per_uid"), cli_num(q, "max_jobs_per_uid"));
    if (cJSON_IsObject(q) && cJSON_IsNumber(get(q, "max_bytes_per_uid")) &&
        cJSON_IsNumber(get(q, "max_bytes")))
        fprintf(out, "  %-14s %.0f bytes (max %.0f; per uid: %.0f connections, %.0f bytes)\n",
                "held", cli_num(q, "bytes"), cli_num(q, "max_bytes"),
                cli_num(q, "max_connections_per_uid"), cli_num(q, "max_bytes_per_uid"));
    if (cJSON_IsObject(lat) && cli_num(lat, "samples") > 0)
        fprintf(out, "  %-14s p50 %.3f ms, p99 %.3f ms, max %.3f ms (last %.0f replies)\n",
                "latency", cli_num(lat, "p50_ms"), cli_num(lat, "p99_ms"), cli_num(lat, "max_ms"),
                cli_num(lat, "samples"));
}

static void
pools_rows(FILE *out, const cJSON *st)
{
    const cJSON *pools = get(st, "pools"), *p;
    if (!cJSON_IsObject(pools) || !pools->child)
        return;
    fprintf(out, "  warm pools\n    %-12s %5s %5s %8s %8s %8s %8s %8s %6s %6s\n", "profile", "size",
            "idle", "hits", "misses", "spawned", "held", "recycled", "lost", "lent");
    cJSON_ArrayForEach(p, pools) {
        fprintf(out, "    %-12s %5.0f %5.0f %8.0f %8.0f %8.0f %8.0f %8.0f %6.0f %6.0f\n", p->string,
                cli_num(p, "size"), cli_num(p, "idle"), cli_num(p, "hits"), cli_num(p, "misses"),
                cli_num(p, "spawned"), cli_num(p, "held"), cli_num(p, "recycled"),
                cli_num(p, "lost"), cli_num(p, "lent"));
    }
}

static void
uids_rows(FILE *out, const cJSON *st)
{
    const cJSON *uids = get(st, "uids"), *u;
    if (!cJSON_IsArray(uids) || !uids->child)
        return;
    fprintf(out, "  peers by uid\n    %-10s %6s %9s %9s %7s %8s %10s\n", "uid", "conns", "sessions",
            "jobs", "queued", "running", "bytes");
    cJSON_ArrayForEach(u, uids) {
        fprintf(out, "    %-10.0f %6.0f %9.0f %9.0f %7.0f %8.0f %10.0f\n", cli_num(u, "uid"),
                cli_num(u, "conns"), cli_num(u, "sessions"), cli_num(u, "jobs"),
                cli_num(u, "queued"), cli_num(u, "running"), cli_num(u, "bytes"));
    }
}

static void
policy_row(FILE *out, const cJSON *st)
{
    const cJSON *pol = get(st, "policy");
    const char *source = cJSON_GetStringValue(get(pol, "source"));
    if (!source)
        return;
    const cJSON *last = get(pol, "last_reload");
    const char *error = cJSON_GetStringValue(get(pol, "reload_error"));
    char when[64] = "";
    if (cJSON_IsObject(last) && cli_num(last, "at") > 0) {
        time_t t = (time_t) (cli_num(last, "at") / 1000);
        struct tm tm;
        if (gmtime_r(&t, &tm))
            strftime(when, sizeof(when), ", last (re)load %Y-%m-%d %H:%M:%S UTC", &tm);
    }
    fprintf(out, "  %-14s %s (%d profiles)%s%s\n", "policy", source,
            cJSON_GetArraySize(get(pol, "profiles")), when,
            cJSON_IsTrue(get(last, "ok")) || !cJSON_IsObject(last) ? "" : " FAILED");
    if (error)
        fprintf(out, "  %-14s %s\n", "reload error", error);
}

void
cli_status_scheduling(FILE *out, const cJSON *st)
{
    workers_rows(out, st);
    pools_rows(out, st);
    uids_rows(out, st);
    policy_row(out, st);
}
