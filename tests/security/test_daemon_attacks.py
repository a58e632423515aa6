"""The attacks of test_os_layers.py, this time through the real pyfenced and the Python client,
with the default profile's every layer on: what an agent's native code (raw mode, test builds
only) would try, and the reply it gets. Then the degraded run (`--cgroup none --namespaces
off`): the other layers still hold, and pyfenced's log says loudly what is missing.

Needs root and a -Draw_mode=true build. Run: meson test -C BUILD --suite security"""
import json
import os
import re
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "integration"))
from conftest import Daemon, descendants, pid_alive, wchan  # noqa: E402

import pyfence  # noqa: E402  (conftest put client/python on the path)

PYFENCED = os.environ.get("PYFENCED", "")
# Ids of our own: RLIMIT_NPROC counts every process of a uid on the machine, so another pyfenced
# with the default range (its idle pool workers) would make the thread bomb stop early.
IDS = ["--uid-range", f"{900000 + (os.getpid() % 1000) * 64}:64"]

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the hardening layers need root to be applied"),
    pytest.mark.skipif(not os.access(PYFENCED, os.X_OK), reason="PYFENCED is not built"),
]


@pytest.fixture(scope="module")
def daemon():
    with tempfile.TemporaryDirectory(prefix="pf-") as wd:
        d = Daemon(Path(wd), IDS)
        yield d
        d.stop()


@pytest.fixture(scope="module")
def degraded():
    with tempfile.TemporaryDirectory(prefix="pf-") as wd:
        d = Daemon(Path(wd), IDS + ["--cgroup", "none", "--namespaces", "off"])
        yield d
        d.stop()


def raw(d, code, **limits):
    """Runs code as native CPython in a worker of d; the reply as an ExecResult."""
    with d.client() as c:
        req = {"code": code, "raw": True, "stream": False}
        if limits:
            req["limits"] = limits
        return pyfence.ExecResult(c.wait_reply(c.submit_request("exec", **req)))


# Snippets print "blocked <errno name>" when the attack fails with an OSError, "DONE" if not.
def attempt(body):
    return ("import errno, os\n"
            "try:\n"
            + "".join("    " + line + "\n" for line in body.splitlines())
            + "    print('DONE')\n"
            "except OSError as e:\n"
            "    print('blocked', errno.errorcode.get(e.errno, e.errno))\n")


LIBC = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"


def libc_call(expr):
    return attempt(LIBC + f"if ({expr}) < 0:\n    raise OSError(ctypes.get_errno(), 'call')")


def blocked(r):
    assert r.ok and "blocked" in r.logs and "DONE" not in r.logs, (r, r.error, r.logs)


def trapped(r, *syscalls):
    """A seccomp_violation whose message names the call (glibc blocks every signal around its
    own clone, and then the forced SIGSYS kills without naming it: "unknown")."""
    assert r.outcome == "seccomp_violation", (r, r.error, r.logs)
    named = re.search(r"forbidden system call \((\w+)\)", r.error["message"])
    assert named and named.group(1) in syscalls + ("unknown",), r.error


# ---- what the worker is ---------------------------------------------------------------------

PROBE = ("import os\nprint(open('/proc/self/status').read())\n"
         "print('pid', os.getpid(), 'env', dict(os.environ))")


def check_probe(r, namespaces=True):
    assert r.ok, (r, r.error)
    status = r.logs
    for line in ("Seccomp:\t2", "NoNewPrivs:\t1", "CapInh:\t0000000000000000",
                 "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
                 "CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000"):
        assert line in status, status
    uid = next(l for l in status.splitlines() if l.startswith("Uid:")).split()[1:]
    assert "0" not in uid, status
    assert "env {}" in status, status
    assert ("pid 1 " in status) == namespaces, status


def test_probe(daemon):
    check_probe(raw(daemon, PROBE))


def test_raw_refused_unless_asked(daemon):
    # Without "raw", the executor runs the same code and refuses the import it needs.
    with daemon.client() as c:
        r = c.exec("import os\nos.getpid()")
    assert r.outcome == "error" and "os" in r.error["message"], r


# ---- the attacks --------------------------------------------------------------------------

def test_os_system(daemon):
    trapped(raw(daemon, "import os\nos.system('echo pwned > /tmp/pwned')"), "clone", "clone3",
            "vfork", "execve")


def test_connect_localhost(daemon):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    s.setblocking(False)
    try:
        r = raw(daemon, attempt("import socket\n"
                                f"socket.create_connection(('127.0.0.1', {s.getsockname()[1]}), 5)"))
        trapped(r, "socket")
        with pytest.raises(BlockingIOError):
            s.accept()
    finally:
        s.close()


def test_write_outside_scratch(daemon):
    blocked(raw(daemon, attempt("open('/etc/pyfence-attack', 'w').write('x')")))
    assert not Path("/etc/pyfence-attack").exists()
    # The scratch directory is writable: the neighbour works.
    r = raw(daemon, attempt("open('/tmp/x', 'w').write('x')"))
    assert "DONE" in r.logs, (r, r.logs)


def test_read_shadow(daemon):
    blocked(raw(daemon, attempt("print(open('/etc/shadow').read()[:20])")))


def test_daemon_environment(daemon):
    blocked(raw(daemon, attempt(f"print(open('/proc/{daemon.pid}/environ').read())")))


def test_fork(daemon):
    trapped(raw(daemon, "import os\nif os.fork() == 0:\n    os._exit(0)\n"), "clone", "clone3",
            "fork")


def test_ptrace(daemon):
    trapped(raw(daemon, libc_call(f"libc.ptrace(16, {daemon.pid}, None, None)")), "ptrace")


def test_mount(daemon):
    trapped(raw(daemon, libc_call("libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)")), "mount")


def test_unshare(daemon):
    trapped(raw(daemon, libc_call("libc.unshare(0x20000000)")), "unshare")


def test_kernel_module(daemon):
    trapped(raw(daemon, libc_call("libc.syscall(175, None, 0, b'')")), "init_module")


def read_status(pid):
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return ""


def test_kill_another_worker(daemon):
    with daemon.client() as a:
        rid = a.submit_request("exec", code="import time\ntime.sleep(30)", raw=True, stream=False)
        deadline = time.monotonic() + 10
        victims = []
        while not victims and time.monotonic() < deadline:
            time.sleep(0.05)
            # The sleeper: a worker is the init of its own pid namespace (NSpid: HOST 1), and
            # idle pool workers are too; this one sleeps in nanosleep.
            victims = [p for p in descendants(daemon.pid)
                       if re.search(rf"NSpid:\t{p}\t1\n", read_status(p))
                       and "nanosleep" in wchan(p)]
        assert victims, "the sleeping worker did not appear"
        victim = victims[0]
        r = raw(daemon, attempt(f"os.kill({victim}, 9)"))
        assert r.outcome == "seccomp_violation" or "blocked" in r.logs, (r, r.logs)
        assert pid_alive(victim), "another worker killed its neighbour"
        os.kill(victim, signal.SIGKILL)
        assert a.wait_reply(rid)["outcome"] == "worker_crashed"


def test_write_cgroup_files(daemon):
    code = attempt("line = [l for l in open('/proc/self/cgroup') if ':pids:' in l or "
                   "l.startswith('0::')][0]\n"
                   "base = '/sys/fs/cgroup/pids' if ':pids:' in line else '/sys/fs/cgroup'\n"
                   "open(base + line.split(':', 2)[2].strip() + '/pids.max', 'w').write('max')")
    blocked(raw(daemon, code))


# ---- the limits ---------------------------------------------------------------------------

def test_memory_bomb(daemon):
    r = raw(daemon, "b = bytearray(400 * 1024 * 1024)\nfor i in range(0, len(b), 4096):\n"
                    "    b[i] = 1\n", memory_mb=128)
    assert r.outcome == "memory_limit", (r, r.error)


def test_thread_bomb_is_pids_limit(daemon):
    if "cgroup backend: none" in daemon.logs():
        pytest.skip("no cgroup backend on this machine: RLIMIT_NPROC refuses alone (an error)")
    code = ("import threading, time\nev = threading.Event()\n"
            "for i in range(64):\n    threading.Thread(target=ev.wait, daemon=True).start()\n")
    r = raw(daemon, code, pids=8)
    assert r.outcome == "pids_limit", (r, r.error)
    assert "can't start new thread" in r.error["message"], r.error


def test_fork_bomb_is_pids_limit(tmp_path):
    """With seccomp off (a profile that allows fork), the cgroup stops a fork bomb."""
    profile = {"name": "default", "limits": {"pids": 8},
               "hardening": {"seccomp": "off", "cgroup": "required"},
               "access": {"everyone": True}}
    (tmp_path / "default.json").write_text(json.dumps(profile))
    with tempfile.TemporaryDirectory(prefix="pf-") as wd:
        # Ids apart from IDS: the module's daemon, alive meanwhile, keeps idle pool workers
        # under IDS's first uids, and RLIMIT_NPROC (pids + 1, checked before the cgroup) would
        # count one of them against this worker's forks: refused as an error, not pids_limit.
        own_ids = ["--uid-range", f"{970000 + (os.getpid() % 1000) * 64}:64"]
        d = Daemon(Path(wd), own_ids + ["--policy", str(tmp_path)])
        try:
            if "cgroup backend: none" in d.logs():
                pytest.skip("no cgroup backend on this machine")
            r = raw(d, "import os, time\nfor i in range(64):\n    if os.fork() == 0:\n"
                       "        time.sleep(30)\n        os._exit(0)\n")
            assert r.outcome == "pids_limit", (r, r.error)
            assert "process limit of 8" in r.error["message"], r.error
        finally:
            d.stop()


def test_cpu_spin(daemon):
    r = raw(daemon, "while True:\n    pass\n", cpu_ms=1000, timeout_ms=20000)
    assert r.outcome == "cpu_limit", (r, r.error)


def test_write_flood(daemon):
    code = attempt("f = open('/tmp/flood', 'wb')\nfor i in range(64):\n"
                   "    f.write(b'x' * 65536)\n    f.flush()")
    r = raw(daemon, code, file_size_mb=1)
    assert r.ok and "blocked EFBIG" in r.logs, (r, r.error, r.logs)


def test_scratch_mb_sizes_tmp(daemon):
    """A request's scratch_mb reaches the worker's private /tmp: a tmpfs of that size, full
    there, while file_size_mb (the profile's 16) would allow the 4 MiB file."""
    code = ("import os\nst = os.statvfs('/tmp')\n"
            "print('tmp_mb', st.f_blocks * st.f_frsize // (1024 * 1024))\n"
            + attempt("f = open('/tmp/flood', 'wb')\nfor i in range(64):\n"
                      "    f.write(b'x' * 65536)\n    f.flush()"))
    r = raw(daemon, code, scratch_mb=2)
    assert r.ok and "tmp_mb 2\n" in r.logs and "blocked ENOSPC" in r.logs, (r, r.error, r.logs)


# ---- the degraded run ---------------------------------------------------------------------

def test_degraded_warns_loudly(degraded):
    logs = degraded.logs()
    assert "WORKERS RUN WITH RLIMITS ONLY" in logs, logs
    assert "namespaces: off" in logs, logs


def test_degraded_other_layers_hold(degraded):
    check_probe(raw(degraded, PROBE), namespaces=False)
    trapped(raw(degraded, attempt("import socket\nsocket.socket()")), "socket")
    blocked(raw(degraded, attempt("print(open('/etc/shadow').read()[:20])")))
    blocked(raw(degraded, attempt("open('/etc/pyfence-attack', 'w').write('x')")))
    blocked(raw(degraded, attempt(f"print(open('/proc/{degraded.pid}/environ').read())")))
    r = raw(degraded, "b = bytearray(400 * 1024 * 1024)\n", memory_mb=128)
    assert r.outcome == "memory_limit", (r, r.error)
    r = raw(degraded, "1")
    assert r.ok and "cgroup_cpu_ms" not in r.stats, r.stats


def test_degraded_mode_and_times_by_path_trapped(degraded):
    """Landlock does not cover a file's mode or times: without the view, chmod by path reached the
    daemon's socket (its 0660 is the access control) and every file of the worker's uid. Seccomp
    refuses them by path; fchmod and futimens on an fd the worker opened stay (unit tests)."""
    sock = degraded.socket_path
    before = os.stat(sock).st_mode
    trapped(raw(degraded, attempt(f"os.chmod('{sock}', 0o777)")), "chmod", "fchmodat")
    trapped(raw(degraded, attempt(f"os.utime('{sock}', (0, 0))")), "utimensat")
    assert os.stat(sock).st_mode == before
