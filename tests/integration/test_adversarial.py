"""Hostile and broken clients (knot-resolver's test_conn_mgmt.py, redis's protocol.tcl): after
each case a second client is still served, and the daemon never dies."""

import os
import re
import select
import socket
import struct
import time

import pytest

from conftest import frame, pyfence, read_frame, wait_for


def assert_closed(s, timeout=10):
    s.settimeout(timeout)
    try:
        while s.recv(65536):
            pass
    except ConnectionResetError:
        pass


def error_code(reply):
    assert reply is not None, "connection closed without an error reply"
    assert reply["ok"] is False, reply
    return reply["error"]["code"]


def test_garbage_bytes(daemon):
    s = daemon.raw()
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert error_code(read_frame(s)) == "too_large"
    assert_closed(s)
    daemon.assert_serving()


def test_zero_length(daemon):
    s = daemon.raw()
    s.sendall(b"\x00\x00\x00\x00")
    assert error_code(read_frame(s)) == "bad_frame"
    assert_closed(s)
    daemon.assert_serving()


@pytest.mark.parametrize("length", [0xFFFFFFFF, 0x80000000, 64 * 1024 * 1024 + 1])
def test_oversize_and_negative_length(daemon, length):
    s = daemon.raw()
    s.sendall(struct.pack(">I", length) + b"{")
    reply = read_frame(s)
    assert error_code(reply) == "too_large" and str(length) in reply["error"]["message"]
    assert_closed(s)
    daemon.assert_serving()


def test_truncated_frame_then_close(daemon):
    s = daemon.raw()
    s.sendall(struct.pack(">I", 100) + b'{"id": 1, "op": "pi')
    s.close()
    daemon.assert_serving()


@pytest.mark.parametrize("payload,needle", [
    (b'{"id": 1, "op": "ping", "x": "\xff\xfe"}', "UTF-8"),
    (b'{"id": 1, "op": "ping", "x": "\xed\xa0\x80"}', "UTF-8"),  # a surrogate
    (b'{"id": 1, "op": "ping"', "JSON"),
    (b'[1, 2]', "object"),
    (b'{"id": 1, "op": "ping", "op": "stats"}', "duplicate"),
    (b'{"id": 1, "op": "ping", "x": ' + b"[" * 10000 + b"]" * 10000 + b"}", "deep"),
    (b'{"id": 1, "op": "ping", "x": NaN}', ""),
])
def test_bad_payload_keeps_connection(daemon, payload, needle):
    s = daemon.raw()
    s.sendall(frame(payload))
    reply = read_frame(s)
    assert error_code(reply) == "bad_frame", reply
    assert needle.lower() in reply["error"]["message"].lower(), reply
    s.sendall(frame({"id": 2, "op": "ping"}))  # framing intact: the connection stays usable
    assert read_frame(s) == {"id": 2, "ok": True}
    daemon.assert_serving()


@pytest.mark.parametrize("request_,code", [
    ({"op": "ping"}, "bad_request"),
    ({"id": 1}, "bad_request"),
    ({"id": 1, "op": "fly"}, "unknown_op"),
    ({"id": {"a": 1}, "op": "ping"}, "bad_request"),
    ({"id": -1, "op": "ping"}, "bad_request"),
    ({"id": 1.5, "op": "ping"}, "bad_request"),
    ({"id": "x" * 300, "op": "ping"}, "bad_request"),
    ({"id": 1, "op": "exec"}, "bad_request"),
    ({"id": 1, "op": "exec", "code": 5}, "bad_request"),
    ({"id": 1, "op": "exec", "code": "1", "typo": 1}, "bad_request"),
    ({"id": 1, "op": "exec", "code": "1", "limits": {"timeout_ms": 10**12}}, "bad_request"),
    ({"id": 1, "op": "exec", "code": "1", "limits": {"max_frame_bytes": 1}}, "bad_request"),
    ({"id": 1, "op": "exec", "code": "1", "imports": ["x"] * 100}, "bad_request"),
])
def test_bad_requests(daemon, request_, code):
    s = daemon.raw()
    s.sendall(frame(request_))
    assert error_code(read_frame(s)) == code
    s.sendall(frame({"id": 2, "op": "ping"}))
    assert read_frame(s) == {"id": 2, "ok": True}


def test_string_ids_echoed(daemon):
    s = daemon.raw()
    for rid in ("a", "é" * 10, "", 0, 2**53 - 1):
        s.sendall(frame({"id": rid, "op": "ping"}))
        assert read_frame(s) == {"id": rid, "ok": True}


def test_ids_past_2_53_refused_not_rounded(daemon):
    # 2**53 + 1 reads as the double 2**53: echoing that back would name another request.
    s = daemon.raw()
    for rid in (2**53, 2**53 + 1):
        s.sendall(frame({"id": rid, "op": "ping"}))
        r = read_frame(s)
        assert r["id"] is None and error_code(r) == "bad_request", r
        assert "[0, 2^53 - 1]" in r["error"]["message"], r
    s.sendall(frame({"id": 2, "op": "ping"}))
    assert read_frame(s) == {"id": 2, "ok": True}


def test_slowloris(daemon):
    """A client that sends a header then one byte per 100 ms does not hold anyone else up, and is
    answered when its frame is finally complete."""
    s = daemon.raw()
    data = frame({"id": 9, "op": "ping", })
    s.sendall(data[:4])
    start = time.monotonic()
    for i, b in enumerate(data[4:]):
        s.sendall(bytes([b]))
        time.sleep(0.1)
        if i % 5 == 0:
            t0 = time.monotonic()
            daemon.assert_serving()
            assert time.monotonic() - t0 < 2
    assert read_frame(s) == {"id": 9, "ok": True}
    assert time.monotonic() - start >= 0.1 * (len(data) - 4)


def test_flood_without_reading(daemon):
    """A client that keeps sending and never reads: once 256 KiB of its replies are unread,
    pyfenced stops reading it (back-pressure), so its requests stay in its socket instead of
    turning into replies in pyfenced's memory; meanwhile others are served. When it reads at
    last, every request it sent is answered, in order."""
    s = daemon.raw()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    batch = b"".join(frame({"id": i, "op": "hello", "client": "x" * 200}) for i in range(256))
    s.settimeout(0.5)
    sent, batches = 0, 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            sent += s.sendall(batch) or len(batch)
            batches += 1
        except socket.timeout:
            break  # the daemon stopped reading us
    assert time.monotonic() < deadline, f"still read after {sent} bytes of unread requests"
    with daemon.client() as c:
        me = next(u for u in c.stats()["uids"] if u["uid"] == os.getuid())
    # what pyfenced holds for this uid: about 256 KiB of replies, not megabytes
    assert me["bytes"] < 512 * 1024, me
    daemon.assert_serving()
    # Reading drains it: the first replies come, in order (the request cut by the timeout may
    # be incomplete: the rest is not checked).
    s.settimeout(10)
    for i in range(256):
        r = read_frame(s)
        assert r is not None and r["id"] == i and r["ok"], r
    s.close()
    daemon.assert_serving()


def test_unread_output_past_max_outbuf_disconnects(daemon):
    """Replies and events of requests already taken still go out to a client that does not read
    them, up to max_outbuf_bytes (16 MiB): then it is disconnected as a slow reader."""
    def dropped():
        return len(re.findall(r"over max_outbuf_bytes \d+; disconnecting", daemon.logs()))

    before = dropped()
    s = daemon.raw()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    # 24 snippets streaming 1 MB of output each: 24 MB of events, never read.
    s.sendall(b"".join(frame({"id": i, "op": "exec", "stream": True,
                              "code": "print('x' * 1000000)"}) for i in range(24)))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and dropped() == before:
        time.sleep(0.2)
    assert dropped() == before + 1, daemon.logs()[-2000:]
    assert_closed(s)
    daemon.assert_serving()


def test_close_mid_reply(daemon):
    """Close while a large reply is being written."""
    for _ in range(5):
        s = daemon.raw()
        s.sendall(frame({"id": 1, "op": "exec", "code": "'z' * 900_000"}))
        s.recv(10)
        s.close()
    daemon.assert_serving()


def test_close_with_job_in_flight(daemon):
    """The worker of an abandoned job is killed, not left running."""
    from conftest import descendants, settled_family

    for _ in range(5):
        s = daemon.raw()
        s.sendall(frame({"id": 1, "op": "exec", "code": "import time\ntime.sleep(25)"}))
        time.sleep(0.05)
        s.close()
    # Well before the sleeps end.
    assert settled_family(daemon, timeout=15), ("workers of abandoned jobs still running",
                                                descendants(daemon.pid))
    daemon.assert_serving()


def test_half_close_still_answered(daemon):
    s = daemon.raw()
    s.sendall(frame({"id": 3, "op": "exec", "code": "2 + 2"}))
    s.shutdown(socket.SHUT_WR)
    reply = read_frame(s)
    assert reply is not None and reply["output"] == 4  # PROTOCOL.md "Connection lifecycle"
    daemon.assert_serving()


def test_many_connections_opened_and_dropped(daemon):
    """200 connections of one uid at once: max_connections_per_uid (128) are served, the others
    told busy; once they are closed, a client is served again."""
    socks = [daemon.raw() for _ in range(200)]
    # Accepted in order, refusals answered as accepted: once the last (refused) one has its
    # answer, every earlier one has been decided.
    select.select([socks[-1]], [], [], 30)
    refused = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(4, socket.MSG_PEEK):
                s.settimeout(10)
                assert "max_connections_per_uid 128" in read_frame(s)["error"]["message"]
                refused += 1
        except BlockingIOError:
            pass
    assert refused == 200 - 128, refused
    for s in socks:
        s.close()

    def served():
        # the daemon may take a moment to see all those closes
        try:
            with daemon.client() as c:
                return c.ping()
        except pyfence.PyfenceError as e:
            assert e.code == "busy", e
            return False

    assert wait_for(served)
    daemon.assert_serving()
