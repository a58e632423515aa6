#include "daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "conn.h"
#include "exec.h"
#include "harden_zygote.h"
#include "job.h"
#include "load.h"
#include "pf_cleanup.h"
#include "pf_log.h"
#include "policy_warnings.h"
#include "zygote.h"

#if HAVE_LIBSYSTEMD
#    include <systemd/sd-daemon.h>
#endif

/* Tells systemd (Type=notify) where we are; nothing happens without $NOTIFY_SOCKET. */
static void
notify(const char *state)
{
#if HAVE_LIBSYSTEMD
    int r = sd_notify(0, state);
    if (r < 0)
        pf_log_debug(MAIN, "sd_notify(\"%s\"): %s, ignoring", state, strerror(-r));
#else
    (void) state;
#endif
}

void
daemon_init(struct daemon *d, uv_loop_t *loop, const struct daemon_options *opts,
            const struct policy_limits *limits)
{
    memset(d, 0, sizeof(*d));
    d->loop = loop;
    loop->data = d;
    d->opts = *opts;
    d->limits = *limits;
    sched_derive_limits(&d->limits);
    sched_init(&d->sched, &d->limits, pools_start_job, d);
    pools_init(&d->pools, d);
    dlist_init(&d->conns);
    dlist_init(&d->jobs);
    session_table_init(&d->sessions, loop, &d->sched, session_end);
    d->start_ns = uv_hrtime();
    d->privileged = geteuid() == 0;
    uv_timer_init(loop, &d->flush_timer);
    d->flush_timer.data = d;
    uv_signal_init(loop, &d->sig_term);
    uv_signal_init(loop, &d->sig_int);
    uv_signal_init(loop, &d->sig_hup);
    d->sig_term.data = d;
    d->sig_int.data = d;
    d->sig_hup.data = d;
}

double
daemon_elapsed_ms(uint64_t from_ns)
{
    return (double) (uv_hrtime() - from_ns) / 1e6;
}

void
daemon_count_outcome(struct daemon *d, int code)
{
    if (code < 0 || code >= _PF_E_MAX)
        code = PF_E_INTERNAL;
    d->jobs_by_outcome[code]++;
}

void
daemon_alloc_cb(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    struct daemon *d = handle->loop->data;
    if (!d->read_buf_busy) {
        d->read_buf_busy = true;
        *buf = uv_buf_init(d->read_buf, sizeof(d->read_buf));
        return;
    }
    /* Not expected (libuv reads one stream at a time), but stay correct if it happens. */
    char *p = malloc(DAEMON_READ_BUF_BYTES);
    *buf = uv_buf_init(p, p ? DAEMON_READ_BUF_BYTES : 0);
}

void
daemon_release_buf(struct daemon *d, const uv_buf_t *buf)
{
    if (!buf->base)
        return;
    if (buf->base == d->read_buf)
        d->read_buf_busy = false;
    else
        free(buf->base);
}

static void
on_signal(uv_signal_t *sig, int signum)
{
    struct daemon *d = sig->data;
    if (d->shutting_down) {
        pf_log_notice(MAIN, "%s again while stopping; still waiting for replies to drain",
                      strsignal(signum));
        return;
    }
    pf_log_notice(MAIN, "%s: stopping", strsignal(signum));
    daemon_shutdown(d);
}

static int
load_policy(struct daemon *d, struct policy **ret, struct pf_error **err)
{
    if (d->opts.policy_dir)
        return policy_load_dir(d->opts.policy_dir, ret, err);
    return policy_load_builtin(ret, err);
}

/* A profile of next keeps the version of its egress rules when the policy in force has the
 * same profile with equal rules; any other gets a new one (daemon_egress_start). */
static void
number_egress_rules(struct daemon *d, struct policy *next)
{
    for (size_t i = 0; i < next->n; i++) {
        struct policy_egress *e = &next->profiles[i]->egress;
        const struct policy_profile *old =
                d->policy ? policy_find(d->policy, next->profiles[i]->name) : NULL;
        e->version = old && policy_egress_equal(&old->egress, e) ? old->egress.version
                                                                 : ++d->egress_versions;
    }
}

/* What the policy just loaded does that the operator must hear (policy_warnings.h: hardening
 * layers turned off, modules that open files, default_for entries that cannot work): said at
 * every load, since a reload may add one. */
static void
warn_policy(const struct daemon *d)
{
    struct policy_strings warnings = {0};
    struct pf_error *err = NULL;
    if (policy_warnings(d->policy, geteuid(), &warnings, &err) < 0) {
        pf_log_error(POLICY, "cannot list the policy's warnings: %s, ignoring",
                     err ? err->msg : "out of memory");
        pf_error_free(err);
        return;
    }
    for (size_t i = 0; i < warnings.n; i++)
        pf_log_warning(POLICY, "%s", warnings.items[i]);
    policy_strings_finish(&warnings);
}

int
daemon_reload_policy(struct daemon *d, struct pf_error **err)
{
    struct policy *next = NULL;
    uv_timeval64_t now;
    d->policy_reload_at_ms =
            uv_gettimeofday(&now) == 0 ? now.tv_sec * 1000 + now.tv_usec / 1000 : 0;
    d->policy_reload_ok = false;
    if (load_policy(d, &next, err) < 0) {
        /* Kept for `stats` (pyfence status): the log may not be where the operator looks. */
        free(d->policy_error);
        d->policy_error = strdup(err && *err ? (*err)->msg : "out of memory");
        return -1;
    }
    /* Running jobs copied what they need from their profile: swapping is safe. */
    number_egress_rules(d, next);
    policy_free(d->policy);
    d->policy = next;
    d->policy_reload_ok = true;
    free(d->policy_error);
    d->policy_error = NULL;
    pf_log_notice(POLICY, "policy: %zu profiles from %s", next->n, next->source);
    warn_policy(d);
    /* Queued execs were resolved at arrival under the old policy: one that the new policy
     * would refuse must not start under it (before anything can pump the queue). */
    size_t revoked = job_revoke_queued(d);
    if (revoked)
        pf_log_notice(POLICY,
                      "%zu queued execs answered not_found: the reloaded policy no longer lets "
                      "their uid use their profile",
                      revoked);
    session_revoke(&d->sessions, d->policy);
    pools_reload(&d->pools);
    return 0;
}

static void
on_sighup(uv_signal_t *sig, int signum)
{
    struct daemon *d = sig->data;
    struct pf_error *err = NULL;
    notify("RELOADING=1");
    if (daemon_reload_policy(d, &err) < 0) {
        pf_log_error(POLICY, "reload failed, the old policy stays in force: %s",
                     err ? err->msg : "out of memory");
        pf_error_free(err);
    }
    notify("READY=1");
}

static void
add_unique(const char **list, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(list[i], name) == 0)
            return;
    list[(*n)++] = name;
}

/* What a zygote imports once, before forking: the executor's default imports and, for the
 * preload zygote (`full`), every profile's `preload`, each once (NULL-terminated; the names are
 * the policy's). A later reload that changes a preload list takes effect when pyfenced
 * restarts. */
static const char **
preload_list(const struct daemon *d, bool full)
{
    static const char *const defaults[] = {EXEC_DEFAULT_IMPORTS};
    size_t cap = PF_ELEMENTSOF(defaults) + 1;
    for (size_t i = 0; d->policy && i < d->policy->n; i++)
        cap += d->policy->profiles[i]->preload.n;
    const char **list = calloc(cap, sizeof(*list));
    if (!list)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < PF_ELEMENTSOF(defaults); i++)
        add_unique(list, &n, defaults[i]);
    for (size_t i = 0; full && d->policy && i < d->policy->n; i++)
        for (size_t k = 0; k < d->policy->profiles[i]->preload.n; k++)
            add_unique(list, &n, d->policy->profiles[i]->preload.items[k]);
    return list;
}

static bool
any_preload(const struct daemon *d)
{
    for (size_t i = 0; d->policy && i < d->policy->n; i++)
        if (d->policy->profiles[i]->preload.n)
            return true;
    return false;
}

bool
daemon_profile_preloads(const struct daemon *d, const char *profile)
{
    if (!d->zygote_preload || !d->policy || !profile)
        return false;
    const struct policy_profile *p = policy_find(d->policy, profile);
    return p && p->preload.n;
}

/* The rules a run's egress is checked against: its profile's in the policy in force, if they
 * are still the ones it started with and the profile still admits its peer; else NULL, with
 * why in msg. A name is only ever looked up to find the very rules the run started with: a
 * profile of that name with other rules (or for other peers) is another profile. */
static const struct policy_egress *
run_rules(const struct daemon *d, const struct daemon_egress_run *run, char *msg, size_t size)
{
    static const struct policy_egress no_rules;
    if (!d->policy || !run->profile || !*run->profile)
        return &no_rules; /* no policy (tests): no rules */
    const struct policy_profile *p = policy_find(d->policy, run->profile);
    if (p && p->egress.version == run->egress_version && run->peer &&
        policy_profile_allows(p, run->peer))
        return &p->egress;
    snprintf(msg, size,
             "a policy reload since this run started changed the egress rules of profile '%s', "
             "or who may use it: this run's egress is refused (a new run gets the profile as "
             "it is now)",
             run->profile);
    return NULL;
}

cJSON *
daemon_egress_start(struct daemon *d, const struct daemon_egress_run *run, const cJSON *request,
                    egress_done_fn done, void *ctx, struct egress_call **ret_call)
{
    *ret_call = NULL;
    const struct policy_limits *limits = run->limits;
    char msg[400];
    uint64_t max = (uint64_t) limits->v[POLICY_LIMIT_EGRESS_MAX_REQUESTS];
    if (*run->count >= max) {
        snprintf(msg, sizeof(msg), "this run already made egress_max_requests (%llu) requests",
                 (unsigned long long) max);
        return egress_error_frame("refused", msg);
    }
    ++*run->count;
    /* The rules in force now, if still the run's own: a reload that takes a rule away (or
     * changes them at all) stops their next use at once. */
    const struct policy_egress *rules = run_rules(d, run, msg, sizeof(msg));
    if (!rules)
        return egress_error_frame("refused", msg);
    struct egress_limits lim = {
            .timeout_ms = (uint64_t) limits->v[POLICY_LIMIT_EGRESS_TIMEOUT_MS],
            .max_bytes = (uint64_t) limits->v[POLICY_LIMIT_EGRESS_MAX_BYTES],
            .owner = run->peer ? (uint64_t) run->peer->uid : 0,
    };
    if (!d->egress)
        return egress_error_frame("connection", "pyfenced is stopping");
    return egress_start(d->egress, rules, &lim, request, done, ctx, ret_call);
}

static uint32_t
uid_count(const struct daemon *d)
{
    return d->opts.uid_count ? d->opts.uid_count : HARDEN_UID_COUNT_DEFAULT;
}

/* Two zygotes when a profile preloads and the uid range can be split (--uid-range with a
 * count of 1 cannot: then one zygote preloads everything, as for every profile). */
static bool
two_zygotes(const struct daemon *d)
{
    return any_preload(d) && uid_count(d) >= 2;
}

/* Starts one zygote; `full`: it preloads every profile's modules. With two, the preload one
 * takes the upper half of the worker uid range (no two live workers may share a uid). */
static int
start_zygote(struct daemon *d, bool full, struct zygote **ret, struct pf_error **err)
{
    _cleanup_free_ const char **preload = preload_list(d, full);
    if (!preload)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    struct zygote_config zc = {
            .path = d->opts.zygote_path,
            .log_level = d->opts.log_level,
            .preload = preload,
            .cgroup_mode = d->opts.cgroup_mode,
            .namespaces_off = d->opts.namespaces_off,
            .uid_base = d->opts.uid_base,
            .uid_count = d->opts.uid_count,
    };
    if (two_zygotes(d)) {
        uint32_t base = d->opts.uid_base ? d->opts.uid_base : HARDEN_UID_BASE_DEFAULT;
        uint32_t half = uid_count(d) / 2;
        zc.uid_base = full ? base + half : base;
        zc.uid_count = half;
    }
    if (zygote_start(d->loop, &zc, job_on_spawned, job_on_exit, ret, err) < 0)
        return pf_error_prefix(err, "cannot start the zygote '%s'", d->opts.zygote_path);
    pf_log_info(MAIN, "%s zygote pid %d, Python %s", ret == &d->zygote_preload ? "preload" : "base",
                (int) zygote_pid(*ret), zygote_python_version(*ret));
    return 0;
}

/* Without root, workers keep the daemon's supplementary groups: the zygote's user namespace
 * must deny setgroups to map its gid (harden_ns.c), so the identity layer cannot drop them, and
 * each still counts on the host (a worker sees them as the overflow gid). Refused unless
 * --keep-groups says the operator accepts it. The daemon's own gid does not count: workers keep
 * that one anyway. */
static int
check_groups(const struct daemon *d, struct pf_error **err)
{
    char list[256];
    unsigned extra = 0;
    if (harden_extra_groups(list, sizeof(list), &extra, err) < 0)
        return -1;
    if (!extra)
        return 0;
    if (d->opts.keep_groups) {
        pf_log_warning(MAIN,
                       "--keep-groups: EVERY WORKER KEEPS THE SUPPLEMENTARY GROUPS %s of uid %u "
                       "(not root: they cannot be dropped in the zygote's user namespace), with "
                       "what they give on the host's files",
                       list, (unsigned) geteuid());
        return 0;
    }
    return pf_error_set(err, PF_E_CONFIG,
                        "running as uid %u, not root, with supplementary groups %s: every worker "
                        "would keep them (a user namespace cannot drop them) and act with them on "
                        "the host's files. Start pyfenced without them (setpriv --clear-groups; "
                        "systemd: a User= in no other group, no SupplementaryGroups=), or pass "
                        "--keep-groups to accept that",
                        (unsigned) geteuid(), list);
}

static void
warn_unprivileged(const struct daemon *d)
{
    pf_log_warning(MAIN,
                   "running as uid %u, not root: workers keep this uid, so the identity and "
                   "privileges layers are best-effort whatever the profiles say; the zygotes "
                   "make their namespaces inside a user namespace of their own, and the "
                   "namespaces layer is required for every profile that does not set it \"off\" "
                   "(without it a worker would act as this uid on the host): a job that cannot "
                   "get it is refused",
                   (unsigned) geteuid());
    if (d->opts.namespaces_off)
        pf_log_warning(MAIN, "--namespaces off WITHOUT ROOT: EVERY JOB OF A PROFILE THAT DOES NOT "
                             "SET \"namespaces\": \"off\" IS REFUSED");
}

int
daemon_start(struct daemon *d, struct pf_error **err)
{
    if (daemon_reload_policy(d, err) < 0)
        return -1;
    if (!d->privileged) {
        if (check_groups(d, err) < 0)
            return -1;
        warn_unprivileged(d);
    }
    if (!(d->egress =
                  egress_new(d->loop, (uint64_t) d->limits.v[POLICY_LIMIT_EGRESS_MAX_BYTES_HELD],
                             (unsigned) d->limits.v[POLICY_LIMIT_MAX_WORKERS], err)))
        return -1;
    if (listener_start(&d->listener, d->loop, d->opts.socket_path, d->opts.socket_mode,
                       conn_on_connection, d, err) < 0)
        return -1;
    if (d->opts.zygote_path) {
        /* Two zygotes when a profile preloads: that profile's workers come from the fat one,
         * every other profile's from the lean one (daemon_profile_preloads). */
        bool two = two_zygotes(d);
        if (start_zygote(d, !two, &d->zygote, err) < 0 ||
            (two && start_zygote(d, true, &d->zygote_preload, err) < 0)) {
            d->zygote = zygote_stop(d->zygote);
            listener_stop(&d->listener);
            return -1;
        }
    }
    uv_signal_start(&d->sig_term, on_signal, SIGTERM);
    uv_signal_start(&d->sig_int, on_signal, SIGINT);
    uv_signal_start(&d->sig_hup, on_sighup, SIGHUP);
    notify("READY=1");
    return 0;
}

/* Second stage of a shutdown: every connection is gone (or the flush bound passed). */
static void
daemon_stop_now(struct daemon *d)
{
    if (d->stopped)
        return;
    d->stopped = true;
    struct dlist *pos, *tmp;
    DLIST_FOREACH_SAFE(pos, tmp, &d->conns) {
        conn_close(pf_container_of(pos, struct conn, link));
    }
    /* Kills and reaps every worker; exit_cb runs for each job still live. */
    d->zygote_preload = zygote_stop(d->zygote_preload);
    d->zygote = zygote_stop(d->zygote);
    session_abandon_all(&d->sessions);
    DLIST_FOREACH_SAFE(pos, tmp, &d->jobs) {
        job_abandon(pf_container_of(pos, struct job, daemon_link));
    }
    pools_stop(&d->pools);
    egress_close(d->egress); /* no job or session is left to wait for an answer */
    d->egress = NULL;
    uv_close((uv_handle_t *) &d->flush_timer, NULL);
    uv_close((uv_handle_t *) &d->sig_term, NULL);
    uv_close((uv_handle_t *) &d->sig_int, NULL);
    uv_close((uv_handle_t *) &d->sig_hup, NULL);
}

static void
on_flush_timeout(uv_timer_t *timer)
{
    struct daemon *d = timer->data;
    pf_log_warning(MAIN, "replies still unread after %d ms; closing the remaining connections",
                   DAEMON_FLUSH_TIMEOUT_MS);
    daemon_stop_now(d);
}

void
daemon_conn_gone(struct daemon *d)
{
    if (d->shutting_down && dlist_empty(&d->conns))
        daemon_stop_now(d);
}

void
daemon_shutdown(struct daemon *d)
{
    if (d->shutting_down)
        return;
    d->shutting_down = true;
    notify("STOPPING=1");
    listener_stop(&d->listener);
    session_shutdown_all(&d->sessions);
    struct dlist *pos, *tmp;
    DLIST_FOREACH_SAFE(pos, tmp, &d->jobs) {
        job_fail(pf_container_of(pos, struct job, daemon_link), PF_E_SHUTTING_DOWN,
                 "pyfenced is shutting down", JOB_KILL_SHUTDOWN);
    }
    DLIST_FOREACH_SAFE(pos, tmp, &d->conns) {
        conn_drain(pf_container_of(pos, struct conn, link));
    }
    if (dlist_empty(&d->conns)) {
        daemon_stop_now(d);
        return;
    }
    uv_timer_start(&d->flush_timer, on_flush_timeout, DAEMON_FLUSH_TIMEOUT_MS, 0);
}

void
daemon_finish(struct daemon *d)
{
    listener_stop(&d->listener);
    listener_finish(&d->listener);
    d->policy = policy_free(d->policy);
    free(d->policy_error);
    d->policy_error = NULL;
    /* Every connection, job and session is gone: so is every byte charged to a uid. */
    if (d->sched.bytes)
        pf_log_error(MAIN,
                     "%llu bytes still counted for peer uids at exit (max_bytes_per_uid's "
                     "accounting), ignoring",
                     (unsigned long long) d->sched.bytes);
    sched_finish(&d->sched);
}
