"""Many clients at once, and many requests in flight on one connection: every reply (and every
output event) must reach the request it belongs to."""

import random
import threading
import time

import pyfence

CLIENTS = 16
EXECS = 50


def snippet(t, i):
    return f"print('c{t}-{i}')\n{t} * 1000 + {i}"


def check(result, t, i, chunks=None):
    ok = result.ok and result.output == t * 1000 + i and result.logs == f"c{t}-{i}\n"
    if chunks is not None:
        ok = ok and "".join(chunks) == f"c{t}-{i}\n"
    return ok


# How long one exec may keep getting busy: a healthy daemon frees a place within milliseconds;
# one that never does (a leaked worker slot) fails the test quickly instead of hanging it.
BUSY_BUDGET_S = 10


def exec_retrying_busy(c, code, **kw):
    """busy (queue or workers full) is the daemon's documented answer at capacity: a
    well-behaved client backs off (error.retry_after_ms when given) and retries."""
    deadline = time.monotonic() + BUSY_BUDGET_S
    while True:
        r = c.exec(code, **kw)
        if r.outcome != "busy" or time.monotonic() > deadline:
            return r
        time.sleep(min((r.error or {}).get("retry_after_ms") or 10, 200) / 1000)


def run_threads(n, target):
    errors = []

    def wrapped(t):
        try:
            target(t, errors)
        except Exception as e:  # noqa: BLE001 - collected and asserted below
            errors.append((t, repr(e)))

    threads = [threading.Thread(target=wrapped, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(300)
    assert not any(th.is_alive() for th in threads), "threads still running after 300 s"
    return errors


def test_16_clients_x_50_execs(daemon):
    def client(t, errors):
        with daemon.client() as c:
            for i in range(EXECS):
                chunks = []
                r = exec_retrying_busy(c, snippet(t, i), on_output=chunks.append)
                if not check(r, t, i, chunks):
                    errors.append((t, i, r.outcome, r.output, r.error))
                    return

    errors = run_threads(CLIENTS, client)
    assert not errors, errors[:5]
    stats = daemon.client().stats()
    assert stats["jobs"]["by_outcome"].get("ok", 0) >= CLIENTS * EXECS
    daemon.assert_serving()


def test_threads_share_one_connection(daemon):
    with daemon.client() as c:
        def worker(t, errors):
            for i in range(EXECS // 2):
                chunks = []
                r = exec_retrying_busy(c, snippet(t, i), on_output=chunks.append)
                if not check(r, t, i, chunks):
                    errors.append((t, i, r.outcome, r.output, r.error))
                    return

        errors = run_threads(8, worker)
    assert not errors, errors[:5]


def test_pipelined_ids_on_one_connection(daemon):
    """Up to 16 execs in flight from one thread, collected in random order. A busy reply (the
    previous batch's workers may not all be reaped yet) is still matched to its request, which
    is then sent again."""
    rng = random.Random(7)
    with daemon.client() as c:
        for batch in range(5):
            todo = list(range(16))
            for _ in range(100):
                if not todo:
                    break
                pending = {c.submit(snippet(batch, i), stream=True): i for i in todo}
                order = list(pending)
                rng.shuffle(order)
                todo = []
                for rid in order:
                    chunks = []
                    r = c.wait(rid, on_output=chunks.append)
                    if r.outcome == "busy":
                        todo.append(pending[rid])
                        continue
                    assert check(r, batch, pending[rid], chunks), (rid, r, r.error)
                time.sleep(0.01 * bool(todo))
            assert not todo, f"still busy after 100 rounds: {todo}"
        assert c.ping()


def test_pipelined_mixed_ops(daemon):
    """pings and stats overtaking a slow exec on the same connection."""
    with daemon.client() as c:
        slow = c.submit("x = 0\nfor i in range(300000):\n    x += i\nx")
        fast = [c.submit_request("ping") for _ in range(10)]
        for rid in fast:
            assert c.wait_reply(rid)["ok"] is True
        r = c.wait(slow)
        assert r.ok and r.output == sum(range(300000))


def test_busy_beyond_max_inflight_is_an_error_not_a_hang(daemon):
    hello = daemon.client().hello()
    cap = hello["limits"]["max_inflight"]
    with daemon.client() as c:
        rids = [c.submit("for i in range(200000): pass") for _ in range(min(cap + 5, 80))]
        results = [c.wait(r) for r in rids]
    outcomes = {r.outcome for r in results}
    assert outcomes <= {"ok", "busy"}, outcomes
    daemon.assert_serving()
