"""client/python/pyfence.py against the real pyfenced: results, tagged values both ways,
streaming, errors, final_answer, and the smolagents adapter."""

import datetime
import math

import pytest

import pyfence


@pytest.fixture
def client(daemon):
    with daemon.client() as c:
        yield c


def test_hello(client):
    h = client.hello()
    assert h["server"] == "pyfenced" and h["protocol"] == 1 and h["python"].startswith("3.11")
    assert h["limits"]["max_frame_bytes"] > 0 and h["job_limits"]["timeout_ms"] > 0


def test_exec_result_fields(client):
    chunks = []
    r = client.exec("print('a')\nprint('b')\n40 + 2", on_output=chunks.append)
    assert r.ok and r.outcome == "ok" and r.output == 42 and r.output_repr == "42"
    assert "".join(chunks) == "a\nb\n" and r.logs == "a\nb\n" and not r.is_final_answer
    assert r.error is None and r.stats["ops"] > 0 and "run_ms" in r.stats and "queue_ms" in r.stats


@pytest.mark.parametrize("pause", [
    "time.sleep(1.5)",  # a C call: the walk makes no clock check meanwhile
    # the walk goes on (a clock check every 1,024 operations) without printing
    "t = time.monotonic()\nwhile time.monotonic() - t < 1.5:\n    time.sleep(0.001)",
])
def test_output_streams_before_a_pause(client, pause):
    """The first line goes out at once; one printed just after it (batched with it) goes out
    at the walk's next clock check: neither waits for the snippet to end."""
    import time
    seen = []
    snippet = "import time\nprint('a')\n" + pause + "\nprint('b')"
    if "while" in pause:
        snippet = "import time\nprint('a')\nprint('a2')\n" + pause + "\nprint('b')"
    start = time.monotonic()
    r = client.exec(snippet, on_output=lambda text: seen.append((time.monotonic() - start, text)))
    assert r.ok and r.logs.endswith("b\n"), (r, r.error)
    early = "".join(text for t, text in seen if t < 1.0)
    assert early.startswith("a\n"), seen
    if "while" in pause:
        assert early == "a\na2\n", seen


def test_tagged_values_from_the_daemon(client):
    r = client.exec("import datetime\n"
                    "((1, 2), {3}, frozenset({4}), b'\\x00\\xff', bytearray(b'z'), 1+2j, float('nan'),\n"
                    " float('-inf'), 2**100, {1: 'one'}, {'$type': 1}, datetime.date(2020, 1, 2),\n"
                    " datetime.datetime(2020, 1, 2, 3, 4, 5), datetime.time(1, 2),\n"
                    " datetime.timedelta(days=1, microseconds=5), object(), [None, True, 1.5, 'é'])")
    assert r.ok, r.error
    out = r.output
    assert out[:6] == ((1, 2), {3}, frozenset({4}), b"\x00\xff", bytearray(b"z"), 1 + 2j)
    assert math.isnan(out[6]) and out[7] == -math.inf and out[8] == 2**100
    assert out[9] == {1: "one"} and out[10] == {"$type": 1}
    assert out[11] == datetime.date(2020, 1, 2)
    assert out[12] == datetime.datetime(2020, 1, 2, 3, 4, 5) and out[13] == datetime.time(1, 2)
    assert out[14] == datetime.timedelta(days=1, microseconds=5)
    assert isinstance(out[15], pyfence.Repr) and out[15].type.endswith("object")
    assert out[16] == [None, True, 1.5, "é"]


def test_variables_round_trip(client):
    values = {"t": (1, (2, 3)), "s": {1, 2}, "b": b"\x01", "c": 3 - 1j, "big": -(2**90),
              "inf": math.inf, "d": {(1, 2): "x"}, "when": datetime.datetime(2021, 5, 6, 7, 8, 9),
              "dt": datetime.timedelta(hours=1), "text": "ü"}
    r = client.exec("(t, s, b, c, big, inf, d, when, dt, text)", variables=values)
    assert r.ok, r.error
    assert r.output == tuple(values.values())


def test_ints_past_int_max_str_digits_both_ways(client):
    """pyfenced sends ints past 4300 decimal digits as "0x..." hex and takes them only so: exec
    results, variables and session.get all carry them, negative ones too."""
    big = 10**5000
    r = client.exec("10**5000")
    assert r.ok and r.output == big, r.error
    r = client.exec("(a, b, a + b, -a)", variables={"a": big, "b": -(2**20000) - 1})
    assert r.ok and r.output == (big, -(2**20000) - 1, big - 2**20000 - 1, -big), r.error
    with client.open_session(variables={"v": -big}) as s:
        assert s.exec("w = v * 3").ok
        assert s.get("v", "w") == {"v": -big, "w": -3 * big}


def test_final_answer(client):
    r = client.exec("x = 5\nfinal_answer(x * 2)\nprint('not reached')")
    assert r.ok and r.is_final_answer and r.output == 10 and r.logs == ""


def test_error_fields(client):
    r = client.exec("a = 1\nb = [][a]")
    assert not r.ok and r.outcome == "error"
    assert r.error["type"] == "IndexError" and r.error["line"] == 2 and r.error["source"] == "b = [][a]"
    assert r.error["message"].startswith("Code execution failed at line 'b = [][a]' due to: IndexError")
    r = client.exec("def (:")
    assert not r.ok and r.outcome == "error"
    assert r.error["message"].startswith("Code parsing failed on line 1 due to: SyntaxError")


def test_refused_request(client):
    r = client.exec("1", limits={"timeout_ms": 10**9})
    assert not r.ok and r.outcome == "bad_request" and "timeout_ms" in r.error["message"]
    with pytest.raises(pyfence.PyfenceError) as e:
        client.request("no_such_op")
    assert e.value.code == "unknown_op"
    assert client.exec("1").output == 1  # the connection is still usable


def test_exec_with_a_profile(daemon, client):
    """exec(profile=) runs under that profile: the shipped `strict` one allows no import, the
    caller's default (named or not) allows math; a profile that does not exist is not_found."""
    r = client.exec("import math\nmath.floor(2.5)", profile="strict")
    assert r.outcome == "error", (r, r.error)
    assert "Import of math is not allowed. Authorized imports are: []" in r.error["message"]
    for named in (None, "default"):
        r = client.exec("import math\nmath.floor(2.5)", profile=named)
        assert r.ok and r.output == 2, (named, r, r.error)
    r = client.wait(client.submit("sum(range(4))", profile="strict"))
    assert r.ok and r.output == 6, (r, r.error)
    r = client.exec("1", profile="no-such-profile")
    assert r.outcome == "not_found" and "no profile 'no-such-profile'" in r.error["message"], r
    with pyfence.PyfenceExecutor(socket_path=daemon.socket_path, profile="strict") as ex:
        with pytest.raises(pyfence.ExecutionError, match="Import of math is not allowed"):
            ex("import math")


def test_smolagents_adapter(daemon):
    with pyfence.PyfenceExecutor(socket_path=daemon.socket_path, additional_authorized_imports=["json"]) as ex:
        ex.send_tools({"final_answer": None})
        ex.send_variables({"n": 4})
        out = ex("import json\nprint(json.dumps([n]))\nfinal_answer(n ** 2)")
        assert (out.output, out.logs, out.is_final_answer) == (16, "[4]\n", True)
        out = ex("n + 1")
        assert (out.output, out.is_final_answer) == (5, False)
        with pytest.raises(pyfence.ExecutionError, match="due to: NameError") as e:
            ex("print('partial')\nundefined_name")
        assert e.value.logs == "partial\n"


def test_deep_result_is_cut_to_repr(client):
    """Tagged containers take 2-3 JSON levels each: a reply nests far deeper than the 64 levels
    a request may, and the clients must accept it. Past 64 containers the value is a repr."""
    for code, inner in (("x = []\nfor i in range(100000):\n    x = [x]\nx", list),
                        ("x = ()\nfor i in range(100):\n    x = (x,)\nx", tuple),
                        ("x = {}\nfor i in range(100):\n    x = {1: x}\nx", dict)):
        r = client.exec(code)
        assert r.ok, r.error
        v, depth = r.output, 0
        while isinstance(v, inner):
            v = v[0] if inner is not dict else v[1]
            depth += 1
        assert isinstance(v, pyfence.Repr) and 30 <= depth <= 64, (inner, depth, v)


def test_deepest_variable_accepted(client):
    """A value may nest 64 containers (PROTOCOL.md "Values"); in its deepest tagged form (a dict
    with non-str keys: 3 JSON levels each) it still fits a request's 256 levels, both ways."""
    x = {1: b"leaf"}
    for _ in range(63):
        x = {1: x}
    r = client.exec("x", variables={"x": x})
    assert r.ok and r.output == x, r.error
    y = ()
    for _ in range(63):
        y = (y,)
    r = client.exec("x", variables={"x": y})
    assert r.ok and r.output == y, r.error
    # One container more is the executor's refusal, which names the request (not the frame's).
    z = {}
    for _ in range(64):
        z = {1: z}
    r = client.exec("x", variables={"x": z})
    assert r.outcome == "bad_request" and "nested deeper than 64 levels" in r.error["message"], r.reply


def test_too_deep_request_refused_locally(client):
    """A request over 256 JSON levels would be refused for the whole frame, without its id: the
    client refuses it before sending, naming the problem, and stays usable."""
    x = []
    for _ in range(300):
        x = [x]
    with pytest.raises(pyfence.PyfenceError, match="nests .* JSON levels") as e:
        client.request("exec", code="x", variables={"x": x})
    assert e.value.code == "bad_request"
    assert client.ping()


def test_example_agent(daemon):
    import os
    import subprocess

    from conftest import REPO

    env = dict(os.environ, PYTHONPATH=str(REPO / "client" / "python"), PYFENCE_SOCKET=daemon.socket_path)
    r = subprocess.run(["/usr/bin/python3", str(REPO / "examples" / "agent.py")], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "step 2\nresult: (2, {2: 'last'})" in r.stdout
    assert "result: ('2024-03-01', ['a', 'b'])" in r.stdout
    assert "outcome: timeout" in r.stdout and "final answer: 4" in r.stdout
    assert "agent sees: Code execution failed at line 'undefined_name'" in r.stdout


def test_strings_pyfenced_refuses_are_caught_locally(client):
    for code, needle in (("x = '\0'", "NUL"), ("'\ud800'", "not valid Unicode")):
        with pytest.raises(pyfence.PyfenceError, match=needle) as e:
            client.exec(code)
        assert e.value.code == "bad_request"
    assert client.exec("'ok'").output == "ok"


def test_reply_timeout_against_the_daemon(daemon):
    """A reply later than reply_timeout: the wait raises timeout and the connection is closed
    (the daemon drops its job with it); one in time is unaffected; the daemon serves on."""
    with pyfence.Client(daemon.socket_path, reply_timeout=10) as c:
        assert c.exec("1 + 1").output == 2
    with pyfence.Client(daemon.socket_path, reply_timeout=0.5) as c:
        with pytest.raises(pyfence.PyfenceError, match="reply_timeout") as e:
            c.exec("import time\ntime.sleep(3)\n'late'", timeout=10)
        assert e.value.code == "timeout"
        with pytest.raises(pyfence.PyfenceError, match="reply_timeout"):
            c.ping()
    daemon.assert_serving()
