/* Layer 2, namespaces. Made once in the zygote (harden_ns_prepare): an empty network namespace
 * (no interface up), a uts namespace named "pyfence", and a mount namespace holding the
 * read-only view a worker gets: /usr and the top-level links or directories into it, the few
 * /etc files the loader and time zones need, /dev with null, zero and urandom only, empty /proc
 * and /tmp mount points. Per worker (harden_namespaces_apply): setns into the three, a fresh ipc
 * namespace, a private copy of the mount view with its own size-limited tmpfs on /tmp and, as
 * the init of the fresh pid namespace the zygote prepared (harden_ns_prefork), a /proc showing
 * only its own processes.
 *
 * Without root (harden_ns_prepare), all of this happens inside a user namespace the zygote makes
 * first, in which it holds the capabilities the rest needs: see enter_own_userns. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harden_internal.h"
#include "harden_zygote.h"
#include "pf_cleanup.h"

static struct {
    bool prepared;
    int netns_fd;       /* the shared empty network namespace */
    int utsns_fd;       /* the shared uts namespace, hostname "pyfence" */
    int mntns_fd;       /* the prepared read-only view */
    int own_pidns_fd;   /* the zygote's pid namespace, to fork into it again */
    int own_ipcns_fd;   /* the zygote's ipc namespace, to return to after making a spare */
    int spare_ipcns_fd; /* a fresh ipc namespace that no process uses, made between jobs */
    int next_ipcns_fd;  /* the spare handed to the next fork: its worker's alone */
    bool children_in_new_pidns;
    bool in_userns;        /* the zygote made a user namespace of its own (daemon not root) */
    bool fork_new_pidns;   /* in a user namespace: the next fork makes the worker's pid namespace */
    bool private_scratch;  /* in the worker: /tmp is its own tmpfs */
    char unavailable[512]; /* why the zygote has no namespaces to give, for the per-job error */
} the_ns = {.netns_fd = -1,
            .utsns_fd = -1,
            .mntns_fd = -1,
            .own_pidns_fd = -1,
            .own_ipcns_fd = -1,
            .spare_ipcns_fd = -1,
            .next_ipcns_fd = -1};

/* Host paths a worker sees read-only. Top-level entries that are symlinks on the host (merged
 * /usr) are recreated as the same symlinks. */
static const char *const view_dirs[] = {"/usr",   "/bin",   "/sbin",  "/lib",
                                        "/lib32", "/lib64", "/libx32"};
static const char *const view_etc_files[] = {"/etc/ld.so.cache", "/etc/localtime",
                                             "/etc/nsswitch.conf"};
static const char *const view_devices[] = {"/dev/null", "/dev/zero", "/dev/urandom"};

static int
pivot_root(const char *new_root, const char *put_old)
{
    return (int) syscall(SYS_pivot_root, new_root, put_old);
}

/* Whether a mount point lies strictly below dir, from /proc/self/mountinfo (its fifth field). */
static bool
has_submounts(const char *dir)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return true; /* unreadable: assume the worst */
    size_t len = strlen(dir);
    char line[4096], point[4096];
    bool found = false;
    while (!found && fgets(line, sizeof(line), f))
        found = sscanf(line, "%*s %*s %*s %*s %4095s", point) == 1 &&
                strncmp(point, dir, len) == 0 && point[len] == '/';
    fclose(f);
    return found;
}

/* A bind of src at dst with every mount below it (MS_REC: /usr may hold others, a separate
 * /usr/local say), then read-only, nosuid and nodev for all of them: a remount (MS_REMOUNT |
 * MS_BIND) changes one mount only, and left the ones below writable in the view.
 * mount_setattr(AT_RECURSIVE) sets the flags on the whole tree and clears none, so it also
 * holds in the zygote's user namespace, where the host's flags of each mount are locked. */
static int
bind_ro(const char *src, const char *dst, struct pf_error **err)
{
    if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: bind '%s'", src);
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
    if (mount_setattr(AT_FDCWD, dst, AT_RECURSIVE, &attr, sizeof(attr)) == 0)
        return 0;
    if (errno != ENOSYS)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: read-only '%s'", dst);
    /* Before Linux 5.12: one mount at a time, which is enough only without any below. */
    if (mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: read-only '%s'", dst);
    if (has_submounts(dst))
        return pf_error_set(err, PF_E_INTERNAL,
                            "namespaces: '%s' has mounts below it, which this kernel (no "
                            "mount_setattr, before 5.12) cannot make read-only with it",
                            src);
    return 0;
}

/* Mirrors host path `src` (a directory, a file or a symlink) at root/src. */
static int
mirror(const char *root, const char *src, bool device, struct pf_error **err)
{
    struct stat st;
    if (lstat(src, &st) < 0)
        return 0; /* absent on this host: nothing to show */
    _cleanup_free_ char *dst = NULL;
    if (asprintf(&dst, "%s%s", root, src) < 0)
        return pf_error_set(err, PF_E_INTERNAL, "namespaces: out of memory");
    if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = readlink(src, target, sizeof(target) - 1);
        if (n < 0)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: readlink '%s'", src);
        target[n] = '\0';
        if (symlink(target, dst) < 0)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: symlink '%s'", dst);
        return 0;
    }
    if (S_ISDIR(st.st_mode)) {
        if (mkdir(dst, 0755) < 0)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: mkdir '%s'", dst);
    } else {
        _cleanup_close_ int fd = open(dst, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: create '%s'", dst);
    }
    if (device) {
        /* Devices keep their own mount's flags (no nodev), read-write: /dev/null takes writes. */
        if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: bind '%s'", src);
        return 0;
    }
    return bind_ro(src, dst, err);
}

static int
build_view(const char *root, struct pf_error **err)
{
    if (mount("pyfence-root", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755") < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: tmpfs for the view");
    static const char *const dirs[] = {"/etc", "/dev", "/proc", "/tmp"};
    for (size_t i = 0; i < PF_ELEMENTSOF(dirs); i++) {
        _cleanup_free_ char *d = NULL;
        if (asprintf(&d, "%s%s", root, dirs[i]) < 0 || mkdir(d, 0755) < 0)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: mkdir '%s'", dirs[i]);
    }
    for (size_t i = 0; i < PF_ELEMENTSOF(view_dirs); i++)
        if (mirror(root, view_dirs[i], false, err) < 0)
            return -1;
    for (size_t i = 0; i < PF_ELEMENTSOF(view_etc_files); i++)
        if (mirror(root, view_etc_files[i], false, err) < 0)
            return -1;
    for (size_t i = 0; i < PF_ELEMENTSOF(view_devices); i++)
        if (mirror(root, view_devices[i], true, err) < 0)
            return -1;
    static const char *const links[][2] = {{"/proc/self/fd", "/dev/fd"},
                                           {"/proc/self/fd/0", "/dev/stdin"},
                                           {"/proc/self/fd/1", "/dev/stdout"},
                                           {"/proc/self/fd/2", "/dev/stderr"}};
    for (size_t i = 0; i < PF_ELEMENTSOF(links); i++) {
        _cleanup_free_ char *l = NULL;
        if (asprintf(&l, "%s%s", root, links[i][1]) < 0 || symlink(links[i][0], l) < 0)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: symlink '%s'",
                                      links[i][1]);
    }
    /* Swap the root: the old one is detached, so nothing of the host stays reachable. */
    if (chdir(root) < 0 || pivot_root(".", ".") < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: pivot_root");
    if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: detaching the old root");
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: read-only root");
    return 0;
}

/* Makes the mount view in a new mount namespace, keeps an fd to it, and returns the zygote to
 * its own namespace and working directory. */
static int
prepare_mount_view(struct pf_error **err)
{
    _cleanup_close_ int own = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
    _cleanup_close_ int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (own < 0 || cwd < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno,
                                  "namespaces: saving the zygote's "
                                  "mount namespace");
    if (unshare(CLONE_NEWNS) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: unshare(CLONE_NEWNS)");
    int r = 0;
    the_ns.mntns_fd = harden_fd_move_high(open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC));
    if (the_ns.mntns_fd < 0)
        r = pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: open mount namespace");
    else if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        r = pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: private propagation");
    else
        r = build_view(access("/tmp", F_OK) == 0 ? "/tmp" : "/run", err);
    if (r < 0)
        the_ns.mntns_fd = pf_close(the_ns.mntns_fd);
    /* Back to where the zygote was, whatever happened: it must keep its own view. */
    if (setns(own, CLONE_NEWNS) < 0 || fchdir(cwd) < 0) {
        the_ns.mntns_fd = pf_close(the_ns.mntns_fd);
        return pf_error_set_errno(err, PF_E_INTERNAL, errno,
                                  "namespaces: returning to the zygote's mount namespace");
    }
    return r;
}

/* Makes a namespace of type `flag` (net or uts) that every worker enters with setns, keeps an
 * fd to it and returns the zygote to its own. Workers cannot change either without
 * capabilities, so one of each serves them all. */
static int
prepare_shared(const char *name, int flag, int *ret_fd, struct pf_error **err)
{
    char path[32];
    snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
    _cleanup_close_ int own = open(path, O_RDONLY | O_CLOEXEC);
    if (own < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: open %s", path);
    if (unshare(flag) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: unshare(%s)", name);
    int r = 0;
    if (flag == CLONE_NEWUTS && sethostname("pyfence", 7) < 0)
        r = pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: sethostname");
    int fd = r < 0 ? -1 : harden_fd_move_high(open(path, O_RDONLY | O_CLOEXEC));
    if (r == 0 && fd < 0)
        r = pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: open the new %s", path);
    if (setns(own, flag) < 0) {
        pf_close(fd);
        return pf_error_set_errno(err, PF_E_INTERNAL, errno,
                                  "namespaces: returning to the zygote's %s namespace", name);
    }
    if (r == 0)
        *ret_fd = fd;
    return r;
}

/* Makes the next worker's ipc namespace ahead of its fork, between jobs: entering one costs the
 * worker ~5 us where making it costs ~25-45 us, on the path to its first instruction. The zygote
 * enters it only to open it, and leaves at once; it makes no IPC objects, and no process enters
 * the namespace until the one worker it is handed to (harden_ns_prefork). Best effort: without a
 * spare, the worker makes its own. */
static void
make_spare_ipcns(void)
{
    if (the_ns.spare_ipcns_fd >= 0 || the_ns.own_ipcns_fd < 0 || unshare(CLONE_NEWIPC) < 0)
        return;
    int fd = harden_fd_move_high(open("/proc/self/ns/ipc", O_RDONLY | O_CLOEXEC));
    if (setns(the_ns.own_ipcns_fd, CLONE_NEWIPC) < 0) {
        /* The zygote stays in it, so it is no spare; workers make their own from now on. */
        pf_close(fd);
        the_ns.own_ipcns_fd = pf_close(the_ns.own_ipcns_fd);
        return;
    }
    the_ns.spare_ipcns_fd = fd;
}

static int
write_proc_self(const char *name, const char *text, struct pf_error **err)
{
    char path[48];
    snprintf(path, sizeof(path), "/proc/self/%s", name);
    _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
    size_t len = strlen(text);
    if (fd < 0 || write(fd, text, len) != (ssize_t) len)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: writing '%s' to %s", text,
                                  path);
    return 0;
}

/* Without root, a process may make namespaces only inside a user namespace it owns, where it
 * holds every capability. The zygote makes one in which the daemon's uid and gid are the only
 * ids, each mapped to itself (no other can be mapped without privileges; the identity layer
 * then keeps that uid), and its own mount, ipc, uts and network namespaces inside it at once:
 * setns back into them after preparing the workers' ones needs the capability in the user
 * namespace that owns them, which the host's own do not grant. The zygote's pid namespace stays
 * the host's, since setns cannot bring it back either: each worker's is made by its fork
 * (clone3 with CLONE_NEWPID, harden_ns_fork_flags). Nothing in it reaches past the daemon's uid:
 * the capabilities hold over these namespaces only, and files are checked against the uid. */
static int
enter_own_userns(struct pf_error **err)
{
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno,
                                  "namespaces: unshare(CLONE_NEWUSER) as uid %u, which a daemon "
                                  "that is not root needs (see `pyfenced --check`, "
                                  "user.max_user_namespaces)",
                                  (unsigned) uid);
    the_ns.in_userns = true;
    /* setgroups must be refused for good before an unprivileged process may write gid_map. */
    char map[64];
    if (write_proc_self("setgroups", "deny", err) < 0)
        return -1;
    snprintf(map, sizeof(map), "%u %u 1", (unsigned) uid, (unsigned) uid);
    if (write_proc_self("uid_map", map, err) < 0)
        return -1;
    snprintf(map, sizeof(map), "%u %u 1", (unsigned) gid, (unsigned) gid);
    return write_proc_self("gid_map", map, err);
}

void
harden_ns_set_off(void)
{
    snprintf(the_ns.unavailable, sizeof(the_ns.unavailable), "pyfenced runs with --namespaces off");
}

/* Keeps why the namespaces are missing (the per-job error says it): err's message, or what. */
static int
remember_failure(struct pf_error **err, const char *what)
{
    snprintf(the_ns.unavailable, sizeof(the_ns.unavailable), "%s",
             err && *err ? (*err)->msg : what);
    return -1;
}

int
harden_ns_prepare(struct pf_error **err)
{
    if (the_ns.prepared)
        return 0;
    the_ns.prepared = true;
    if (geteuid() != 0 && enter_own_userns(err) < 0)
        return remember_failure(err, "the zygote could not make a user namespace");
    the_ns.own_pidns_fd = harden_fd_move_high(open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC));
    the_ns.own_ipcns_fd = harden_fd_move_high(open("/proc/self/ns/ipc", O_RDONLY | O_CLOEXEC));
    make_spare_ipcns();
    int r = prepare_shared("net", CLONE_NEWNET, &the_ns.netns_fd, err);
    if (prepare_shared("uts", CLONE_NEWUTS, &the_ns.utsns_fd, r < 0 ? NULL : err) < 0)
        r = -1;
    if (prepare_mount_view(r < 0 ? NULL : err) < 0)
        r = -1;
    return r < 0 ? remember_failure(err, "the zygote could not prepare them") : 0;
}

bool
harden_ns_have_netns(void)
{
    return the_ns.netns_fd >= 0;
}

bool
harden_ns_have_mount_view(void)
{
    return the_ns.mntns_fd >= 0;
}

bool
harden_ns_private_scratch(void)
{
    return the_ns.private_scratch;
}

/* Points the caller's next children back at its own pid namespace. */
static int
children_in_own_pidns(struct pf_error **err)
{
    if (!the_ns.children_in_new_pidns)
        return 0;
    if (the_ns.own_pidns_fd < 0 || setns(the_ns.own_pidns_fd, CLONE_NEWPID) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno,
                                  "namespaces: returning children to the zygote's pid namespace");
    the_ns.children_in_new_pidns = false;
    return 0;
}

static int unavailable_error(struct pf_error **err);

int
harden_ns_prefork(bool new_pid_ns, struct pf_error **err)
{
    /* unshare(CLONE_NEWPID) refuses (EINVAL) while the children's namespace is not the
     * caller's own: the previous job's must be left first, or the second of two concurrent
     * jobs would get no pid namespace. */
    /* The previous fork's ipc namespace is its worker's alone: the zygote's copy goes before
     * the next fork could inherit it. */
    the_ns.next_ipcns_fd = pf_close(the_ns.next_ipcns_fd);
    the_ns.fork_new_pidns = false;
    if (children_in_own_pidns(err) < 0)
        return -1;
    if (!new_pid_ns) {
        make_spare_ipcns();
        return 0;
    }
    /* Without the zygote's namespaces the worker cannot get the layer: say why (the user
     * namespace the kernel refused, say) rather than what that made fail next (without it, a
     * zygote that is not root may not make a pid namespace either). */
    if (the_ns.unavailable[0])
        return unavailable_error(err);
    /* Each worker is the init of its own pid namespace: it sees no other process, and when it
     * dies the kernel kills everything it left behind. In a user namespace of its own the
     * zygote could not return its children to its pid namespace afterwards (setns), so the fork
     * makes it instead. */
    if (the_ns.in_userns)
        the_ns.fork_new_pidns = true;
    else if (unshare(CLONE_NEWPID) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: unshare(CLONE_NEWPID)");
    else
        the_ns.children_in_new_pidns = true;
    the_ns.next_ipcns_fd = the_ns.spare_ipcns_fd;
    the_ns.spare_ipcns_fd = -1;
    return 0;
}

uint64_t
harden_ns_fork_flags(void)
{
    return the_ns.fork_new_pidns ? CLONE_NEWPID : 0;
}

bool
harden_ns_in_userns(void)
{
    return the_ns.in_userns;
}

static int
mount_scratch_and_proc(const struct harden_params *p, struct pf_error **err)
{
    /* The scratch is scratch_mb large, a limit of its own: file_size_mb (RLIMIT_FSIZE) bounds
     * each file, in /tmp or not, not how many there are. Its pages count against the worker's
     * memory cgroup. A tmpfs of size 0 is unlimited: the table's minimum is 1 and the channel
     * enforces it, and a 0 that came another way still gets the smallest scratch, never an
     * unbounded one. */
    uint64_t mb = p->scratch_mb ? p->scratch_mb : 1;
    char opts[96];
    snprintf(opts, sizeof(opts), "size=%llum,nr_inodes=4096,mode=1777", (unsigned long long) mb);
    if (mount("pyfence-scratch", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: tmpfs on /tmp");
    the_ns.private_scratch = true;
    if (chdir("/tmp") < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: chdir /tmp");
    /* The worker's pid namespace was made for it: being its init is checked, not assumed (a
     * fork() that fell back from clone3 makes none). */
    bool own_pidns = the_ns.children_in_new_pidns || the_ns.fork_new_pidns;
    if (own_pidns && getpid() != 1)
        return pf_error_set(err, PF_E_INTERNAL,
                            "namespaces: the worker is pid %d, not the init of a pid namespace of "
                            "its own",
                            (int) getpid());
    /* /proc only as the init of a fresh pid namespace: then it shows this worker alone. In a
     * user namespace the kernel mounts a proc only where one is fully visible already, and the
     * view has none: /proc stays an empty directory there. */
    if (getpid() != 1 || the_ns.in_userns)
        return 0;
    unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
    if (mount("proc", "/proc", "proc", flags, "hidepid=invisible,subset=pid") < 0 &&
        mount("proc", "/proc", "proc", flags, "hidepid=2") < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: mounting /proc");
    return 0;
}

/* The job's error when the zygote has no namespaces to give: why, and what to do. Without root
 * the layer is required whatever the profile says but "off" (op_exec.c): a worker without it
 * would run as the daemon's uid in the host's mount and pid namespaces. */
static int
unavailable_error(struct pf_error **err)
{
    const char *why =
            the_ns.unavailable[0] ? the_ns.unavailable : "the zygote did not prepare them";
    if (geteuid() == 0)
        return pf_error_set(err, PF_E_INTERNAL,
                            "namespaces: unavailable (%s; the zygote's start-up log says more)",
                            why);
    return pf_error_set(err, PF_E_INTERNAL,
                        "namespaces: unavailable (%s). A pyfenced that is not root requires this "
                        "layer, or its workers would run as its own uid %u in the host's mount "
                        "and pid namespaces: let it make user namespaces (`pyfenced --check`), "
                        "run it as root, or accept that with \"namespaces\": \"off\" in the "
                        "profile",
                        why, (unsigned) geteuid());
}

int
harden_namespaces_apply(const struct harden_params *p, struct pf_error **err)
{
    if (the_ns.netns_fd < 0 || the_ns.utsns_fd < 0 || the_ns.mntns_fd < 0)
        return unavailable_error(err);
    if (setns(the_ns.netns_fd, CLONE_NEWNET) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno,
                                  "namespaces: entering the network "
                                  "namespace");
    if (setns(the_ns.utsns_fd, CLONE_NEWUTS) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno,
                                  "namespaces: entering the uts "
                                  "namespace");
    /* IPC stays per worker: a shared one would let two workers meet in SysV IPC when seccomp
     * is off. The fresh one the zygote made for this fork, else one made here. */
    bool entered = the_ns.next_ipcns_fd >= 0 && setns(the_ns.next_ipcns_fd, CLONE_NEWIPC) == 0;
    if (!entered && unshare(CLONE_NEWIPC) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: unshare(CLONE_NEWIPC)");
    /* Enter the shared view, then take a private copy of it (a handful of mounts), so that this
     * worker's /tmp and /proc are its own. */
    if (setns(the_ns.mntns_fd, CLONE_NEWNS) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: entering the mount view");
    if (unshare(CLONE_NEWNS) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "namespaces: unshare(CLONE_NEWNS)");
    return mount_scratch_and_proc(p, err);
}
