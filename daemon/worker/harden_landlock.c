/* Layer 7, Landlock (where the kernel has it): whatever the mount namespace left visible, the
 * worker may only read what CPython needs (/usr and the loader's files, /proc, the harmless
 * devices) and write only its private scratch. On ABI 4+ it may not bind or connect TCP; on
 * ABI 6+ it may not signal a process outside its domain nor reach abstract Unix sockets. Raw
 * syscalls: glibc has no wrappers, and Debian 12's linux/landlock.h stops at ABI 2, so the
 * later constants and the grown ruleset struct are spelled out here. */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harden_internal.h"
#include "harden_zygote.h"
#include "pf_cleanup.h"

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#    define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#    define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#endif
#define PF_LANDLOCK_ACCESS_NET_BIND_TCP        (1ULL << 0) /* ABI 4 */
#define PF_LANDLOCK_ACCESS_NET_CONNECT_TCP     (1ULL << 1) /* ABI 4 */
#define PF_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define PF_LANDLOCK_SCOPE_SIGNAL               (1ULL << 1) /* ABI 6 */

/* The kernel's struct, as of ABI 6; its size tells the kernel which fields we know. */
struct pf_landlock_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

#define FS_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_FILE_RIGHTS                                                                           \
    (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
     LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

static const char *const read_only_paths[] = {
        "/usr",  "/lib",      "/lib32",           "/lib64",         "/libx32",
        "/bin",  "/sbin",     "/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf",
        "/proc", "/dev/zero", "/dev/urandom",
};

int
harden_landlock_abi(void)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int) abi;
}

static uint64_t
fs_rights(int abi)
{
    uint64_t all = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */
    if (abi >= 2)
        all |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        all |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5)
        all |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    return all;
}

/* Allows `access` beneath path; a path absent on this host is skipped. */
static int
allow(int ruleset, const char *path, uint64_t access, uint64_t handled, struct pf_error **err)
{
    _cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT
                       ? 0
                       : pf_error_set_errno(err, PF_E_INTERNAL, errno, "landlock: open '%s'", path);
    struct stat st;
    if (fstat(fd, &st) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "landlock: stat '%s'", path);
    access &= handled;
    if (!S_ISDIR(st.st_mode))
        access &= FS_FILE_RIGHTS;
    struct landlock_path_beneath_attr pb = {.allowed_access = access, .parent_fd = fd};
    if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "landlock: rule for '%s'", path);
    return 0;
}

int
harden_landlock_apply(const struct harden_params *p, struct pf_error **err)
{
    int abi = harden_landlock_abi();
    if (abi <= 0)
        return pf_error_set(err, PF_E_INTERNAL,
                            "landlock: not available in this kernel (or disabled at boot)");
    uint64_t handled = fs_rights(abi);
    struct pf_landlock_ruleset_attr attr = {.handled_access_fs = handled};
    size_t size = sizeof(uint64_t);
    if (abi >= 4) {
        attr.handled_access_net =
                PF_LANDLOCK_ACCESS_NET_BIND_TCP | PF_LANDLOCK_ACCESS_NET_CONNECT_TCP;
        size = 2 * sizeof(uint64_t);
    }
    if (abi >= 6) {
        attr.scoped = PF_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | PF_LANDLOCK_SCOPE_SIGNAL;
        size = sizeof(attr);
    }
    _cleanup_close_ int ruleset = (int) syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (ruleset < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "landlock: create ruleset (ABI %d)",
                                  abi);
    if (harden_ns_private_scratch()) {
        /* Inside the mount view, everything visible is what CPython needs: one rule for its
         * root instead of one per path (each costs four syscalls, per worker). */
        if (allow(ruleset, "/", FS_READ, handled, err) < 0)
            return -1;
    } else {
        for (size_t i = 0; i < PF_ELEMENTSOF(read_only_paths); i++)
            if (allow(ruleset, read_only_paths[i], FS_READ, handled, err) < 0)
                return -1;
    }
    if (allow(ruleset, "/dev/null", FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE, handled, err) < 0)
        return -1;
    /* The scratch is writable only when it is this worker's own tmpfs, never the host's /tmp. */
    if (harden_ns_private_scratch()) {
        uint64_t rw = handled & ~(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                                  LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SOCK |
                                  LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_IOCTL_DEV);
        if (allow(ruleset, "/tmp", rw, handled, err) < 0)
            return -1;
    }
    /* landlock_restrict_self needs no_new_privs without CAP_SYS_ADMIN; it is set anyway. */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "landlock: PR_SET_NO_NEW_PRIVS");
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "landlock: restrict self");
    return 0;
}
