/* Layer 8, seccomp: an allow-list of the system calls CPython and the allowed modules need.
 * The filter is compiled once, in the zygote (harden_seccomp_prepare), exported as BPF into
 * memory, and loaded by each worker with one prctl: libseccomp's compiler never runs per job.
 * A forbidden call traps (SECCOMP_RET_TRAP); the SIGSYS handler writes a frame prepared before
 * the filter was loaded, {"event":"seccomp","syscall":NAME}, to the channel and exits.
 *
 * Not done, measured: paying the load once. Loading the filter still costs each worker ~150 us
 * of CPU (~8% of a job on a saturated 2-core host: fork and exit of a 4 MiB process, with and
 * without the load, system-wide CPU), and mostly a fixed cost (the cBPF to eBPF conversion,
 * the JIT, the kernel's per-syscall action cache, the deferred free at exit): a 36-instruction
 * filter cost ~107 us. So a small per-worker filter stacked on a union one the zygote
 * installed would save ~2.5% of a job, and a worker cannot inherit the whole filter: the
 * setup it runs first (identity, mounts, capabilities) needs calls the filter forbids, and the
 * own-pid rules below name the worker. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "harden_internal.h"
#include "harden_zygote.h"
#include "pf_cleanup.h"
#include "pf_log.h"

static inline void
seccomp_releasep(scmp_filter_ctx *ctx)
{
    if (*ctx)
        seccomp_release(*ctx);
}
#define _cleanup_seccomp_ _cleanup_(seccomp_releasep)

/* Calls that only touch the process itself, its memory, its own fds and the files its other
 * layers let it see. Everything absent here traps. Names unknown on this architecture (open on
 * arm64, say) are skipped and reported by harden_seccomp_prepare. */
static const char *const allowed_syscalls[] = {
        /* files and fds (what a file may be is the job of the mount namespace and Landlock) */
        "read",
        "write",
        "readv",
        "writev",
        "pread64",
        "pwrite64",
        "preadv",
        "pwritev",
        "preadv2",
        "pwritev2",
        "open",
        "openat",
        "creat",
        "close",
        "close_range",
        "lseek",
        "dup",
        "dup2",
        "dup3",
        "flock",
        "fsync",
        "fdatasync",
        "ftruncate",
        "truncate",
        "fadvise64",
        "sendfile",
        "copy_file_range",
        "pipe",
        "pipe2",
        "stat",
        "fstat",
        "lstat",
        "newfstatat",
        "statx",
        "statfs",
        "fstatfs",
        "access",
        "faccessat",
        "faccessat2",
        "getdents",
        "getdents64",
        "getcwd",
        "chdir",
        "fchdir",
        "mkdir",
        "mkdirat",
        "rmdir",
        "unlink",
        "unlinkat",
        "rename",
        "renameat",
        "renameat2",
        "readlink",
        "readlinkat",
        /* Not chmod or fchmodat, and utimensat on an fd only (add_argument_rules): Landlock
         * does not cover a file's mode or times, so by path they would reach any file of the
         * worker's uid it can see, the daemon's socket included when the worker runs as the
         * daemon's uid (not root). fchmod's fd passed Landlock and the mount view at open. */
        "fchmod",
        "umask",
        /* memory */
        "brk",
        "mmap",
        "munmap",
        "mprotect",
        "mremap",
        "madvise",
        "msync",
        /* signals (rt_sigaction has its own rule: SIGSYS stays ours) */
        "rt_sigprocmask",
        "rt_sigreturn",
        "rt_sigpending",
        "rt_sigtimedwait",
        "rt_sigsuspend",
        "sigaltstack",
        "restart_syscall",
        /* time */
        "clock_gettime",
        "clock_getres",
        "gettimeofday",
        "time",
        "nanosleep",
        "clock_nanosleep",
        "getitimer",
        "setitimer",
        "alarm",
        "times",
        /* identity, read only */
        "getpid",
        "getppid",
        "gettid",
        "getuid",
        "geteuid",
        "getgid",
        "getegid",
        "getresuid",
        "getresgid",
        "getgroups",
        "getpgrp",
        "getpgid",
        "getsid",
        /* waiting */
        "poll",
        "ppoll",
        "select",
        "pselect6",
        "epoll_create1",
        "epoll_ctl",
        "epoll_wait",
        "epoll_pwait",
        "eventfd2",
        "wait4",
        "waitid",
        "futex",
        /* process and libc housekeeping */
        "uname",
        "getrandom",
        "set_robust_list",
        "get_robust_list",
        "set_tid_address",
        "rseq",
        "exit",
        "exit_group",
        "arch_prctl",
        "sched_yield",
        "sched_getaffinity",
        "getcpu",
        "sysinfo",
        "getrusage",
        "getrlimit",
};

/* Calls that get an error instead of a trap, so that libc falls back to a call we can filter:
 * clone3 and openat2 take their flags in a struct that BPF cannot read. */
static const char *const enosys_syscalls[] = {"clone3", "openat2"};

/* The worker's channel is its only socket: socket calls are allowed on that fd alone. */
static const char *const channel_syscalls[] = {"sendto",  "recvfrom", "sendmsg",
                                               "recvmsg", "shutdown", "getsockopt"};

static const unsigned long allowed_ioctls[] = {TCGETS,  TIOCGWINSZ, FIONREAD,
                                               FIONBIO, FIOCLEX,    FIONCLEX};

/* fcntl commands, each checked against the list below (F_SETFL has its own rule). */
static const int allowed_fcntls[] = {F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD, F_SETFD, F_GETFL};

static const int allowed_prctls[] = {PR_SET_NAME,         PR_GET_NAME,    PR_GET_DUMPABLE,
                                     PR_GET_NO_NEW_PRIVS, PR_GET_SECCOMP, PR_CAPBSET_READ,
                                     PR_GET_TIMERSLACK};

/* Pre-encoded frames, one per syscall number, so that the SIGSYS handler only indexes and
 * writes: no allocation, no formatting, nothing that is not async-signal-safe. */
#define FRAME_SYSCALLS 512
#define FRAME_SLOT     80

static struct {
    bool ready;
    struct sock_fprog prog[2];  /* [0]: no threads; [1]: threads (clone with CLONE_THREAD) */
    char (*frames)[FRAME_SLOT]; /* 4-byte length + JSON, for numbers [0, FRAME_SYSCALLS) */
    unsigned n_unknown;
} the_filter;

static size_t
encode_frame(char *slot, const char *name)
{
    int n = snprintf(slot + 4, FRAME_SLOT - 4, "{\"event\":\"seccomp\",\"syscall\":\"%s\"}", name);
    if (n < 0 || n >= FRAME_SLOT - 4)
        n = snprintf(slot + 4, FRAME_SLOT - 4, "{\"event\":\"seccomp\",\"syscall\":\"?\"}");
    slot[0] = 0;
    slot[1] = 0;
    slot[2] = (char) ((n >> 8) & 0xff);
    slot[3] = (char) (n & 0xff);
    return (size_t) n + 4;
}

static int
prepare_frames(struct pf_error **err)
{
    if (the_filter.frames)
        return 0;
    char(*frames)[FRAME_SLOT] = calloc(FRAME_SYSCALLS, FRAME_SLOT);
    if (!frames)
        return pf_error_set(err, PF_E_INTERNAL, "seccomp: out of memory for the SIGSYS frames");
    for (int nr = 0; nr < FRAME_SYSCALLS; nr++) {
        _cleanup_free_ char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
        char fallback[32];
        if (!name)
            snprintf(fallback, sizeof(fallback), "syscall_%d", nr);
        encode_frame(frames[nr], name ? name : fallback);
    }
    the_filter.frames = frames;
    return 0;
}

static void
write_all_signal_safe(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        buf += n;
        len -= (size_t) n;
    }
}

static void
sigsys_handler(int sig, siginfo_t *info, void *ucontext)
{
    int nr = info->si_syscall;
    if (the_filter.frames && nr >= 0 && nr < FRAME_SYSCALLS) {
        const char *f = the_filter.frames[nr];
        size_t len = ((size_t) (unsigned char) f[2] << 8 | (unsigned char) f[3]) + 4;
        write_all_signal_safe(HARDEN_CHANNEL_FD, f, len);
    } else {
        /* A number past the table: name it by number, formatted by hand. */
        char frame[FRAME_SLOT], digits[16];
        int nd = 0;
        unsigned v = (unsigned) nr;
        do {
            digits[nd++] = (char) ('0' + v % 10);
            v /= 10;
        } while (v && nd < (int) sizeof(digits));
        char name[32] = "syscall_";
        size_t pos = strlen(name);
        while (nd > 0)
            name[pos++] = digits[--nd];
        name[pos] = '\0';
        static const char head[] = "{\"event\":\"seccomp\",\"syscall\":\"";
        size_t n = 0;
        memcpy(frame + 4, head, sizeof(head) - 1);
        n += sizeof(head) - 1;
        memcpy(frame + 4 + n, name, pos);
        n += pos;
        memcpy(frame + 4 + n, "\"}", 2);
        n += 2;
        frame[0] = frame[1] = 0;
        frame[2] = (char) (n >> 8);
        frame[3] = (char) (n & 0xff);
        write_all_signal_safe(HARDEN_CHANNEL_FD, frame, n + 4);
    }
    _exit(HARDEN_SECCOMP_EXIT_CODE);
}

static int
rule_error(int rc, const char *what, const char *name, struct pf_error **err)
{
    /* libseccomp returns -errno: converted here, where it enters our code. */
    return pf_error_set_errno(err, PF_E_INTERNAL, -rc, "seccomp: %s rule for '%s'", what, name);
}

static int
add_simple_rules(scmp_filter_ctx ctx, bool strict, bool threads, unsigned *n_unknown,
                 struct pf_error **err)
{
    for (size_t i = 0; i < PF_ELEMENTSOF(allowed_syscalls); i++) {
        int nr = seccomp_syscall_resolve_name(allowed_syscalls[i]);
        if (nr == __NR_SCMP_ERROR) {
            if (strict)
                return pf_error_set(err, PF_E_CONFIG,
                                    "seccomp: syscall '%s' is unknown on this architecture "
                                    "(strict mode)",
                                    allowed_syscalls[i]);
            /* Named once: both variants share the list, only the first compile logs. */
            if (!threads)
                pf_log_notice(SECCOMP, "syscall '%s' is unknown on this architecture, skipped",
                              allowed_syscalls[i]);
            (*n_unknown)++;
            continue;
        }
        int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
        if (rc < 0)
            return rule_error(rc, "allow", allowed_syscalls[i], err);
    }
    for (size_t i = 0; i < PF_ELEMENTSOF(enosys_syscalls); i++) {
        int nr = seccomp_syscall_resolve_name(enosys_syscalls[i]);
        if (nr == __NR_SCMP_ERROR)
            continue;
        int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
        if (rc < 0)
            return rule_error(rc, "ENOSYS", enosys_syscalls[i], err);
    }
    return 0;
}

/* Stands for the worker's own pid in the compiled filter: the filter is compiled once, in the
 * zygote, before any worker pid exists; each worker writes its pid over it before loading
 * (with_own_pid). Far above any pid (pid_max is at most 2^22) and any syscall number. */
#define PID_PLACEHOLDER 0x7fa5c3e1u

/* Argument rules allow listed values only, never "anything but X": the kernel reads an int
 * argument (a signal number, an fd, a prctl option, a command) as its low 32 bits, while the
 * filter sees all 64, so "signal != SIGSYS" let (1 << 32) | SIGSYS through, which the kernel took
 * for SIGSYS. (libseccomp's SCMP_A0_32 does not help: it only casts the operand to 32 bits, the
 * comparison stays 64-bit.) An equality on all 64 bits fails closed instead: junk in the upper
 * half traps, whatever the lower half says. */

/* The kernel's highest signal number (_NSIG) on the architectures we build for. */
#define KERNEL_SIGMAX 64
/* One masked rule covers the signals between SIGSYS and KERNEL_SIGMAX. */
_Static_assert(SIGSYS == 31, "the rt_sigaction rules assume SIGSYS is 31");

/* The SIGSYS handler must stay ours, or a snippet could carry on after a trap: rt_sigaction may
 * change any handler but that one, and read any. */
static int
add_sigaction_rules(scmp_filter_ctx ctx, struct pf_error **err)
{
    const struct scmp_arg_cmp allowed[] = {
            SCMP_A0(SCMP_CMP_LT, (scmp_datum_t) SIGSYS),                 /* 0 (EINVAL) .. 30 */
            SCMP_A0(SCMP_CMP_MASKED_EQ, ~(scmp_datum_t) 31, SIGSYS + 1), /* 32 .. 63 */
            SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t) KERNEL_SIGMAX),          /* 64 */
            /* Reading any handler, SIGSYS's too: the signal module queries all when imported. */
            SCMP_A1(SCMP_CMP_EQ, 0),
    };
    for (size_t i = 0; i < PF_ELEMENTSOF(allowed); i++) {
        int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigaction), 1, allowed[i]);
        if (rc < 0)
            return rule_error(rc, "signal-number", "rt_sigaction", err);
    }
    return 0;
}

/* fcntl: duplicating, close-on-exec and the status flags, what glibc and CPython's io and os
 * use (os.dup, set_inheritable, set_blocking, fdopen). Not F_SETOWN(_EX), F_SETSIG or O_ASYNC:
 * together they make the kernel send any signal, SIGKILL included, to any process of the
 * worker's uid whenever the other end writes to the fd, past the own-pid kill rule; nor leases,
 * F_NOTIFY (signals again), locks or pipe sizes, which nothing of ours needs. */
static int
add_fcntl_rules(scmp_filter_ctx ctx, struct pf_error **err)
{
    int rc;
    for (size_t i = 0; i < PF_ELEMENTSOF(allowed_fcntls); i++) {
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1,
                              SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t) allowed_fcntls[i]));
        if (rc < 0)
            return rule_error(rc, "command", "fcntl", err);
    }
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 2,
                          SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t) F_SETFL),
                          SCMP_A2(SCMP_CMP_MASKED_EQ, (scmp_datum_t) O_ASYNC, 0));
    if (rc < 0)
        return rule_error(rc, "F_SETFL without O_ASYNC", "fcntl", err);
    return 0;
}

static int
add_argument_rules(scmp_filter_ctx ctx, bool threads, struct pf_error **err)
{
    int rc;
    /* Signals to itself only (raise, os.kill(os.getpid(), ...)): not to the zygote, the daemon
     * or another worker, whatever the uid. tkill is not needed: glibc uses tgkill. */
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1,
                          SCMP_A0(SCMP_CMP_EQ, PID_PLACEHOLDER));
    if (rc < 0)
        return rule_error(rc, "own-pid", "kill", err);
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
                          SCMP_A0(SCMP_CMP_EQ, PID_PLACEHOLDER));
    if (rc < 0)
        return rule_error(rc, "own-pid", "tgkill", err);
    for (size_t i = 0; i < PF_ELEMENTSOF(channel_syscalls); i++) {
        int nr = seccomp_syscall_resolve_name(channel_syscalls[i]);
        if (nr == __NR_SCMP_ERROR)
            continue;
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
                              SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t) HARDEN_CHANNEL_FD));
        if (rc < 0)
            return rule_error(rc, "channel-only", channel_syscalls[i], err);
    }
    for (size_t i = 0; i < PF_ELEMENTSOF(allowed_ioctls); i++) {
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
                              SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, allowed_ioctls[i]));
        if (rc < 0)
            return rule_error(rc, "ioctl", "ioctl", err);
    }
    for (size_t i = 0; i < PF_ELEMENTSOF(allowed_prctls); i++) {
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
                              SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t) allowed_prctls[i]));
        if (rc < 0)
            return rule_error(rc, "prctl", "prctl", err);
    }
    if (add_sigaction_rules(ctx, err) < 0 || add_fcntl_rules(ctx, err) < 0)
        return -1;
    /* futimens (utimensat with a NULL path): the times of a file the worker opened. */
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(utimensat), 1, SCMP_A1(SCMP_CMP_EQ, 0));
    if (rc < 0)
        return rule_error(rc, "fd-only", "utimensat", err);
    /* Reading limits is fine; raising a soft one up to its hard one is not. */
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1, SCMP_A2(SCMP_CMP_EQ, 0));
    if (rc < 0)
        return rule_error(rc, "prlimit64", "prlimit64", err);
    if (threads) {
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
        if (rc < 0)
            return rule_error(rc, "clone (threads)", "clone", err);
    }
    return 0;
}

/* Compiles one variant and exports its BPF into memory through a memfd. */
static int
compile(bool threads, bool strict, struct sock_fprog *ret, unsigned *n_unknown,
        struct pf_error **err)
{
    _cleanup_seccomp_ scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
    if (!ctx)
        return pf_error_set(err, PF_E_INTERNAL, "seccomp: seccomp_init failed");
    /* Explicit architectures: the native one only. Calls made through another ABI (i386's int
     * 0x80, x32) would dodge a filter written in native numbers, so they kill the process. */
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    if (rc < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, -rc, "seccomp: bad-arch action");
    if (seccomp_arch_exist(ctx, seccomp_arch_native()) != 0)
        return pf_error_set(err, PF_E_INTERNAL, "seccomp: native architecture missing");
    /* A binary tree of syscall numbers instead of a linear list: the kernel runs the filter
     * for every syscall number when it loads it (to cache the always-allowed ones), so the
     * filter's depth is most of what loading costs per worker. */
    rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    if (rc < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, -rc, "seccomp: binary-tree optimisation");
    /* The worker sets no_new_privs itself (privileges layer, or below). */
    rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
    if (rc < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, -rc, "seccomp: NNP attribute");
    if (add_simple_rules(ctx, strict, threads, n_unknown, err) < 0 ||
        add_argument_rules(ctx, threads, err) < 0)
        return -1;

    _cleanup_close_ int fd = memfd_create("pyfence-seccomp", MFD_CLOEXEC);
    if (fd < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "seccomp: memfd_create");
    rc = seccomp_export_bpf(ctx, fd);
    if (rc < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, -rc, "seccomp: export BPF");
    struct stat st;
    if (fstat(fd, &st) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "seccomp: fstat memfd");
    size_t n = (size_t) st.st_size / sizeof(struct sock_filter);
    if (n == 0 || n > BPF_MAXINSNS)
        return pf_error_set(err, PF_E_INTERNAL, "seccomp: exported filter has %zu instructions", n);
    _cleanup_free_ struct sock_filter *insns = malloc(n * sizeof(*insns));
    if (!insns)
        return pf_error_set(err, PF_E_INTERNAL, "seccomp: out of memory");
    if (pread(fd, insns, n * sizeof(*insns), 0) != (ssize_t) (n * sizeof(*insns)))
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "seccomp: read back BPF");
    /* The own-pid rules must be patchable, or every self-signal would trap. (libseccomp shares
     * one block between kill and tgkill: identical argument checks are merged.) */
    bool placeholder = false;
    for (size_t i = 0; i < n; i++)
        if (insns[i].code == (BPF_JMP | BPF_JEQ | BPF_K) && insns[i].k == PID_PLACEHOLDER)
            placeholder = true;
    if (!placeholder)
        return pf_error_set(err, PF_E_INTERNAL,
                            "seccomp: the compiled filter lost its own-pid placeholder");
    ret->len = (unsigned short) n;
    ret->filter = TAKE_PTR(insns);
    return 0;
}

/* prog with the worker's pid written over the placeholder, into insns (room for BPF_MAXINSNS).
 * On the stack, not the heap: a malloc this size in a fresh worker would first consolidate the
 * zygote's free chunks, copying a dozen of its heap pages. */
static void
with_own_pid(const struct sock_fprog *prog, struct sock_filter *insns)
{
    memcpy(insns, prog->filter, prog->len * sizeof(*insns));
    uint32_t pid = (uint32_t) getpid();
    for (unsigned i = 0; i < prog->len; i++)
        if (insns[i].code == (BPF_JMP | BPF_JEQ | BPF_K) && insns[i].k == PID_PLACEHOLDER)
            insns[i].k = pid;
}

int
harden_seccomp_prepare(bool strict, unsigned *ret_unknown, struct pf_error **err)
{
    if (the_filter.ready) {
        if (ret_unknown)
            *ret_unknown = the_filter.n_unknown;
        return 0;
    }
    if (prepare_frames(err) < 0)
        return -1;
    unsigned n_unknown = 0, ignored = 0;
    struct sock_fprog progs[2] = {{0}};
    if (compile(false, strict, &progs[0], &n_unknown, err) < 0)
        return -1;
    if (compile(true, strict, &progs[1], &ignored, err) < 0) {
        free(progs[0].filter);
        return -1;
    }
    the_filter.prog[0] = progs[0];
    the_filter.prog[1] = progs[1];
    the_filter.n_unknown = n_unknown;
    the_filter.ready = true;
    if (ret_unknown)
        *ret_unknown = n_unknown;
    return 0;
}

const char *const *
harden_seccomp_allowed(size_t *ret_n)
{
    *ret_n = PF_ELEMENTSOF(allowed_syscalls);
    return allowed_syscalls;
}

unsigned
harden_seccomp_instructions(bool threads)
{
    return the_filter.ready ? the_filter.prog[threads ? 1 : 0].len : 0;
}

int
harden_seccomp_apply(const struct harden_params *p, struct pf_error **err)
{
    /* Normally compiled in the zygote; compiling here is correct, only slower. */
    if (harden_seccomp_prepare(false, NULL, err) < 0)
        return -1;
    /* Threads count against the pids limit, so a worker limited to one task gets none. */
    const struct sock_fprog *compiled = &the_filter.prog[p->pids > 1 ? 1 : 0];
    struct sock_filter insns[BPF_MAXINSNS];
    if (compiled->len > BPF_MAXINSNS)
        return pf_error_set(err, PF_E_INTERNAL, "seccomp: the filter has %u instructions, over %d",
                            compiled->len, BPF_MAXINSNS);
    with_own_pid(compiled, insns);
    struct sock_fprog own = {.len = compiled->len, .filter = insns};
    const struct sock_fprog *prog = &own;

    struct sigaction sa = {.sa_sigaction = sigsys_handler, .sa_flags = SA_SIGINFO};
    sigfillset(&sa.sa_mask);
    if (sigaction(SIGSYS, &sa, NULL) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "seccomp: sigaction(SIGSYS)");
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGSYS);
    if (sigprocmask(SIG_UNBLOCK, &set, NULL) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "seccomp: unblock SIGSYS");
    /* Required to load a filter without CAP_SYS_ADMIN; the privileges layer sets it too. */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "seccomp: PR_SET_NO_NEW_PRIVS");
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno,
                                  "seccomp: loading the filter (%u instructions)", prog->len);
    return 0;
}
