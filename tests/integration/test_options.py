"""pyfenced's hardening options: --uid-range (the workers' identities), --cgroup and
--namespaces (degraded runs): bad values are refused with a message naming the option, good
ones reach the zygote."""

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from conftest import PYFENCED, REPO, descendants, own_uid_range, require_binary, run_cli


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
    synopsis = readme[start:readme.index("`man pyfenced`", start)]
    man = (repo / "docs" / "pyfenced.8.scd").read_text()
    for flag in flags:
        assert f"[{flag} N]" in synopsis, (flag, synopsis)
        assert f"*{flag}* _N_" in man, flag


def limits_table():
    """{name: scope} of every limit, from the limits-table program (policy/policy_limits.c's
    table, as pyfence-profile(5) prints it)."""
    prog = os.path.join(os.environ.get("PYFENCE_BUILD_ROOT") or str(REPO / "build"), "policy",
                        "pyfence-limits-table")
    out = subprocess.run([require_binary(prog)], capture_output=True, text=True,
                         check=True).stdout
    rows = re.findall(r"^\|  ([a-z_]+)\n:  ([a-z]+)$", out, re.M)
    assert len(rows) > 10, out
    return dict(rows)


def test_every_daemon_limit_has_its_option():
    """README and pyfence-profile(5): daemon-wide limits are options of pyfenced, named after
    them (max_outbuf_bytes: --max-outbuf-bytes)."""
    daemon_limits = [n for n, scope in limits_table().items() if scope == "daemon"]
    assert "max_outbuf_bytes" in daemon_limits and "conn_idle_timeout_ms" in daemon_limits
    out = run_pyfenced("--help").stdout
    for name in daemon_limits:
        assert re.search(rf"^  --{name.replace('_', '-')} N\b", out, re.M), (name, out)


def test_new_limit_options_reach_the_daemon(daemon_factory):
    d = daemon_factory("--max-outbuf-bytes", "65536", "--conn-idle-timeout-ms", "7000")
    with d.client() as c:
        limits = c.hello()["limits"]
    assert limits["max_outbuf_bytes"] == 65536 and limits["conn_idle_timeout_ms"] == 7000, limits


def test_idle_timeout_ms_is_still_accepted(daemon_factory):
    d = daemon_factory("--idle-timeout-ms", "8000")
    with d.client() as c:
        assert c.hello()["limits"]["conn_idle_timeout_ms"] == 8000


@pytest.mark.parametrize("args,message", [
    (["--max-outbuf-bytes", "1000"], "1000 is below minimum 65536"),
    (["--conn-idle-timeout-ms", "x"], "--conn-idle-timeout-ms: 'x' is not an integer"),
])
def test_new_limit_options_refuse_bad_values(args, message):
    r = run_pyfenced(*args)
    assert r.returncode == 1 and message in r.stderr, r


# ---- --check and --check-policy ---------------------------------------------------------------

AUDITED = ["--uid-range", "1000000:10", "--cgroup", "none", "--namespaces", "off"]


@pytest.mark.parametrize("args", [AUDITED + ["--check"], ["--check"] + AUDITED,
                                  AUDITED[:2] + ["--check"] + AUDITED[2:]])
def test_check_audits_the_options_given(args):
    """--check audits what pyfenced would run with, not the defaults, wherever it stands."""
    r = run_pyfenced(*args)
    assert r.stdout.startswith("pyfence host check"), r
    assert "\ncgroup:      none (asked for by configuration)\n" in r.stdout, r.stdout
    assert "\nnamespaces:  off (--namespaces off" in r.stdout, r.stdout
    assert "workers as uid/gid 1000000..1000009 " in r.stdout, r.stdout
    assert "600000" not in r.stdout, r.stdout


def test_check_with_the_defaults():
    r = run_pyfenced("--check")
    assert "workers as uid/gid 600000..665535 " in r.stdout, r.stdout
    assert "(asked for by configuration)" not in r.stdout and "namespaces:  off" not in r.stdout


def test_check_of_an_unusable_cgroup_mode_fails():
    """A --cgroup backend this host cannot give would stop pyfenced at start-up: --check says
    so and exits 1."""
    chosen = re.search(r"^cgroup:      (\S+)", run_pyfenced("--check").stdout, re.M).group(1)
    if chosen == "v2":
        pytest.skip("this host gives cgroup v2: no mode is known to be unusable")
    # auto chose v1 or none: v2 is unusable here.
    r = run_pyfenced("--cgroup", "v2", "--check")
    assert r.returncode == 1 and "cgroup mode 'v2' was asked for but" in r.stdout, r
    assert "result:      the cgroup backend asked for CANNOT be used" in r.stdout, r


@pytest.mark.parametrize("args,message", [
    (["--check", "--bogus"], "unrecognized option '--bogus'"),
    (["--check", "--uid-range", "1000:10"], "START 1000 is below 65536"),
    (["--check", "extra"], "unexpected argument 'extra'"),
    (["--check-policy", str(REPO / "policy" / "profiles"), "--bogus"],
     "unrecognized option '--bogus'"),
    (["--check-policy", str(REPO / "policy" / "profiles"), "--cgroup", "v3"], "--cgroup: 'v3'"),
    (["--check", "--check-policy", str(REPO / "policy" / "profiles")], "two runs, not one"),
])
def test_check_refuses_bad_options(args, message):
    """A bad option fails --check and --check-policy as it fails a start: nothing is audited."""
    r = run_pyfenced(*args)
    assert r.returncode == 1 and r.stdout == "" and message in r.stderr, r


def test_check_policy_prints_one_json_document():
    """One JSON object by profile name: json.tool and jq read it."""
    r = run_pyfenced("--check-policy", str(REPO / "policy" / "profiles"))
    assert r.returncode == 0, r.stderr
    profiles = json.loads(r.stdout)
    assert sorted(profiles) == ["data", "default", "strict"], list(profiles)
    assert all(p["name"] == name for name, p in profiles.items())
    assert "3 profiles in" in r.stderr


# ---- every option is documented ----------------------------------------------------------------

def getopt_long_names(*sources):
    """The long options of the getopt tables in these source files."""
    names = set()
    for src in sources:
        text = (REPO / src).read_text()
        names |= set(re.findall(r'\{"([a-z][a-z-]*)", (?:no|required)_argument, NULL,', text))
    assert names, sources
    return names


def test_every_pyfenced_option_is_in_help_and_man_page():
    names = getopt_long_names("daemon/main.c")
    assert {"check", "check-policy", "zygote", "keep-groups", "max-outbuf-bytes"} <= names
    out = run_pyfenced("--help").stdout
    man = (REPO / "docs" / "pyfenced.8.scd").read_text()
    for name in sorted(names):
        assert re.search(rf"(^  |also )--{name}\b", out, re.M), (name, out)
        assert f"*--{name}*" in man, name


def test_readme_synopsis_of_pyfenced_lists_every_option():
    names = getopt_long_names("daemon/main.c") - {"idle-timeout-ms"}  # its former name
    readme = (REPO / "README.md").read_text()
    start = readme.index("`pyfenced [--socket PATH]")
    synopsis = readme[start:readme.index("`man pyfenced`", start)]
    for name in sorted(names):
        assert f"--{name}" in synopsis, (name, synopsis)


def test_every_pyfence_option_and_command_is_in_help_and_man_page():
    names = getopt_long_names("client/pyfence.c", "client/cli_session.c")
    assert {"socket", "code", "session", "json", "version"} <= names
    man = (REPO / "docs" / "pyfence.1.scd").read_text()
    helps = "".join(run_cli(*args).stdout for args in (["--help"], ["help", "exec"],
                                                       ["help", "session"], ["help", "status"]))
    shorts = {"socket": "s", "code": "c", "profile": "p", "timeout": "t", "import": "i",
              "json": "j", "session": "S", "version": "V", "help": "h"}
    for name in sorted(names):
        assert f"--{name}" in helps, name
        assert f"*--{name}*" in man, name
        short = shorts[name]
        assert f"-{short}, --{name}" in helps, name
        assert f"*-{short}*, *--{name}*" in man, name
    for command in ("exec", "session", "ping", "status", "help"):
        assert re.search(rf"^\*pyfence\* .*\*{command}[* ]", man, re.M), command


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


@pytest.mark.skipif(os.geteuid() != 0, reason="workers take the range's ids only when pyfenced is root")
def test_each_test_daemon_has_its_own_uid_range(daemon_factory):
    """conftest gives every daemon it starts a range of its own (two suites at once must not
    hand out the same worker uids), unless the test chose one."""
    bases = []
    for _ in range(2):
        d = daemon_factory()  # one at a time: the factory's daemons share a socket path
        m = re.search(r"worker ids from (\d+)", d.logs())
        assert m, d.logs()
        bases.append(int(m.group(1)))
        assert d.uid_range and int(d.uid_range.split(":")[0]) == bases[-1], (d.uid_range, bases)
        d.stop()
    assert bases[0] != bases[1] and 600000 not in bases, bases
    count = int(d.uid_range.split(":")[1])
    assert abs(bases[0] - bases[1]) >= count, bases
    # Another test process gets other ranges.
    other = {own_uid_range(os.getpid() + 1) for _ in range(16)}
    mine = {own_uid_range() for _ in range(16)}
    assert not other & mine and len(mine) == 16, (other, mine)


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
