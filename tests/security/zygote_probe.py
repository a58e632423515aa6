#!/usr/bin/python3
"""Drives a real pyfence-zygote directly over its control channel (CHANNEL.md) and runs one
snippet in a worker hardened with the given layer levels. Used by the hardening engineer to
check that the seccomp allow-list and the other layers leave the executor working.

usage: zygote_probe.py ZYGOTE 'CODE' [layer=level ...]
prints the worker's frames and the zygote's exited event, as JSON lines."""
import array
import json
import os
import socket
import struct
import subprocess
import sys

LAYERS = ["cgroup", "namespaces", "rlimits", "fds", "identity", "privileges", "landlock",
          "seccomp"]


def main():
    zygote, code = sys.argv[1], sys.argv[2]
    levels = {l: "off" for l in LAYERS}
    levels.update({"rlimits": "required", "fds": "required"})
    for a in sys.argv[3:]:
        k, v = a.split("=", 1)
        levels[k] = v
    ctl, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    tfd = theirs.fileno()
    proc = subprocess.Popen([zygote, "--log-level", os.environ.get("LOG", "notice")],
                            pass_fds=(3, tfd), env={}, stdin=subprocess.DEVNULL,
                            preexec_fn=lambda: os.dup2(tfd, 3))
    theirs.close()
    print(ctl.recv(65536).decode())
    daemon_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    harden = {"cpu_ms": 5000, "memory_mb": 512, "file_size_mb": 4, "open_files": 64, "pids": 16,
              "uid": int(os.environ.get("UID_", "0")), "gid": int(os.environ.get("UID_", "0")),
              "levels": levels}
    msg = json.dumps({"op": "spawn", "job": 1, "harden": harden}).encode()
    ctl.sendmsg([msg], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                         array.array("i", [worker_end.fileno()]))])
    worker_end.close()
    print(ctl.recv(65536).decode())
    run = json.dumps({"op": "run", "code": code, "imports": ["math", "re", "collections",
                                                               "datetime", "random", "time"],
                      "limits": {}}).encode()
    daemon_end.sendall(struct.pack(">I", len(run)) + run)
    buf = b""
    while True:
        chunk = daemon_end.recv(65536)
        if not chunk:
            break
        buf += chunk
    while len(buf) >= 4:
        n = struct.unpack(">I", buf[:4])[0]
        print(buf[4:4 + n].decode(errors="replace"))
        buf = buf[4 + n:]
    print(ctl.recv(65536).decode())
    ctl.close()
    proc.wait(timeout=10)


if __name__ == "__main__":
    main()
