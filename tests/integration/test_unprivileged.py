"""pyfenced run by a user that is not root (DESIGN.md, hardening layer 2: "user namespace when
the daemon is not root"). Each zygote then makes a user namespace of its own, mapping the
daemon's uid and gid alone, and makes the workers' namespaces inside it: the workers get the same
empty network namespace, pid namespace of their own, read-only view and private /tmp as under
root, and an empty capability bounding set. They keep the daemon's uid (no other is mapped) and
get no /proc (the kernel mounts one in a user namespace only where one is fully visible).

The checks look at the warm pool's idle workers from outside: they are hardened before any
request, exactly as the worker of the next job will be."""

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import (PYFENCED, Daemon, as_uid, descendants, require_binary,
                      settled_family, wait_for)

NOBODY = 65534


def host_ns(kind):
    return os.readlink(f"/proc/self/ns/{kind}")


def status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            out[key] = value.split()
    return out


USERNS_REFUSED = Path(__file__).resolve().parent / "userns_refused.py"


@contextlib.contextmanager
def unprivileged_binaries():
    """(top, copies): copies of pyfenced and the zygote in a directory uid 65534 can reach (the
    checkout may sit below a directory only root may enter), removed afterwards."""
    if os.geteuid() != 0:
        pytest.skip("needs root to start pyfenced as another uid")
    pyfenced = require_binary(PYFENCED)
    zygote = os.environ.get("PYFENCE_ZYGOTE") or str(Path(pyfenced).parent / "worker" / "pyfence-zygote")
    top = Path(tempfile.mkdtemp(prefix="pf-u-"))
    try:
        top.chmod(0o755)
        bindir = top / "bin"
        bindir.mkdir(mode=0o755)
        copies = (str(bindir / "pyfenced"), str(bindir / "pyfence-zygote"))
        shutil.copy2(pyfenced, copies[0])
        shutil.copy2(zygote, copies[1])
        yield top, copies
    finally:
        shutil.rmtree(top, ignore_errors=True)


@contextlib.contextmanager
def unprivileged_daemon(extra_args=(), profiles=None, groups=(), no_userns=False):
    """pyfenced as uid 65534 (unprivileged_binaries); profiles: {name: profile} for a --policy
    directory instead of the built-in profiles; no_userns: where the kernel refuses it any user
    namespace (userns_refused.py)."""
    with unprivileged_binaries() as (top, copies):
        bindir = Path(copies[0]).parent
        run = top / "run"
        run.mkdir(mode=0o755)
        os.chown(run, NOBODY, NOBODY)
        args = list(extra_args)
        if profiles:
            policy = top / "policy"
            policy.mkdir(mode=0o755)
            for name, profile in profiles.items():
                (policy / f"{name}.json").write_text(json.dumps(profile))
            args += ["--policy", str(policy)]
        if no_userns:
            wrapper = bindir / "pyfenced-no-userns"
            wrapper.write_text(f"#!/bin/sh\nexec /usr/bin/python3 {USERNS_REFUSED} {NOBODY} "
                               f"{copies[0]} \"$@\"\n")
            wrapper.chmod(0o755)
            d = Daemon(run, args, binaries=(str(wrapper), copies[1]))
        else:
            d = Daemon(run, args, binaries=copies, user=NOBODY, groups=groups)
        try:
            yield d
        finally:
            if d.proc.returncode is None:
                d.stop()


@pytest.fixture
def unprivileged():
    with unprivileged_daemon() as d:
        yield d


def idle_workers(d):
    assert settled_family(d), d.logs()
    with d.client() as c:
        zygote = c.stats()["zygote"]
    zygotes = {zygote["pid"], zygote.get("preload_pid")}
    workers = [p for p in descendants(d.pid) if p not in zygotes]
    assert workers, "the warm pools hold no worker to look at"
    # A pool worker hardens itself after its fork, seccomp last: look once it is done.
    assert wait_for(lambda: all(status(w).get("Seccomp") == ["2"] for w in workers)), \
        [status(w) for w in workers]
    return workers


def test_jobs_run(unprivileged):
    with unprivileged.client() as c:
        r = c.exec("import math\nprint('up')\nmath.sqrt(16)")
    assert r.ok, (r, unprivileged.logs())
    assert r.output == 4.0 and r.logs == "up\n", r.reply
    logs = unprivileged.logs()
    assert ("not root: in a user namespace of the zygote's own, network namespace ready; "
            "mount view ready") in logs, logs
    assert "will fail per job" not in logs, logs
    # Not dumpable from start-up on, the zygote still laid out its memory through /proc/self/mem.
    assert "cannot read /proc/self/maps or write /proc/self/mem" not in logs, logs
    assert f"worker ids the daemon's, {NOBODY} (not root)" in logs, logs


def test_workers_get_their_namespaces_in_a_user_namespace(unprivileged):
    workers = idle_workers(unprivileged)
    pid_namespaces = set()
    for w in workers:
        for kind in ("user", "net", "pid", "mnt", "ipc", "uts"):
            assert os.readlink(f"/proc/{w}/ns/{kind}") != host_ns(kind), (w, kind)
        pid_namespaces.add(os.readlink(f"/proc/{w}/ns/pid"))
        # The init of its own pid namespace.
        assert status(w)["NSpid"][-1] == "1", status(w)["NSpid"]
        # The network namespace is the empty one: a loopback interface only, down.
        with open(f"/proc/{w}/net/dev") as f:
            interfaces = [line.split(":")[0].strip() for line in f.readlines()[2:]]
        assert interfaces == ["lo"], interfaces
    assert len(pid_namespaces) == len(workers), "two workers share a pid namespace"


def test_workers_see_the_view_and_a_private_tmp(unprivileged):
    for w in idle_workers(unprivileged):
        root = f"/proc/{w}/root"
        names = set(os.listdir(root))
        assert {"usr", "etc", "dev", "tmp", "proc"} <= names, names
        assert not names & {"home", "root", "var", "run", "srv", "opt"}, names
        assert sorted(os.listdir(f"{root}/dev")) == ["fd", "null", "stderr", "stdin", "stdout",
                                                       "urandom", "zero"]
        assert os.listdir(f"{root}/proc") == []
        with open(f"/proc/{w}/mountinfo") as f:
            tmp = [line for line in f if line.split()[4] == "/tmp"]
        assert tmp and " - tmpfs pyfence-scratch " in tmp[-1], tmp


def test_workers_drop_every_capability_in_it(unprivileged):
    for w in idle_workers(unprivileged):
        st = status(w)
        assert st["Uid"] == [str(NOBODY)] * 4 and st["Gid"] == [str(NOBODY)] * 4, st
        for caps in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
            assert int(st[caps][0], 16) == 0, (caps, st[caps])
        assert st["NoNewPrivs"] == ["1"] and st["Seccomp"] == ["2"], st


def open_mem(pid):
    try:
        with open(f"/proc/{pid}/mem", "rb"):
            return "opened"
    except PermissionError:
        return "refused"


def test_daemon_and_zygotes_not_dumpable(unprivileged):
    """A process of the daemon's uid (a worker without namespaces) cannot read or write the
    memory of pyfenced, which holds every client's requests, or of a zygote, which every later
    worker is forked from: both are not dumpable, their /proc files root's."""
    with unprivileged.client() as c:
        zygote = c.stats()["zygote"]
    pids = [unprivileged.pid] + [p for p in (zygote["pid"], zygote.get("preload_pid")) if p]
    for pid in pids:
        assert status(pid)["Uid"] == [str(NOBODY)] * 4, status(pid)
        assert os.stat(f"/proc/{pid}/mem").st_uid == 0, pid
        assert as_uid(NOBODY, open_mem, pid) == "refused", pid
    # Another process of that uid, dumpable, is open to it: the check above is not vacuous.
    other = subprocess.Popen(["sleep", "30"], user=NOBODY, group=NOBODY, extra_groups=[])
    try:
        assert as_uid(NOBODY, open_mem, other.pid) == "opened"
    finally:
        other.kill()
        other.wait()


def profile(name, namespaces=None):
    p = {"name": name, "access": {"everyone": True}}
    if namespaces:
        p["hardening"] = {"namespaces": namespaces}
    return p


def only_idle_workers_left(d, c):
    """No worker busy, and every process below pyfenced a zygote or an idle pool worker. (Not
    settled_family: the warm pools of refused profiles never fill, their workers are refused.)"""
    st = c.stats()
    zygotes = {st["zygote"]["pid"], st["zygote"].get("preload_pid")}
    workers = [p for p in descendants(d.pid) if p not in zygotes]
    return st["workers"]["busy"] == 0 and len(workers) == st["workers"]["idle"]


def test_namespaces_required_without_root():
    """Without root, a worker without namespaces would run as the daemon's uid in the host's
    mount and pid namespaces: the layer is required unless the profile sets it off, so with
    --namespaces off the jobs of a best-effort profile (the built-in default) are refused, with a
    message naming the layer and what to do, and pyfenced says so at start-up. A profile that
    sets it off is the operator accepting that: its jobs run, and pyfenced warns about it."""
    profiles = {"default": profile("default", "best-effort"),
                "bare": profile("bare", "off"),
                "implicit": profile("implicit")}
    with unprivileged_daemon(["--namespaces", "off"], profiles) as d:
        logs = d.logs()
        assert "--namespaces off WITHOUT ROOT: EVERY JOB OF A PROFILE THAT DOES NOT SET" in logs, logs
        assert ("profile 'bare' sets \"namespaces\": \"off\" and pyfenced is not root: ITS "
                f"WORKERS RUN AS UID {NOBODY}") in logs, logs
        assert "profile 'default' sets" not in logs, logs
        with d.client() as c:
            for name in ("default", "implicit"):
                r = c.exec("1 + 1", profile=name)
                # Not internal: the host (here, pyfenced's option) is what to change.
                assert r.outcome == "hardening_unavailable" and not r.ok, (name, r.reply)
                assert r.error["code"] == "hardening_unavailable", r.error
                message = r.error["message"]
                assert message.startswith(f"profile '{name}': hardening layer 'namespaces' is "
                                          "required and this host cannot give it"), r.error
                assert "pyfenced runs with --namespaces off" in message, r.error
                assert '"namespaces": "off" in the profile' in message, r.error
                # Raising best-effort to required is what refused it: that advice would not do.
                assert '"best-effort"' not in message, r.error
            r = c.exec("1 + 1", profile="bare")
            assert r.ok and r.output == 2, (r.reply, d.logs())
            jobs = c.stats()["jobs"]
            assert jobs["by_outcome"].get("hardening_unavailable") == 2, jobs
        # The CLI: its own exit status, and the message on stderr.
        p = d.cli("exec", "--profile", "implicit", "-c", "print('must not run')")
        assert p.returncode == 4, (p.returncode, p.stdout, p.stderr)
        assert "must not run" not in p.stdout, p.stdout
        assert p.stderr.startswith("pyfence: hardening_unavailable: profile 'implicit': "
                                   "hardening layer 'namespaces'"), p.stderr
        status = d.cli("status")
        assert re.search(r"^ +hardening_unavailable +3$", status.stdout, re.M), status.stdout
        # So is a session of such a profile: it never gets a worker.
        p = d.cli("session", "open", "--profile", "default")
        assert p.returncode == 4, (p.returncode, p.stdout, p.stderr)
        assert "profile 'default': hardening layer 'namespaces'" in p.stderr, p.stderr
        # Nothing is left running for the refused jobs: no worker is busy, and every process
        # below pyfenced is a zygote or an idle pool worker (the bare profile's).
        with d.client() as c:
            assert wait_for(lambda: only_idle_workers_left(d, c)), (c.stats()["workers"],
                                                                       descendants(d.pid))


def test_kernel_refuses_the_user_namespace():
    """The real path: the kernel refuses the zygote its user namespace (run inside a user
    namespace whose user.max_user_namespaces is 0, as a host that turned unprivileged user
    namespaces off would). pyfenced starts, says why at start-up, refuses the jobs of every
    profile that does not set the layer off with hardening_unavailable naming the kernel's
    answer, and runs the jobs of one that does."""
    profiles = {"default": profile("default"), "bare": profile("bare", "off")}
    with unprivileged_daemon(profiles=profiles, no_userns=True) as d:
        assert wait_for(lambda: "the namespaces layer will fail per job" in d.logs()), d.logs()
        assert "unshare(CLONE_NEWUSER) as uid 65534" in d.logs(), d.logs()
        with d.client() as c:
            r = c.exec("print('must not run')")
            assert r.outcome == "hardening_unavailable" and not r.ok, (r.reply, d.logs())
            message = r.error["message"]
            assert message.startswith("profile 'default': hardening layer 'namespaces' is "
                                      "required and this host cannot give it: namespaces: "
                                      "unavailable ("), message
            assert "No space left on device" in message, message
            assert "let it make user namespaces" in message, message
            assert r.logs == "", r.logs
            r = c.exec("1 + 1", profile="bare")
            assert r.ok and r.output == 2, (r.reply, d.logs())
            assert c.stats()["jobs"]["by_outcome"] == {"ok": 1, "hardening_unavailable": 1}
            assert wait_for(lambda: only_idle_workers_left(d, c)), c.stats()["workers"]
        p = d.cli("exec", "-c", "1")
        assert p.returncode == 4, (p.returncode, p.stdout, p.stderr)
        assert "hardening layer 'namespaces'" in p.stderr, p.stderr
        # Here the zygote refuses the fork (no pid namespace without a user namespace): a
        # session's worker is refused the same way.
        p = d.cli("session", "open")
        assert p.returncode == 4, (p.returncode, p.stdout, p.stderr)
        assert p.stderr.startswith("pyfence: session.open refused: profile 'default': "
                                   "hardening layer 'namespaces' "
                                   "is required"), p.stderr


def test_namespaces_stay_best_effort_as_root(tmp_path):
    """Under root the workers get uids of their own: best-effort stays best-effort."""
    if os.geteuid() != 0:
        pytest.skip("needs root")
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "default.json").write_text(json.dumps(profile("default",
                                                                         "best-effort")))
    d = Daemon(tmp_path, ["--namespaces", "off", "--policy", str(tmp_path / "policy")])
    try:
        with d.client() as c:
            r = c.exec("1 + 1")
        assert r.ok and r.output == 2, (r.reply, d.logs())
        assert "WITHOUT ROOT" not in d.logs()
    finally:
        d.stop()


def test_supplementary_groups_refused_without_root():
    """Without root the workers cannot drop the daemon's supplementary groups (its zygotes' user
    namespaces deny setgroups): pyfenced refuses to start with any, unless --keep-groups, which
    it then warns about, and the workers do keep them on the host."""
    group = 4  # adm on Debian: any gid but the daemon's own
    with pytest.raises(AssertionError) as refused:
        with unprivileged_daemon(groups=[group]):
            pass
    message = str(refused.value)
    assert "exited early with 1" in message, message
    assert f"running as uid {NOBODY}, not root, with supplementary groups {group}:" in message
    assert "--keep-groups" in message and "setpriv --clear-groups" in message, message
    with unprivileged_daemon(["--keep-groups"], groups=[group]) as d:
        assert f"EVERY WORKER KEEPS THE SUPPLEMENTARY GROUPS {group} of uid {NOBODY}" in d.logs()
        for w in idle_workers(d):
            assert status(w)["Groups"] == [str(group)], status(w)
    # The daemon's own gid among its groups is no supplementary group: it starts.
    with unprivileged_daemon(groups=[NOBODY]) as d:
        assert "supplementary groups" not in d.logs(), d.logs()


@pytest.mark.parametrize("keep", [False, True])
def test_check_says_whether_supplementary_groups_stop_the_start(keep):
    """`pyfenced --check` without root and with a supplementary group says what a start would do:
    refuse (exit 1) without --keep-groups; with it, that every worker keeps the group."""
    group = 4
    with unprivileged_binaries() as (_, copies):
        r = subprocess.run([copies[0], "--check"] + (["--keep-groups"] if keep else []),
                           user=NOBODY, group=NOBODY, extra_groups=[group], capture_output=True,
                           text=True, timeout=60)
    line = re.search(r"^groups: +(.*)$", r.stdout, re.M)
    assert line, r
    if keep:
        assert line[1].startswith(f"{group}, KEPT BY EVERY WORKER (--keep-groups"), r.stdout
        assert "the supplementary groups CANNOT be dropped" not in r.stdout, r.stdout
    else:
        assert line[1].startswith(f"{group} CANNOT BE DROPPED without root"), r.stdout
        assert r.returncode == 1, r
        assert "result:      the supplementary groups CANNOT be dropped: pyfenced would not " \
            "start" in r.stdout, r.stdout
