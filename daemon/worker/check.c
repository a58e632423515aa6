/* `pyfenced --check`: what this host gives each hardening layer, probed without changing the
 * host (namespaces are tried in throw-away children, no cgroup is created). */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harden_cgroup.h"
#include "harden_internal.h"
#include "harden_zygote.h"
#include "pf_cleanup.h"

/* 0 when unshare(flag) works in a child, else its errno. */
static int
try_unshare(int flag)
{
    pid_t pid = fork();
    if (pid < 0)
        return errno;
    if (pid == 0)
        _exit(unshare(flag) == 0 ? 0 : (errno & 0x7f));
    int status;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
        return EIO;
    return WEXITSTATUS(status);
}

/* Whether workers can be forked straight into a v2 slot: a throw-away child forked into this
 * process's own v2 cgroup (where it would be born anyway), so nothing is created or moved. */
static void
check_fork_into(const char *v2_dir, bool v2_backend, FILE *out)
{
    int fd = open(v2_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int open_errno = errno;
    bool placed = false;
    fflush(out);
    pid_t pid = fd < 0 ? -1 : harden_fork_into_cgroup(fd, 0, &placed);
    if (pid == 0)
        _exit(0);
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    if (fd >= 0)
        close(fd);
    char why[160] = "";
    harden_fork_into_cgroup_usable(why, sizeof(why));
    if (!v2_backend)
        fprintf(out, "  v2 fork:   clone3 CLONE_INTO_CGROUP %s (unused: the backend is not v2)\n",
                placed ? "works" : "does not work");
    else if (placed)
        fprintf(out, "  v2 fork:   workers start in their slots (clone3 CLONE_INTO_CGROUP)\n");
    else
        fprintf(out, "  v2 fork:   workers join their slots after the fork (%s)\n",
                fd < 0 ? strerror(open_errno) : why);
}

/* false when the backend --cgroup asks for cannot be used: pyfenced would not start. */
static bool
check_cgroup(const char *mode, FILE *out)
{
    struct cgroup_host host;
    if (cgroup_host_detect(&host, NULL) < 0) {
        fprintf(out, "cgroup:      none (cannot read /proc/self/cgroup)\n");
        return !mode || strcmp(mode, "auto") == 0 || strcmp(mode, "none") == 0;
    }
    char why[600] = "";
    struct pf_error *err = NULL;
    const struct cgroup_backend *b = cgroup_choose(&host, mode, why, sizeof(why), &err);
    if (b)
        fprintf(out, "cgroup:      %s (%s)\n", b->name, why);
    else
        fprintf(out, "cgroup:      CANNOT BE USED: %s\n", err ? err->msg : "out of memory");
    pf_error_free(err);
    if (host.v2_dir) {
        fprintf(out, "  v2:        '%s', controllers '%s'\n", host.v2_dir,
                host.v2_controllers ? host.v2_controllers : "");
        check_fork_into(host.v2_dir, b == &cgroup_backend_v2, out);
    }
    static const char *const names[_CGROUP_DIR_MAX] = {"memory", "pids", "cpu", "cpuacct"};
    for (int d = 0; d < _CGROUP_DIR_MAX; d++)
        if (host.v1_dir[d])
            fprintf(out, "  v1 %-8s'%s'%s\n", names[d], host.v1_dir[d],
                    access(host.v1_dir[d], W_OK) == 0 ? "" : " (not writable)");
    if (b == &cgroup_backend_none)
        fprintf(out, "  WARNING:   workers would run with rlimits only\n");
    cgroup_host_finish(&host);
    return b != NULL;
}

static bool
check_namespaces(bool off, FILE *out)
{
    if (off) {
        fprintf(out, "namespaces:  off (--namespaces off: workers get none; a loud warning)\n");
        return false;
    }
    static const struct {
        const char *name;
        int flag;
    } ns[] = {{"net", CLONE_NEWNET}, {"pid", CLONE_NEWPID},  {"ipc", CLONE_NEWIPC},
              {"uts", CLONE_NEWUTS}, {"mount", CLONE_NEWNS}, {"user", CLONE_NEWUSER}};
    bool all = true;
    /* Without root the zygote makes every other namespace inside a user namespace of its own:
     * each is tried the same way. */
    int in_userns = geteuid() == 0 ? 0 : CLONE_NEWUSER;
    fprintf(out, "namespaces: ");
    for (size_t i = 0; i < PF_ELEMENTSOF(ns); i++) {
        int e = try_unshare(ns[i].flag | in_userns);
        fprintf(out, " %s=%s", ns[i].name, e ? strerror(e) : "yes");
        if (e && ns[i].flag != CLONE_NEWUSER)
            all = false;
    }
    fprintf(out, "\n");
    FILE *f = fopen("/proc/sys/user/max_user_namespaces", "re");
    long max = -1;
    if (f) {
        if (fscanf(f, "%ld", &max) != 1)
            max = -1;
        fclose(f);
    }
    fprintf(out, "  user namespaces: max_user_namespaces=%ld (%s)\n", max,
            geteuid() == 0 ? "not needed: pyfenced runs as root"
                           : "needed: pyfenced does not run as root, each zygote makes one");
    return all;
}

static bool
check_seccomp(FILE *out)
{
    struct pf_error *err = NULL;
    unsigned unknown = 0;
    bool kernel = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
    int r = harden_seccomp_prepare(false, &unknown, &err);
    size_t n;
    harden_seccomp_allowed(&n);
    if (r < 0 || !kernel) {
        fprintf(out, "seccomp:     NOT AVAILABLE (%s)\n",
                !kernel ? "kernel without CONFIG_SECCOMP_FILTER" : err->msg);
        pf_error_free(err);
        return false;
    }
    fprintf(out,
            "seccomp:     yes, %zu allow-listed calls (%u unknown here), %u/%u BPF "
            "instructions (no threads/threads), non-native ABIs killed\n",
            n, unknown, harden_seccomp_instructions(false), harden_seccomp_instructions(true));
    return true;
}

static bool
check_identity(uint32_t base, uint32_t count, FILE *out)
{
    cap_t caps = cap_get_proc();
    cap_flag_value_t setuid = CAP_CLEAR, setgid = CAP_CLEAR, setpcap = CAP_CLEAR;
    if (caps) {
        cap_get_flag(caps, CAP_SETUID, CAP_EFFECTIVE, &setuid);
        cap_get_flag(caps, CAP_SETGID, CAP_EFFECTIVE, &setgid);
        cap_get_flag(caps, CAP_SETPCAP, CAP_EFFECTIVE, &setpcap);
        cap_free(caps);
    }
    /* pyfenced refuses a --uid-range with any taken id; the first 1024 stand for the default. */
    uint32_t probed = count < 1024 ? count : 1024;
    unsigned taken = 0;
    for (uint32_t u = base; u < base + probed; u++)
        if (getpwuid(u))
            taken++;
    fprintf(out,
            "identity:    workers as uid/gid %u..%u (%u of the first %u are in /etc/passwd%s); "
            "CAP_SETUID %s, CAP_SETGID %s\n",
            base, base + count - 1, taken, probed, taken ? ": pick another range" : "",
            setuid ? "yes" : "NO", setgid ? "yes" : "NO");
    fprintf(out, "privileges:  CAP_SETPCAP %s (needed to empty the bounding set%s)\n",
            setpcap ? "yes" : "NO",
            geteuid() == 0 ? ""
                           : "; not root, a worker has it inside its zygote's user namespace "
                             "when user=yes above, so the layer is best-effort");
    return setuid && setgid && setpcap;
}

/* false when pyfenced would refuse to start: not root, with supplementary groups every worker
 * would keep, and no --keep-groups (daemon.c). */
static bool
check_groups(bool keep_groups, FILE *out)
{
    char list[256];
    unsigned extra = 0;
    struct pf_error *err = NULL;
    if (harden_extra_groups(list, sizeof(list), &extra, &err) < 0) {
        fprintf(out, "groups:      CANNOT BE READ: %s\n", err ? err->msg : "out of memory");
        pf_error_free(err);
        return false;
    }
    if (!extra)
        fprintf(out, "groups:      none besides gid %u\n", (unsigned) getegid());
    else if (geteuid() == 0)
        fprintf(out, "groups:      %s, dropped by each worker (identity)\n", list);
    else if (keep_groups)
        fprintf(out,
                "groups:      %s, KEPT BY EVERY WORKER (--keep-groups; not root, a user "
                "namespace cannot drop them)\n",
                list);
    else
        fprintf(out,
                "groups:      %s CANNOT BE DROPPED without root: pyfenced would not start "
                "(start it without them, or pass --keep-groups to accept that every worker "
                "keeps them)\n",
                list);
    return !extra || geteuid() == 0 || keep_groups;
}

int
harden_check_host(const struct harden_zygote_config *config, bool keep_groups, FILE *out)
{
    fprintf(out, "pyfence host check (each layer and what this host gives it)\n");
    bool cg = check_cgroup(config->cgroup_mode, out);
    bool ns = check_namespaces(config->namespaces_off, out);
    bool ids =
            check_identity(config->uid_base ? config->uid_base : HARDEN_UID_BASE_DEFAULT,
                           config->uid_count ? config->uid_count : HARDEN_UID_COUNT_DEFAULT, out);
    bool groups = check_groups(keep_groups, out);
    int abi = harden_landlock_abi();
    if (abi > 0)
        fprintf(out, "landlock:    ABI %d%s%s\n", abi, abi >= 4 ? ", TCP bind/connect denied" : "",
                abi >= 6 ? ", signals and abstract sockets scoped" : "");
    else
        fprintf(out, "landlock:    not available (layer skipped when best-effort)\n");
    bool sc = check_seccomp(out);
    fprintf(out, "rlimits:     always available\n");
    if (!ns && !config->namespaces_off)
        fprintf(out, "NOTE: some namespaces are unavailable; the namespaces layer (best-effort "
                     "by default) will be skipped\n");
    bool ok = sc && ids && cg && groups;
    fprintf(out, "result:      %s\n",
            ok        ? "every layer required by default can be applied"
            : !cg     ? "the cgroup backend asked for CANNOT be used: pyfenced would not start"
            : !groups ? "the supplementary groups CANNOT be dropped: pyfenced would not start"
                      : "a layer required by default (seccomp, identity, privileges) CANNOT be "
                        "applied");
    return ok ? 0 : 1;
}
