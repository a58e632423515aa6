"""The README's first command, scripts/run, as a newcomer runs it: it starts pyfenced on
./run/pyfence.sock, submits examples/hello.py, keeps serving, and a Ctrl-C (or a SIGTERM to the
script) stops pyfenced gracefully, its last log lines ("stopping", "stopped") written to the
terminal and to run/pyfenced.log, nothing left running.

It builds and runs the checkout's plain build (build/), so it runs only from that build; as root,
so scripts/run starts pyfenced directly (through sudo it would ask for a password)."""

import os
import signal
import socket
import subprocess
import time

import pytest

from conftest import REPO, wait_for

RUN = REPO / "run"
SOCK = RUN / "pyfence.sock"
LOG = RUN / "pyfenced.log"
SERVING = "run: Ctrl-C stops it."

pytestmark = [
    pytest.mark.skipif(
        os.path.realpath(os.environ.get("PYFENCE_BUILD_ROOT", REPO / "build"))
        != os.path.realpath(REPO / "build"),
        reason="scripts/run builds and runs build/: only the plain build's suite runs it",
    ),
    pytest.mark.skipif(
        os.geteuid() != 0, reason="not root: scripts/run would ask sudo for a password"
    ),
]


def socket_in_use():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(str(SOCK))
        return True
    except OSError:
        return False
    finally:
        s.close()


@pytest.fixture
def quickstart(tmp_path):
    """scripts/run started in a session of its own (a terminal's foreground process group), its
    output (stdout and stderr, as a terminal shows them) in a file; yields (process, read)."""
    if socket_in_use():
        pytest.skip(f"{SOCK} is in use: a scripts/run of yours is serving there")
    out_path = tmp_path / "run.out"
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(
            ["bash", str(REPO / "scripts" / "run")],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def read():
        return out_path.read_text(errors="replace")

    try:
        yield proc, read
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        # Whatever the test did, pyfenced must not outlive it.
        subprocess.run(["pkill", "-KILL", "-f", f"pyfenced --socket {SOCK}"], check=False)


def pyfenced_pids():
    r = subprocess.run(["pgrep", "-f", f"pyfenced --socket {SOCK}"], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


def serving(proc, read):
    assert wait_for(lambda: SERVING in read() or proc.poll() is not None, timeout=240), read()
    assert proc.poll() is None, f"scripts/run exited ({proc.returncode}):\n{read()}"
    out = read()
    assert "hello from a pyfence worker" in out, out
    assert "'primes': [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]" in out, out
    pids = pyfenced_pids()
    assert len(pids) == 1, (pids, out)
    return pids[0]


def stopped(proc, read, pid, signal_name):
    try:
        rc = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"scripts/run still running 30 s after {signal_name}:\n{read()}")
    out = read()
    assert rc == 0, out
    # The log's tee outlives pyfenced: its last lines reach the terminal and the file.
    assert f"pyfenced[{pid}]: [main] {signal_name}: stopping" in out, out
    assert f"pyfenced[{pid}]: [main] stopped" in out, out
    assert f"pyfenced[{pid}]: [main] stopped" in LOG.read_text(errors="replace")
    assert "again while stopping" not in out, out
    assert wait_for(lambda: not pyfenced_pids(), timeout=5), pyfenced_pids()
    assert not os.path.exists(f"/proc/{pid}")


def test_ctrl_c_stops_pyfenced_gracefully(quickstart):
    proc, read = quickstart
    pid = serving(proc, read)
    # A terminal's Ctrl-C: SIGINT to the whole foreground process group (the script, pyfenced,
    # its zygotes, the log's tee).
    os.killpg(proc.pid, signal.SIGINT)
    stopped(proc, read, pid, "Interrupt")


def test_sigterm_to_the_script_alone_is_passed_on(quickstart):
    proc, read = quickstart
    pid = serving(proc, read)
    proc.send_signal(signal.SIGTERM)
    stopped(proc, read, pid, "Terminated")


def test_sigint_to_the_script_alone_ends_in_sigterm(quickstart):
    """Not a terminal's Ctrl-C: pyfenced never saw the SIGINT, and gets a SIGTERM once the
    script has waited for it to stop by itself."""
    proc, read = quickstart
    pid = serving(proc, read)
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    stopped(proc, read, pid, "Terminated")
    assert time.monotonic() - started >= 4.5, "the script did not wait for a Ctrl-C's own stop"
