/* Layer 1, cgroup: detection of what the host offers, the choice of one backend (once, at zygote
 * start-up, logged with its reason), the pool of per-slot cgroups, and the layer itself (the
 * worker joins its slot's cgroup before it reads untrusted input). Backends: harden_cgroup_v2.c,
 * harden_cgroup_v1.c, harden_cgroup_none.c. */
#include "harden_cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harden_internal.h"
#include "pf_cleanup.h"
#include "pf_log.h"

static inline void
fclosep(FILE **f)
{
    if (*f)
        fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void
closedirp(DIR **d)
{
    if (*d)
        closedir(*d);
}

/* ---- file helpers ------------------------------------------------------------------------ */

int
cgroup_write(const char *dir, const char *file, const char *value, struct pf_error **err)
{
    _cleanup_free_ char *path = NULL;
    if (asprintf(&path, "%s/%s", dir, file) < 0)
        return pf_error_set(err, PF_E_INTERNAL, "cgroup: out of memory");
    _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "cgroup: open '%s'", path);
    size_t len = strlen(value);
    if (write(fd, value, len) != (ssize_t) len)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "cgroup: write '%s' to '%s'", value,
                                  path);
    return 0;
}

int
cgroup_write_u64(const char *dir, const char *file, uint64_t value, struct pf_error **err)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%" PRIu64, value);
    return cgroup_write(dir, file, buf, err);
}

/* Reads what fd holds from offset 0 (pread: a kept fd is read again job after job); `what`
 * names the file in errors. */
static int
read_fd(int fd, const char *what, char *buf, size_t size, struct pf_error **err)
{
    ssize_t n;
    do
        n = pread(fd, buf, size - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "cgroup: read '%s'", what);
    buf[n] = '\0';
    return 0;
}

static int
read_small(const char *dir, const char *file, char *buf, size_t size, struct pf_error **err)
{
    _cleanup_free_ char *path = NULL;
    if (asprintf(&path, "%s/%s", dir, file) < 0)
        return pf_error_set(err, PF_E_INTERNAL, "cgroup: out of memory");
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "cgroup: open '%s'", path);
    return read_fd(fd, path, buf, size, err);
}

static int
parse_u64(const char *buf, const char *dir, const char *file, uint64_t *ret, struct pf_error **err)
{
    if (strncmp(buf, "max", 3) == 0) {
        *ret = UINT64_MAX;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (errno || end == buf)
        return pf_error_set(err, PF_E_INTERNAL, "cgroup: '%s/%s' holds no number", dir, file);
    *ret = v;
    return 0;
}

static uint64_t
parse_key(char *buf, const char *key)
{
    size_t klen = strlen(key);
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (strncmp(line, key, klen) == 0 && line[klen] == ' ')
            return strtoull(line + klen + 1, NULL, 10);
    return 0;
}

int
cgroup_read_u64(const char *dir, const char *file, uint64_t *ret, struct pf_error **err)
{
    char buf[64];
    if (read_small(dir, file, buf, sizeof(buf), err) < 0)
        return -1;
    return parse_u64(buf, dir, file, ret, err);
}

int
cgroup_read_key(const char *dir, const char *file, const char *key, uint64_t *ret,
                struct pf_error **err)
{
    char buf[4096];
    if (read_small(dir, file, buf, sizeof(buf), err) < 0)
        return -1;
    *ret = parse_key(buf, key);
    return 0;
}

bool
cgroup_file_exists(const char *dir, const char *file)
{
    _cleanup_free_ char *path = NULL;
    if (asprintf(&path, "%s/%s", dir, file) < 0)
        return false;
    return access(path, F_OK) == 0;
}

int
cgroup_mkdir(const char *path, struct pf_error **err)
{
    if (mkdir(path, 0755) < 0 && errno != EEXIST)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "cgroup: mkdir '%s'", path);
    return 0;
}

/* One line of cgroup.procs, without its newline: a decimal number and nothing else. */
static int
parse_pid_line(const char *line, size_t len, pid_t *ret)
{
    if (len == 0 || len > 10)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (line[i] < '0' || line[i] > '9')
            return -1;
        v = v * 10 + (uint64_t) (line[i] - '0');
    }
    if (v > INT32_MAX)
        return -1;
    *ret = (pid_t) v;
    return 0;
}

int
cgroup_procs_foreach(FILE *f, cgroup_pid_cb cb, void *data, struct pf_error **err)
{
    _cleanup_free_ char *line = NULL;
    size_t cap = 0;
    int listed = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        size_t len = (size_t) n;
        if (line[len - 1] == '\n')
            len--;
        pid_t pid;
        if (parse_pid_line(line, len, &pid) < 0)
            return pf_error_set(err, PF_E_INTERNAL, "cgroup.procs: '%.*s' is not a pid",
                                (int) (len > 32 ? 32 : len), line);
        listed++;
        /* 0 is a task the kernel cannot name in our pid namespace (it runs outside it, or is
         * exiting): listed, but not ours to signal, and kill(0) would hit our process group. */
        if (pid > 0)
            cb(pid, data);
    }
    if (ferror(f))
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "cgroup.procs: read");
    return listed;
}

static void
kill_pid(pid_t pid, void *data)
{
    (void) data;
    /* Unchecked: a task that exited meanwhile is ESRCH, and one still there is seen again by
     * the next round, which bounds the retries. */
    (void) kill(pid, SIGKILL);
}

int
cgroup_kill_listed(const char *dir, struct pf_error **err)
{
    _cleanup_free_ char *path = NULL;
    if (asprintf(&path, "%s/cgroup.procs", dir) < 0)
        return pf_error_set(err, PF_E_INTERNAL, "cgroup: out of memory");
    for (int round = 0; round < 50; round++) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (!f)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno, "cgroup: open '%s'", path);
        int listed = cgroup_procs_foreach(f, kill_pid, NULL, err);
        if (listed < 0)
            return pf_error_prefix(err, "cgroup: '%s'", path);
        if (listed == 0)
            return 0;
        usleep(1000);
    }
    return pf_error_set(err, PF_E_INTERNAL, "cgroup: '%s' still has processes after SIGKILL", dir);
}

/* ---- a slot's fds ------------------------------------------------------------------------- */

void
cgroup_slot_init_fds(struct cgroup_slot *slot)
{
    for (int d = 0; d < _CGROUP_DIR_MAX; d++)
        slot->procs_fd[d] = -1;
    for (int f = 0; f < _CGROUP_FILE_MAX; f++)
        slot->file_fd[f] = -1;
    slot->dir_fd = -1;
}

void
cgroup_slot_close_fds(struct cgroup_slot *slot)
{
    for (int d = 0; d < _CGROUP_DIR_MAX; d++)
        slot->procs_fd[d] = pf_close(slot->procs_fd[d]);
    for (int f = 0; f < _CGROUP_FILE_MAX; f++)
        slot->file_fd[f] = pf_close(slot->file_fd[f]);
    slot->dir_fd = pf_close(slot->dir_fd);
}

void
cgroup_slot_open(struct cgroup_slot *slot, enum cgroup_file f, const char *dir, const char *file,
                 int flags)
{
    pf_require(f >= 0 && f < _CGROUP_FILE_MAX && slot->file_fd[f] < 0);
    _cleanup_free_ char *path = NULL;
    if (asprintf(&path, "%s/%s", dir, file) < 0)
        return;
    slot->file_fd[f] = harden_fd_move_high(open(path, flags | O_CLOEXEC));
}

int
cgroup_slot_read_u64(const struct cgroup_slot *slot, enum cgroup_file f, const char *dir,
                     const char *file, uint64_t *ret, struct pf_error **err)
{
    if (slot->file_fd[f] < 0)
        return cgroup_read_u64(dir, file, ret, err);
    char buf[64];
    if (read_fd(slot->file_fd[f], file, buf, sizeof(buf), err) < 0)
        return -1;
    return parse_u64(buf, dir, file, ret, err);
}

int
cgroup_slot_read_key(const struct cgroup_slot *slot, enum cgroup_file f, const char *dir,
                     const char *file, const char *key, uint64_t *ret, struct pf_error **err)
{
    if (slot->file_fd[f] < 0)
        return cgroup_read_key(dir, file, key, ret, err);
    char buf[4096];
    if (read_fd(slot->file_fd[f], file, buf, sizeof(buf), err) < 0)
        return -1;
    *ret = parse_key(buf, key);
    return 0;
}

int
cgroup_slot_write(const struct cgroup_slot *slot, enum cgroup_file f, const char *dir,
                  const char *file, const char *value, struct pf_error **err)
{
    if (slot->file_fd[f] < 0)
        return cgroup_write(dir, file, value, err);
    size_t len = strlen(value);
    if (pwrite(slot->file_fd[f], value, len, 0) != (ssize_t) len)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "cgroup: write '%s' to '%s/%s'", value,
                                  dir, file);
    return 0;
}

bool
cgroup_slot_may_have_tasks(const struct cgroup_slot *slot)
{
    uint64_t n = 0;
    if (slot->file_fd[CGROUP_FILE_PIDS_CURRENT] < 0 ||
        cgroup_slot_read_u64(slot, CGROUP_FILE_PIDS_CURRENT, "", "pids.current", &n, NULL) < 0)
        return true;
    return n != 0;
}

static bool
is_stale_pool(const char *name)
{
    int pid;
    char rest;
    if (sscanf(name, "pyfence-%d%c", &pid, &rest) != 1 || pid <= 0 || pid == getpid())
        return false;
    return kill(pid, 0) < 0 && errno == ESRCH;
}

void
cgroup_remove_stale_pools(const char *parent)
{
    _cleanup_(closedirp) DIR *d = opendir(parent);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_type != DT_DIR || !is_stale_pool(e->d_name))
            continue;
        _cleanup_free_ char *pool = NULL;
        if (asprintf(&pool, "%s/%s", parent, e->d_name) < 0)
            return;
        _cleanup_(closedirp) DIR *slots = opendir(pool);
        for (struct dirent *w; slots && (w = readdir(slots));) {
            if (w->d_type != DT_DIR || w->d_name[0] != 'w')
                continue;
            _cleanup_free_ char *slot = NULL;
            if (asprintf(&slot, "%s/%s", pool, w->d_name) < 0)
                return;
            (void) cgroup_kill_listed(slot, NULL);
            (void) rmdir(slot);
        }
        if (rmdir(pool) == 0)
            pf_log_notice(CGROUP, "removed the pool of a zygote that is gone: '%s'", pool);
        else
            pf_log_warning(CGROUP, "cannot remove stale pool '%s': %m, ignoring", pool);
    }
}

/* ---- detection --------------------------------------------------------------------------- */

static const char *const v1_controller[_CGROUP_DIR_MAX] = {
        [CGROUP_DIR_MEMORY] = "memory",
        [CGROUP_DIR_PIDS] = "pids",
        [CGROUP_DIR_CPU] = "cpu",
        [CGROUP_DIR_CPUACCT] = "cpuacct",
};

static bool
list_has(const char *list, const char *word, char sep)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, sep);
        size_t len = end ? (size_t) (end - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0)
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

/* The own-cgroup path of the calling process in the hierarchy whose controller list (as in
 * /proc/self/cgroup) holds `controller`, or the v2 path when controller is NULL. */
static char *
own_path(const char *controller)
{
    _cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return NULL;
    char line[4096];
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = '\0';
        *c2 = '\0';
        const char *ctrls = c1 + 1;
        if (controller ? list_has(ctrls, controller, ',') : (strcmp(line, "0") == 0 && !*ctrls))
            return strdup(c2 + 1);
    }
    return NULL;
}

/* Mount point of the cgroup2 fs (type NULL) or of the v1 hierarchy holding `controller`. */
static char *
mount_point(const char *controller)
{
    _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return NULL;
    char line[4096];
    while (fgets(line, sizeof(line), f)) {
        /* id parent major:minor root mountpoint options - fstype source superoptions */
        char mnt[1024], fstype[64], super[1024];
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1 ||
            sscanf(dash + 3, "%63s %*s %1023s", fstype, super) != 2)
            continue;
        if (!controller && strcmp(fstype, "cgroup2") == 0)
            return strdup(mnt);
        if (controller && strcmp(fstype, "cgroup") == 0 && list_has(super, controller, ','))
            return strdup(mnt);
    }
    return NULL;
}

static char *
join_path(const char *mnt, const char *path)
{
    char *out = NULL;
    if (!mnt || !path)
        return NULL;
    if (asprintf(&out, "%s%s", mnt, strcmp(path, "/") == 0 ? "" : path) < 0)
        return NULL;
    return out;
}

char *
cgroup_v2_delegated_dir(const char *own_dir)
{
    const char *slash = strrchr(own_dir, '/');
    if (!slash || slash == own_dir || strcmp(slash + 1, CGROUP_V2_SUPERVISOR) != 0)
        return strdup(own_dir);
    _cleanup_free_ char *parent = strndup(own_dir, (size_t) (slash - own_dir));
    char buf[512];
    if (!parent || read_small(parent, "cgroup.subtree_control", buf, sizeof(buf), NULL) < 0)
        return strdup(own_dir);
    buf[strcspn(buf, "\n")] = '\0';
    if (!list_has(buf, "memory", ' ') || !list_has(buf, "pids", ' ') || access(parent, W_OK) < 0)
        return strdup(own_dir);
    return TAKE_PTR(parent);
}

int
cgroup_host_detect(struct cgroup_host *ret, struct pf_error **err)
{
    struct cgroup_host h = {0};
    _cleanup_free_ char *v2_mnt = mount_point(NULL), *v2_own = own_path(NULL);
    _cleanup_free_ char *v2_own_dir = join_path(v2_mnt, v2_own);
    h.v2_dir = v2_own_dir ? cgroup_v2_delegated_dir(v2_own_dir) : NULL;
    if (h.v2_dir) {
        char buf[512];
        if (read_small(h.v2_dir, "cgroup.controllers", buf, sizeof(buf), NULL) == 0) {
            buf[strcspn(buf, "\n")] = '\0';
            h.v2_controllers = strdup(buf);
        }
    }
    for (int d = 0; d < _CGROUP_DIR_MAX; d++) {
        _cleanup_free_ char *mnt = mount_point(v1_controller[d]);
        _cleanup_free_ char *own = own_path(v1_controller[d]);
        h.v1_dir[d] = join_path(mnt, own);
    }
    *ret = h;
    return 0;
}

void
cgroup_host_finish(struct cgroup_host *host)
{
    free(host->v2_dir);
    free(host->v2_controllers);
    for (int d = 0; d < _CGROUP_DIR_MAX; d++)
        free(host->v1_dir[d]);
    *host = (struct cgroup_host){0};
}

bool
cgroup_v2_has(const struct cgroup_host *host, const char *controller)
{
    return host->v2_controllers && list_has(host->v2_controllers, controller, ' ');
}

const struct cgroup_backend *
cgroup_choose(const struct cgroup_host *host, const char *mode, char *why, size_t why_len,
              struct pf_error **err)
{
    const struct cgroup_backend *order[] = {&cgroup_backend_v2, &cgroup_backend_v1};
    if (mode && strcmp(mode, "auto") != 0) {
        const struct cgroup_backend *b = strcmp(mode, "v2") == 0     ? &cgroup_backend_v2
                                         : strcmp(mode, "v1") == 0   ? &cgroup_backend_v1
                                         : strcmp(mode, "none") == 0 ? &cgroup_backend_none
                                                                     : NULL;
        if (!b) {
            pf_error_set(err, PF_E_CONFIG, "cgroup mode '%s' is not one of auto, v2, v1, none",
                         mode);
            return NULL;
        }
        if (!b->usable(host, why, why_len)) {
            pf_error_set(err, PF_E_CONFIG, "cgroup mode '%s' was asked for but %s", mode, why);
            return NULL;
        }
        snprintf(why, why_len, "asked for by configuration");
        return b;
    }
    char reasons[2][256] = {"", ""};
    for (size_t i = 0; i < PF_ELEMENTSOF(order); i++)
        if (order[i]->usable(host, reasons[i], sizeof(reasons[i]))) {
            if (i == 0)
                snprintf(why, why_len, "%s", reasons[0]);
            else
                snprintf(why, why_len, "v2 unusable (%s); %s", reasons[0], reasons[1]);
            return order[i];
        }
    snprintf(why, why_len, "v2: %s; v1: %s", reasons[0], reasons[1]);
    return &cgroup_backend_none;
}

/* ---- the pool ---------------------------------------------------------------------------- */

static struct {
    const struct cgroup_backend *backend;
    char *root[_CGROUP_DIR_MAX];
    struct cgroup_slot *slots;
    unsigned n_slots;
} the_pool = {.backend = &cgroup_backend_none};

int
harden_cgroup_init(const char *mode, struct pf_error **err)
{
    struct cgroup_host host;
    if (cgroup_host_detect(&host, err) < 0)
        return -1;
    char why[600];
    const struct cgroup_backend *b = cgroup_choose(&host, mode, why, sizeof(why), err);
    if (!b) {
        cgroup_host_finish(&host);
        return -1;
    }
    struct pf_error *perr = NULL;
    if (b->init_pool(&host, the_pool.root, &perr) < 0) {
        pf_log_warning(CGROUP, "cgroup %s pool: %s; falling back to none", b->name, perr->msg);
        snprintf(why, sizeof(why), "the %s pool could not be made", b->name);
        pf_error_free(perr);
        b = &cgroup_backend_none;
    }
    cgroup_host_finish(&host);
    the_pool.backend = b;
    if (b == &cgroup_backend_none)
        pf_log_warning(CGROUP,
                       "cgroup backend: none (%s). WORKERS RUN WITH RLIMITS ONLY: no cgroup "
                       "memory, pids or CPU limit, no OOM or pids-limit detection. Run pyfenced "
                       "with a delegated cgroup (systemd Delegate=yes) to fix this",
                       why);
    else
        pf_log_notice(CGROUP, "cgroup backend: %s (%s), pool under '%s'", b->name, why,
                      the_pool.root[0] ? the_pool.root[0] : "?");
    return 0;
}

const char *
harden_cgroup_backend_name(void)
{
    return the_pool.backend->name;
}

static struct cgroup_slot *
slot_get(unsigned index, struct pf_error **err)
{
    if (index >= the_pool.n_slots) {
        unsigned n = index + 1 > the_pool.n_slots * 2 ? index + 1 : the_pool.n_slots * 2;
        struct cgroup_slot *s = realloc(the_pool.slots, n * sizeof(*s));
        if (!s) {
            pf_error_set(err, PF_E_INTERNAL, "cgroup: out of memory for the pool");
            return NULL;
        }
        for (unsigned i = the_pool.n_slots; i < n; i++) {
            s[i] = (struct cgroup_slot){0};
            cgroup_slot_init_fds(&s[i]);
        }
        the_pool.slots = s;
        the_pool.n_slots = n;
    }
    struct cgroup_slot *slot = &the_pool.slots[index];
    if (!slot->created) {
        if (the_pool.backend->create(the_pool.root, index, slot, err) < 0) {
            /* The next job tries again from scratch: nothing of this attempt is kept open. */
            cgroup_slot_close_fds(slot);
            for (int d = 0; d < _CGROUP_DIR_MAX; d++) {
                free(slot->dir[d]);
                slot->dir[d] = NULL;
            }
            return NULL;
        }
        slot->created = true;
        /* The counters start where the fresh (or reused, after a zygote restart) cgroup is. */
        the_pool.backend->read_events(slot, &slot->base, NULL);
    }
    return slot;
}

/* A job's cgroup limits, from its profile's. */
static struct cgroup_limits
limits_for(const struct harden_params *p)
{
    /* One CPU at most: the CPU *time* budget is RLIMIT_CPU's job; this caps the rate, so that a
     * worker with threads cannot take every core from the others. */
    return (struct cgroup_limits){
            .memory_bytes = p->memory_mb * 1024 * 1024,
            .pids = p->pids,
            .cpu_quota_us = 100000,
            .cpu_period_us = 100000,
    };
}

/* Whether the slot's files hold exactly the limits of the job p. */
static bool
slot_holds(const struct cgroup_slot *slot, const struct harden_params *p)
{
    struct cgroup_limits l = limits_for(p);
    return memcmp(&l, &slot->applied, sizeof(l)) == 0;
}

int
harden_cgroup_slot_prepare(unsigned index, const struct harden_params *p, struct pf_error **err)
{
    if (p->level[HARDEN_LAYER_CGROUP] == HARDEN_OFF || the_pool.backend == &cgroup_backend_none)
        return 0;
    struct cgroup_slot *slot = slot_get(index, err);
    if (!slot)
        return -1;
    if (slot_holds(slot, p))
        return 0;
    struct cgroup_limits l = limits_for(p);
    if (the_pool.backend->set_limits(slot, &l, err) < 0) {
        /* Some files may hold this job's values and some the last one's: the slot's limits are
         * unknown (zero) until a job writes them all, and no worker joins it meanwhile. */
        slot->applied = (struct cgroup_limits){0};
        return -1;
    }
    slot->applied = l;
    return 0;
}

int
harden_cgroup_slot_dir_fd(unsigned index)
{
    if (the_pool.backend != &cgroup_backend_v2 || index >= the_pool.n_slots ||
        !the_pool.slots[index].created)
        return -1;
    return the_pool.slots[index].dir_fd;
}

const char *
harden_cgroup_slot_dir(unsigned index, enum cgroup_dir d)
{
    if (the_pool.backend == &cgroup_backend_none || index >= the_pool.n_slots ||
        !the_pool.slots[index].created || d < 0 || d >= _CGROUP_DIR_MAX)
        return NULL;
    return the_pool.slots[index].dir[the_pool.backend == &cgroup_backend_v2 ? 0 : d];
}

void
harden_cgroup_slot_finish(unsigned index, struct harden_outcome *out)
{
    if (the_pool.backend == &cgroup_backend_none || index >= the_pool.n_slots ||
        !the_pool.slots[index].created)
        return;
    struct cgroup_slot *slot = &the_pool.slots[index];
    struct cgroup_counters now = {0};
    struct pf_error *err = NULL;
    if (the_pool.backend->read_events(slot, &now, &err) < 0) {
        pf_log_warning(CGROUP, "slot %u: %s, ignoring", index, err->msg);
        err = pf_error_free(err);
    } else if (out) {
        out->have_cgroup = true;
        out->oom_killed = now.oom_kill > slot->base.oom_kill;
        out->pids_limited = now.pids_max > slot->base.pids_max;
        out->peak_memory_kb = now.peak_bytes / 1024;
        out->cgroup_cpu_ms = now.cpu_usage_us > slot->base.cpu_usage_us
                                     ? (now.cpu_usage_us - slot->base.cpu_usage_us) / 1000
                                     : 0;
    }
    if (the_pool.backend->reset(slot, &err) < 0) {
        pf_log_warning(CGROUP, "slot %u: %s, ignoring", index, err->msg);
        err = pf_error_free(err);
    }
    /* The next job starts from here: the counters compared are cumulative, and the reset only
     * touched the peak, which is not compared. (After a failed read, `now` is zero and the next
     * job's counts would look new: keep the old base then.) */
    if (now.oom_kill || now.pids_max || now.cpu_usage_us || now.peak_bytes)
        slot->base = now;
}

void
harden_cgroup_finish(void)
{
    for (unsigned i = 0; i < the_pool.n_slots; i++) {
        struct cgroup_slot *slot = &the_pool.slots[i];
        if (!slot->created)
            continue;
        struct pf_error *err = NULL;
        if (the_pool.backend->destroy(slot, the_pool.root, &err) < 0) {
            pf_log_warning(CGROUP, "slot %u: %s, ignoring", i, err->msg);
            pf_error_free(err);
        }
    }
    free(the_pool.slots);
    the_pool.slots = NULL;
    the_pool.n_slots = 0;
    for (int d = 0; d < _CGROUP_DIR_MAX; d++) {
        if (the_pool.root[d])
            rmdir(the_pool.root[d]);
        free(the_pool.root[d]);
        the_pool.root[d] = NULL;
    }
    the_pool.backend = &cgroup_backend_none;
}

/* ---- the layer --------------------------------------------------------------------------- */

static bool joined; /* in the worker: the attach succeeded */

bool
harden_cgroup_joined(void)
{
    return joined;
}

int
harden_cgroup_apply(const struct harden_params *p, struct pf_error **err)
{
    if (the_pool.backend == &cgroup_backend_none)
        return pf_error_set(err, PF_E_INTERNAL,
                            "cgroup: no cgroup can be written on this host (backend none, "
                            "rlimits only; see `pyfenced --check`)");
    int index = harden_job_slot();
    if (index < 0 || (unsigned) index >= the_pool.n_slots || !the_pool.slots[index].created)
        return pf_error_set(err, PF_E_INTERNAL,
                            "cgroup: no pool slot was prepared for this worker");
    /* The zygote could not write this job's limits (best-effort): the slot holds another job's,
     * or a mix. The worker stays out rather than run under limits its profile did not ask for
     * (and the zygote reports no cgroup counters for it). */
    if (!slot_holds(&the_pool.slots[index], p))
        return pf_error_set(err, PF_E_INTERNAL,
                            "cgroup: slot %d does not hold this job's limits (writing them "
                            "failed in the zygote)",
                            index);
    /* Forked into the slot (v2, clone3): already there, and moving again would only cost. */
    if (harden_job_forked_into_slot()) {
        joined = true;
        return 0;
    }
    int r = the_pool.backend->attach(&the_pool.slots[index], err);
    joined = r >= 0;
    return r;
}
