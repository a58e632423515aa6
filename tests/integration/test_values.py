"""Values through the real pyfenced, both ways: every hop that parses JSON into doubles (the
daemon's cJSON, a client's parser) must keep a float a float (2.0, -0.0, 1e16), an int an int
(10**15 + 1, 2**53 + 1), and nan/inf, whichever client reads the reply (PROTOCOL.md "Values")."""

import json
import math
import struct

import pytest

import pyfence

# Each value is checked by repr (nan != nan) and type, inside a list so that nothing is special
# about the top level.
VALUES = [1.0, -0.0, 0.0, 2.0, 1e16, 1e300, -1.7976931348623157e308, 0.5, 0.1 + 0.2, 5e-324,
          2.0**53, 1, 0, -7, 10**15 + 1, 2**53, 2**53 + 1, -(2**70), 10**400,
          math.nan, math.inf, -math.inf, complex(-0.0, 1.0), complex(2.0, -0.0), True]
SNIPPET = ("[1.0, -0.0, 0.0, 2.0, 1e16, 1e300, -1.7976931348623157e308, 0.5, 0.1 + 0.2, 5e-324,\n"
           " 2.0**53, 1, 0, -7, 10**15 + 1, 2**53, 2**53 + 1, -(2**70), 10**400,\n"
           " float('nan'), float('inf'), -float('inf'), complex(-0.0, 1.0), complex(2.0, -0.0), True]")


@pytest.fixture
def client(daemon):
    with daemon.client() as c:
        yield c


def same(a, b):
    return repr(a) == repr(b) and type(a) is type(b)


def test_results_keep_types(client):
    r = client.exec(SNIPPET, limits={"max_ops": 100000})
    assert r.ok, r.error
    assert len(r.output) == len(VALUES)
    for got, want in zip(r.output, VALUES):
        assert same(got, want), (got, want)
    assert r.output_repr == repr(VALUES)


def test_variables_keep_types(client):
    code = ("[type(x).__name__ for x in v], repr(v), v,"
            " {k: (type(w).__name__, repr(w)) for k, w in d.items()}")
    d = {"f": 3.0, "z": -0.0, "i": 3, "big": 10**15 + 1, "huge": 2**64, "frac": 0.1 + 0.2}
    r = client.exec(code, variables={"v": VALUES, "d": d})
    assert r.ok, r.error
    names, text, back, by_key = r.output
    assert names == [type(x).__name__ for x in VALUES]
    assert text == repr(VALUES)
    for got, want in zip(back, VALUES):
        assert same(got, want), (got, want)
    assert by_key == {k: (type(w).__name__, repr(w)) for k, w in d.items()}


def read_reply(sock):
    def exact(n):
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            assert chunk, "pyfenced closed the connection"
            buf += chunk
        return buf
    while True:
        obj = json.loads(exact(struct.unpack(">I", exact(4))[0]))
        if "event" not in obj:
            return obj


def send(sock, obj):
    payload = json.dumps(obj).encode()
    sock.sendall(struct.pack(">I", len(payload)) + payload)


def test_wire_forms(daemon):
    """What any client reads: integral floats tagged with their repr, other finite floats as
    plain numbers, integral plain numbers as ints."""
    with daemon.raw() as s:
        send(s, {"id": 1, "op": "exec", "code": "[2.0, -0.0, 1e16, 0.5, 0.1 + 0.2, 10**15 + 1]"})
        r = read_reply(s)
        assert r["ok"], r
        assert r["output"] == [{"$type": "float", "value": "2.0"}, {"$type": "float", "value": "-0.0"},
                               {"$type": "float", "value": "1e+16"}, 0.5, 0.30000000000000004,
                               10**15 + 1]
        # A client that sends plain numbers gets ints for integral ones, floats for the others;
        # an integral number past 2**53 is refused as inexact, naming the variable.
        send(s, {"id": 2, "op": "exec", "code": "[type(x).__name__ for x in v]",
                 "variables": {"v": [3, 3.0, 2.5, -0.0, 1e15]}})
        r = read_reply(s)
        assert r["ok"] and r["output"] == ["int", "int", "float", "int", "int"], r
        send(s, {"id": 3, "op": "exec", "code": "v", "variables": {"v": [1e20]}})
        r = read_reply(s)
        assert not r["ok"] and r["outcome"] == "bad_request", r
        msg = r["error"]["message"]
        assert "variables.v" in msg and "value[0]" in msg and "$type" in msg, r


def test_cli_output_repr_and_json(daemon):
    r = daemon.cli("exec", "-c", SNIPPET)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == repr(VALUES)
    r = daemon.cli("exec", "--json", "-c", SNIPPET)
    assert r.returncode == 0, r.stderr
    out = pyfence.decode_value(json.loads(r.stdout)["output"])
    for got, want in zip(out, VALUES):
        assert same(got, want), (got, want)


# Each refusal quotes the bad text; cut inside a multi-byte character it once made a message the
# worker could not send, so the worker exited and a session lost its state over a bad request.
BAD_TAGGED = [{"$type": "int", "value": "a" + "é" * 50},
              {"$type": "float", "value": "1" + "é" * 50},
              {"$type": "a" + "é" * 30, "value": "1"},
              {"$type": "date", "value": "2024-" + "é" * 60}]


def test_bad_tagged_values_keep_the_session(daemon):
    with daemon.raw() as s:
        send(s, {"id": 1, "op": "session.open", "variables": {"kept": 41}})
        r = read_reply(s)
        assert r["ok"], r
        sid = r["session"]
        for i, bad in enumerate(BAD_TAGGED, start=2):
            send(s, {"id": i, "op": "exec", "session": sid, "code": "x", "variables": {"x": bad}})
            r = read_reply(s)
            assert not r["ok"] and r["error"]["code"] == "bad_request", r
            msg = r["error"]["message"]
            assert "variables.x" in msg and len(msg.encode()) < 400, msg
        send(s, {"id": 99, "op": "exec", "session": sid, "code": "kept + 1"})
        r = read_reply(s)
        assert r["ok"] and r["output"] == 42, r


def test_exec_reply_shapes(daemon):
    """PROTOCOL.md "exec": an exec the daemon accepted is answered with outcome, logs and stats
    whatever ends it; one refused on arrival gets the plain error reply of any request."""
    with daemon.raw() as s:
        send(s, {"id": 1, "op": "exec", "code": "print('a')\n1/0"})
        r = read_reply(s)
        assert r["outcome"] == "error" == r["error"]["code"] and r["logs"] == "a\n", r
        assert "queue_ms" in r["stats"] and "run_ms" in r["stats"], r
        send(s, {"id": 2, "op": "exec", "code": "import socket"})
        r = read_reply(s)
        assert r["outcome"] == "error" and "stats" in r, r
        refused = [{"id": 3, "op": "exec", "code": "1", "imports": ["socket"]},
                   {"id": 4, "op": "exec", "code": "1", "profile": "no-such-profile"},
                   {"id": 5, "op": "exec", "code": "1", "session": "0" * 32},
                   {"id": 6, "op": "exec", "code": 1}]
        for req in refused:
            send(s, req)
            r = read_reply(s)
            assert set(r) == {"id", "ok", "error"} and not r["ok"], r
            assert r["error"]["code"] in ("bad_request", "not_found"), r
