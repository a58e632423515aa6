"""The Python client against a scripted fake server: framing, id matching, tagged values,
error handling and the smolagents adapter, without the daemon."""

import datetime
import dis
import math
import random
import signal
import statistics
import sys
import threading
import time
from collections import deque

import pytest

import pyfence
from fakeserver import error_exec_reply, ok_exec_reply

TAGGED = {
    "tuple": {"$type": "tuple", "items": [1, "a", None]},
    "set": {"$type": "set", "items": [1, 2]},
    "frozenset": {"$type": "frozenset", "items": ["x"]},
    "bytes": {"$type": "bytes", "base64": "AAEC/w=="},
    "bytearray": {"$type": "bytearray", "base64": "aGk="},
    "complex": {"$type": "complex", "real": 1.5, "imag": {"$type": "float", "value": "-inf"}},
    "nan": {"$type": "float", "value": "nan"},
    "big": {"$type": "int", "value": str(2**100)},
    "dict": {"$type": "dict", "items": [[1, "one"], [{"$type": "tuple", "items": [1, 2]}, [3]]]},
    "dt": {"$type": "datetime", "iso": "2024-01-02T03:04:05.000006+01:00"},
    "date": {"$type": "date", "iso": "2024-01-02"},
    "time": {"$type": "time", "iso": "03:04:05"},
    "td": {"$type": "timedelta", "days": 1, "seconds": 2, "microseconds": 3},
    "repr": {"$type": "repr", "type": "builtins.object", "repr": "<object object at 0x1>"},
    "nested": [{"$type": "tuple", "items": [[{"$type": "set", "items": []}]]}],
}


def standard(conn, req):
    """Answers every op the way pyfenced would, echoing the code as output."""
    rid, op = req["id"], req["op"]
    if op == "hello":
        conn.send({"id": rid, "ok": True, "server": "pyfenced", "version": "0.1.0", "protocol": 1,
                   "python": "3.11.2", "limits": {"max_frame_bytes": 8388608}, "job_limits": {}})
    elif op == "ping":
        conn.send({"id": rid, "ok": True})
    elif op == "stats":
        conn.send({"id": rid, "ok": True, "version": "0.1.0", "uptime_ms": 5, "connections": 1,
                   "jobs": {"running": 0, "total": 0, "by_outcome": {}}})
    elif op == "exec":
        code = req["code"]
        if code == "tagged":
            conn.send(ok_exec_reply(rid, TAGGED, "{...}"))
        elif code == "raise":
            conn.send(error_exec_reply(rid, "error", "Code execution failed at line '1/0' due to: "
                                       "ZeroDivisionError: division by zero", "ZeroDivisionError", 2, "1/0",
                                       logs="before\n"))
        else:
            if req.get("stream"):
                conn.send({"id": rid, "event": "output", "data": "out:"})
                conn.send({"id": rid, "event": "output", "data": code + "\n"})
            conn.send(ok_exec_reply(rid, code, repr(code), logs="out:" + code + "\n"))
    else:
        conn.send({"id": rid, "ok": False, "error": {"code": "unknown_op", "message": f"no op {op!r}"}})


def test_hello_ping_stats(fake):
    srv = fake(standard)
    with pyfence.Client(srv.path) as c:
        assert c.hello()["server"] == "pyfenced"
        assert c.ping() is True
        assert c.stats()["jobs"]["total"] == 0
    assert [r["op"] for r in srv.requests] == ["hello", "ping", "stats"]
    ids = [r["id"] for r in srv.requests]
    assert len(set(ids)) == 3 and all(type(i) is int for i in ids)


def test_hello_checks_protocol_version(fake):
    srv = fake(lambda conn, req: conn.send({"id": req["id"], "ok": True, "protocol": 2}))
    with pyfence.Client(srv.path) as c, pytest.raises(pyfence.PyfenceError, match="speaks protocol 2") as e:
        c.hello()
    assert e.value.code == "protocol"


def test_exec_request_shape_and_streaming(fake):
    srv = fake(standard)
    chunks = []
    with pyfence.Client(srv.path) as c:
        r = c.exec("code", timeout=0.25, imports=["numpy", "pkg.*"], limits={"max_ops": 10},
                   variables={"t": (1, 2), "big": 2**60}, on_output=chunks.append)
    assert r.ok and r.outcome == "ok" and r.output == "code" and r.output_repr == "'code'"
    assert chunks == ["out:", "code\n"]
    assert r.stats["ops"] == 3 and r.error is None
    req = srv.requests[-1]
    assert req["imports"] == ["numpy", "pkg.*"]
    assert req["limits"] == {"max_ops": 10, "timeout_ms": 250}
    assert req["variables"] == {"t": {"$type": "tuple", "items": [1, 2]},
                                "big": {"$type": "int", "value": str(2**60)}}
    assert req["stream"] is True


def test_exec_profile_is_sent_only_when_given(fake):
    srv = fake(standard)
    with pyfence.Client(srv.path) as c:
        assert c.exec("a", profile="strict").ok
        assert c.wait(c.submit("b", profile="data")).ok
        assert c.exec("c").ok
    with pyfence.PyfenceExecutor(socket_path=srv.path, profile="strict") as ex:
        ex("d")
    profiles = {r["code"]: r.get("profile") for r in srv.requests}
    assert profiles == {"a": "strict", "b": "data", "c": None, "d": "strict"}, srv.requests
    assert "profile" not in srv.requests[2]


def test_tagged_values_decoded(fake):
    srv = fake(standard)
    with pyfence.Client(srv.path) as c:
        out = c.exec("tagged").output
    assert out["tuple"] == (1, "a", None)
    assert out["set"] == {1, 2} and isinstance(out["frozenset"], frozenset)
    assert out["bytes"] == b"\x00\x01\x02\xff" and out["bytearray"] == bytearray(b"hi")
    assert out["complex"].real == 1.5 and out["complex"].imag == -math.inf
    assert math.isnan(out["nan"]) and out["big"] == 2**100
    assert out["dict"] == {1: "one", (1, 2): [3]}
    assert out["dt"] == datetime.datetime(2024, 1, 2, 3, 4, 5, 6,
                                          tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    assert out["date"] == datetime.date(2024, 1, 2) and out["time"] == datetime.time(3, 4, 5)
    assert out["td"] == datetime.timedelta(days=1, seconds=2, microseconds=3)
    assert isinstance(out["repr"], pyfence.Repr) and repr(out["repr"]) == "<object object at 0x1>"
    assert out["nested"] == [([set()],)]


@pytest.mark.parametrize("value", [
    None, True, 0, -2**53, 2**53 + 1, -(2**70), 1.5, math.inf, -math.inf, "é", [1, [2]],
    (1, (2,)), {1, 2}, frozenset({"a"}), b"\x00\xff", bytearray(b"x"), 1 + 2j,
    {"a": 1}, {1: 2}, {"$type": "x"}, datetime.datetime(2020, 1, 1, 1, 2, 3),
    datetime.date(2020, 1, 1), datetime.time(1, 2), datetime.timedelta(seconds=-1),
])
def test_encode_decode_round_trip(value):
    wire = pyfence.encode_frame({"v": pyfence.encode_value(value)})
    back = pyfence.decode_value(pyfence._loads(wire[4:])["v"])
    assert back == value and type(back) is type(value)


@pytest.mark.parametrize("value", [2.0, -0.0, 0.0, 1e16, 1e300, -2.0**60, 0.1 + 0.2, 5e-324,
                                   complex(1, -0.0), [1.0, 1, -0.0, 0]])
def test_floats_keep_type_through_a_double_only_hop(value):
    """pyfenced re-parses with cJSON and prints integral doubles as bare digits: what goes out
    must still come back as the same type, sign and value after such a hop."""
    def double_hop(v):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return int(v) if float(v).is_integer() and abs(v) < 1e17 else float(v)
        if isinstance(v, list):
            return [double_hop(x) for x in v]
        if isinstance(v, dict):
            return {k: double_hop(x) for k, x in v.items()}
        return v
    wire = double_hop(pyfence.encode_value(value))
    back = pyfence.decode_value(pyfence._loads(pyfence.encode_frame({"v": wire})[4:])["v"])
    assert repr(back) == repr(value) and type(back) is type(value)


def test_float_wire_forms():
    assert pyfence.encode_value(2.0) == {"$type": "float", "value": "2.0"}
    assert pyfence.encode_value(-0.0) == {"$type": "float", "value": "-0.0"}
    assert pyfence.encode_value(0.5) == 0.5 and pyfence.encode_value(2) == 2
    assert pyfence.encode_value(1 + 2j) == {"$type": "complex", "real": 1.0, "imag": 2.0}
    # A plain integral number is an int however it is spelled; a bad float text is refused.
    assert type(pyfence.decode_value(1e16)) is int and pyfence.decode_value(1e16) == 10**16
    with pytest.raises(pyfence.PyfenceError):
        pyfence.decode_value({"$type": "float", "value": "1_0"})


def test_nan_round_trip_and_unencodable():
    assert math.isnan(pyfence.decode_value(pyfence.encode_value(math.nan)))
    with pytest.raises(TypeError, match="object"):
        pyfence.encode_value(object())
    with pytest.raises(TypeError):
        pyfence.encode_value(pyfence.Repr("builtins.object", "<object>"))
    deep = []
    for _ in range(100):
        deep = [deep]
    with pytest.raises(ValueError, match="deeper"):
        pyfence.encode_value(deep)


def test_unknown_tag_is_protocol_error():
    with pytest.raises(pyfence.PyfenceError) as e:
        pyfence.decode_value({"$type": "pickle", "data": "x"})
    assert e.value.code == "protocol"


def test_error_outcome_and_raise_for_outcome(fake):
    srv = fake(standard)
    with pyfence.Client(srv.path) as c:
        r = c.exec("raise")
    assert not r.ok and r.outcome == "error" and r.logs == "before\n"
    assert r.error["type"] == "ZeroDivisionError" and r.error["line"] == 2
    with pytest.raises(pyfence.ExecutionError, match="due to: ZeroDivisionError") as e:
        r.raise_for_outcome()
    assert e.value.code == "error" and e.value.logs == "before\n"


def test_replies_out_of_order_are_matched(fake):
    def reverse(conn, req):
        conn.held.append(req)
        if len(conn.held) == 3:
            for q in reversed(conn.held):
                conn.send({"id": q["id"], "event": "output", "data": q["code"]})
            for q in reversed(conn.held):
                conn.send(ok_exec_reply(q["id"], q["code"]))
            conn.held.clear()

    srv = fake(reverse)
    with pyfence.Client(srv.path) as c:
        ids = [c.submit(f"job{i}", stream=True) for i in range(3)]
        for i, rid in enumerate(ids):
            seen = []
            r = c.wait(rid, on_output=seen.append)
            assert r.output == f"job{i}" and seen == [f"job{i}"]


def test_pipelining_large_requests_does_not_deadlock(fake):
    """Large requests submitted without reading, each answered with a large reply: the server
    blocks writing and stops reading, so a client that only sent would block too."""
    big = "x" * 200_000

    def answer(conn, req):
        conn.send(ok_exec_reply(req["id"], None, logs=big))

    srv = fake(answer)
    with pyfence.Client(srv.path) as c:
        ids = [c.submit("#" * 200_000) for _ in range(60)]
        for rid in reversed(ids):
            assert c.wait(rid).logs == big


def test_threads_share_one_client(fake):
    lock = threading.Lock()

    def flush(conn):
        with lock:
            batch, conn.held[:] = list(conn.held), []
            for q in reversed(batch):
                conn.send({"id": q["id"], "event": "output", "data": q["code"]})
                conn.send(ok_exec_reply(q["id"], q["code"]))

    def pairs(conn, req):
        # Answer in swapped pairs so that replies keep crossing requests of other threads; a
        # request left alone is answered after a moment (the other threads may be done).
        with lock:
            conn.held.append(req)
            alone = len(conn.held) < 2
        if alone:
            threading.Timer(0.005, flush, (conn,)).start()
        else:
            flush(conn)

    srv = fake(pairs)
    errors = []
    with pyfence.Client(srv.path) as c:
        def worker(t):
            for i in range(25):
                code = f"t{t}-{i}"
                seen = []
                r = c.exec(code, on_output=seen.append)
                if r.output != code or seen != [code]:
                    errors.append((code, r.output, seen))

        threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert not errors and len(srv.requests) == 200


SID = "0123456789abcdef0123456789abcdef"


def interrupted_open(fake, on_cancel):
    """Opens a detached session that the server holds; a KeyboardInterrupt (a real SIGINT to the
    main thread) comes while the client waits. on_cancel(conn, open_request, cancel_request)
    answers the take-back's cancel. Returns the server's requests as (op, fields)."""
    held = threading.Event()

    def handler(conn, req):
        if req["op"] == "session.open":
            conn.held.append(req)
            held.set()
        elif req["op"] == "cancel":
            on_cancel(conn, conn.held.pop(), req)
        else:  # session.close, ping
            conn.send({"id": req["id"], "ok": True})

    def interrupt():
        # Once the client reads (a private flag: it then waits in recv), not merely once the
        # request was sent: an interruption inside submit_request would come before the open
        # can be taken back.
        deadline = time.monotonic() + 10
        while not (held.is_set() and c._reading) and time.monotonic() < deadline:
            time.sleep(0.001)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    srv = fake(handler)
    with pyfence.Client(srv.path) as c:
        t = threading.Thread(target=interrupt)
        t.start()
        with pytest.raises(KeyboardInterrupt):
            c.open_session(detach=True)
        t.join()
        assert c.ping()  # the connection goes on
    return [(r["op"], r.get("target") or r.get("session")) for r in srv.requests]


def test_interrupted_open_is_cancelled(fake):
    def cancelled(conn, open_req, req):
        conn.send({"id": open_req["id"], "ok": False,
                   "error": {"code": "cancelled", "message": "session.open was cancelled"}})
        conn.send({"id": req["id"], "ok": True, "cancelled": True})

    assert interrupted_open(fake, cancelled) == [("session.open", None), ("cancel", 1), ("ping", None)]


def test_interrupted_open_that_opened_is_closed(fake):
    def opened(conn, open_req, req):
        conn.send({"id": open_req["id"], "ok": True, "session": SID, "detached": True})
        conn.send({"id": req["id"], "ok": True, "cancelled": False})

    assert interrupted_open(fake, opened) == [("session.open", None), ("cancel", 1),
                                              ("session.close", SID), ("ping", None)]


def test_interrupt_anywhere_in_open_session_leaves_client_whole(fake):
    """A SIGINT may land at any point of open_session: while it sends, waits, reads the reply,
    takes the open back, or just after it returned. Wherever it lands, the connection stays
    usable (a wedged reader or a half-read frame would hang the ping), no session is left that
    the caller neither got nor saw closed, and the interrupt is acted on even when it comes just
    before the client blocks (with no reply_timeout, a lost one hangs the test)."""
    rng = random.Random(5)
    opened, closed = set(), set()

    def handler(conn, req):
        op = req["op"]
        if op == "session.open":
            if rng.random() < 0.5:
                sid = f"{len(opened):032x}"
                opened.add(sid)
                conn.send({"id": req["id"], "ok": True, "session": sid, "detached": True})
            else:
                conn.held.append(req)
        elif op == "cancel":
            held = [r for r in conn.held if r["id"] == req["target"]]
            if held:
                conn.held.remove(held[0])
                conn.send({"id": req["target"], "ok": False,
                           "error": {"code": "cancelled", "message": "session.open was cancelled"}})
            conn.send({"id": req["id"], "ok": True, "cancelled": bool(held)})
        elif op == "session.close":
            closed.add(req["session"])
            conn.send({"id": req["id"], "ok": True})
        else:  # ping
            conn.send({"id": req["id"], "ok": True})

    srv = fake(handler)
    main = threading.main_thread().ident
    landed = {"open": 0, "after": 0}
    # The interrupt lands at a random point within about three open_session round trips, as
    # this machine takes them now: a fixed range (it was 2 ms) lands nowhere but in the wait on
    # a slow or starved CPU (CI's emulated guest: 19 of 600 after the return).
    took = deque([0.001], maxlen=25)  # the latest opens that returned, start of the thread to return
    with pyfence.Client(srv.path) as c:
        for i in range(600):
            delay = rng.uniform(0, 3 * statistics.median(took))
            fired = threading.Event()

            def interrupt():
                time.sleep(delay)
                signal.pthread_kill(main, signal.SIGINT)
                fired.set()

            t = threading.Thread(target=interrupt)
            got = None
            where = "open"
            try:
                start = time.monotonic()
                t.start()
                got = c.open_session(detach=True)
                took.append(time.monotonic() - start)
                where = "after"
                fired.wait(10)
                time.sleep(0.05)  # the handler runs here at the latest
            except KeyboardInterrupt:
                landed[where] += 1
            t.join()
            assert c.ping(), i
            left = opened - closed - ({got.id} if got else set())
            assert not left, f"iteration {i} (delay {delay * 1e6:.0f} us): session {left} left behind"
            if got:
                got.close()
    # Half the opens are held until cancelled, so "open" gets at least ~300; of the rest, about
    # two thirds should land after the return. Far fewer means the test stopped covering that.
    assert landed["open"] > 100 and landed["after"] > 60, landed


def _interrupt_at_point(n, count):
    """A tracer that raises KeyboardInterrupt at the n-th point of the client's own code where
    CPython (3.11) acts on a pending SIGINT: a function's start, a loop's jump back, the return
    of a call. Points inside the client's held sections are skipped, as a real SIGINT's handler
    waits there. count[0] counts the points passed."""
    client_file = pyfence.__file__
    opnames = {}

    def tracer(frame, event, arg):
        if frame.f_code.co_filename != client_file:
            return None
        frame.f_trace_opcodes = True
        code = frame.f_code
        if code not in opnames:
            opnames[code] = {i.offset: i.opname for i in dis.get_instructions(code)}
        names, prev = opnames[code], [None]

        def local(frame, event, arg):
            if event != "opcode":
                return local
            op = names.get(frame.f_lasti)
            acts = op in ("RESUME", "JUMP_BACKWARD") or prev[0] in ("CALL", "CALL_FUNCTION_EX")
            prev[0] = op
            if acts and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                count[0] += 1
                if count[0] == n:
                    raise KeyboardInterrupt(f"at point {n} ({frame.f_code.co_name}, line {frame.f_lineno})")
            return local

        return local

    return tracer


def test_interrupt_at_every_point_of_open_session(fake):
    """A KeyboardInterrupt at each point of open_session where a real one can come, in turn:
    the connection stays usable, and the session is either the caller's or closed. The random
    SIGINTs of the test above land at few of these points; this reaches every one (an interrupt
    between taking the reply and handing it out left a session in 2 of 113)."""
    opened, closed = set(), set()

    def handler(conn, req):
        if req["op"] == "session.open":
            sid = f"{len(opened):032x}"
            opened.add(sid)
            conn.send({"id": req["id"], "ok": True, "session": sid, "detached": True})
        elif req["op"] == "cancel":
            conn.send({"id": req["id"], "ok": True, "cancelled": False})
        else:  # session.close, ping
            if req["op"] == "session.close":
                closed.add(req["session"])
            conn.send({"id": req["id"], "ok": True})

    srv = fake(handler)
    landed, n = [], 0
    while True:
        n += 1
        count, got = [0], None
        with pyfence.Client(srv.path, reply_timeout=10) as c:
            sys.settrace(_interrupt_at_point(n, count))
            try:
                got = c.open_session(detach=True)
            except KeyboardInterrupt as e:
                landed.append(str(e))
            finally:
                sys.settrace(None)
            assert c.ping(), landed[-1:]
            left = opened - closed - ({got.id} if got else set())
            assert not left, f"interrupted {landed[-1:]}: session {left} left behind"
            if got:
                got.close()
        if count[0] < n:  # the whole call ran without reaching point n
            break
    assert len(landed) == n - 1 and n > 50, landed


def test_unexpected_id_is_protocol_error(fake):
    srv = fake(lambda conn, req: conn.send(ok_exec_reply(req["id"] + 1000)))
    with pyfence.Client(srv.path) as c:
        with pytest.raises(pyfence.PyfenceError, match="not in flight") as e:
            c.exec("x")
        assert e.value.code == "protocol"
        with pytest.raises(pyfence.PyfenceError):  # the connection stays failed
            c.ping()


def test_duplicate_keys_and_bad_frames_are_refused(fake):
    dup = b'{"id": 1, "ok": true, "ok": false}'
    srv = fake(lambda conn, req: conn.send_raw(len(dup).to_bytes(4, "big") + dup))
    with pyfence.Client(srv.path) as c, pytest.raises(pyfence.PyfenceError, match="duplicate") as e:
        c.ping()
    assert e.value.code == "protocol"
    bad = b'{"id": 1, "ok": "\xff"}'
    srv2 = fake(lambda conn, req: conn.send_raw(len(bad).to_bytes(4, "big") + bad))
    with pyfence.Client(srv2.path) as c, pytest.raises(pyfence.PyfenceError, match="utf-8"):
        c.ping()


def test_null_id_error_fails_the_wait(fake):
    srv = fake(lambda conn, req: (conn.send({"id": None, "ok": False,
                                             "error": {"code": "busy", "message": "max_connections 1 reached"}}),
                                  conn.close()))
    with pyfence.Client(srv.path) as c, pytest.raises(pyfence.PyfenceError, match="max_connections") as e:
        c.exec("x")
    assert e.value.code == "busy"


def test_close_mid_frame(fake):
    srv = fake(lambda conn, req: (conn.send_raw(b"\x00\x00\x00\x10{\"id\""), conn.close()))
    with pyfence.Client(srv.path) as c, pytest.raises(pyfence.PyfenceError, match="middle of a frame") as e:
        c.ping()
    assert e.value.code == "connect"


def test_refused_request_raises_for_simple_ops(fake):
    srv = fake(standard)
    with pyfence.Client(srv.path) as c, pytest.raises(pyfence.PyfenceError, match="no op 'nope'") as e:
        c.request("nope")
    assert e.value.code == "unknown_op"


def test_connect_error_names_path(tmpdir_short):
    path = str(tmpdir_short / "absent.sock")
    with pytest.raises(pyfence.PyfenceError, match="absent.sock.*is pyfenced running") as e:
        pyfence.Client(path)
    assert e.value.code == "connect"


def test_default_socket_path(monkeypatch):
    monkeypatch.setenv("PYFENCE_SOCKET", "/x/y.sock")
    assert pyfence.default_socket_path() == "/x/y.sock"
    monkeypatch.delenv("PYFENCE_SOCKET")
    monkeypatch.setattr(pyfence.os, "geteuid", lambda: 1000)
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1000")
    assert pyfence.default_socket_path() == "/run/user/1000/pyfence.sock"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    with pytest.raises(pyfence.PyfenceError, match="PYFENCE_SOCKET"):
        pyfence.default_socket_path()
    monkeypatch.setattr(pyfence.os, "geteuid", lambda: 0)
    assert pyfence.default_socket_path() == "/run/pyfence/pyfence.sock"


def test_smolagents_adapter(fake):
    srv = fake(standard)
    with pyfence.PyfenceExecutor(additional_authorized_imports=["numpy"], socket_path=srv.path,
                                 timeout=2) as ex:
        ex.send_tools({"final_answer": object()})
        with pytest.raises(NotImplementedError, match="web_search"):
            ex.send_tools({"final_answer": None, "web_search": None})
        ex.send_variables({"x": 3})
        out = ex("y")
        assert isinstance(out, pyfence.CodeOutput)
        assert (out.output, out.logs, out.is_final_answer) == ("y", "out:y\n", False)
        with pytest.raises(pyfence.ExecutionError, match="Code execution failed") as e:
            ex("raise")
        assert e.value.logs == "before\n"
    req = srv.requests[0]
    assert req["variables"] == {"x": 3} and req["imports"] == ["numpy"]
    assert req["limits"] == {"timeout_ms": 2000}


def test_big_ints_past_int_max_str_digits_both_ways(fake):
    """Past 4300 decimal digits (CPython's int_max_str_digits) pyfenced sends an int as "0x..."
    hex, sign first, and takes only hex: the client decodes and encodes that form."""
    big = 10**5000
    srv = fake(lambda conn, req: conn.send(ok_exec_reply(req["id"], [
        {"$type": "int", "value": "0x" + format(big, "x")},
        {"$type": "int", "value": "-0x" + format(big, "X")}])))
    with pyfence.Client(srv.path) as c:
        assert c.exec("x", variables={"a": big, "b": -big, "c": 10**4300 - 1, "d": 2**60}).output == [big, -big]
    sent = srv.requests[0]["variables"]
    assert sent["a"] == {"$type": "int", "value": hex(big)}
    assert sent["b"] == {"$type": "int", "value": "-" + hex(big)}
    assert sent["c"] == {"$type": "int", "value": "9" * 4300}  # decimal while pyfenced takes it
    assert sent["d"] == {"$type": "int", "value": str(2**60)}


@pytest.mark.parametrize("text", ["0x", "-0x", "0X1f", "+1", " 1", "1_0", "0x1g", "", "--1", "0b1"])
def test_malformed_int_text_is_protocol_error(text):
    with pytest.raises(pyfence.PyfenceError, match="not a decimal or 0x-hex integer") as e:
        pyfence.decode_value({"$type": "int", "value": text})
    assert e.value.code == "protocol"


def stall_exec(conn, req):
    """Answers everything but exec, which it never answers (a stalled daemon)."""
    if req["op"] != "exec":
        standard(conn, req)


def test_reply_timeout_closes_the_connection(fake):
    srv = fake(stall_exec)
    with pyfence.Client(srv.path, reply_timeout=0.3) as c:
        assert c.ping()
        other = c.submit("other")
        start = time.monotonic()
        with pytest.raises(pyfence.PyfenceError, match="no reply to request 3 within reply_timeout 0.3 s") as e:
            c.exec("x")
        assert e.value.code == "timeout" and 0.25 < time.monotonic() - start < 5
        # Clearly closed: the other request and every later call fail with the same error.
        for call in (lambda: c.wait(other), c.ping):
            with pytest.raises(pyfence.PyfenceError, match="reply_timeout") as e2:
                call()
            assert e2.value is e.value
    with pyfence.Client(srv.path) as c:  # a new connection is served
        assert c.ping()


def test_reply_timeout_is_a_deadline_despite_events_and_half_frames(fake):
    """Output events do not extend the wait, nor does a reply that stops half-way; a thread
    waiting behind the reading one times out too."""
    def dribble(conn, req):
        if req["op"] == "exec":
            for _ in range(20):
                conn.send({"id": req["id"], "event": "output", "data": "."})
                time.sleep(0.05)
            conn.send_raw(b"\x00\x00\x01\x00{\"id\": ")  # then nothing
    srv = fake(dribble)
    with pyfence.Client(srv.path, reply_timeout=0.4) as c:
        seen, errors = [], []
        first, second = c.submit("x", stream=True), c.submit("y")

        def wait_first():
            with pytest.raises(pyfence.PyfenceError) as e:
                c.wait(first, on_output=seen.append)
            errors.append(e.value)
        t = threading.Thread(target=wait_first)
        start = time.monotonic()
        t.start()
        with pytest.raises(pyfence.PyfenceError) as e:
            c.wait(second)
        t.join(5)
        assert e.value.code == "timeout" and time.monotonic() - start < 3, e.value
        assert seen and errors and errors[0].code == "timeout", (seen, errors)


def test_reply_timeout_default_waits(fake):
    def slow(conn, req):
        time.sleep(0.5)
        standard(conn, req)
    srv = fake(slow)
    with pyfence.Client(srv.path) as c:
        assert c.reply_timeout is None and c.exec("x").output == "x"
    with pyfence.Client(srv.path, reply_timeout=5) as c:
        assert c.exec("x").output == "x"
    for bad in (0, -1):
        with pytest.raises(ValueError, match="reply_timeout"):
            pyfence.Client(srv.path, reply_timeout=bad)


def test_reply_nested_too_deep_is_protocol_error(fake):
    """A hostile server's reply nested 600 levels: PyfenceError, not RecursionError; the frame
    was read whole, so the connection goes on."""
    deep = "leaf"
    for _ in range(600):
        deep = [deep]
    srv = fake(lambda conn, req: conn.send(ok_exec_reply(req["id"], deep) if req["op"] == "exec"
                                           else {"id": req["id"], "ok": True}))
    with pyfence.Client(srv.path) as c:
        with pytest.raises(pyfence.PyfenceError, match="nested deeper than 64") as e:
            c.exec("x")
        assert e.value.code == "protocol"
        assert c.ping()
    ok = "leaf"
    for _ in range(64):
        ok = {"$type": "tuple", "items": [ok]}
    assert pyfence.decode_value(ok) is not None
    with pytest.raises(pyfence.PyfenceError, match="nested deeper"):
        pyfence.decode_value([[ok]])


def test_reply_timeout_bounds_a_send_the_daemon_does_not_read(fake):
    srv = fake(lambda conn, req: time.sleep(1.5))  # reads nothing more meanwhile
    with pyfence.Client(srv.path, reply_timeout=0.3) as c:
        c.submit_request("ping")
        start = time.monotonic()
        with pytest.raises(pyfence.PyfenceError, match="did not read request 2 within reply_timeout") as e:
            c.submit("x" * (8 << 20))
        assert e.value.code == "timeout" and time.monotonic() - start < 1.4
        with pytest.raises(pyfence.PyfenceError, match="reply_timeout"):
            c.ping()
