"""pyfenced's hardening options: --uid-range (the workers' identities), --cgroup and
--namespaces (degraded runs): bad values are refused with a message naming the option, good
ones reach the zygote."""

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from conftest import PYFENCED, descendants, require_binary


def run_pyfenced(*args):
    return subprocess.run([require_binary(PYFENCED), *args], capture_output=True, text=True,
                          timeout=30)


@pytest.mark.parametrize("arg,message", [
    ("600000", "is not START:COUNT"),
    ("600000:", "is not START:COUNT"),
    ("a:b", "is not START:COUNT"),
    ("600000:64x", "is not START:COUNT"),
    ("-5:10", "is not START:COUNT"),
    ("600000:0", "COUNT 0 is not in 1.."),
    ("1000:10", "START 1000 is below 65536"),
    ("0:65536", "START 0 is below 65536"),
    ("4294967200:1000", "ends past the largest uid"),
])
def test_uid_range_refused(arg, message):
    r = run_pyfenced("--uid-range", arg)
    assert r.returncode == 1 and message in r.stderr and "--uid-range" in r.stderr, r


@pytest.mark.parametrize("opt,value", [("--cgroup", "v3"), ("--cgroup", ""),
                                       ("--namespaces", "maybe")])
def test_degraded_options_refused(opt, value):
    r = run_pyfenced(opt, value)
    assert r.returncode == 1 and opt in r.stderr and repr(value) in r.stderr.replace('"', "'"), r


def test_help_lists_the_options():
    out = run_pyfenced("--help").stdout
    for opt in ("--uid-range START:COUNT", "--cgroup MODE", "--namespaces on|off"):
        assert opt in out, out
    # The limits' options come from the limits table, whose sentences are long: wrapped.
    assert "--max-queued-per-uid N" in out and "(default 1024, range 0..1048576)" in out, out
    assert "--max-connections-per-uid N" in out and "(default 128, range 1..65536)" in out, out
    assert ("--max-bytes-per-uid N" in out
            and "(default 268435456, range 1048576..68719476736)" in out), out
    assert not [line for line in out.splitlines() if len(line) > 80], out


def test_every_limit_option_is_documented():
    """Each limit option --help prints (from the limits table) is in README's synopsis of
    pyfenced and in pyfenced(8)."""
    out = run_pyfenced("--help").stdout
    flags = re.findall(r"^  (--[a-z-]+) N\b", out, re.M)
    assert "--max-connections-per-uid" in flags and "--max-bytes-per-uid" in flags, flags
    repo = Path(__file__).resolve().parents[2]
    readme = (repo / "README.md").read_text()
    start = readme.index("`pyfenced [--socket PATH]")
    synopsis = readme[start:readme.index("`pyfenced --check`", start)]
    man = (repo / "docs" / "pyfenced.8.scd").read_text()
    for flag in flags:
        assert f"[{flag} N]" in synopsis, (flag, synopsis)
        assert f"*{flag}* _N_" in man, flag


def worker_uids(daemon):
    """Uids of the zygote's children (the workers) now alive."""
    out = set()
    for p in descendants(daemon.pid):
        try:
            status = open(f"/proc/{p}/status").read()
        except OSError:
            continue
        if "pyfence-zygote" in open(f"/proc/{p}/cmdline").read() and \
                int(re.search(r"PPid:\t(\d+)", status).group(1)) != daemon.pid:
            out.add(int(re.search(r"Uid:\t(\d+)", status).group(1)))
    return out


@pytest.mark.skipif(os.geteuid() != 0, reason="workers take the range's ids only when pyfenced is root")
def test_uid_range_reaches_the_workers(daemon_factory):
    base = 800000 + (os.getpid() % 1000) * 16
    d = daemon_factory("--uid-range", f"{base}:4")
    assert f"worker ids from {base}" in d.logs(), d.logs()
    with d.client() as c:
        rids = [c.submit("import time\ntime.sleep(3)") for _ in range(2)]
        deadline = time.monotonic() + 10
        uids = set()
        while len(uids & set(range(base, base + 4))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
            uids = worker_uids(d)
        assert len(uids & set(range(base, base + 4))) >= 2, (uids, d.logs())
        assert uids <= set(range(base, base + 4)), uids
        for rid in rids:
            assert c.wait(rid).ok


def raw_mode_build():
    config = os.path.join(os.environ.get("PYFENCE_BUILD_ROOT", ""), "config.h")
    try:
        return "#define PYFENCE_RAW_MODE 1" in open(config).read()
    except OSError:
        return False


def test_raw_field_only_in_raw_builds(daemon_factory):
    """"raw" (native CPython, tests/security) exists only in -Draw_mode=true test builds."""
    d = daemon_factory()
    with d.client() as c:
        r = c.wait_reply(c.submit_request("exec", code="import os\nos.getpid()", raw=True))
    if raw_mode_build():
        assert r["ok"] and r["outcome"] == "ok", r
    else:
        assert not r["ok"] and r["error"]["code"] == "bad_request", r
        assert "raw" in r["error"]["message"], r
