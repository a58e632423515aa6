"""Snippets that hit a limit or kill their worker each get their named error, and the daemon
then still serves another client."""

import pytest

from conftest import PYFENCED, descendants, is_asan_build, settled_family


def need_memory_limit(daemon):
    """Under ASan, RLIMIT_AS is skipped (its shadow memory reserves terabytes of address space),
    so the memory limit holds through the worker's cgroup alone: skip only when there is none."""
    if is_asan_build(PYFENCED) and "cgroup backend: none" in daemon.logs():
        pytest.skip("AddressSanitizer build without a cgroup backend: RLIMIT_AS cannot be "
                    "enforced under ASan and no cgroup holds the memory limit")


@pytest.fixture
def client(daemon):
    with daemon.client() as c:
        yield c


def test_memory_bomb(daemon, client):
    need_memory_limit(daemon)
    r = client.exec("x = 'a' * 10**10")
    assert r.outcome == "memory_limit" and not r.ok, (r, r.error)
    daemon.assert_serving()


def test_memory_bomb_by_growth(daemon, client):
    need_memory_limit(daemon)
    r = client.exec("l = []\nfor i in range(10**8):\n    l.append('x' * 100000)", limits={"memory_mb": 64})
    assert r.outcome == "memory_limit", (r, r.error)
    daemon.assert_serving()


def test_timeout(daemon, client):
    r = client.exec("for i in range(10**12): sorted(range(1000))", timeout=0.2)
    assert r.outcome == "timeout", (r, r.error)
    assert r.stats.get("run_ms", 0) < 5000
    daemon.assert_serving()


def test_timeout_in_a_c_level_call(daemon, client):
    """A single long C call (no executor step to check the deadline): the daemon's wall-clock
    kill must fire."""
    r = client.exec("sum(range(10**11))", timeout=0.3)
    assert r.outcome in ("timeout", "cpu_limit"), (r, r.error)
    daemon.assert_serving()


def test_while_budget(daemon, client):
    r = client.exec("while True: pass")
    assert r.outcome == "error" and "iterations" in r.error["message"], r.error
    daemon.assert_serving()


def test_output_limit(daemon, client):
    got = []
    r = client.exec("print('x' * 10_000_000)", on_output=got.append)
    assert r.outcome == "output_limit", (r, r.error)
    # whatever was streamed before the cut stays within the job's output limit
    limit = client.hello()["job_limits"]["max_output_bytes"]
    assert sum(len(g) for g in got) <= limit
    daemon.assert_serving()


def test_output_limit_many_prints(daemon, client):
    r = client.exec("for i in range(2_000_000):\n    print(i)")
    assert r.outcome == "output_limit", (r, r.error)
    daemon.assert_serving()


def test_result_too_large(daemon, client):
    r = client.exec("'y' * 5_000_000")
    assert r.outcome == "output_limit", (r, r.error)
    daemon.assert_serving()


def test_huge_result_is_output_limit_before_conversion(daemon, client):
    """A str whose copies (its JSON form, its repr()) would not fit the memory limit is still
    output_limit: its length alone says it exceeds max_result_bytes, so it is not copied (it was
    outcome ok, output null and output_repr "<repr() failed>")."""
    r = client.exec("'%s' % ('x' * (150 * 10**6),)", limits={"memory_mb": 256})
    assert r.outcome == "output_limit", (r, r.error)
    assert "result of at least 300000004 bytes exceeds max_result_bytes" in r.error["message"]
    assert r.output is None and r.output_repr is None
    r = client.exec("x = [1] * 100\nfor i in range(40):\n    x = [x] * 100\nx")
    assert r.outcome == "output_limit", (r, r.error)  # 100**40 elements: not walked to the end
    daemon.assert_serving()


def test_result_conversion_out_of_memory(daemon, client):
    """A result whose repr() or JSON form cannot be made for lack of memory is memory_limit."""
    need_memory_limit(daemon)
    r = client.exec("class A:\n    def __repr__(self):\n        return 'x' * (150 * 10**6)\nA()",
                    limits={"memory_mb": 256})
    assert r.outcome == "memory_limit", (r, r.error)
    daemon.assert_serving()


def test_ops_budget(daemon, client):
    r = client.exec("for i in range(10**9): pass", limits={"max_ops": 1000})
    assert r.outcome == "error" and not r.ok, (r, r.error)
    daemon.assert_serving()


def test_workers_do_not_outlive_their_jobs(daemon, client):
    for code in ("x = 'a' * 10**10", "print('x' * 10_000_000)", "1/0", "1"):
        client.exec(code, timeout=2)
    client.exec("for i in range(10**12): sorted(range(1000))", timeout=0.2)
    assert settled_family(daemon), descendants(daemon.pid)


def test_worker_killed_by_a_signal(daemon, client):
    """A worker killed mid-job from outside is reported as worker_crashed, and the daemon serves
    on. (SIGKILL: a worker is the init of its pid namespace, which ignores other signals sent
    from outside it.) The idle pool workers die too: the next job must not get one of them, or
    must run elsewhere when it did (test_idle_pool_workers_killed_just_before_a_job)."""
    import os
    import signal

    zygote = client.stats()["zygote"]["pid"]

    def crash(_):
        for pid in descendants(zygote):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # gone since it was listed (a second output chunk)
                pass

    with daemon.client() as c:
        # The 5 KB print passes the worker's 4 KiB flush threshold: it arrives while the loop runs.
        rid = c.submit("print('s' * 5000)\nimport time\ntime.sleep(25)", stream=True)
        r = c.wait(rid, on_output=crash)
    assert r.outcome == "worker_crashed", r.reply
    assert "signal 9" in r.error["message"] or "SIGKILL" in r.error["message"], r.error
    daemon.assert_serving()


def wait_until_dead(pids, timeout=1.0):
    """Until each pid is a zombie or gone. A SIGKILL takes effect when its process next runs: a
    worker blocked in read() can still take a run frame that arrives first, and then no one can
    tell that it did not run it (the daemon rightly does not run it again)."""
    import time
    deadline = time.monotonic() + timeout
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                        break
            except OSError:
                break
            time.sleep(0.001)


def test_idle_pool_workers_killed_just_before_a_job(daemon_factory):
    """Idle pool workers killed from outside right before a job: a dead one is never handed out,
    and a job bound to one that died before reading its run frame (its death not reported yet,
    its end closed before the frame was written, or the frame left unread) runs on another
    worker. Each round is a race the daemon must win every time: the workers are dead, the
    daemon not told yet. Its own pyfenced logs at debug level: a lost round shows which way each
    of its pool workers went (job.c's retry_elsewhere)."""
    import os
    import signal
    import time

    daemon = daemon_factory("--log-level", "debug")
    with daemon.client() as client:
        for i in range(150):
            for _ in range(400):
                s = client.stats()
                if s["pools"]["default"]["idle"] >= s["pools"]["default"]["size"]:
                    break
                time.sleep(0.005)
            killed = descendants(s["zygote"]["pid"])
            for pid in killed:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            wait_until_dead(killed)
            r = client.exec(f"{i} * 2")
            if not (r.ok and r.output == 2 * i):
                jobs = [line for line in daemon.logs().splitlines()
                        if "pool worker" in line or "died" in line or "ended" in line]
                pytest.fail(f"round {i}: {r.reply}\n" + "\n".join(jobs[-30:]))
    daemon.assert_serving()
