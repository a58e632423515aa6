#include "policy_warnings.h"

#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_cleanup.h"

/* Modules a profile is warned about allowing, and why.
 * - Files: each hands out a way to open, read or list any file the worker's other layers leave
 *   it (io.open is the real open, which the builtins never give).
 * - Reflection: each hands snippets other modules and their namespaces, which the executor's
 *   checks see only where the walk takes a value out itself; C code (map, operator.call)
 *   iterating what they answer is not checked (daemon/executor/README.md, "Policy").
 *   sys.modules is every loaded module; importlib.import_module loads any module, past the
 *   profile's imports; inspect's getmodule answers a function's module (its readers of every
 *   attribute are refused).
 * Not complete lists, which is why they warn and do not refuse: a module is allowed only after
 * its functions have been reviewed (pyfence-profile(5)). */
#define WHY_FILES                                                                              \
    "its functions open, read or list files, so snippets reach every file the worker's other " \
    "layers leave it, although the builtin open is never given"
#define WHY_REFLECTION                                                                          \
    "it hands snippets other modules and their contents, which the executor checks only where " \
    "the snippet's own code takes them, not where C code such as map() does"
static const struct {
    const char *name, *why;
} risky_modules[] = {
        {"io", WHY_FILES},
        {"_io", WHY_FILES},
        {"os", WHY_FILES},
        {"posix", WHY_FILES},
        {"pathlib", WHY_FILES},
        {"shutil", WHY_FILES},
        {"codecs", WHY_FILES},
        {"fileinput", WHY_FILES},
        {"linecache", WHY_FILES},
        {"glob", WHY_FILES},
        {"gzip", WHY_FILES},
        {"bz2", WHY_FILES},
        {"lzma", WHY_FILES},
        {"zipfile", WHY_FILES},
        {"tarfile", WHY_FILES},
        {"tokenize", WHY_FILES},
        {"inspect", WHY_REFLECTION},
        {"sys", WHY_REFLECTION},
        {"importlib", WHY_REFLECTION},
};

struct warnings {
    struct policy_strings list;
    int failed; /* out of memory once: the rest is skipped, the caller gets an error */
};

__attribute__((format(printf, 2, 3))) static void
add(struct warnings *w, const char *fmt, ...)
{
    if (w->failed)
        return;
    char *line = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&line, fmt, ap);
    va_end(ap);
    char **grown = n < 0 ? NULL : realloc(w->list.items, (w->list.n + 1) * sizeof(char *));
    if (!grown) {
        free(n < 0 ? NULL : line);
        w->failed = 1;
        return;
    }
    grown[w->list.n++] = line;
    w->list.items = grown;
}

/* What each layer being off means for a profile's workers; NULL where it changes nothing the
 * daemon does not already say (identity without root: there is no other uid to become). */
static const char *
layer_off_meaning(enum policy_layer layer, bool root, bool identity_off)
{
    switch (layer) {
    case POLICY_LAYER_CGROUP:
        return "ITS WORKERS GET NO CGROUP: their memory, processes and CPU time are bounded by "
               "rlimits alone, per process rather than per job";
    case POLICY_LAYER_NAMESPACES:
        return root ? "ITS WORKERS SHARE THE HOST'S MOUNT, PID, IPC, UTS AND NETWORK NAMESPACES: "
                      "they see the host's files as their uid may and its processes, get no "
                      "private /tmp, and only seccomp keeps them from opening sockets"
                    : NULL; /* said by warn_namespaces_off's wording below */
    case POLICY_LAYER_IDENTITY:
        return root ? "pyfenced is root: ITS WORKERS RUN AS ROOT (UID 0) ON THE HOST, and may read "
                      "and write every file root may that the other layers leave them "
                      "(/etc/shadow included)"
                    : NULL;
    case POLICY_LAYER_PRIVILEGES:
        if (!root)
            return "ITS WORKERS KEEP EVERY CAPABILITY OF THE ZYGOTE'S USER NAMESPACE, without "
                   "no_new_privs: they may change the mount view and the other namespaces' "
                   "set-up inside it";
        return identity_off ? "pyfenced is root and \"identity\" is \"off\" too: ITS WORKERS HOLD "
                              "EVERY CAPABILITY OF ROOT ON THE HOST (mount, module loading, "
                              "ptrace of any process, raw devices)"
                            : "pyfenced is root: ITS WORKERS KEEP A FULL CAPABILITY BOUNDING SET, "
                              "WITHOUT no_new_privs AND STILL DUMPABLE: a set-uid program would "
                              "give them root back";
    case POLICY_LAYER_LANDLOCK:
        return "ITS WORKERS GET NO LANDLOCK RULESET: the files they may read and write are bounded "
               "by their uid and the mount view alone, and (Landlock ABI 4+) TCP is not denied by "
               "it";
    case POLICY_LAYER_SECCOMP:
        return "ITS WORKERS MAY MAKE EVERY SYSTEM CALL (execve, socket, ptrace, mount, bpf, "
               "io_uring, keyrings, ...): the executor's checks are all that stand between a "
               "snippet and them";
    case POLICY_LAYER_RLIMITS:
    case POLICY_LAYER_FDS:
    case _POLICY_LAYER_MAX:
    case _POLICY_LAYER_INVALID:
    default:
        return NULL; /* always required: the parser refuses "off" */
    }
}

static void
warn_layers(struct warnings *w, const struct policy_profile *p, uid_t daemon_uid)
{
    bool root = daemon_uid == 0;
    bool identity_off = p->hardening[POLICY_LAYER_IDENTITY] == POLICY_LEVEL_OFF;
    for (int i = 0; i < _POLICY_LAYER_MAX; i++) {
        enum policy_layer layer = (enum policy_layer) i;
        if (p->hardening[i] != POLICY_LEVEL_OFF || policy_layer_default(layer) == POLICY_LEVEL_OFF)
            continue;
        const char *meaning = layer_off_meaning(layer, root, identity_off);
        if (layer == POLICY_LAYER_NAMESPACES && !root)
            /* Wording relied on by tests/integration/test_unprivileged.py. */
            add(w,
                "profile '%s' sets \"namespaces\": \"off\" and pyfenced is not root: ITS WORKERS "
                "RUN AS UID %u, THE DAEMON'S, IN THE HOST'S MOUNT AND PID NAMESPACES, with every "
                "file of that uid that Landlock leaves them",
                p->name, (unsigned) daemon_uid);
        else if (meaning)
            add(w, "profile '%s' sets \"%s\": \"off\": %s", p->name, policy_layer_name(layer),
                meaning);
    }
}

static bool
names_module(const char *pattern, const char *module)
{
    size_t n = strlen(module);
    return strncmp(pattern, module, n) == 0 &&
           (pattern[n] == '\0' || strcmp(pattern + n, ".*") == 0);
}

static void
warn_imports(struct warnings *w, const struct policy_profile *p)
{
    const struct policy_strings *lists[] = {&p->imports, &p->extra_imports};
    static const char *const list_names[] = {"imports", "extra_imports"};
    for (size_t l = 0; l < PF_ELEMENTSOF(lists); l++)
        for (size_t i = 0; i < lists[l]->n; i++)
            for (size_t m = 0; m < PF_ELEMENTSOF(risky_modules); m++)
                if (names_module(lists[l]->items[i], risky_modules[m].name))
                    add(w, "profile '%s' allows module '%s' (%s): %s", p->name,
                        risky_modules[m].name, list_names[l], risky_modules[m].why);
}

static bool
has_id(const unsigned *ids, size_t n, unsigned id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

/* Whether access admits uid for sure: root, everyone, the uid listed, or (as the system's group
 * database has it now) a group of the user's listed. */
static bool
access_admits_uid(const struct policy_access *a, unsigned uid)
{
    if (uid == 0 || a->everyone || has_id((const unsigned *) a->uids, a->n_uids, uid))
        return true;
    const struct passwd *pw = a->n_gids ? getpwuid(uid) : NULL;
    if (!pw)
        return false;
    gid_t groups[256];
    int n = (int) PF_ELEMENTSOF(groups);
    if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0)
        return true; /* too many groups to tell: not worth a false alarm */
    for (int i = 0; i < n; i++)
        if (has_id((const unsigned *) a->gids, a->n_gids, groups[i]))
            return true;
    return false;
}

static void
warn_default_for_access(struct warnings *w, const struct policy_profile *p)
{
    const struct policy_access *d = &p->default_for, *a = &p->access;
    const char *then = "its requests that name no profile get not_found, with no fall-back to "
                       "'default'";
    if (d->everyone && !a->everyone)
        add(w,
            "profile '%s': default_for.everyone, but its access does not admit everyone: a "
            "peer it does not admit is not served by default: %s",
            p->name, then);
    for (size_t i = 0; i < d->n_uids; i++)
        if (!access_admits_uid(a, d->uids[i]))
            add(w, "profile '%s': default_for uid %u, which its access does not admit: %s", p->name,
                (unsigned) d->uids[i], then);
    for (size_t i = 0; i < d->n_gids; i++)
        if (!a->everyone && !has_id((const unsigned *) a->gids, a->n_gids, d->gids[i]))
            add(w,
                "profile '%s': default_for gid %u, a group its access does not admit: for a "
                "member its access does not admit by uid, %s",
                p->name, (unsigned) d->gids[i], then);
}

/* a comes before b by name, so a wins wherever both are default_for the same peer. */
static void
warn_default_for_overlap(struct warnings *w, const struct policy_profile *a,
                         const struct policy_profile *b)
{
    const struct policy_access *da = &a->default_for, *db = &b->default_for;
    const char *lost = "the first by name is the default, the other's entry is never used";
    bool b_any = db->everyone || db->n_uids || db->n_gids;
    bool a_any = da->everyone || da->n_uids || da->n_gids;
    if ((da->everyone && b_any) || (db->everyone && a_any)) {
        add(w,
            "profiles '%s' and '%s': both default_for, one of them for everyone: %s ('%s' "
            "wherever both match)",
            a->name, b->name, lost, a->name);
        return;
    }
    for (size_t i = 0; i < da->n_uids; i++)
        if (has_id((const unsigned *) db->uids, db->n_uids, da->uids[i]))
            add(w, "profiles '%s' and '%s': both default_for uid %u: %s ('%s')", a->name, b->name,
                (unsigned) da->uids[i], lost, a->name);
    for (size_t i = 0; i < da->n_gids; i++)
        if (has_id((const unsigned *) db->gids, db->n_gids, da->gids[i]))
            add(w, "profiles '%s' and '%s': both default_for gid %u: %s ('%s')", a->name, b->name,
                (unsigned) da->gids[i], lost, a->name);
}

int
policy_warnings(const struct policy *p, uid_t daemon_uid, struct policy_strings *ret,
                struct pf_error **err)
{
    struct warnings w = {0};
    for (size_t i = 0; i < p->n; i++) {
        warn_layers(&w, p->profiles[i], daemon_uid);
        warn_imports(&w, p->profiles[i]);
        warn_default_for_access(&w, p->profiles[i]);
        for (size_t j = i + 1; j < p->n; j++) /* profiles are sorted by name */
            warn_default_for_overlap(&w, p->profiles[i], p->profiles[j]);
    }
    if (w.failed) {
        policy_strings_finish(&w.list);
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    }
    *ret = w.list;
    return 0;
}
