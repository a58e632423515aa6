#!/usr/bin/python3
"""Drives a real pyfence-zygote over its control channel (daemon/worker/CHANNEL.md) and runs one
snippet per worker, hardened with chosen layer levels. The security tests use it to show, in a
real worker, that each OS layer holds on its own; by hand:

    zygote_driver.py ZYGOTE 'CODE' [--raw] [layer=level ...] [limit=value ...]
"""
import array
import json
import os
import socket
import struct
import subprocess
import sys

LAYERS = ["cgroup", "namespaces", "rlimits", "fds", "identity", "privileges", "landlock",
          "seccomp"]
DEFAULT_HARDEN = {"cpu_ms": 10000, "memory_mb": 256, "file_size_mb": 4, "scratch_mb": 4,
                  "open_files": 64, "pids": 16, "uid": 0, "gid": 0}


class Result:
    def __init__(self, frames, exited):
        self.frames = frames
        self.exited = exited

    @property
    def result(self):
        return next((f for f in self.frames if f.get("event") == "result"), None)

    @property
    def seccomp(self):
        f = next((f for f in self.frames if f.get("event") == "seccomp"), None)
        return f and f["syscall"]

    @property
    def logs(self):
        r = self.result
        return r["logs"] if r else ""

    @property
    def error(self):
        r = self.result
        return (r.get("error") or {}).get("message", "") if r else ""

    def __repr__(self):
        return f"Result(frames={self.frames!r}, exited={self.exited!r})"


class Zygote:
    def __init__(self, path, cgroup="auto", log_level="warning"):
        self.ctl, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        tfd = theirs.fileno()
        keep = {3, tfd} if self.ctl.fileno() == 3 or tfd == 3 else None
        if keep is None:
            # fd 3 must exist in this process for pass_fds to keep it across the dup2 below.
            spare = os.open("/dev/null", os.O_RDONLY)
            os.dup2(spare, 3)
            os.close(spare)
            keep = {3, tfd}
        self.proc = subprocess.Popen(
            [path, "--log-level", log_level, "--cgroup", cgroup], pass_fds=tuple(keep), env={},
            stdin=subprocess.DEVNULL, preexec_fn=lambda: os.dup2(tfd, 3))
        theirs.close()
        self.ctl.settimeout(30)
        ready = json.loads(self.ctl.recv(65536))
        assert ready["event"] == "ready", ready
        self.pid = ready["pid"]
        self.next_job = 1
        self.exited = {}  # job -> its exited event, when it came while waiting for another

    def run(self, code, levels=None, raw=True, timeout=60, **harden):
        return self.finish(self.start(code, levels, raw, **harden), timeout)

    def start(self, code, levels=None, raw=True, **harden):
        """Spawns a worker and sends it the snippet; finish() collects it. Returns a handle
        (job id, daemon's end of the channel, worker pid)."""
        lv = {layer: "off" for layer in LAYERS}
        lv.update(levels or {})
        h = dict(DEFAULT_HARDEN)
        h.update(harden)
        h["levels"] = lv
        job = self.next_job
        self.next_job += 1
        daemon_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        msg = json.dumps({"op": "spawn", "job": job, "harden": h}).encode()
        self.ctl.sendmsg([msg], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                  array.array("i", [worker_end.fileno()]))])
        worker_end.close()
        while True:
            spawned = json.loads(self.ctl.recv(65536))
            if spawned.get("event") != "exited":
                break
            self.exited[spawned["job"]] = spawned
        if spawned["event"] != "spawned":
            raise RuntimeError(f"spawn failed: {spawned}")
        run = {"op": "run", "code": code, "limits": {}}
        if raw:
            run["raw"] = True
        payload = json.dumps(run).encode()
        try:
            daemon_end.sendall(struct.pack(">I", len(payload)) + payload)
        except BrokenPipeError:
            pass  # the worker is gone already (its hardening failed): finish() says why
        return job, daemon_end, spawned["pid"]

    def finish(self, handle, timeout=60):
        job, daemon_end, _ = handle
        daemon_end.settimeout(timeout)
        buf = b""
        while True:
            try:
                chunk = daemon_end.recv(65536)
            except ConnectionResetError:
                # The worker died without reading its run frame (hardening failed, say).
                break
            if not chunk:
                break
            buf += chunk
        daemon_end.close()
        frames = []
        while len(buf) >= 4:
            n = struct.unpack(">I", buf[:4])[0]
            frames.append(json.loads(buf[4:4 + n]))
            buf = buf[4 + n:]
        while job not in self.exited:
            ev = json.loads(self.ctl.recv(65536))
            if ev.get("event") == "exited":
                self.exited[ev["job"]] = ev
        return Result(frames, self.exited.pop(job))

    def close(self):
        self.ctl.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main():
    zygote, code = sys.argv[1], sys.argv[2]
    levels, harden, raw = {}, {}, False
    for a in sys.argv[3:]:
        if a == "--raw":
            raw = True
            continue
        k, v = a.split("=", 1)
        if k in LAYERS:
            levels[k] = v
        else:
            harden[k] = int(v)
    z = Zygote(zygote)
    try:
        r = z.run(code, levels, raw=raw, **harden)
        for f in r.frames:
            print(json.dumps(f))
        print(json.dumps(r.exited))
    finally:
        z.close()


if __name__ == "__main__":
    main()
