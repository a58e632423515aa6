"""Outcomes that come from the worker's cgroup, through the real pyfenced: an OOM kill is
memory_limit, the cgroup's numbers join the reply's stats. In ASan builds the address-space
rlimit is skipped (its shadow memory reserves terabytes), so there the memory limit holds
through the cgroup alone, and these tests skip, saying why, only when there is no cgroup."""

import re

import pytest

from conftest import PYFENCED, is_asan_build

ASAN = is_asan_build(PYFENCED)


def cgroup_backend(daemon):
    m = re.search(r"cgroup backend: (\w+)", daemon.logs())
    assert m, f"the zygote did not say which cgroup backend it chose:\n{daemon.logs()}"
    return m.group(1)


def need_memory_limit(daemon):
    """The memory limit holds through RLIMIT_AS, or under ASan through the cgroup only."""
    if ASAN and cgroup_backend(daemon) == "none":
        pytest.skip("AddressSanitizer build without a cgroup backend: RLIMIT_AS is skipped under "
                    "ASan and no cgroup holds the memory limit")


@pytest.fixture
def client(daemon):
    with daemon.client() as c:
        yield c


@pytest.mark.parametrize("code", [
    "x = 'a' * 10**10",
    "l = []\nfor i in range(10**8):\n    l.append('x' * 100000)",
    "b = bytearray(200 * 1024 * 1024)\nb[::4096] = b'x' * len(b[::4096])",
])
def test_memory_bomb_is_memory_limit(daemon, client, code):
    need_memory_limit(daemon)
    r = client.exec(code, limits={"memory_mb": 128, "timeout_ms": 20000})
    assert r.outcome == "memory_limit" and not r.ok, (r, r.error, daemon.logs()[-2000:])
    daemon.assert_serving()


def test_stats_carry_the_cgroup_numbers(daemon, client):
    if cgroup_backend(daemon) == "none":
        pytest.skip("no cgroup backend on this machine: replies carry no cgroup numbers")
    # A failed job's reply waits for the worker's exit, which carries the cgroup's numbers.
    r = client.exec("t = 0\nfor i in range(300000):\n    t += i\nraise ValueError(t)")
    assert r.outcome == "error", r.error
    assert r.stats["cgroup_cpu_ms"] >= 1, r.stats
    assert r.stats.get("peak_memory_kb", 1) > 0, r.stats
    r = client.exec("x = 'a' * 10**10", limits={"memory_mb": 128})
    assert r.outcome == "memory_limit" and "cgroup_cpu_ms" in r.stats, (r, r.stats)
    # An ok reply goes out as soon as the result arrives (PROTOCOL.md): with them only when
    # the exit happened to be read first.
    r = client.exec("1 + 1")
    assert r.ok and r.stats.get("cgroup_cpu_ms", 0) >= 0, (r, r.stats)


def test_c_stack_overflow_is_worker_crashed_saying_why(daemon, client):
    """CPython hashes a nested tuple by recursing in C with no depth check (README,
    Limitations): the worker's C stack overflows. The job ends worker_crashed with the likely
    cause, and the daemon goes on. (Under ASan its own handler reports and aborts instead.)"""
    r = client.exec("t = ()\nfor _ in range(300000):\n    t = (t,)\nhash(t)")
    assert r.outcome == "worker_crashed", (r, r.error)
    if not ASAN:
        assert "SIGSEGV" in r.error["message"] and "C stack" in r.error["message"], r.error
    assert client.exec("1 + 1").output == 2
    daemon.assert_serving()


def test_library_writes_to_stdout_are_printed_output(daemon, client):
    """The worker's sys.stdout and sys.stderr are the executor's own (daemon/executor/stdio.c,
    installed before the zygote preloads): what pprint writes is in the logs and the output
    events, like print, and the stream pprint holds has nothing to close."""
    events = []
    r = client.exec(
        "import pprint\n"
        "pprint.pprint({'k': [1, 2]})\n"
        "s = pprint.PrettyPrinter()._stream\n"
        "print(hasattr(s, 'close'), hasattr(s, 'buffer'))",
        imports=["pprint"],
        on_output=events.append,
    )
    assert r.ok, (r, r.error)
    assert r.logs == "{'k': [1, 2]}\nFalse False\n", r.logs
    assert "".join(events) == r.logs, events
