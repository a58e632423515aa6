"""The pyfence CLI and libpyfence against the emulating fake server: argument handling, output
printing and the exit-status contract, for every outcome (the real daemon cannot easily be
made to produce some of them, e.g. seccomp_violation)."""

import json
import os
import pwd
import re
import shutil
import socket
import subprocess

import pytest

from conftest import LIBCLIENT_E2E, PYFENCE_CLI, require_binary, run_cli
from fakeserver import emulate


@pytest.fixture
def srv(fake):
    return fake(emulate)


def test_exec_c_prints_output_then_repr(srv):
    r = run_cli("exec", "-c", "print('hi')\n6 * 7", socket_path=srv.path)
    assert (r.returncode, r.stdout, r.stderr) == (0, "hi\n42\n", "")
    req = srv.requests[-1]
    assert req["op"] == "exec" and req["stream"] is True and "limits" not in req


def test_exec_none_result_prints_only_output(srv):
    r = run_cli("exec", "-c", "x = 1\nprint(x)", socket_path=srv.path)
    assert (r.returncode, r.stdout) == (0, "1\n")


def test_exec_file_and_stdin(srv, tmpdir_short):
    f = tmpdir_short / "snippet.py"
    f.write_text("print('from file')\n'done'")
    r = run_cli("exec", str(f), socket_path=srv.path)
    assert (r.returncode, r.stdout) == (0, "from file\n'done'\n")
    r = run_cli("exec", "-", socket_path=srv.path, input="2 ** 10")
    assert (r.returncode, r.stdout) == (0, "1024\n")
    r = run_cli("exec", socket_path=srv.path, input="3")
    assert (r.returncode, r.stdout) == (0, "3\n")


def test_exec_options_reach_the_request(srv):
    r = run_cli("exec", "--timeout", "0.2", "--import", "numpy", "-i", "pkg.*", "-c", "1",
                socket_path=srv.path)
    assert r.returncode == 0, r.stderr
    req = srv.requests[-1]
    assert req["limits"] == {"timeout_ms": 200} and req["imports"] == ["numpy", "pkg.*"]


def test_exec_json(srv):
    r = run_cli("exec", "--json", "-c", "print('x')\n[1, 2]", socket_path=srv.path)
    assert r.returncode == 0
    reply = json.loads(r.stdout)
    assert reply["ok"] and reply["logs"] == "x\n" and reply["output_repr"] == "[1, 2]"
    assert srv.requests[-1]["stream"] is False


def test_exec_json_subnormals_shortest(srv):
    # A subnormal has fewer digits than a normal double: 5e-324, not 4.94065645841247e-324.
    for text, longer in (("5e-324", "4.94065645841247e-324"), ("-1e-310", "-9.99999999999997e-311")):
        r = run_cli("exec", "--json", "-c", text, socket_path=srv.path)
        assert r.returncode == 0, r.stderr
        assert longer not in r.stdout, r.stdout
        assert re.search(rf'"output":\s*{text},', r.stdout), r.stdout
        assert json.loads(r.stdout)["output"] == float(text)


def test_snippet_error_exit_1(srv):
    r = run_cli("exec", "-c", "1/0", socket_path=srv.path)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("Code execution failed at line '1/0' due to: ZeroDivisionError")


@pytest.mark.parametrize("outcome,status", [
    ("error", 1), ("worker_crashed", 1), ("seccomp_violation", 1),
    ("timeout", 3), ("cpu_limit", 3), ("memory_limit", 3), ("pids_limit", 3), ("output_limit", 3),
    ("bad_request", 2), ("busy", 2), ("shutting_down", 2), ("internal", 2),
    ("hardening_unavailable", 4),
])
def test_exit_status_per_outcome(srv, outcome, status):
    r = run_cli("exec", "-c", f"#outcome:{outcome}", socket_path=srv.path)
    assert r.returncode == status, (outcome, r.stderr)
    assert "the %s message" % outcome in r.stderr
    assert r.stdout == "partial\n"  # what the snippet printed before it stopped
    if outcome != "error":
        assert r.stderr.startswith(f"pyfence: {outcome}: ")


def test_usage_errors_exit_2(srv):
    for args in (["exec", "-c", "1", "extra"], ["exec", "--timeout", "abc", "-c", "1"],
                 ["exec", "--timeout", "0", "-c", "1"], ["nope"], [], ["exec", "--bogus"],
                 ["exec", "/nonexistent/file.py"], ["status", "extra"]):
        r = run_cli(*args, socket_path=srv.path)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert r.stderr, args


def test_exec_options_after_the_file(srv, tmpdir_short):
    """README's `pyfence exec snippet.py --timeout 5 --import json`: options may follow the
    file (and come between -c and its neighbours); `--` ends them."""
    f = tmpdir_short / "snippet.py"
    f.write_text("6 * 7")
    r = run_cli("exec", str(f), "--timeout", "5", "--import", "json", socket_path=srv.path)
    assert (r.returncode, r.stdout, r.stderr) == (0, "42\n", "")
    req = srv.requests[-1]
    assert req["code"] == "6 * 7" and req["limits"] == {"timeout_ms": 5000}
    assert req["imports"] == ["json"]
    r = run_cli("exec", "-", "-j", socket_path=srv.path, input="2 + 2")
    assert r.returncode == 0 and json.loads(r.stdout)["output_repr"] == "4"
    dashed = tmpdir_short / "-t.py"
    dashed.write_text("3")
    r = run_cli("exec", "-i", "json", "--", str(dashed.name), socket_path=srv.path,
                cwd=tmpdir_short)
    assert (r.returncode, r.stdout) == (0, "3\n"), r.stderr
    assert srv.requests[-1]["imports"] == ["json"]


@pytest.mark.parametrize("args,first", [
    (["exec", "a.py", "b.py", "c.py"], "b.py"),
    (["exec", "a.py", "--json", "b.py", "c.py"], "b.py"),
    (["exec", "-c", "1", "x.py", "y.py"], "x.py"),
    (["exec", "x.py", "-c", "1"], "x.py"),
    (["ping", "one", "two"], "one"),
    (["status", "one", "--json", "two"], "one"),
    (["session", "open", "one", "-p", "x", "two"], "one"),
    (["session", "list", "one", "two", "three"], "one"),
    (["session", "close", "ID", "two", "three"], "two"),
    (["help", "exec", "two", "three"], "two"),
])
def test_usage_error_names_the_first_unexpected_argument(tmpdir_short, args, first):
    # Parsing comes before connecting: no daemon needed.
    r = run_cli(*args, socket_path=tmpdir_short / "absent.sock")
    assert r.returncode == 2, (args, r.stderr)
    line = r.stderr.splitlines()[0]
    assert line.startswith("pyfence: ") and f"'{first}'" in line, (args, r.stderr)


def test_options_after_arguments_in_every_command(tmpdir_short):
    """--help anywhere in a command's arguments shows its help (it is parsed as an option, not
    taken for an argument)."""
    for args in (["exec", "x.py", "--help"], ["status", "--json", "--help"], ["ping", "-h"],
                 ["session", "open", "--help"], ["session", "get", "ID", "n", "--help"],
                 ["session", "list", "--json", "-h"], ["session", "close", "ID", "--help"]):
        r = run_cli(*args, socket_path=tmpdir_short / "absent.sock")
        assert r.returncode == 0 and r.stdout.startswith("Usage: pyfence"), (args, r.stderr)


def test_connection_error_exit_2(tmpdir_short):
    r = run_cli("exec", "-c", "1", socket_path=tmpdir_short / "absent.sock")
    assert r.returncode == 2
    assert "absent.sock" in r.stderr and "No such file" in r.stderr
    r = run_cli("ping", socket_path=tmpdir_short / "absent.sock")
    assert r.returncode == 2


def test_connection_error_hints_at_naming_the_socket(tmpdir_short):
    env = {k: v for k, v in os.environ.items() if k != "PYFENCE_SOCKET"}
    env["XDG_RUNTIME_DIR"] = str(tmpdir_short)
    r = subprocess.run([require_binary(PYFENCE_CLI), "ping"], capture_output=True, text=True,
                       env=env, timeout=30)
    assert r.returncode == 2 and "cannot connect" in r.stderr, r.stderr
    if not os.path.exists(SYSTEM_SOCKET):
        assert "hint: name the daemon's socket with PYFENCE_SOCKET=PATH" in r.stderr, r.stderr


SYSTEM_SOCKET = "/run/pyfence/pyfence.sock"


@pytest.fixture
def system_socket():
    """A listening /run/pyfence/pyfence.sock, root's with mode 0660 as pyfenced.socket makes
    it (its group root here), for this test only."""
    if os.geteuid() != 0:
        pytest.skip("needs root to make /run/pyfence")
    if os.path.exists("/run/pyfence"):
        pytest.skip("/run/pyfence exists: a real pyfenced may be installed")
    os.mkdir("/run/pyfence", 0o755)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(SYSTEM_SOCKET)
        os.chmod(SYSTEM_SOCKET, 0o660)
        s.listen()
        yield SYSTEM_SOCKET
    finally:
        s.close()
        shutil.rmtree("/run/pyfence")


def test_connection_error_points_a_user_at_the_system_socket(system_socket, tmpdir_short):
    """After a systemd install a user's default socket ($XDG_RUNTIME_DIR) is not the system's:
    the error says which to export, and who may use it."""
    nobody = pwd.getpwnam("nobody").pw_uid
    os.chmod(tmpdir_short, 0o755)
    cli = require_binary(PYFENCE_CLI)
    env = {"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": str(tmpdir_short)}
    r = subprocess.run([cli, "ping"], capture_output=True, text=True, env=env, timeout=30,
                       user=nobody, group=nobody, extra_groups=[])
    assert r.returncode == 2 and f"{tmpdir_short}/pyfence.sock" in r.stderr, r.stderr
    assert f"hint: the system's pyfenced listens on {system_socket}: export " \
        f"PYFENCE_SOCKET={system_socket}" in r.stderr, r.stderr
    # Told so, but not in group pyfence: the socket's mode keeps it out, and the hint says why.
    env["PYFENCE_SOCKET"] = system_socket
    r = subprocess.run([cli, "ping"], capture_output=True, text=True, env=env, timeout=30,
                       user=nobody, group=nobody, extra_groups=[])
    assert r.returncode == 2 and "Permission denied" in r.stderr, r.stderr
    assert "members of group pyfence" in r.stderr and "usermod -aG pyfence" in r.stderr, r.stderr


def test_socket_from_environment(srv):
    cmd = [require_binary(run_cli.__globals__["PYFENCE_CLI"]), "exec", "-c", "5"]
    r = subprocess.run(cmd, capture_output=True, text=True, env={"PYFENCE_SOCKET": srv.path})
    assert (r.returncode, r.stdout) == (0, "5\n")


def test_ping_and_status(srv):
    r = run_cli("ping", socket_path=srv.path)
    assert r.returncode == 0 and r.stdout.startswith("pong from pyfenced at ")
    r = run_cli("status", socket_path=srv.path)
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0] == f"pyfenced 0.1.0 at {srv.path}"
    assert "uptime         0d 01h 02m 03s" in r.stdout
    assert "connections    2" in r.stdout and "jobs total     13" in r.stdout
    # jobs.running counts live worker processes, idle ones included: not "jobs running".
    assert "live workers   1" in r.stdout and "jobs running" not in r.stdout
    assert "zygote pid     4242 (restarts 0)" in r.stdout
    # the counts in one column, however long the longest outcome's name
    assert lines[5:8] == ["    ok                    10", "    timeout               2",
                          "    hardening_unavailable 1"], lines
    r = run_cli("status", "--json", socket_path=srv.path)
    assert r.returncode == 0 and json.loads(r.stdout)["jobs"]["by_outcome"] == \
        {"ok": 10, "timeout": 2, "hardening_unavailable": 1}


def test_help_and_version():
    r = run_cli("--help")
    assert r.returncode == 0 and "exec [-c CODE | FILE | -]" in r.stdout and "Exit status" in r.stdout
    r = run_cli("--version")
    assert r.returncode == 0 and r.stdout.startswith("pyfence 0.1.0")
    for args in (["exec", "--help"], ["help", "exec"]):
        r = run_cli(*args)
        assert r.returncode == 0 and r.stdout.startswith("Usage: pyfence exec"), args
    r = run_cli("help", "status")
    assert r.returncode == 0 and "--json" in r.stdout


def test_libpyfence_against_fake(srv):
    r = subprocess.run([require_binary(LIBCLIENT_E2E), srv.path], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_nul_byte_in_the_snippet_is_refused(srv, tmpdir_short):
    """The code goes on as a C string: a NUL used to cut it silently (only `print(1)` ran and
    the exit status was 0). Refused as an input error naming its offset; nothing is sent."""
    sent = len(srv.requests)
    r = run_cli("exec", socket_path=srv.path, input="print(1)\n\0print(2)\n")
    assert (r.returncode, r.stdout) == (2, ""), r
    assert "stdin has a NUL byte at offset 9" in r.stderr, r.stderr
    f = tmpdir_short / "nul.py"
    f.write_bytes(b"\0")
    r = run_cli("exec", str(f), socket_path=srv.path)
    assert r.returncode == 2 and f"{f} has a NUL byte at offset 0" in r.stderr, r
    assert len(srv.requests) == sent


def run_cli_on_a_terminal(*args, socket_path):
    """Runs the CLI with stdout and stderr on one pseudo-terminal; returns (status, text)."""
    import pty
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen([require_binary(PYFENCE_CLI), "--socket", str(socket_path), *args],
                             stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
        os.close(slave)
        slave = -1
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the last writer closed
                break
            if not data:
                break
            chunks.append(data)
        return p.wait(timeout=60), b"".join(chunks).decode()
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)


def test_error_starts_its_own_line_on_a_terminal(srv):
    status, text = run_cli_on_a_terminal("exec", "-c", "print('abc', end='')\n1/0",
                                         socket_path=srv.path)
    assert status == 1, text
    assert text.startswith("abc\r\nCode execution failed"), repr(text)
    # Not on a terminal, the output is left exactly as the snippet made it.
    r = run_cli("exec", "-c", "print('abc', end='')\n1/0", socket_path=srv.path)
    assert r.stdout == "abc" and r.stderr.startswith("Code execution failed"), r
