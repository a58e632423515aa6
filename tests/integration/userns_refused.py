"""Runs a command as a uid that is not root, where the kernel refuses it any user namespace:
inside a user namespace of its own whose user.max_user_namespaces is 0. Run as root:

    python3 userns_refused.py UID COMMAND [ARG]...

It makes the user namespace (mapping 0 and UID to themselves, so that peers and files keep their
ids), sets that namespace's user.max_user_namespaces to 0 (the user.* sysctls are per user
namespace, writable with CAP_SYS_RESOURCE in it, and the kernel checks the count of every
ancestor: nothing below can make one), drops to UID (gid UID, no supplementary groups) and
execs the command, keeping this pid. The uid map must be written from the parent namespace by a
process with CAP_SETUID there (two ids are mapped): a forked helper that stays outside does it.

The kernel then answers unshare(CLONE_NEWUSER) with ENOSPC, as where unprivileged user
namespaces are turned off by the host (user.max_user_namespaces = 0 on the host,
kernel.unprivileged_userns_clone = 0, an LSM)."""

import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000


def main():
    uid = int(sys.argv[1])
    argv = sys.argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    ready_r, ready_w = os.pipe()
    pid = os.getpid()
    helper = os.fork()
    if helper == 0:
        os.close(ready_w)
        os.read(ready_r, 1)  # until the parent is in its user namespace
        mapping = f"0 0 1\n{uid} {uid} 1\n"
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{pid}/{name}", "w") as f:
                f.write(mapping)
        os._exit(0)
    os.close(ready_r)
    if libc.unshare(CLONE_NEWUSER) != 0:
        sys.exit(f"userns_refused: unshare(CLONE_NEWUSER): {os.strerror(ctypes.get_errno())}")
    os.write(ready_w, b"x")
    os.close(ready_w)
    _, status = os.waitpid(helper, 0)
    if status != 0:
        sys.exit("userns_refused: the helper could not write the id maps")
    with open("/proc/sys/user/max_user_namespaces", "w") as f:
        f.write("0")
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()
