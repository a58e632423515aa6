"""Scheduling, cancel, the warm pool and policy reload against the real pyfenced: fairness
across uids while one floods, busy with retry_after_ms when the queue is full, cancel of a
running loop, of a snippet blocked in C (killed after the grace period) and of a queued job,
pool hits, a reload under load with a bad profile file in the middle, and 64 concurrent
clients mixing ephemeral and session jobs with every reply matched and nothing left over after
5,000 jobs (processes, fds, cgroup directories)."""

import json
import os
import random
import re
import statistics
import threading
import time
from pathlib import Path

import pytest

from conftest import as_uid, descendants, fd_count, pyfence, settled_family, wchan


def stats(d):
    with d.client() as c:
        return c.stats()


def pool(d, profile="default"):
    return stats(d)["pools"].get(profile, {})


def wait_for(pred, timeout=10, every=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(every)
    return pred()


def zygote_fd_count(pid):
    """The zygote's fds but its ipc namespace handles: besides its own it keeps, between jobs,
    one fresh ipc namespace ready for the next fork (harden_ns.c), so that count is 1 or 2
    depending on when it is read. Every other fd must stay put."""
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("ipc:"):
                continue
        except OSError:
            continue
        n += 1
    return n


def wait_pool_full(d, profile="default"):
    assert wait_for(lambda: (lambda p: p and p["idle"] >= p["size"])(pool(d, profile))), pool(d, profile)


def policy_dir(tmp, **limits):
    """A copy of the shipped profiles whose default profile has these limits."""
    src = Path(__file__).resolve().parents[2] / "policy" / "profiles"
    out = tmp / "policy"
    out.mkdir()
    for f in src.glob("*.json"):
        data = json.loads(f.read_text())
        if data["name"] == "default":
            data["limits"].update(limits)
        (out / f.name).write_text(json.dumps(data))
    return out


# ---- fairness ---------------------------------------------------------------------------------

FLOOD = 1000
FLOOD_CODE = "sum(range(30000))"


def flood(path, n):
    """n execs pipelined on one connection; returns their replies' stats."""
    with pyfence.Client(path) as c:
        ids = [c.submit(FLOOD_CODE) for _ in range(n)]
        out = []
        for rid in ids:
            r = c.wait(rid)
            out.append({"ok": r.ok, "outcome": r.outcome, **r.stats})
        return out


def one_job(path):
    with pyfence.Client(path) as c:
        r = c.exec(FLOOD_CODE)
        return {"ok": r.ok, "outcome": r.outcome, **r.stats}


def test_fairness_one_job_waits_about_one_job(daemon_factory, tmpdir_short):
    if os.geteuid() != 0:
        pytest.skip("needs root to run clients as two other uids")
    os.chmod(tmpdir_short, 0o755)
    d = daemon_factory("--socket-mode", "0666", "--max-workers", "2", "--max-inflight", "4096")
    result = {}
    t = threading.Thread(target=lambda: result.update(flood=as_uid(1001, flood, d.socket_path, FLOOD)))
    t0 = time.monotonic()
    t.start()
    # Wait for the flood to be deep in the queue, then the other uid asks for one job.
    assert wait_for(lambda: stats(d)["queue"]["queued"] >= FLOOD // 2, timeout=60), stats(d)
    victim = as_uid(1002, one_job, d.socket_path)
    t.join(300)
    elapsed = time.monotonic() - t0
    jobs = result["flood"]
    assert all(j["ok"] for j in jobs), [j for j in jobs if not j["ok"]][:3]
    assert victim["ok"], victim
    # A job holds a worker for about elapsed * workers / jobs; the other uid's job waited for
    # about one of them (round robin), not for the hundreds queued ahead of it.
    hold_ms = elapsed * 1000 * 2 / FLOOD
    median_run = statistics.median(j["run_ms"] for j in jobs)
    flood_waits = sorted(j["queue_ms"] for j in jobs)
    # In an emulated guest (scripts/vm) a job's hold swings by multiples from one to the next,
    # so "about one job" holds only on the host; the round robin is checked below everywhere.
    if not os.environ.get("PYFENCE_EMULATED"):
        assert victim["queue_ms"] <= 3 * hold_ms + 20, (victim, hold_ms, median_run)
    # ...while the flood's own last jobs waited far longer.
    assert flood_waits[-1] > 20 * victim["queue_ms"], (flood_waits[-1], victim)
    print(f"fairness: victim queue_ms {victim['queue_ms']:.2f}, job hold ~{hold_ms:.2f} ms, "
          f"median run_ms {median_run:.3f}, flood max queue_ms {flood_waits[-1]:.0f}")


# ---- the queue's bound ------------------------------------------------------------------------

def test_busy_with_retry_after_when_the_queue_is_full(daemon_factory):
    d = daemon_factory("--max-workers", "1", "--max-queued", "2")
    with d.client() as c:
        wait_for(lambda: stats(d)["workers"]["live"] >= 1)
        slow = c.submit("import time\ntime.sleep(3)")
        queued = [c.submit("6 * 7") for _ in range(2)]
        wait_for(lambda: stats(d)["queue"]["queued"] == 2)
        r = c.wait(c.submit("1"))
        assert r.outcome == "busy", r.reply
        assert "max_queued" in r.error["message"], r.error
        assert isinstance(r.error.get("retry_after_ms"), (int, float)) and r.error["retry_after_ms"] >= 1
        st = stats(d)
        assert st["queue"]["queued"] == 2 and st["uids"][0]["queued"] == 2, st
        assert c.cancel(slow)
        assert c.wait(slow).outcome == "cancelled"
        for rid in queued:
            r = c.wait(rid)
            assert r.ok and r.output == 42, r.reply
            assert r.stats["queue_ms"] > 0
    d.assert_serving()


# ---- cancel -----------------------------------------------------------------------------------

def test_cancel_a_long_loop(daemon_factory, tmpdir_short):
    pol = policy_dir(tmpdir_short, max_ops=10_000_000_000, timeout_ms=60000, cpu_ms=60000)
    d = daemon_factory("--policy", str(pol))
    with d.client() as c:
        rid = c.submit("for i in range(10**12): pass", stream=True)
        time.sleep(0.3)
        t = time.monotonic()
        assert c.cancel(rid) is True
        r = c.wait(rid)
        took = time.monotonic() - t
    assert r.outcome == "cancelled", r.reply
    # The executor stopped it at its next check: no kill was needed.
    assert "Code execution was cancelled" in r.error["message"], r.error
    assert "killed" not in r.error["message"], r.error
    assert took < 0.4, took
    assert stats(d)["jobs"]["by_outcome"].get("cancelled") == 1
    # In a session: the snippet stops, the session keeps its state and serves on.
    with d.client() as c, c.open_session() as s:
        s.exec("x = 41")
        rid = s.submit("for i in range(10**12): pass")
        time.sleep(0.3)
        assert c.cancel(rid) is True
        r = c.wait(rid)
        assert r.outcome == "cancelled" and not r.session_lost, r.reply
        assert s.exec("x + 1").output == 42
    d.assert_serving()


CANCEL_GRACE = 0.5  # daemon/job.h: JOB_CANCEL_GRACE_MS
# What a reply may take on top of it: a reply's round trip, and a stalled test machine.
CANCEL_SLACK = 5.0 if os.environ.get("PYFENCE_EMULATED") else 1.0


def cancel_blocked_in_c(c, rid, zygote):
    """Cancels request rid, which sleeps in C in the only worker of the zygote: its ExecResult,
    the seconds the reply took, and that worker's pid."""
    workers = wait_for(lambda: descendants(zygote))
    assert len(workers) == 1, workers
    # Cancelled before it is in time.sleep, the snippet would stop at the executor's next check.
    # wchan reads "0" to those who may not trace the worker: then give it time to get there.
    if not wait_for(lambda: "nanosleep" in wchan(workers[0]), timeout=5):
        assert wchan(workers[0]) in ("", "0"), wchan(workers[0])
        time.sleep(1)
    t = time.monotonic()
    assert c.cancel(rid) is True
    r = c.wait(rid)
    return r, time.monotonic() - t, workers[0]


def test_cancel_kills_a_snippet_blocked_in_c(daemon_factory, tmpdir_short):
    """time.sleep() never reaches the executor's check: the grace period runs out and the worker
    is killed. The reply still says `cancelled`, about JOB_CANCEL_GRACE_MS after the cancel,
    and the worker is gone; in a session, the session is lost with it."""
    # No warm pool: the zygote's only child is then the job's worker.
    pol = policy_dir(tmpdir_short, pool_size=0, timeout_ms=60000)
    d = daemon_factory("--policy", str(pol))
    zygote = stats(d)["zygote"]["pid"]
    with d.client() as c:
        rid = c.submit("import time\ntime.sleep(60)\n1")
        r, took, worker = cancel_blocked_in_c(c, rid, zygote)
        assert r.outcome == "cancelled", r.reply
        assert "did not stop within 500 ms and was killed" in r.error["message"], r.error
        assert CANCEL_GRACE - 0.05 <= took < CANCEL_GRACE + CANCEL_SLACK, took
        assert wait_for(lambda: worker not in descendants(d.pid)), (worker, descendants(d.pid))
        assert stats(d)["jobs"]["by_outcome"].get("cancelled") == 1
        # A session's snippet: killed the same way, and its next exec says so.
        with c.open_session() as s:
            s.exec("x = 41")
            rid = s.submit("import time\ntime.sleep(60)")
            r, took, worker = cancel_blocked_in_c(c, rid, zygote)
            assert r.outcome == "cancelled" and "was killed" in r.error["message"], r.reply
            assert CANCEL_GRACE - 0.05 <= took < CANCEL_GRACE + CANCEL_SLACK, took
            assert wait_for(lambda: worker not in descendants(d.pid)), (worker, descendants(d.pid))
            r = s.exec("x + 1")
            assert r.session_lost and r.outcome == "session_lost", r.reply
            assert "did not stop within 500 ms of being cancelled" in r.error["message"], r.error
    d.assert_serving()


def test_cancel_a_queued_job_never_starts(daemon_factory):
    d = daemon_factory("--max-workers", "1")
    with d.client() as c:
        wait_for(lambda: stats(d)["workers"]["live"] >= 1)
        slow = c.submit("import time\ntime.sleep(1)")
        queued = c.submit("print('must not run')\n1")
        wait_for(lambda: stats(d)["queue"]["queued"] == 1)
        total = stats(d)["jobs"]["total"]
        assert c.cancel(queued) is True
        r = c.wait(queued)
        assert r.outcome == "cancelled" and r.logs == "", r.reply
        assert c.cancel(queued) is False
        assert c.wait(slow).ok
        assert stats(d)["jobs"]["total"] == total
    d.assert_serving()


def test_cancel_names_only_this_connections_requests(daemon):
    with daemon.client() as a, daemon.client() as b:
        rid = a.submit("import time\ntime.sleep(0.5)\n7")
        assert b.cancel(rid) is False
        assert a.wait(rid).output == 7


# ---- the warm pool ----------------------------------------------------------------------------

def test_pool_hits_for_repeated_ephemeral_jobs(daemon):
    wait_pool_full(daemon)
    before = pool(daemon)
    with daemon.client() as c:
        for i in range(20):
            r = c.exec(f"{i} * 2")
            assert r.output == 2 * i
            wait_pool_full(daemon)
        # A request that tightens a limit applied at hardening cannot use a pool worker.
        r = c.exec("1", limits={"memory_mb": 256})
        assert r.ok
    after = pool(daemon)
    assert after["hits"] - before["hits"] >= 20, (before, after)
    assert after["misses"] - before["misses"] >= 1, (before, after)
    # With the pool full, one exec is one hit and no miss: no fork on its path. (Not its
    # queue_ms: how fast a hit is belongs to scripts/bench; under ASan on a loaded 2-core
    # machine a hit's queue_ms once came to 5.7 ms.)
    wait_pool_full(daemon)
    before = pool(daemon)
    with daemon.client() as c:
        assert c.exec("1").ok
    after = pool(daemon)
    assert after["hits"] == before["hits"] + 1, (before, after)
    assert after["misses"] == before["misses"], (before, after)


def read_pool_soon_after(d, t0, within=0.2):
    """The pool's stats when they could be read within `within` s of t0, else None (a stalled
    test machine: the caller tries again)."""
    p = pool(d)
    return p if time.monotonic() - t0 < within else None


def test_pool_refill_waits_for_the_request_it_serves(daemon):
    """A pool that still has an idle worker is refilled after the request that took one is
    answered, not while it runs (pool.h: the refill's fork and warm-up would compete with it)."""
    seen = None
    for _ in range(5):
        wait_pool_full(daemon)
        before = pool(daemon)
        with daemon.client() as c:
            t0 = time.monotonic()
            # Still running when a stats request delayed to the end of the window is served.
            rid = c.submit("import time\ntime.sleep(0.5)\n1")
            time.sleep(0.05)
            seen = read_pool_soon_after(daemon, t0)
            assert c.wait(rid).ok
        if seen:
            break
    assert seen, "stats never read within 0.2 s of a submit"
    assert seen["idle"] == before["size"] - 1 and seen["spawned"] == before["spawned"], (before, seen)
    assert seen["held"] == before["held"] + 1, (before, seen)
    # Answered: now it refills.
    assert wait_for(lambda: pool(daemon)["spawned"] == before["spawned"] + 1), pool(daemon)
    wait_pool_full(daemon)


def test_pool_refill_waits_at_most_pool_hold_ms(daemon):
    """A long snippet does not keep its pool short: the refill runs POOL_HOLD_MS (250 ms) after
    the request began, while it still runs."""
    wait_pool_full(daemon)
    before = pool(daemon)
    with daemon.client() as c:
        t0 = time.monotonic()
        rid = c.submit("import time\ntime.sleep(3)\n1")
        refilled = wait_for(lambda: pool(daemon)["spawned"] > before["spawned"], timeout=2)
        took = time.monotonic() - t0
        assert c.wait(rid).ok
    assert refilled and took < 2.5, (before, pool(daemon), took)


def test_an_empty_pool_refills_at_once(daemon):
    """Requests being served hold back only the refill of a pool that still has an idle worker:
    one they emptied starts refilling as soon as its last worker is taken."""
    seen = None
    for _ in range(5):
        wait_pool_full(daemon)
        before = pool(daemon)
        clients = [daemon.client() for _ in range(before["size"])]
        try:
            rids = [c.submit("import time\ntime.sleep(1)\n1") for c in clients]
            t0 = time.monotonic()
            wait_for(lambda: pool(daemon)["hits"] >= before["hits"] + before["size"], timeout=0.2)
            seen = read_pool_soon_after(daemon, t0)
            for c, rid in zip(clients, rids):
                assert c.wait(rid).ok
        finally:
            for c in clients:
                c.close()
        if seen and seen["hits"] >= before["hits"] + before["size"]:
            break
        seen = None
    assert seen, "the pool was never seen emptied within 0.2 s of the submits"
    assert seen["spawned"] > before["spawned"], (before, seen)


def test_pool_warm_up_leaves_no_trace(daemon):
    """An idle pool worker runs a warm-up snippet in a scratch environment before its request
    comes (daemon/worker/warm_up.h): its job sees none of its names, output or operations."""
    before = pool(daemon)
    with daemon.client() as c:
        for name in ("f", "v", "key", "val", "i"):
            wait_pool_full(daemon)
            time.sleep(0.1)  # the idle workers are past hardening and warm-up
            r = c.exec(name)
            assert r.outcome == "error" and f"NameError: The variable `{name}` is not defined" in r.error["message"], r.reply
            assert r.logs == "", r.reply
        wait_pool_full(daemon)
        time.sleep(0.1)
        r = c.exec("print('job'); 6 * 7")
        assert r.ok and r.output == 42 and r.logs == "job\n", r.reply
        assert r.stats["ops"] < 20, r.stats
    after = pool(daemon)
    assert after["hits"] - before["hits"] >= 6, (before, after)


def test_pool_workers_killed_while_idle_do_not_fail_jobs(daemon):
    """An idle pool worker killed from outside is skipped (its pidfd says it died) or, when the
    job reached it first, the job runs on another worker: it did not read its run frame."""
    import signal

    for _ in range(10):
        wait_pool_full(daemon)
        for pid in descendants(stats(daemon)["zygote"]["pid"]):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # the worker of the previous exec, exiting after its reply
        with daemon.client() as c:
            r = c.exec("6 * 7")
        assert r.ok and r.output == 42, (r.reply, daemon.logs()[-2000:])


def test_reload_rebuilds_a_changed_pool(daemon_factory, tmpdir_short):
    import signal

    pol = policy_dir(tmpdir_short)
    d = daemon_factory("--policy", str(pol))
    wait_pool_full(d)
    before = pool(d)
    assert before["size"] == 2, before
    out = d.cli("status")
    assert out.returncode == 0 and "warm pools" in out.stdout and "queue" in out.stdout, out
    # A bigger pool, and a memory limit applied at hardening: the idle workers are replaced.
    default = json.loads((pol / "default.json").read_text())
    default["limits"].update(pool_size=3, memory_mb=512)
    (pol / "default.json").write_text(json.dumps(default))
    os.kill(d.pid, signal.SIGHUP)
    assert wait_for(lambda: pool(d).get("size") == 3 and pool(d).get("idle") == 3), pool(d)
    after = pool(d)
    assert after["recycled"] >= before["recycled"] + 2, (before, after)
    assert after["spawned"] >= before["spawned"] + 3, (before, after)
    st = stats(d)
    assert st["policy"]["last_reload"]["ok"] is True and st["policy"]["reload_error"] is None, st
    with d.client() as c:
        r = c.exec("1", limits={"memory_mb": 512})  # equal, not tighter: a hit
        assert r.ok
    assert pool(d)["hits"] >= after["hits"] + 1
    # pool_size 0: the pool goes, and its workers with it.
    default["limits"]["pool_size"] = 0
    (pol / "default.json").write_text(json.dumps(default))
    os.kill(d.pid, signal.SIGHUP)
    assert wait_for(lambda: "default" not in stats(d)["pools"]), stats(d)["pools"]
    assert wait_for(lambda: stats(d)["workers"]["live"] == 0), stats(d)["workers"]
    d.assert_serving()


class Load:
    """Client threads that keep ephemeral execs in flight (`depth` pipelined on each connection)
    until stop(); every reply is checked against its own request."""

    def __init__(self, d, clients=6, depth=8):
        self.d, self.depth = d, depth
        self.sent = [0] * clients
        self.good = [0] * clients
        self.errors = []
        self.done = threading.Event()
        self.threads = [threading.Thread(target=self.client, args=(n,)) for n in range(clients)]
        for t in self.threads:
            t.start()

    def client(self, n):
        try:
            with self.d.client() as c:
                i = 0
                while not self.done.is_set():
                    want = {c.submit(f"{n} * 1000000 + {i + k}"): n * 1000000 + i + k
                            for k in range(self.depth)}
                    self.sent[n] += self.depth
                    i += self.depth
                    for rid, value in want.items():
                        r = c.wait(rid)
                        if r.ok and r.output == value:
                            self.good[n] += 1
                        else:
                            self.errors.append((n, value, r.reply))
        except Exception as e:  # noqa: BLE001 - collected for the assertion
            self.errors.append((n, repr(e)))

    def replies(self):
        return sum(self.good) + len(self.errors)

    def wait_for_more(self, n, timeout=60):
        """Waits until n more replies have come in."""
        start = self.replies()
        assert wait_for(lambda: self.replies() >= start + n or self.errors, timeout=timeout), \
            (start, self.replies())

    def stop(self, timeout=60):
        self.done.set()
        deadline = time.monotonic() + timeout
        for t in self.threads:
            t.join(max(0, deadline - time.monotonic()))
        assert not any(t.is_alive() for t in self.threads), "a reply never came"
        assert not self.errors, self.errors[:5]
        assert sum(self.good) == sum(self.sent), (self.good, self.sent)
        return sum(self.good)


def test_reload_under_load_with_a_bad_file_in_the_middle(daemon_factory, tmpdir_short):
    """SIGHUP while clients keep execs in flight: a bad profile file is refused as a whole (the
    old policy stays in force, stats and `pyfence status` show why, naming the file and the
    field, and so does the log); once fixed, the next SIGHUP puts it in force and clears the
    error. No exec fails or goes unanswered through either reload."""
    import signal

    pol = policy_dir(tmpdir_short, max_output_bytes=2000)
    d = daemon_factory("--policy", str(pol))
    profile = pol / "default.json"
    default = json.loads(profile.read_text())

    def in_force(max_output_bytes):
        """Asserts the default profile in force is the one with this max_output_bytes: a
        request may ask for 2500 only under the fixed profile."""
        with d.client() as c:
            assert c.hello()["job_limits"]["max_output_bytes"] == max_output_bytes
            r = c.exec("6 * 7", limits={"max_output_bytes": 2500})
        if max_output_bytes >= 2500:
            assert r.ok and r.output == 42, r.reply
        else:
            assert not r.ok and "max_output_bytes" in r.error["message"], r.reply

    def reload_with_a_job_in_flight():
        """SIGHUP while, besides the load, a longer job is surely running or queued."""
        with d.client() as c:
            rid = c.submit("import time\ntime.sleep(0.3)\n7")
            os.kill(d.pid, signal.SIGHUP)
            r = c.wait(rid)
            assert r.ok and r.output == 7, r.reply

    started = stats(d)["policy"]["last_reload"]
    load = Load(d)
    try:
        load.wait_for_more(100)
        # Bad: memory_mb past its maximum. Its other change must not be taken either.
        default["limits"].update(memory_mb=9000, max_output_bytes=3000)
        profile.write_text(json.dumps(default))
        reload_with_a_job_in_flight()
        assert wait_for(lambda: stats(d)["policy"]["reload_error"]), stats(d)["policy"]
        pol_stats = failed = stats(d)["policy"]
        why = f"{profile}: limits.memory_mb: 9000 exceeds maximum 4096"
        assert pol_stats["reload_error"] == why, pol_stats
        assert pol_stats["last_reload"]["ok"] is False, pol_stats
        assert pol_stats["last_reload"]["at"] > started["at"], (started, pol_stats)
        assert pol_stats["source"] == str(pol) and "default" in pol_stats["profiles"], pol_stats
        assert f"reload failed, the old policy stays in force: {why}" in d.logs()
        out = d.cli("status")
        assert out.returncode == 0, out
        assert "FAILED" in out.stdout, out.stdout
        assert re.search(rf"reload error +{re.escape(why)}\n", out.stdout), out.stdout
        in_force(2000)
        load.wait_for_more(100)
        in_force(2000)

        # Fixed, and with a memory limit of its own: one applied at hardening, which the warm
        # pool's workers are made with.
        default["limits"].update(memory_mb=512)
        profile.write_text(json.dumps(default))
        reload_with_a_job_in_flight()
        assert wait_for(lambda: stats(d)["policy"]["reload_error"] is None), stats(d)["policy"]
        pol_stats = stats(d)["policy"]
        assert pol_stats["last_reload"]["ok"] is True, pol_stats
        assert pol_stats["last_reload"]["at"] > failed["last_reload"]["at"], (failed, pol_stats)
        in_force(3000)
        with d.client() as c:
            assert c.hello()["job_limits"]["memory_mb"] == 512
        out = d.cli("status")
        assert out.returncode == 0, out
        assert "FAILED" not in out.stdout and "reload error" not in out.stdout, out.stdout
        load.wait_for_more(100)
    finally:
        total = load.stop()
    # Loaded twice: at start-up and by the second SIGHUP.
    loaded = re.findall(rf"policy: \d+ profiles from {re.escape(str(pol))}\n", d.logs())
    assert len(loaded) == 2, d.logs()
    assert stats(d)["jobs"]["by_outcome"].get("ok", 0) >= total
    print(f"reload under load: {total} execs answered")
    d.assert_serving()


# ---- many clients, and nothing left over ------------------------------------------------------

def open_session_retrying(c, patience=300):
    """session.open is refused with busy when sessions hold their share of the workers (16
    clients here want sessions, 6 may have one at a time) or the queue is full: back off as
    its error says (retry_after_ms, when it has one) and try again, for minutes if need be
    (an AddressSanitizer build is slow, and an unlucky client may lose many rounds)."""
    deadline = time.monotonic() + patience
    while True:
        try:
            return c.open_session()
        except pyfence.PyfenceError as e:
            if e.code != "busy" or time.monotonic() > deadline:
                raise
            retry_ms = e.reply.get("error", {}).get("retry_after_ms") if e.reply else None
            time.sleep(min(retry_ms or 20, 200) / 1000 * (0.5 + random.random()))


MIXED_CLIENTS = 64
MIXED_EPHEMERAL = 7  # per client and round, pipelined
MIXED_SESSION = 5  # per round in a session of its own, for every fourth client


def mixed_client(d, n, rounds, errors):
    """Client n: rounds of MIXED_EPHEMERAL pipelined ephemeral execs, the first of each
    printing; every fourth client also opens a session in each round and runs MIXED_SESSION
    snippets in it (all but the first pipelined) while its ephemeral replies are due. Every
    reply must be its own request's. Returns the number of jobs it checked."""
    jobs = 0
    try:
        with d.client() as c:
            for k in range(rounds):
                base = n * 100000 + k * 100
                pending = {}
                for i in range(MIXED_EPHEMERAL):
                    code = f"print('x')\n{base}" if i == 0 else f"{base} + {i}"
                    pending[c.submit(code)] = (base + i, "x\n" if i == 0 else "")
                if n % 4 == 0:
                    with open_session_retrying(c) as s:
                        r = s.exec(f"base = {base}")
                        if not r.ok:
                            errors.append((n, "session", r.reply))
                        rids = [s.submit(f"base + 50 + {i}") for i in range(MIXED_SESSION - 1)]
                        for i, rid in enumerate(rids):
                            r = c.wait(rid)
                            if not r.ok or r.output != base + 50 + i:
                                errors.append((n, "session", base + 50 + i, r.reply))
                        jobs += MIXED_SESSION
                for rid, (want, logs) in pending.items():
                    r = c.wait(rid)
                    if not r.ok or r.output != want or r.logs != logs:
                        errors.append((n, want, r.reply))
                jobs += len(pending)
    except Exception as e:  # noqa: BLE001 - collected for the assertion
        errors.append((n, repr(e)))
    return jobs


def run_mixed_clients(d, rounds, timeout=600):
    """MIXED_CLIENTS clients at once, each running mixed_client(); the number of jobs."""
    errors, jobs = [], [0] * MIXED_CLIENTS

    def client(n):
        jobs[n] = mixed_client(d, n, rounds, errors)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(MIXED_CLIENTS)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "a reply never came"
    assert not errors, errors[:5]
    return sum(jobs)


def cgroup_pool_dirs(d, zygote):
    """The slot directories of the zygote's cgroup pool, from the backend it logged it chose:
    None for the none backend (no cgroup at all: it says so loudly), else the pool's
    directory must exist."""
    logs = d.logs()
    m = re.search(rf"pyfence-zygote\[{zygote}\]: \[cgroup\] cgroup backend: (\w+)(.*)", logs)
    assert m, f"zygote {zygote} did not say which cgroup backend it chose:\n{logs}"
    if m.group(1) == "none":
        assert "WORKERS RUN WITH RLIMITS ONLY" in m.group(2), m.group(0)
        return None
    pool_dir = re.search(r", pool under '([^']+)'$", m.group(2))
    assert pool_dir and os.path.isdir(pool_dir.group(1)), m.group(0)
    return sorted(e.name for e in os.scandir(pool_dir.group(1)) if e.is_dir())


def test_64_clients_mixed_jobs_every_reply_matched_nothing_left(daemon_factory):
    """64 clients at once, mixing ephemeral execs and session snippets: every reply is its own
    request's, and 5,000 jobs leave no process, fd or cgroup directory behind. The zygote
    keeps one cgroup slot per concurrent worker, made on first use and reused (its directory
    and the fds it holds open): a first round at full concurrency makes them all, and the
    5,000 jobs after it must leave every count as it was."""
    d = daemon_factory()
    zygote = stats(d)["zygote"]["pid"]
    max_workers = stats(d)["workers"]["max"]

    def counts():
        return (fd_count(d.pid), zygote_fd_count(zygote), len(descendants(d.pid)),
                cgroup_pool_dirs(d, zygote))

    def settled_counts():
        # Compare like with like: taken when nothing runs but the zygotes and a full pool.
        got = settled_family(d, counts)
        assert got, (pool(d, "default"), counts())
        return got

    run_mixed_clients(d, 1)
    before = settled_counts()
    if before[3] is not None:
        assert 1 <= len(before[3]) <= max_workers, before
    ok_before = stats(d)["jobs"]["by_outcome"].get("ok", 0)
    t0 = time.monotonic()
    jobs = run_mixed_clients(d, 10)
    took = time.monotonic() - t0
    assert jobs >= 5000, jobs
    assert stats(d)["jobs"]["by_outcome"].get("ok", 0) - ok_before >= jobs
    # No more than before: a count sampled while a closed connection or an exited worker's
    # channel is still being released can only be higher, and a leak only grows.
    def no_more(after):
        return all(a <= b for a, b in zip(after[:3], before[:3])) and after[3] == before[3]
    assert wait_for(lambda: no_more(settled_counts()), timeout=10), (before, counts())
    print(f"64 clients: {jobs} jobs in {took:.1f} s; cgroup slots {before[3]}")
    d.assert_serving()


# ---- the preload zygote -----------------------------------------------------------------------

def test_preload_profiles_fork_from_their_own_zygote(daemon):
    """The built-in data profile preloads numpy and pandas: its workers come from a second
    zygote that imported them; the default profile's pool stays with the lean one."""
    z = stats(daemon)["zygote"]
    assert "preload_pid" in z and z["preload_pid"] != z["pid"], z
    wait_pool_full(daemon)
    assert len(descendants(z["pid"])) >= pool(daemon)["size"]
    before = len(descendants(z["preload_pid"]))
    with daemon.client() as c:
        s = c.open_session(profile="data")
        try:
            assert len(descendants(z["preload_pid"])) == before + 1
            r = s.exec("import math\nmath.factorial(5)")
            assert r.ok and r.output == 120, r.error
            if "preloading module `numpy` failed" not in daemon.logs():
                r = s.exec("import numpy\nint(numpy.arange(4).sum())")
                assert r.ok and r.output == 6, r.error
        finally:
            s.close()
        r = c.exec("6 * 7")
        assert r.ok and r.output == 42


def test_data_profile_everyday_pandas(daemon):
    """What an agent does with pandas runs under the executor's checks: to_datetime (typing
    compiles a forward reference, which is all it does), methods that live in pandas'
    submodules called and held, dict views whose repr formats with a dunder field."""
    code = """import pandas as pd
import collections
df = pd.DataFrame({'a': [1, 2, 3], 'b': ['x', 'y', 'x']})
df['d'] = pd.to_datetime(['2020-01-01', '2020-02-01', '2020-03-01'])
head = df.head
g = df.groupby('b').sum(numeric_only=True)
[head(1).shape, g['a'].tolist(), df['d'].dt.month.tolist(), df[df['a'] > 1].shape,
 df['a'].rolling(2).mean().tolist()[1:], repr(collections.UserDict({'k': 1}).keys())]"""
    with daemon.client() as c:
        s = c.open_session(profile="data")
        try:
            r = s.exec(code)
            assert r.ok, r.error
            assert r.output == [(1, 3), [4, 2], [1, 2, 3], (2, 3), [1.5, 2.5],
                                "KeysView({'k': 1})"], r.output
        finally:
            s.close()


# ---- session.open and the queue -----------------------------------------------------------------

def test_session_open_waits_in_the_queue_with_execs(daemon_factory):
    """A session.open that cannot have a worker waits in the scheduler's queue like an exec, in
    arrival order with the execs of its uid, and is counted there; its reply reports queue_ms."""
    d = daemon_factory("--max-workers", "1")
    with d.client() as c:
        slow = c.submit("import time\ntime.sleep(0.5)\n1")
        assert wait_for(lambda: stats(d)["queue"]["running"] == 1)
        opening = c.submit_request("session.open")
        after = c.submit("6 * 7")
        assert wait_for(lambda: stats(d)["queue"]["queued"] == 2), stats(d)["queue"]
        assert stats(d)["uids"][0]["queued"] == 2
        assert c.wait(slow).ok
        reply = c.wait_reply(opening)
        assert reply["ok"] is True and reply["stats"]["queue_ms"] >= 200, reply
        s = c.session(reply["session"])
        # The session holds the only worker: the exec behind it waits for its end.
        assert s.exec("40 + 2").output == 42
        assert stats(d)["queue"]["queued"] == 1
        s.close()
        r = c.wait(after)
        assert r.ok and r.output == 42 and r.stats["queue_ms"] >= 200, r.reply
    d.assert_serving()
