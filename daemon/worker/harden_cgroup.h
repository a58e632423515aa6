/* Layer 1, cgroup: between harden_cgroup.c (detection, the pool, the layer) and its backends
 * (harden_cgroup_v2.c, harden_cgroup_v1.c, harden_cgroup_none.c), crun's cgroup-internal.h
 * split. One backend is chosen once, at zygote start-up. The zygote owns a pool of cgroups,
 * one per concurrent worker slot, made on first use and reused job after job: no mkdir/rmdir on
 * the request path, and a slot's limits are written only when they change. */
#ifndef DAEMON_WORKER_HARDEN_CGROUP_H
#define DAEMON_WORKER_HARDEN_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "harden_zygote.h"
#include "pf_error.h"

/* v1 keeps one directory per hierarchy; v2 uses index 0 only. */
enum cgroup_dir {
    CGROUP_DIR_MEMORY,
    CGROUP_DIR_PIDS,
    CGROUP_DIR_CPU,
    CGROUP_DIR_CPUACCT,
    _CGROUP_DIR_MAX,
    _CGROUP_DIR_INVALID = -1,
};

struct cgroup_limits {
    uint64_t memory_bytes;
    uint64_t pids;
    uint64_t cpu_quota_us; /* per cpu_period_us: how much of one CPU the worker may use */
    uint64_t cpu_period_us;
};

/* Cumulative counters of a cgroup; a job's outcome is the difference across it. */
struct cgroup_counters {
    uint64_t oom_kill;
    uint64_t pids_max;
    uint64_t cpu_usage_us;
    uint64_t peak_bytes; /* not cumulative: the job's own peak after the backend's reset */
};

/* What the host offers, found once from /proc/self/mountinfo and /proc/self/cgroup. A path is
 * the directory of the calling process's own cgroup in that hierarchy, or NULL. */
struct cgroup_host {
    char *v2_dir;                  /* own cgroup in the cgroup2 mount */
    char *v2_controllers;          /* its cgroup.controllers, e.g. "cpu memory pids" */
    char *v1_dir[_CGROUP_DIR_MAX]; /* own cgroup per v1 hierarchy */
};

/* The files a slot reads or resets after every job, kept open from the backend's create to its
 * destroy (O_CLOEXEC, at or above HARDEN_HIGH_FD_MIN like procs_fd: the worker's fds layer closes
 * them all, and no fd the worker needs can land on them) and read with pread at offset 0, which
 * cgroup files allow: one system call per file and job instead of open, read, close. -1 where
 * this kernel lacks the file; the slot then uses the path, as without the fd. */
enum cgroup_file {
    CGROUP_FILE_OOM,          /* v1 memory.oom_control, v2 memory.events */
    CGROUP_FILE_PEAK,         /* v1 memory.max_usage_in_bytes (reset by writing 0 to it), v2
                               * memory.peak (reset per fd by writing "reset", kernel 6.12+) */
    CGROUP_FILE_PIDS_EVENTS,  /* pids.events */
    CGROUP_FILE_PIDS_CURRENT, /* pids.current: 0 means nothing is left in the slot to kill */
    CGROUP_FILE_CPU,          /* v1 cpuacct.usage, v2 cpu.stat */
    CGROUP_FILE_KILL,         /* v2 cgroup.kill */
    _CGROUP_FILE_MAX,
    _CGROUP_FILE_INVALID = -1,
};

struct cgroup_slot {
    bool created;
    char *dir[_CGROUP_DIR_MAX];
    int procs_fd[_CGROUP_DIR_MAX]; /* O_WRONLY|O_CLOEXEC: the worker joins by it (v2 cgroup.procs,
                                    * v1 tasks) */
    int dir_fd;                    /* v2: the directory, O_PATH, to fork into (clone3); else -1 */
    int file_fd[_CGROUP_FILE_MAX]; /* the kept files above; -1 */
    bool peak_resettable;          /* v2: file_fd[CGROUP_FILE_PEAK] resets per fd */
    struct cgroup_limits applied;  /* what the slot's files hold; zero = unknown */
    struct cgroup_counters base;   /* counters when the slot's previous job ended */
};

struct cgroup_backend {
    const char *name;
    /* Whether this host can use the backend; on false, *ret_why says why not. */
    bool (*usable)(const struct cgroup_host *host, char *why, size_t why_len);
    /* Once: the pool's parent directories under the zygote's own cgroup. */
    int (*init_pool)(const struct cgroup_host *host, char **ret_root, struct pf_error **err);
    /* Once per slot: mkdir, open the files the worker and the zygote use. */
    int (*create)(char *const *root, unsigned index, struct cgroup_slot *slot,
                  struct pf_error **err);
    /* In the worker, before anything untrusted runs: join the slot. */
    int (*attach)(const struct cgroup_slot *slot, struct pf_error **err);
    int (*set_limits)(struct cgroup_slot *slot, const struct cgroup_limits *limits,
                      struct pf_error **err);
    /* After the worker was reaped. */
    int (*read_events)(struct cgroup_slot *slot, struct cgroup_counters *ret,
                       struct pf_error **err);
    /* Kills what is left in the slot and resets its peak counters for the next job. */
    int (*reset)(struct cgroup_slot *slot, struct pf_error **err);
    int (*destroy)(struct cgroup_slot *slot, char *const *root, struct pf_error **err);
};

extern const struct cgroup_backend cgroup_backend_v2;
extern const struct cgroup_backend cgroup_backend_v1;
extern const struct cgroup_backend cgroup_backend_none;

/* ---- harden_cgroup.c: shared helpers for the backends ------------------------------------- */

int cgroup_host_detect(struct cgroup_host *ret, struct pf_error **err);
/* The leaf the first zygote moves pyfenced and itself into, so that the delegated cgroup may
 * enable controllers for its children (the no-internal-process rule; harden_cgroup_v2.c). */
#define CGROUP_V2_SUPERVISOR "supervisor"
/* The delegated cgroup to keep a pool in, for a zygote whose own cgroup is own_dir: own_dir,
 * but for the zygotes pyfenced starts after the first moved it (the preload zygote, a restarted
 * one), which start in that supervisor leaf: the leaf's parent, when it already gives its
 * children memory and pids and is writable. Their pools then sit beside the first's, with its
 * limits, instead of finding their own cgroup full of other processes and running without
 * any. Malloc'd; NULL when out of memory. */
char *cgroup_v2_delegated_dir(const char *own_dir);
void cgroup_host_finish(struct cgroup_host *host);
/* Whether the v2 cgroup of the caller offers `controller` ("memory", "pids", "cpu"). */
bool cgroup_v2_has(const struct cgroup_host *host, const char *controller);
/* Chooses the backend for mode ("auto"/NULL, "v2", "v1", "none"); *why says why that one. */
const struct cgroup_backend *cgroup_choose(const struct cgroup_host *host, const char *mode,
                                           char *why, size_t why_len, struct pf_error **err);

int cgroup_write(const char *dir, const char *file, const char *value, struct pf_error **err);
int cgroup_write_u64(const char *dir, const char *file, uint64_t value, struct pf_error **err);
/* Reads a file holding one number ("max" reads as UINT64_MAX). */
int cgroup_read_u64(const char *dir, const char *file, uint64_t *ret, struct pf_error **err);
/* Reads the value of `key` from a "key value" file (memory.events, cpu.stat, ...). A missing key
 * reads as 0. */
int cgroup_read_key(const char *dir, const char *file, const char *key, uint64_t *ret,
                    struct pf_error **err);
bool cgroup_file_exists(const char *dir, const char *file);
/* SIGKILLs every pid listed in dir/cgroup.procs until it is empty (bounded retries). */
int cgroup_kill_listed(const char *dir, struct pf_error **err);
typedef void (*cgroup_pid_cb)(pid_t pid, void *data);
/* Calls cb for each pid a cgroup.procs file lists, one decimal per line, strictly (anything else
 * is an error). A 0 is counted but not passed on: the kernel lists a task it cannot name in the
 * reader's pid namespace (outside it, or exiting) as 0, and kill(0) would signal the caller's
 * own process group. Returns the number of lines, 0s included, or -1 with *err. */
int cgroup_procs_foreach(FILE *f, cgroup_pid_cb cb, void *data, struct pf_error **err);

/* The slot's fds (cgroup.procs and the kept files), all -1: before create, and what
 * cgroup_slot_close_fds leaves. */
void cgroup_slot_init_fds(struct cgroup_slot *slot);
/* Closes every fd of the slot: the one release path of procs_fd and file_fd, for destroy and for
 * a create that failed half-way. */
void cgroup_slot_close_fds(struct cgroup_slot *slot);
/* Opens dir/file as the slot's kept file f (flags | O_CLOEXEC, moved high); leaves -1 when the
 * file cannot be opened (absent on this kernel), which the readers below handle. */
void cgroup_slot_open(struct cgroup_slot *slot, enum cgroup_file f, const char *dir,
                      const char *file, int flags);
/* cgroup_read_u64 / cgroup_read_key / cgroup_write through the slot's kept file f, or through
 * dir/file when the slot does not hold it. */
int cgroup_slot_read_u64(const struct cgroup_slot *slot, enum cgroup_file f, const char *dir,
                         const char *file, uint64_t *ret, struct pf_error **err);
int cgroup_slot_read_key(const struct cgroup_slot *slot, enum cgroup_file f, const char *dir,
                         const char *file, const char *key, uint64_t *ret, struct pf_error **err);
int cgroup_slot_write(const struct cgroup_slot *slot, enum cgroup_file f, const char *dir,
                      const char *file, const char *value, struct pf_error **err);
/* False only when the slot's pids.current is kept open and reads 0: no task is left (nor being
 * forked: a fork is charged before it starts), so there is nothing to kill and cgroup.procs need
 * not be read. True when it cannot tell, and while killed tasks wait to be reaped by a parent
 * outside the slot (no pid namespace): cgroup.procs is then read as before. */
bool cgroup_slot_may_have_tasks(const struct cgroup_slot *slot);
/* Removes, under parent, the pools ("pyfence-<pid>") of zygotes that are no longer running, and
 * kills what was left in them: a zygote that crashed leaves its pool behind. */
void cgroup_remove_stale_pools(const char *parent);
/* mkdir that accepts an existing directory. */
int cgroup_mkdir(const char *path, struct pf_error **err);

/* ---- harden_cgroup.c: the pool, for harden_zygote.c -------------------------------------- */

int harden_cgroup_init(const char *mode, struct pf_error **err);
const char *harden_cgroup_backend_name(void);
/* Creates slot `index` if needed and writes its limits from p. */
int harden_cgroup_slot_prepare(unsigned index, const struct harden_params *p,
                               struct pf_error **err);
/* Slot `index`'s cgroup v2 directory (O_PATH) for harden_job_fork(), or -1 (v1, none, or a
 * slot not created). */
int harden_cgroup_slot_dir_fd(unsigned index);
/* Slot `index`'s directory in hierarchy d (v2: the one directory, whatever d), or NULL (none,
 * or a slot not created). Tests read its files by it: the process's own cgroup may have moved
 * (v2 "supervisor") since the pool was made. */
const char *harden_cgroup_slot_dir(unsigned index, enum cgroup_dir d);
/* Fills the cgroup part of *out (may be NULL), kills leftovers, resets the slot. */
void harden_cgroup_slot_finish(unsigned index, struct harden_outcome *out);
void harden_cgroup_finish(void);

#endif
