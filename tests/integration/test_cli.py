"""The pyfence CLI against the real pyfenced: inputs, output, --json, --import, --timeout, ping,
status, Ctrl-C during an exec or a session open and the exit-status contract (0 ok, 1 snippet error,
2 usage/connection, 3 limit, 130 cancelled by Ctrl-C)."""

import json
import os
import re
import signal
import subprocess
import time

from conftest import PYFENCE_CLI, REPO, require_binary, run_cli


def test_exec_c(daemon):
    r = daemon.cli("exec", "-c", "print('hello')\nsum(range(10))")
    assert (r.returncode, r.stdout, r.stderr) == (0, "hello\n45\n", "")


def test_exec_result_none_prints_nothing_more(daemon):
    r = daemon.cli("exec", "-c", "x = 2\nprint(x)")
    assert (r.returncode, r.stdout) == (0, "2\n")


def test_exec_file_and_stdin(daemon, tmpdir_short):
    f = tmpdir_short / "s.py"
    f.write_text("import math\nprint('pi', round(math.pi, 3))\nmath.floor(2.5)\n")
    r = daemon.cli("exec", str(f))
    assert (r.returncode, r.stdout) == (0, "pi 3.142\n2\n")
    r = daemon.cli("exec", "-", input="'a' * 3")
    assert (r.returncode, r.stdout) == (0, "'aaa'\n")


def test_exec_json(daemon):
    r = daemon.cli("exec", "--json", "-c", "print('x')\n(1, 2)")
    assert r.returncode == 0
    reply = json.loads(r.stdout)
    assert reply["ok"] is True and reply["outcome"] == "ok" and reply["logs"] == "x\n"
    assert reply["output"] == {"$type": "tuple", "items": [1, 2]} and reply["output_repr"] == "(1, 2)"
    assert reply["stats"]["ops"] > 0


def test_exec_import(daemon):
    r = daemon.cli("exec", "-c", "import json\njson.dumps({'a': 1})")
    assert r.returncode == 1 and "Import of json is not allowed" in r.stderr
    r = daemon.cli("exec", "--import", "json", "-c", "import json\njson.dumps({'a': 1})")
    assert (r.returncode, r.stdout) == (0, "'{\"a\": 1}'\n"), r.stderr


def test_exec_snippet_error_exit_1(daemon):
    r = daemon.cli("exec", "-c", "print('before')\n1 / 0")
    assert r.returncode == 1 and r.stdout == "before\n"
    assert r.stderr == "Code execution failed at line '1 / 0' due to: ZeroDivisionError: division by zero\n"


def test_exec_policy_refusal_exit_1(daemon):
    r = daemon.cli("exec", "-c", "import os")
    assert r.returncode == 1 and "Import of os is not allowed" in r.stderr


def test_exec_timeout_exit_3(daemon):
    r = daemon.cli("exec", "--timeout", "0.2", "-c", "for i in range(10**12): sorted(range(1000))")
    assert r.returncode == 3, r.stderr
    assert r.stderr.startswith("pyfence: timeout: ")
    daemon.assert_serving()


# Slow per operation, so no operation or iteration budget ends it before the cancel does.
LOOP = "print('started')\nfor i in range(10**12):\n    sorted(range(1000))"


def interrupt_exec(daemon, *args, running=None):
    """Starts `pyfence exec ARGS`, waits until its snippet runs (by default: for its first line
    of output), sends SIGINT as Ctrl-C does; returns (exit status, stdout, stderr)."""
    p = subprocess.Popen([require_binary(PYFENCE_CLI), "--socket", daemon.socket_path, "exec", *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = running() if running else p.stdout.readline()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        p.kill()
        p.wait()
    return p.returncode, (first or "") + out, err


def job_started(daemon, total_before):
    """Waits until a job more than total_before got a worker (the tests of a module run one at a
    time, so it is the exec just started)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with daemon.client() as c:
            if c.stats()["jobs"]["total"] > total_before:
                return
        time.sleep(0.01)
    raise AssertionError("the exec never started")


def test_ctrl_c_cancels_the_exec_exit_130(daemon):
    code, out, err = interrupt_exec(daemon, "-c", LOOP)
    assert (code, out) == (130, "started\n"), err
    assert err.startswith("pyfence: cancelled: ") and "Code execution was cancelled" in err, err
    with daemon.client() as c:
        assert c.stats()["jobs"]["by_outcome"]["cancelled"] == 1
    daemon.assert_serving()


def test_ctrl_c_json_prints_the_cancelled_reply(daemon):
    with daemon.client() as c:
        total = c.stats()["jobs"]["total"]
    code, out, err = interrupt_exec(daemon, "--json", "-c", LOOP, running=lambda: job_started(daemon, total))
    reply = json.loads(out)
    # Without streaming there is no line to wait for: the cancel may reach the snippet before
    # its print does.
    assert code == 130 and reply["outcome"] == "cancelled", (out, err)
    assert reply["logs"] in ("", "started\n"), reply


def test_ctrl_c_in_a_session_keeps_its_state(daemon):
    sid = daemon.cli("session", "open").stdout.strip()
    assert daemon.cli("exec", "--session", sid, "-c", "x = 41").returncode == 0
    code, out, err = interrupt_exec(daemon, "--session", sid, "-c", "x += 1\n" + LOOP)
    assert (code, out) == (130, "started\n"), err
    r = daemon.cli("exec", "--session", sid, "-c", "x")
    assert (r.returncode, r.stdout) == (0, "42\n"), r.stderr
    assert daemon.cli("session", "close", sid).returncode == 0


def until(pred, what, timeout=30):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"never: {what}")
        time.sleep(0.02)


def test_ctrl_c_takes_back_a_waiting_session_open(daemon_factory):
    """The only worker is busy, so `session open` waits in the queue; Ctrl-C takes it back
    and says so: no session is left (the CLI opens detached ones, which nothing else would
    end), and the daemon goes on."""
    d = daemon_factory("--max-workers", "1")
    with d.client() as c:
        until(lambda: c.stats()["workers"]["live"] >= 1, "a worker")
        hold = c.submit(LOOP)
        until(lambda: c.stats()["workers"]["busy"] == 1, "the loop runs")
        p = subprocess.Popen([require_binary(PYFENCE_CLI), "--socket", d.socket_path, "session",
                              "open"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            until(lambda: c.stats()["queue"]["queued"] == 1, "the open waits in the queue")
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=30)
        finally:
            p.kill()
            p.wait()
        assert (p.returncode, out) == (130, ""), err
        assert err == "pyfence: cancelled: no session was opened\n", err
        assert c.stats()["queue"]["queued"] == 0
        assert c.cancel(hold)
        assert c.wait(hold).outcome == "cancelled"
        assert c.stats()["sessions"] == 0
    r = d.cli("session", "list", "--json")
    assert (r.returncode, json.loads(r.stdout)) == (0, []), r.stderr
    d.assert_serving()


def test_session_open_with_stdout_closed_closes_the_session(daemon):
    """An id that cannot be written (the reader is gone) would leave a detached session nobody
    can use or close: the CLI closes it and says so."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        r = subprocess.run([require_binary(PYFENCE_CLI), "--socket", daemon.socket_path, "session",
                            "open"], stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=30)
    finally:
        os.close(write_end)
    assert r.returncode == 2, r.stderr
    assert r.stderr == "pyfence: could not write the session id (Broken pipe): the session was closed\n", r.stderr
    with daemon.client() as c:
        assert c.list_sessions() == []
    daemon.assert_serving()


def test_exec_loosening_timeout_exit_2(daemon):
    r = daemon.cli("exec", "--timeout", "86400", "-c", "1")
    assert r.returncode == 2 and "timeout_ms" in r.stderr, r.stderr


def test_connection_error_exit_2(tmpdir_short):
    r = run_cli("exec", "-c", "1", socket_path=tmpdir_short / "none.sock")
    assert r.returncode == 2 and "none.sock" in r.stderr


def test_ping(daemon):
    r = daemon.cli("ping")
    assert r.returncode == 0 and r.stdout.startswith(f"pong from pyfenced at {daemon.socket_path} in ")


def test_status(daemon):
    daemon.cli("exec", "-c", "1")
    r = daemon.cli("status")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"pyfenced 0.1.0 at {daemon.socket_path}\n")
    for label in ("uptime", "connections", "live workers", "jobs total", "    ok", "zygote pid"):
        assert label in r.stdout, (label, r.stdout)
    r = daemon.cli("status", "--json")
    stats = json.loads(r.stdout)
    assert r.returncode == 0 and stats["jobs"]["total"] >= 1 and stats["jobs"]["by_outcome"]["ok"] >= 1


def status_row(label, value):
    """A row of the status table as cli_status.c prints it: label in 14 columns, then value."""
    return f"  {label:<14} {value}"


def test_status_shows_a_known_state(daemon_factory, tmpdir_short):
    """After 3 ok jobs, 1 failing job and a detached session, every row of `pyfence status`
    (issue 5: uptime, connections, peers, sessions, workers idle/busy, pool fill per profile,
    queue depths, jobs by outcome, latency p50/p99, per-uid counters, last policy reload and
    the last reload's error) shows them, with the same numbers as `pyfence status --json`."""
    policy = tmpdir_short / "policy"
    policy.mkdir()
    for name in ("default", "strict"):
        shipped = REPO / "policy" / "profiles" / f"{name}.json"
        (policy / f"{name}.json").write_text(shipped.read_text())
    started_ms = time.time() * 1000
    d = daemon_factory("--policy", str(policy))
    uid = os.getuid()
    # Held open throughout: the uid stays known, so its counters add up across the CLI's
    # short connections.
    with d.client() as keep:
        for code in ("1", "print('two')", "3 * 3", "1 / 0"):
            assert d.cli("exec", "-c", code).returncode == (1 if code == "1 / 0" else 0)
        r = d.cli("session", "open")
        assert r.returncode == 0, r.stderr
        sid = r.stdout.strip()

        def settled():
            st = keep.stats()
            pool = st["pools"]["default"]
            # keep alone connected: the CLI's earlier connections are closed
            return (st["connections"] == 1 and st["workers"]["busy"] == 1
                    and pool["idle"] == pool["size"]
                    and st["queue"]["queued"] == st["queue"]["running"] == 0)

        until(settled, "one busy worker (the session's), the pool full, nothing queued")
        text = d.cli("status")
        r = d.cli("status", "--json")
    assert text.returncode == 0 and r.returncode == 0, (text.stderr, r.stderr)
    st = json.loads(r.stdout)
    rows = text.stdout.splitlines()

    # --json: the stats op's reply
    assert st["ok"] is True and 0 <= st["uptime_ms"] <= time.time() * 1000 - started_ms + 1000, st
    assert (st["connections"], st["peers"], st["sessions"]) == (2, 1, 1), st  # keep + status
    assert st["jobs"]["by_outcome"] == {"ok": 3, "error": 1}, st["jobs"]
    assert st["jobs"]["total"] == 4, st["jobs"]
    w, pool = st["workers"], st["pools"]["default"]
    assert w["busy"] == 1 and w["idle"] == pool["idle"] == pool["size"] == 2, (w, pool)
    assert w["live"] == w["idle"] + w["busy"] == st["jobs"]["running"], st
    assert pool["hits"] + pool["misses"] == 4, pool  # the 4 execs; the session forks its own
    assert list(st["pools"]) == ["default"], st["pools"]
    q = st["queue"]
    assert (q["queued"], q["running"]) == (0, 0) and q["max_queued"] > 0, q
    lat = st["latency"]
    # request-to-reply times of the ephemeral execs (the session.open is not an exec)
    assert lat["samples"] == 4, lat
    assert 0 < lat["p50_ms"] <= lat["p99_ms"] <= lat["max_ms"] < 30000, lat
    # the uid entry: both connections, the session, and the 4 execs plus the session.open
    # admitted while the uid was known
    # (bytes: pyfenced holds nothing for it; the stats reply being written is not counted
    # until it is sent, and the uid's earlier replies were read)
    assert st["uids"] == [{"uid": uid, "conns": 2, "sessions": 1, "jobs": 5, "queued": 0,
                           "running": 0, "bytes": 0}], st["uids"]
    assert (q["bytes"], q["max_connections_per_uid"], q["max_bytes_per_uid"], q["max_bytes"]) == \
        (0, 128, 268435456, 1073741824), q
    pol = st["policy"]
    assert pol["source"] == str(policy) and pol["profiles"] == ["default", "strict"], pol
    assert pol["reload_error"] is None, pol
    assert pol["last_reload"]["ok"] is True, pol
    assert started_ms - 1000 <= pol["last_reload"]["at"] <= time.time() * 1000, (started_ms, pol)

    # the table: the same numbers
    assert rows[0] == f"pyfenced {st['version']} at {d.socket_path}", rows
    up = re.fullmatch(r"  uptime         0d 00h (\d\d)m (\d\d)s", rows[1])
    assert up and int(up[1]) * 60 + int(up[2]) <= st["uptime_ms"] / 1000, rows[1]
    at = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(pol["last_reload"]["at"] / 1000))
    expected = [
        status_row("connections", 2),
        status_row("live workers", w["live"]),
        status_row("jobs total", 4),
        "    ok           3",
        "    error        1",
        status_row("peers (uids)", 1),
        status_row("sessions", 1),
        status_row("workers", f"{w['live']} live: 2 idle, 1 busy (max {w['max']}, "
                               f"{w['session_max']} for sessions, "
                               f"{w['session_max_per_uid']} of them per uid)"),
        status_row("queue", f"0 waiting, 0 running (max {q['max_queued']} waiting, "
                            f"{q['max_queued_per_uid']} per uid; {q['max_jobs_per_uid']} "
                            "running per uid)"),
        status_row("held", f"0 bytes (max {q['max_bytes']}; per uid: "
                           f"{q['max_connections_per_uid']} connections, "
                           f"{q['max_bytes_per_uid']} bytes)"),
        status_row("latency", f"p50 {lat['p50_ms']:.3f} ms, p99 {lat['p99_ms']:.3f} ms, "
                              f"max {lat['max_ms']:.3f} ms (last 4 replies)"),
        "  warm pools",
        "    profile       size  idle     hits   misses  spawned     held recycled   lost   lent",
        "    default          2     2 {hits:8} {misses:8} {spawned:8} {held:8} {recycled:8} "
        "{lost:6} {lent:6}".format(**pool),
        "  peers by uid",
        "    uid         conns  sessions      jobs  queued  running      bytes",
        f"    {uid:<10}      2         1         5       0        0          0",
        status_row("policy", f"{policy} (2 profiles), last (re)load {at} UTC"),
        status_row("zygote pid", f"{st['zygote']['pid']} (restarts 0)"),
    ]
    assert rows[2:] == expected, "\n".join(text.stdout.splitlines())

    # A reload that fails keeps the old policy, and status says when and why.
    strict = json.loads((policy / "strict.json").read_text())
    strict["limits"]["memory_mb"] = 9000
    (policy / "strict.json").write_text(json.dumps(strict))
    d.proc.send_signal(signal.SIGHUP)
    with d.client() as c:
        until(lambda: c.stats()["policy"]["reload_error"], "the failed reload")
    r = d.cli("status", "--json")
    failed = json.loads(r.stdout)["policy"]
    why = f"{policy}/strict.json: limits.memory_mb: 9000 exceeds maximum 4096"
    assert failed["reload_error"] == why and failed["last_reload"]["ok"] is False, failed
    assert failed["profiles"] == ["default", "strict"], failed
    assert failed["last_reload"]["at"] >= pol["last_reload"]["at"], failed
    at = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(failed["last_reload"]["at"] / 1000))
    rows = d.cli("status").stdout.splitlines()
    failed_row = status_row("policy", f"{policy} (2 profiles), last (re)load {at} UTC FAILED")
    assert failed_row in rows, rows
    assert status_row("reload error", why) in rows, rows
    # and a good one clears the error
    (policy / "strict.json").write_text((REPO / "policy" / "profiles" / "strict.json").read_text())
    d.proc.send_signal(signal.SIGHUP)
    with d.client() as c:
        until(lambda: c.stats()["policy"]["reload_error"] is None, "the good reload")
        assert c.stats()["policy"]["last_reload"]["ok"] is True
    rows = d.cli("status").stdout.splitlines()
    assert not any("FAILED" in row or "reload error" in row for row in rows), rows
    assert d.cli("session", "close", sid).returncode == 0


def test_example_hello(daemon):
    from conftest import REPO

    r = daemon.cli("exec", str(REPO / "examples" / "hello.py"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "hello from a pyfence worker" and lines[1].startswith("mean 4.30")
    assert lines[-1] == "{'mean': 4.3, 'hypot': 5.0, 'primes': [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]}"


def test_deep_result_reply_accepted(daemon):
    r = daemon.cli("exec", "-c", "x = {}\nfor i in range(100):\n    x = {1: x}\nx")
    assert r.returncode == 0 and r.stdout.startswith("{1: {1: {1: "), r.stderr
    r = daemon.cli("exec", "--json", "-c", "x = []\nfor i in range(1000):\n    x = [x]\nx")
    assert r.returncode == 0 and '"$type":\t"repr"' in r.stdout, r.stderr


def test_exec_latin1_file_is_refused_locally(daemon, tmpdir_short):
    f = tmpdir_short / "latin1.py"
    f.write_bytes("print('caf\u00e9')".encode("latin-1"))
    r = daemon.cli("exec", str(f))
    assert r.returncode == 2 and "not valid UTF-8" in r.stderr, r.stderr
