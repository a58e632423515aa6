"""Fixtures for the integration suites: the built binaries, a fake server, and the real pyfenced
started on a temporary socket (knot-resolver's tests/pytests/conftest.py pattern).

Binaries come from the environment set by tests/integration/meson.build (PYFENCED, PYFENCE_CLI,
PYFENCE_LIBCLIENT_E2E), falling back to build/. Extra daemon options: PYFENCED_ARGS; a command
prefix it runs under (scripts/vm: a systemd scope): PYFENCED_WRAPPER."""

import itertools
import json
import os
import shlex
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "client" / "python"))
sys.path.insert(0, str(HERE))

import fakeserver  # noqa: E402
import pyfence  # noqa: E402


def frame(payload):
    """A wire frame (PROTOCOL.md): a dict is JSON-encoded, bytes are sent as they are."""
    if isinstance(payload, dict):
        payload = json.dumps(payload).encode()
    return struct.pack(">I", len(payload)) + payload


def read_frame(s, timeout=10, partial_ok=True):
    """One frame from s, or None at end of file. With partial_ok False, an end of file inside a
    frame fails the test instead."""
    s.settimeout(timeout)
    buf = b""
    while len(buf) < 4:
        chunk = s.recv(4 - len(buf))
        if not chunk:
            assert partial_ok or not buf, "end of file in the middle of a frame header"
            return None
        buf += chunk
    (n,) = struct.unpack(">I", buf)
    body = b""
    while len(body) < n:
        chunk = s.recv(min(65536, n - len(body)))
        if not chunk:
            assert partial_ok, "end of file in the middle of a frame"
            return None
        body += chunk
    return json.loads(body)


def wait_for(cond, timeout=10, interval=0.05):
    """Polls cond() until it holds or timeout seconds pass; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(interval)
    return cond()


def binary(env, *fallback):
    path = os.environ.get(env) or str(REPO.joinpath("build", *fallback))
    return path


PYFENCED = binary("PYFENCED", "daemon", "pyfenced")
PYFENCE_CLI = binary("PYFENCE_CLI", "client", "pyfence")
LIBCLIENT_E2E = binary("PYFENCE_LIBCLIENT_E2E", "tests", "integration", "libclient_e2e")


def is_asan_build(path):
    """True when the binary links AddressSanitizer: its shadow memory defeats RLIMIT_AS, so
    memory-limit outcomes cannot be tested with it."""
    try:
        with open(path, "rb") as f:
            return b"libasan.so" in f.read()
    except OSError:
        return False


def require_binary(path):
    if not os.access(path, os.X_OK):
        pytest.skip(f"{path} is not built")
    return path


@pytest.fixture
def tmpdir_short():
    # sun_path holds 108 bytes: pytest's tmp_path can be longer than that.
    with tempfile.TemporaryDirectory(prefix="pf-") as d:
        yield Path(d)


@pytest.fixture
def fake(tmpdir_short):
    """A FakeServer factory: fake(handler) -> server listening on a temp socket."""
    servers = []

    def start(handler):
        s = fakeserver.FakeServer(str(tmpdir_short / f"fake{len(servers)}.sock"), handler)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()


def run_cli(*args, socket_path=None, input=None, timeout=60, cwd=None):
    cmd = [require_binary(PYFENCE_CLI)]
    if socket_path:
        cmd += ["--socket", str(socket_path)]
    cmd += list(args)
    return subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout,
                          cwd=cwd)


# ---- the real daemon -------------------------------------------------------------------------

def descendants(pid):
    """Pids of every live descendant of pid (from /proc)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def settled_family(d, sample=None, timeout=20):
    """Waits until nothing runs but the zygotes and the warm pools: no worker busy, every pool
    full, and the daemon's descendants exactly the zygotes plus the idle workers the pools
    report. A pool counts a worker from the moment it asks for it, and a worker is busy until
    it is reaped, so a sample taken while a refill's fork or a reap is under way disagrees and
    is taken again; a worker that outlives its job never lets it agree. A refill's worker
    exists a moment before pyfenced opens its pidfd, so it takes two agreeing samples in a
    row, 0.1 s apart, with sample() the same in both; sample() runs before the stats
    request, whose connection pyfenced may not have seen closed yet after it. Returns what
    sample() (if given) returned then (True without one), or None."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        got = sample() if sample else True
        with d.client() as c:
            st = c.stats()
        pools = st["pools"].values()
        zygotes = 1 + ("preload_pid" in st["zygote"])
        idle = sum(p["idle"] for p in pools)
        if (st["workers"]["busy"] == 0 and all(p["idle"] >= p["size"] for p in pools)
                and len(descendants(d.pid)) == zygotes + idle):
            if last == [got]:
                return got
            last = [got]
        else:
            last = None
        if time.monotonic() > deadline:
            return None
        time.sleep(0.1)


def wchan(pid):
    """Where pid sleeps in the kernel ("" when it is gone, "0" to those who may not trace it)."""
    try:
        with open(f"/proc/{pid}/wchan") as f:
            return f.read()
    except OSError:
        return ""


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def zombies_of(pid):
    out = []
    for c in descendants(pid):
        try:
            with open(f"/proc/{c}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    out.append(c)
        except OSError:
            pass
    return out


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def fd_targets(pid):
    """{fd: what it refers to} of process pid, for a message that says what leaked."""
    out = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            out[int(fd)] = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            pass  # closed meanwhile
    return dict(sorted(out.items()))


def as_uid(uid, fn, *args):
    """fn(*args) in a forked child that became uid (gid uid, no supplementary groups): what it
    returned (JSON-able), or AssertionError with the child's error."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            out = {"ok": fn(*args)}
        except BaseException as e:  # noqa: B902 - everything goes back to the parent
            out = {"error": f"{type(e).__name__}: {e}"}
        try:
            with os.fdopen(w, "w") as f:
                json.dump(out, f)
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    os.waitpid(pid, 0)
    out = json.loads(data) if data else {"error": "the child died before it answered"}
    if "error" in out:
        raise AssertionError(f"as uid {uid}: {out['error']}")
    return out["ok"]


# Worker ids of the daemons this test process starts. pyfenced(8): "Give each pyfenced of a
# machine its own range"; meson runs suites (and CI two build dirs) at once, and two daemons on
# one range hand out the same worker uids (one's RLIMIT_NPROC then counts the other's workers,
# and either's workers could signal the other's). From 2,000,000 up: clear of the default
# (600000:65536) and of tests/security's ranges (900000..1034000); 4096 ids, --max-workers'
# maximum; 16 ranges per test process, reused in turn (it never runs that many at once).
UID_RANGE_BASE = 2_000_000
UID_RANGE_COUNT = 4096
UID_RANGE_PER_PROCESS = 16
UID_RANGE_SLOTS = 500_000  # 2,000,000 + 500,000 x 4096 stays below 2^31
_uid_range_counter = itertools.count()


def own_uid_range(pid=None):
    """START:COUNT for the next daemon of process pid (this one by default)."""
    pid = os.getpid() if pid is None else pid
    n = next(_uid_range_counter) % UID_RANGE_PER_PROCESS
    slot = (pid * UID_RANGE_PER_PROCESS + n) % UID_RANGE_SLOTS
    return f"{UID_RANGE_BASE + slot * UID_RANGE_COUNT}:{UID_RANGE_COUNT}"


def has_uid_range(args):
    return any(a == "--uid-range" or a.startswith("--uid-range=") for a in args)


class Daemon:
    def __init__(self, workdir, extra_args=(), binaries=None, user=None, groups=()):
        """binaries: (pyfenced, pyfence-zygote) paths instead of the built ones; user: a uid
        to run pyfenced as (its gid the same, supplementary groups `groups`, none by default)."""
        self.socket_path = str(workdir / "pyfence.sock")
        self.log_path = workdir / "pyfenced.log"
        pyfenced, zygote = binaries or (require_binary(PYFENCED),
                                        os.environ.get("PYFENCE_ZYGOTE"))
        args = [pyfenced, "--socket", self.socket_path]
        if zygote:
            args += ["--zygote", zygote]
        args += shlex.split(os.environ.get("PYFENCED_ARGS", "")) + list(extra_args)
        # A range of its own unless the test (or PYFENCED_ARGS) chose one.
        self.uid_range = None
        if not has_uid_range(args):
            self.uid_range = own_uid_range()
            args += ["--uid-range", self.uid_range]
        # Run by a developer who is not root (and so in groups of their own), pyfenced refuses
        # to start unless told that its workers may keep them: these tests accept it.
        if user is None and os.geteuid() != 0 and set(os.getgroups()) - {os.getegid()}:
            args.append("--keep-groups")
        self.log = open(self.log_path, "w")
        ids = {} if user is None else {"user": user, "group": user, "extra_groups": list(groups)}
        # A prefix that keeps pyfenced's pid, e.g. scripts/vm's "systemd-run --scope -p
        # Delegate=yes": a cgroup of its own, as systemd gives the service.
        if user is None:
            args = shlex.split(os.environ.get("PYFENCED_WRAPPER", "")) + args
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, **ids)
        self.pid = self.proc.pid
        self._wait_ready()

    def _wait_ready(self, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"pyfenced exited early with {self.proc.returncode}:\n{self.logs()}")
            if os.path.exists(self.socket_path):
                try:
                    with pyfence.Client(self.socket_path) as c:
                        c.ping()
                    return
                except pyfence.PyfenceError:
                    pass
            time.sleep(0.02)
        self.proc.kill()
        raise AssertionError(f"pyfenced did not answer on {self.socket_path} within {timeout}s:\n{self.logs()}")

    def logs(self):
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def client(self):
        return pyfence.Client(self.socket_path)

    def cli(self, *args, **kw):
        return run_cli(*args, socket_path=self.socket_path, **kw)

    def raw(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # A blocking connect waits for room in the listen backlog; a non-blocking one (which is
        # what settimeout() makes) fails with EAGAIN when many clients connect at once.
        s.connect(self.socket_path)
        s.settimeout(10)
        return s

    def assert_serving(self):
        """A second, fresh client is still served."""
        with self.client() as c:
            # busy is the documented answer while max_workers workers are still alive (finished
            # ones may be awaiting their reaping): back off and retry, for a few seconds only.
            for _ in range(100):
                r = c.exec("6 * 7")
                if r.outcome != "busy":
                    break
                time.sleep(0.05)
        assert r.ok and r.output == 42, (r, self.logs())

    def stop(self, timeout=15):
        """SIGTERM; asserts exit 0, socket removed, no process of ours left."""
        if self.proc.poll() is not None:
            self.log.close()
            raise AssertionError(f"pyfenced died before teardown with {self.proc.returncode}:\n{self.logs()}")
        family = descendants(self.pid)
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"pyfenced did not exit within {timeout}s of SIGTERM:\n{self.logs()}")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(pid_alive(p) for p in family):
            time.sleep(0.05)
        left = [p for p in family if pid_alive(p)]
        for p in left:
            os.kill(p, signal.SIGKILL)
        self.log.close()
        assert rc == 0, f"pyfenced exited with {rc}:\n{self.logs()}"
        assert not os.path.exists(self.socket_path), "pyfenced left its socket behind"
        assert not left, f"processes left behind after pyfenced exited: {left}"


@pytest.fixture
def daemon_factory(tmpdir_short):
    started = []

    def start(*extra_args):
        d = Daemon(tmpdir_short, extra_args)
        started.append(d)
        return d

    yield start
    for d in started:
        if d.proc.returncode is None:
            d.stop()


@pytest.fixture(scope="module")
def daemon():
    """One pyfenced per test module; stopped (and checked) at the end of the module."""
    with tempfile.TemporaryDirectory(prefix="pf-") as wd:
        d = Daemon(Path(wd))
        yield d
        d.stop()
