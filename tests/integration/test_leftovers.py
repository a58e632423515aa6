"""Nothing is left behind: after a batch of jobs (ok, failing, killed, concurrent) and a zygote
killed by SIGKILL, pyfenced holds as many fds and children as before; the dead zygote's cgroup
pool is removed by the next zygote; after a stop no cgroup, mount or process of ours remains."""

import glob
import os
import signal
import time

import pytest

from conftest import descendants, fd_count, pid_alive, settled_family, wchan


def zygote_of(daemon, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in descendants(daemon.pid):
            try:
                with open(f"/proc/{p}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            if "(pyfence-zygote)" in stat and int(stat.rsplit(")", 1)[1].split()[1]) == daemon.pid:
                return p
        time.sleep(0.05)
    raise AssertionError(f"no zygote under pyfenced {daemon.pid}:\n{daemon.logs()}")


def pools_of(zygote_pid):
    """The cgroup directories of a zygote's pool, in every hierarchy."""
    return [p for depth in ("*", "*/*", "*/*/*", "*/*/*/*")
            for p in glob.glob(f"/sys/fs/cgroup/{depth}/pyfence-{zygote_pid}")]


def mounts():
    with open("/proc/self/mountinfo") as f:
        return sorted(line.split()[4] for line in f)


def settle(probe, want, timeout=15):
    """Waits for probe() == want (pools refill, workers are reaped); returns the last value."""
    deadline = time.monotonic() + timeout
    got = probe()
    while got != want and time.monotonic() < deadline:
        time.sleep(0.1)
        got = probe()
    return got


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(k) for k in f.read().split()]
    except OSError:
        return []


def run_batch(daemon):
    with daemon.client() as c:
        rids = [c.submit(f"sum(range({i} * 1000))") for i in range(12)]
        assert all(c.wait(r).ok for r in rids)
        assert c.exec("1/0").outcome == "error"
        assert c.exec("for i in range(10**12): sorted(range(1000))", timeout=0.3).outcome == "timeout"
        assert c.exec("print('x' * 5000)", limits={"max_output_bytes": 1024}).outcome == "output_limit"
        r = c.exec("x = 'a' * 10**10", limits={"memory_mb": 128})
        assert r.outcome in ("memory_limit", "worker_crashed"), r
        # A worker killed from outside, mid-job: the zygote's child that is not an idle pool
        # worker waiting on its channel.
        rid = c.submit("import time\ntime.sleep(20)")
        z = zygote_of(daemon)
        deadline = time.monotonic() + 10
        victim = None
        while victim is None and time.monotonic() < deadline:
            time.sleep(0.05)
            busy = [k for k in children(z) if wchan(k) not in ("", "unix_stream_read_generic")]
            victim = busy[0] if busy else None
        assert victim, daemon.logs()[-2000:]
        os.kill(victim, signal.SIGKILL)
        assert c.wait(rid).outcome == "worker_crashed"


def test_nothing_left_behind(daemon_factory):
    mounts_before = mounts()
    d = daemon_factory()
    daemon_pid = d.pid
    d.assert_serving()
    z1 = zygote_of(d)
    cgroups = "cgroup backend: none" not in d.logs()
    if cgroups:
        assert pools_of(z1), f"zygote {z1} has no cgroup pool:\n{d.logs()}"
    # Taken once the warm pools are full and every pool worker's pidfd is open.
    fds, kids = settled_family(d, lambda: (fd_count(daemon_pid), len(descendants(daemon_pid))))

    run_batch(d)
    assert settle(lambda: (fd_count(daemon_pid), len(descendants(daemon_pid))), (fds, kids)) == \
        (fds, kids), d.logs()[-3000:]

    # The zygote dies without cleaning up; the next one removes its pool.
    check_zygote_kill(d, z1, fds, kids, cgroups, mounts_before)


def check_zygote_kill(d, z1, fds, kids, cgroups, mounts_before):
    daemon_pid = d.pid
    os.kill(z1, signal.SIGKILL)
    z2 = None
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        z2 = zygote_of(d)
        if z2 != z1 and pid_alive(z2):
            break
        time.sleep(0.1)
    assert z2 != z1
    d.assert_serving()
    if cgroups:
        assert settle(lambda: pools_of(z1), []) == [], d.logs()[-3000:]
        assert pools_of(z2)
        assert "removed the pool of a zygote that is gone" in d.logs()
    assert settle(lambda: (fd_count(daemon_pid), len(descendants(daemon_pid))), (fds, kids)) == \
        (fds, kids), d.logs()[-3000:]

    d.stop()  # asserts exit 0, no socket, no process left
    assert pools_of(z2) == [], "the zygote left its cgroup pool behind on a clean exit"
    assert mounts() == mounts_before


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_group_signal_leaves_no_pool(daemon_factory, sig):
    """Ctrl-C or systemd's stop signal pyfenced and its zygote together: the zygote waits for
    pyfenced to close its channel, then removes its pool."""
    d = daemon_factory()
    d.assert_serving()
    z = zygote_of(d)
    os.kill(z, sig)
    d.assert_serving()  # the zygote ignored it
    assert zygote_of(d) == z
    d.proc.send_signal(sig)
    assert d.proc.wait(15) == 0, d.logs()
    d.log.close()
    assert settle(lambda: pid_alive(z), False) is False
    assert pools_of(z) == [], d.logs()
