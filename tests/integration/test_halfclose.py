"""Half-closed connections (shutdown(SHUT_WR), as `printf ... | socat` does): every request sent
before end-of-file is still answered, then pyfenced closes; a full close still cancels the
connection's jobs."""

import socket
import time

import pytest

from conftest import frame, read_frame, wait_for


def read_until_eof(s, timeout=60):
    """Every reply (events left out) until the daemon closes, keyed by id; asserts one reply per
    id."""
    replies = {}
    while (msg := read_frame(s, timeout, partial_ok=False)) is not None:
        if "event" in msg:
            continue
        assert msg["id"] not in replies, f"two replies for id {msg['id']!r}: {msg}"
        replies[msg["id"]] = msg
    return replies


def busy_workers(d):
    with d.client() as c:
        return c.stats()["workers"]["busy"]


def connections(d):
    with d.client() as c:
        return c.stats()["connections"] - 1  # not counting this one


def test_half_close_all_replies_arrive(daemon_factory):
    d = daemon_factory()
    s = d.raw()
    codes = {
        1: ("sum(range(200000))", sum(range(200000))),
        "two": ("6 * 7", 42),
        3: ("print('hi')\nsum(range(300000))", sum(range(300000))),
        4: ("import time\ntime.sleep(0.5)\n'slept'", "slept"),
        5: ("sum(range(200000)) + 1", sum(range(200000)) + 1),
    }
    for rid, (code, _) in codes.items():
        s.sendall(frame({"id": rid, "op": "exec", "code": code}))
    s.shutdown(socket.SHUT_WR)
    replies = read_until_eof(s)
    assert set(replies) == set(codes), replies
    for rid, (_, want) in codes.items():
        r = replies[rid]
        assert r["ok"] and r["outcome"] == "ok" and r["output"] == want, (r, d.logs())
    s.close()
    assert wait_for(lambda: connections(d) == 0), "the half-closed connection is still counted"
    d.assert_serving()


def test_half_close_replies_outlive_idle_timeout(daemon_factory):
    """A half-closed connection with a job in flight is not idle: the reply still arrives after
    the idle timeout."""
    d = daemon_factory("--idle-timeout-ms", "1000")
    s = d.raw()
    s.sendall(frame({"id": 9, "op": "exec", "code": "import time\ntime.sleep(2.5)\n'late'"}))
    s.shutdown(socket.SHUT_WR)
    t0 = time.monotonic()
    replies = read_until_eof(s)
    assert time.monotonic() - t0 >= 2, "closed before the job could finish"
    assert replies[9]["output"] == "late", (replies, d.logs())
    s.close()
    d.assert_serving()


def test_half_close_mixed_sync_and_async_requests(daemon_factory):
    """Requests answered at once (ping, a bad one) and later (exec) on one half-closed
    connection: each gets exactly one reply."""
    d = daemon_factory()
    s = d.raw()
    s.sendall(frame({"id": 1, "op": "exec", "code": "import time\ntime.sleep(0.3)\n1"}))
    s.sendall(frame({"id": 2, "op": "ping"}))
    s.sendall(frame({"id": 3, "op": "nope"}))
    s.sendall(frame({"id": 4, "op": "exec", "code": "2"}))
    s.shutdown(socket.SHUT_WR)
    replies = read_until_eof(s)
    assert set(replies) == {1, 2, 3, 4}, replies
    assert replies[1]["output"] == 1 and replies[4]["output"] == 2
    assert replies[2]["ok"] and not replies[3]["ok"]
    s.close()
    d.assert_serving()


@pytest.mark.parametrize("request_first", [False, True])
def test_half_close_nothing_in_flight_closes_promptly(daemon_factory, request_first):
    d = daemon_factory("--idle-timeout-ms", "60000")
    s = d.raw()
    if request_first:  # answered at once: nothing is in flight when EOF arrives
        s.sendall(frame({"id": 1, "op": "ping"}))
        assert read_frame(s)["ok"]
    s.shutdown(socket.SHUT_WR)
    t0 = time.monotonic()
    assert read_until_eof(s, timeout=10) == {}
    assert time.monotonic() - t0 < 2, "a half-closed idle connection was kept open"
    s.close()
    d.assert_serving()


def test_half_close_session_ends_after_last_reply(daemon_factory):
    """A session owned by a half-closed connection serves the request in flight, then ends
    with the connection."""
    d = daemon_factory()
    s = d.raw()
    s.settimeout(30)
    s.sendall(frame({"id": "open", "op": "session.open"}))
    opened = read_frame(s)
    assert opened["ok"], opened
    sid = opened["session"]
    s.sendall(frame({"id": 1, "op": "exec", "session": sid,
                     "code": "import time\ntime.sleep(0.5)\nx = 5\nx * 2"}))
    s.shutdown(socket.SHUT_WR)
    replies = read_until_eof(s)
    assert replies[1]["output"] == 10, (replies, d.logs())
    s.close()
    with d.client() as c:
        assert wait_for(lambda: c.stats()["sessions"] == 0), "the session outlived its connection"
    d.assert_serving()


def test_full_close_cancels_jobs(daemon_factory):
    d = daemon_factory()
    s = d.raw()
    s.sendall(frame({"id": 1, "op": "exec", "code": "import time\ntime.sleep(25)"}))
    assert wait_for(lambda: busy_workers(d) >= 1)
    s.close()
    assert wait_for(lambda: busy_workers(d) == 0, timeout=5), "the abandoned job still runs"
    d.assert_serving()


def test_close_after_half_close_cancels_jobs(daemon_factory):
    """Half-closed first, fully closed later while its job runs: the job is cancelled then, not
    when it would have finished."""
    d = daemon_factory()
    s = d.raw()
    s.sendall(frame({"id": 1, "op": "exec", "code": "import time\ntime.sleep(25)"}))
    s.shutdown(socket.SHUT_WR)
    assert wait_for(lambda: busy_workers(d) >= 1)
    time.sleep(0.3)
    assert busy_workers(d) >= 1, "the half-closed connection's job was cancelled"
    s.close()
    assert wait_for(lambda: busy_workers(d) == 0, timeout=5), "the abandoned job still runs"
    d.assert_serving()
