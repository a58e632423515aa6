"""An ephemeral exec that names a profile (`profile` of PROTOCOL.md's exec) against the real
pyfenced: it runs under that profile (its imports, builtins, limits and warm pool), a limit may
only tighten that profile's, a profile that does not exist and one the caller may not use are
answered alike, `profile` with a `session` is refused, and the CLI's `exec --profile`."""

import json
import os

import pytest

import pyfence
from conftest import REPO, as_uid, wait_for

PROFILES = REPO / "policy" / "profiles"
IMPORT_REFUSED = "Import of math is not allowed. Authorized imports are: []"
OTHER_UID = 1001  # the uid a root test run connects as, to be refused a profile


@pytest.fixture
def client(daemon):
    with daemon.client() as c:
        yield c


def shipped(name):
    return json.loads((PROFILES / f"{name}.json").read_text())


def write_policy(directory, *profiles):
    """A policy directory with the shipped default and strict profiles and these others."""
    directory.mkdir()
    for p in (shipped("default"), shipped("strict")) + profiles:
        (directory / f"{p['name']}.json").write_text(json.dumps(p))
    return directory


def exec_request(client, **fields):
    """An exec with exactly these request fields, as an ExecResult."""
    return client.wait(client.submit_request("exec", **fields))


# ---- the shipped profiles ------------------------------------------------------------------

def test_named_profile_sets_imports_and_builtins(client):
    """strict lists no import and removes print; the caller's default profile (not named, or
    named) lists math and keeps print."""
    r = client.exec("import math\nmath.floor(2.5)", profile="strict")
    assert r.outcome == "error" and IMPORT_REFUSED in r.error["message"], (r, r.error)
    r = client.exec("print('hi')", profile="strict")
    assert r.outcome == "error", (r, r.error)
    assert "Forbidden function evaluation: 'print'" in r.error["message"], r.error
    assert client.exec("sum(i * i for i in range(4))", profile="strict").output == 14
    for named in (None, "default"):
        r = client.exec("import math\nprint('hi')\nmath.floor(2.5)", profile=named)
        assert r.ok and (r.output, r.logs) == (2, "hi\n"), (named, r, r.error)
    # an import the request adds must be allowed by the named profile's extra_imports
    r = client.exec("import json", imports=["json"], profile="strict")
    assert r.outcome == "bad_request", (r, r.error)
    assert r.error["message"] == ("imports: 'json' is not allowed by profile 'strict' (see its "
                                  "extra_imports)"), r.error
    assert client.exec("import json\njson.dumps(1)", imports=["json"]).output == "1"


def test_named_profile_sets_limits(client):
    """strict's own limits apply (100,000 while iterations where the default profile allows
    1,000,000), and a request may tighten them but not loosen them, even to what the
    caller's default profile would allow."""
    loop = "i = 0\nwhile i < 200000:\n    i += 1\ni"
    assert client.exec(loop).output == 200000
    r = client.exec(loop, profile="strict")
    assert r.outcome == "error", (r, r.error)
    assert "Maximum number of 100000 iterations in While loop exceeded" in r.error["message"]

    r = client.exec("1", profile="strict", limits={"timeout_ms": 10000})
    assert r.outcome == "bad_request", (r, r.error)
    assert "timeout_ms: 10000 would loosen the profile's 5000" in r.error["message"], r.error
    r = client.exec("1", profile="strict", timeout=6)
    assert r.outcome == "bad_request" and "timeout_ms" in r.error["message"], (r, r.error)
    assert client.exec("1", limits={"timeout_ms": 10000}).ok  # the default profile: 30000
    r = client.exec("1", profile="strict", limits={"timeout_ms": 4000, "max_ops": 1000})
    assert r.ok and r.output == 1, (r, r.error)
    r = client.exec("t = 0\nfor i in range(5000):\n    t += i\nt", profile="strict",
                    limits={"max_ops": 1000})
    assert r.outcome == "error", (r, r.error)
    assert "Reached the max number of operations of 1000." in r.error["message"], r.error


def test_missing_profile_is_not_found(client):
    """exec answers a profile that does not exist as session.open does."""
    for op, fields in (("exec", {"code": "1"}), ("session.open", {})):
        reply = client.wait_reply(client.submit_request(op, profile="no-such-profile", **fields))
        assert reply["ok"] is False, reply
        assert reply["error"]["code"] == "not_found", reply
        assert reply["error"]["message"] == f"no profile 'no-such-profile' for uid {os.geteuid()}", \
            reply
    assert client.exec("1").ok  # the connection goes on


def test_profile_with_a_session_is_refused(client):
    """A session's profile was fixed by session.open: an exec in it may not name one, not even
    the session's own; the session is untouched by the refusal."""
    with client.open_session(profile="strict") as s:
        assert s.exec("x = 41").ok
        for name in ("strict", "default"):
            r = exec_request(client, code="x + 1", session=s.id, profile=name)
            assert r.outcome == "bad_request", (r, r.error)
            assert r.error["message"] == ("exec request: field 'profile' cannot be used with a "
                                          "session (it is set by session.open)"), r.error
        r = s.exec("x + 1")
        assert r.ok and r.output == 42, (r, r.error)
        assert s.exec("import math").outcome == "error"  # still strict


def test_empty_and_long_names_are_refused_by_the_schema(client):
    for name, why in (("", "string of 0 bytes is below minimum 1"),
                      ("p" * 65, "string of 65 bytes exceeds maximum 64")):
        r = exec_request(client, code="1", profile=name)
        assert r.outcome == "bad_request", (r, r.error)
        assert r.error["message"] == f"exec request: field 'profile': {why}", r.error


# ---- a policy of its own -------------------------------------------------------------------

def test_a_profile_the_caller_may_not_use_is_answered_like_a_missing_one(daemon_factory,
                                                                          tmpdir_short):
    """`private` is for one other uid only. The caller is told not_found with the message a
    profile that does not exist gets, by exec and by session.open alike; root may use any."""
    uid = OTHER_UID if os.geteuid() == 0 else os.geteuid()
    private = dict(shipped("default"), name="private", description="one uid's",
                   access={"uids": [uid + 1]})
    private["limits"].pop("pool_size")
    policy = write_policy(tmpdir_short / "policy", private)
    if os.geteuid() == 0:
        os.chmod(tmpdir_short, 0o755)
        d = daemon_factory("--policy", str(policy), "--socket-mode", "0666")
    else:
        d = daemon_factory("--policy", str(policy))

    def probe():
        out = {}
        with pyfence.Client(d.socket_path) as c:
            for name in ("private", "nonexistent"):
                r = c.exec("1", profile=name)
                out[f"exec {name}"] = [r.outcome, r.error["message"] if r.error else None]
                try:
                    c.open_session(profile=name).close()
                    out[f"open {name}"] = ["ok", None]
                except pyfence.PyfenceError as e:
                    out[f"open {name}"] = [e.code, e.message]
            out["own"] = c.exec("import math\nmath.floor(2.5)").output
        return out

    out = as_uid(uid, probe) if os.geteuid() == 0 else probe()
    for op in ("exec", "open"):
        assert out[f"{op} private"] == ["not_found", f"no profile 'private' for uid {uid}"], out
        assert out[f"{op} nonexistent"] == ["not_found",
                                            f"no profile 'nonexistent' for uid {uid}"], out
    assert out["own"] == 2, out
    if os.geteuid() == 0:
        with d.client() as c:  # the profile is there: root may use it
            r = c.exec("import math\nmath.floor(2.5)", profile="private")
            assert r.ok and r.output == 2, (r, r.error)


@pytest.mark.skipif(os.geteuid() != 0, reason="runs clients as another uid")
def test_stats_show_a_peer_its_own_uid_and_the_profiles_it_may_use(daemon_factory,
                                                                    tmpdir_short):
    """A profile a uid may not use is not_found for it: stats must not list it either (nor its
    pool), nor what other uids do; the daemon-wide counts stay. Root sees everything."""
    uid = OTHER_UID
    private = dict(shipped("default"), name="private", description="one uid's",
                   access={"uids": [uid + 1]})
    private["limits"]["pool_size"] = 1
    policy = write_policy(tmpdir_short / "policy", private)
    os.chmod(tmpdir_short, 0o755)
    d = daemon_factory("--policy", str(policy), "--socket-mode", "0666")

    def stats():
        with pyfence.Client(d.socket_path) as c:
            return c.stats()

    with d.client() as root:
        assert wait_for(lambda: root.stats()["pools"].get("private", {}).get("idle") == 1)
        mine = as_uid(uid, stats)
        assert "private" not in mine["policy"]["profiles"], mine["policy"]
        assert "default" in mine["policy"]["profiles"], mine["policy"]
        assert set(mine["pools"]) == {"default"}, mine["pools"]
        assert [u["uid"] for u in mine["uids"]] == [uid], mine["uids"]
        assert mine["connections"] == 2 and mine["peers"] == 2, mine
        everything = root.stats()
        assert "private" in everything["policy"]["profiles"], everything["policy"]
        assert {"default", "private"} <= set(everything["pools"]), everything["pools"]
        assert 0 in [u["uid"] for u in everything["uids"]], everything["uids"]
    out = as_uid(uid, lambda: d.cli("status").stdout)
    assert "private" not in out, out


@pytest.mark.skipif(os.geteuid() != 0, reason="runs clients as another uid")
def test_a_reload_that_revokes_a_profile_ends_its_sessions(daemon_factory, tmpdir_short):
    """A uid taken out of a profile's access by a reload loses the sessions it opened with that
    profile, detached ones included: told once why (session_lost), then gone. Its sessions of
    other profiles go on, and so do other uids' sessions of the same profile."""
    import signal

    uid = OTHER_UID
    private = dict(shipped("default"), name="private", description="one uid's",
                   access={"uids": [uid, uid + 1]})
    private["limits"].pop("pool_size")
    policy = write_policy(tmpdir_short / "policy", private)
    os.chmod(tmpdir_short, 0o755)
    d = daemon_factory("--policy", str(policy), "--socket-mode", "0666")

    def open_two():
        with pyfence.Client(d.socket_path) as c:
            ids = {}
            for name in ("private", "default"):
                s = c.open_session(profile=name, detach=True)
                assert s.exec(f"x = '{name}'").ok
                ids[name] = s.id
            return ids

    def use(ids):
        out = {}
        with pyfence.Client(d.socket_path) as c:
            for name, sid in ids.items():
                for attempt in ("first", "second"):
                    r = c.session(sid).exec("x")
                    out[f"{name} {attempt}"] = [r.outcome, r.output if r.ok else
                                                r.error["message"]]
        return out

    mine, other = as_uid(uid, open_two), as_uid(uid + 1, open_two)
    private["access"] = {"uids": [uid + 1]}
    (policy / "private.json").write_text(json.dumps(private))
    os.kill(d.pid, signal.SIGHUP)
    assert wait_for(lambda: "no longer lets it use profile 'private'" in d.logs()), d.logs()

    out = as_uid(uid, use, mine)
    why = (f"session '{mine['private']}' was lost: the reloaded policy no longer lets uid {uid} "
           "use profile 'private'; its worker was killed")
    assert out["private first"] == ["session_lost", why], out
    assert out["private second"] == ["not_found", f"no session '{mine['private']}'"], out
    assert out["default first"] == out["default second"] == ["ok", "default"], out
    out = as_uid(uid + 1, use, other)
    assert out["private first"] == out["private second"] == ["ok", "private"], out
    d.assert_serving()


def test_named_profile_uses_its_warm_pool(daemon_factory, tmpdir_short):
    """`warm` keeps a pool of its own, of workers hardened for its 512 MB (the default
    profile's are for 1024 MB, so they cannot stand in): an exec naming it takes one of those,
    and counts as a hit of its pool, not of the default profile's."""
    warm = dict(shipped("default"), name="warm", description="a pool of its own")
    warm["limits"].update(pool_size=1, memory_mb=512)
    d = daemon_factory("--policy", str(write_policy(tmpdir_short / "policy", warm)))

    def pools():
        with d.client() as c:
            return c.stats()["pools"]

    def full():
        p = pools()
        return all(name in p and p[name]["idle"] >= p[name]["size"] for name in ("default", "warm"))

    assert wait_for(full), pools()
    before = pools()
    assert before["warm"]["size"] == 1, before
    n = 4
    with d.client() as c:
        for i in range(n):
            r = c.exec(f"{i} * 2", profile="warm")
            assert r.ok and r.output == 2 * i, (r, r.error)
            assert wait_for(full), pools()
    after = pools()
    assert after["warm"]["hits"] - before["warm"]["hits"] == n, (before, after)
    assert after["warm"]["misses"] == before["warm"]["misses"], (before, after)
    assert after["default"]["hits"] == before["default"]["hits"], (before, after)
    # ... and one that names none takes the default profile's
    with d.client() as c:
        assert c.exec("1").ok
    assert wait_for(full), pools()
    last = pools()
    assert last["default"]["hits"] == after["default"]["hits"] + 1, (after, last)
    assert last["warm"]["hits"] == after["warm"]["hits"], (after, last)


def test_a_twin_profiles_pool_lends_its_workers(daemon_factory, tmpdir_short):
    """`twin` keeps no pool but is hardened exactly like the default profile: its execs take
    the default profile's idle workers, which that pool counts as lent, not as its own hits,
    so its idle count dropping is accounted for."""
    twin = dict(shipped("default"), name="twin", description="no pool of its own")
    twin["limits"] = dict(twin["limits"], pool_size=0)
    d = daemon_factory("--policy", str(write_policy(tmpdir_short / "policy", twin)))

    def pools():
        with d.client() as c:
            return c.stats()["pools"]

    def full():
        p = pools()["default"]
        return p["idle"] >= p["size"]

    assert wait_for(full), pools()
    before = pools()
    assert "twin" not in before and before["default"]["lent"] == 0, before
    n = 3
    with d.client() as c:
        for i in range(n):
            r = c.exec(f"{i} + 1", profile="twin")
            assert r.ok and r.output == i + 1, (r, r.error)
            assert wait_for(full), pools()
        assert c.exec("0").ok  # the default profile's own hit
        assert wait_for(full), pools()
    after = pools()
    assert "twin" not in after, after
    assert after["default"]["lent"] == n, (before, after)
    assert after["default"]["hits"] == before["default"]["hits"] + 1, (before, after)


# ---- the CLI -------------------------------------------------------------------------------

def test_cli_exec_profile(daemon):
    r = daemon.cli("exec", "--profile", "strict", "-c", "import math")
    assert r.returncode == 1, r
    assert IMPORT_REFUSED in r.stderr, r.stderr
    r = daemon.cli("exec", "-p", "strict", "-c", "sum(i * i for i in range(4))")
    assert (r.returncode, r.stdout) == (0, "14\n"), r.stderr
    r = daemon.cli("exec", "-c", "import math\nmath.floor(2.5)")  # the caller's default profile
    assert (r.returncode, r.stdout) == (0, "2\n"), r.stderr
    r = daemon.cli("exec", "--profile", "strict", "--timeout", "10", "-c", "1")
    assert r.returncode == 2, r
    assert "timeout_ms: 10000 would loosen the profile's 5000" in r.stderr, r.stderr
    r = daemon.cli("exec", "--profile", "no-such-profile", "-c", "1")
    assert r.returncode == 2, r
    assert "not_found: no profile 'no-such-profile' for uid" in r.stderr, r.stderr
    r = daemon.cli("exec", "--profile", "strict", "--json", "-c", "1")
    assert r.returncode == 0 and json.loads(r.stdout)["output"] == 1, r


def test_cli_exec_profile_with_a_session_is_a_usage_error(daemon):
    r = daemon.cli("session", "open")
    assert r.returncode == 0, r
    sid = r.stdout.strip()
    try:
        for flag in ("--profile", "-p"):
            r = daemon.cli("exec", "--session", sid, flag, "strict", "-c", "1")
            assert r.returncode == 2, r
            assert r.stdout == "", r.stdout
            assert r.stderr.startswith("pyfence: --profile, --import and --timeout are fixed "
                                       "when a session opens"), r.stderr
            assert "Usage: pyfence exec" in r.stderr, r.stderr
        r = daemon.cli("exec", "--session", sid, "-c", "1")
        assert (r.returncode, r.stdout) == (0, "1\n"), r.stderr
    finally:
        daemon.cli("session", "close", sid)


# ---- what a profile turns off is said at every load -----------------------------------------

WEAK = {"name": "weak", "imports": ["os"],
        "hardening": {"cgroup": "off", "namespaces": "off", "identity": "off",
                      "privileges": "off", "landlock": "off", "seccomp": "off"},
        "access": {"everyone": True}}


def weak_warnings():
    """The warning each layer set off in WEAK must give (policy/policy_warnings.c), as pyfenced
    runs as this test's uid: identity off changes nothing without root."""
    root = os.geteuid() == 0
    said = {layer: f"profile 'weak' sets \"{layer}\": \"off\": "
            for layer in ("cgroup", "landlock", "seccomp", "privileges")}
    said["cgroup"] += "ITS WORKERS GET NO CGROUP"
    said["landlock"] += "ITS WORKERS GET NO LANDLOCK RULESET"
    said["seccomp"] += "ITS WORKERS MAY MAKE EVERY SYSTEM CALL"
    if root:
        said["namespaces"] = ("profile 'weak' sets \"namespaces\": \"off\": ITS WORKERS SHARE "
                              "THE HOST'S MOUNT, PID, IPC, UTS AND NETWORK NAMESPACES")
        said["identity"] = ("profile 'weak' sets \"identity\": \"off\": pyfenced is root: ITS "
                            "WORKERS RUN AS ROOT (UID 0) ON THE HOST")
        said["privileges"] += "pyfenced is root and \"identity\" is \"off\" too: ITS WORKERS HOLD"
    else:
        said["namespaces"] = ("profile 'weak' sets \"namespaces\": \"off\" and pyfenced is not "
                              f"root: ITS WORKERS RUN AS UID {os.geteuid()}")
        said["privileges"] += "ITS WORKERS KEEP EVERY CAPABILITY OF THE ZYGOTE'S USER NAMESPACE"
    said["os"] = "profile 'weak' allows module 'os' (imports): its functions open, read or list"
    return said


def test_layers_off_are_warned_at_start_reload_and_check(daemon_factory, tmpdir_short):
    """The review's profile with every optional layer off loads (the operator chose it), but
    pyfenced says, per layer, what that means for its workers: at start, at each SIGHUP and in
    --check-policy's stderr. The shipped profiles give no warning."""
    import signal
    import subprocess

    from conftest import PYFENCED

    policy = write_policy(tmpdir_short / "policy", WEAK)
    said = weak_warnings()
    r = subprocess.run([PYFENCED, "--check-policy", str(policy)], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    for what, line in said.items():
        assert f"pyfenced: warning: {line}" in r.stderr, (what, r.stderr)
    assert f"({len(said)} warnings, as for a pyfenced running as uid {os.geteuid()})" in r.stderr
    assert r.stderr.count("warning: ") == len(said), r.stderr

    d = daemon_factory("--policy", str(policy))
    for what, line in said.items():
        assert d.logs().count(line) == 1, (what, d.logs())
    os.kill(d.pid, signal.SIGHUP)
    assert wait_for(lambda: d.logs().count(said["seccomp"]) == 2), d.logs()
    for what, line in said.items():
        assert wait_for(lambda: d.logs().count(line) == 2), (what, d.logs())
    d.assert_serving()

    # the shipped profiles, as a directory: nothing to say
    r = subprocess.run([PYFENCED, "--check-policy", str(PROFILES)], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0 and "warning" not in r.stderr.replace("0 warnings", ""), r.stderr
