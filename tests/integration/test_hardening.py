"""A profile that requires a hardening layer this host cannot give: the job is refused with
outcome hardening_unavailable (PROTOCOL.md, "Error codes"), never internal, root or not. As root
the cases are made with pyfenced's own options: --cgroup none (no cgroup to join) and
--namespaces off (no namespaces to enter), against profiles that set those layers "required".
The unprivileged cases are in test_unprivileged.py."""

import json
import os
import re

import pytest

from conftest import Daemon, descendants, wait_for


def profile(name, **hardening):
    p = {"name": name, "access": {"everyone": True}}
    if hardening:
        p["hardening"] = hardening
    return p


@pytest.fixture
def degraded(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root: the unprivileged cases are in test_unprivileged.py")
    policy = tmp_path / "policy"
    policy.mkdir()
    for p in (profile("default"), profile("cg", cgroup="required"),
              profile("ns", namespaces="required")):
        (policy / f"{p['name']}.json").write_text(json.dumps(p))
    d = Daemon(tmp_path, ["--cgroup", "none", "--namespaces", "off", "--policy", str(policy)])
    try:
        yield d
    finally:
        if d.proc.returncode is None:
            d.stop()


def only_idle_workers_left(d, c):
    """No worker busy, and every process below pyfenced a zygote or an idle pool worker (not
    settled_family: the warm pools of refused profiles never fill)."""
    st = c.stats()
    zygotes = {st["zygote"]["pid"], st["zygote"].get("preload_pid")}
    workers = [p for p in descendants(d.pid) if p not in zygotes]
    return st["workers"]["busy"] == 0 and len(workers) == st["workers"]["idle"]


@pytest.mark.parametrize("name,layer,cause", [
    ("cg", "cgroup", "no cgroup can be written on this host (backend none"),
    ("ns", "namespaces", "pyfenced runs with --namespaces off"),
])
def test_required_layer_unavailable_as_root(degraded, name, layer, cause):
    with degraded.client() as c:
        r = c.exec("print('must not run')", profile=name)
        assert r.outcome == "hardening_unavailable" and not r.ok, (r.reply, degraded.logs())
        assert r.error["code"] == "hardening_unavailable", r.error
        assert r.logs == "", r.logs
        message = r.error["message"]
        assert message.startswith(f"profile '{name}': hardening layer '{layer}' is required and "
                                  "this host cannot give it: "), message
        assert cause in message, message
        assert "`pyfenced --check`" in message and '"best-effort"' in message, message
        assert "as root" not in message, message
        # The profile that does not require it still runs, on the same daemon.
        r = c.exec("6 * 7")
        assert r.ok and r.output == 42, r.reply
        assert c.stats()["jobs"]["by_outcome"] == {"ok": 1, "hardening_unavailable": 1}
        # Its worker and slot went back: nothing runs for the refused job.
        assert wait_for(lambda: only_idle_workers_left(degraded, c)), c.stats()["workers"]


def test_cli_exit_status_and_status_line(degraded):
    p = degraded.cli("exec", "--profile", "cg", "-c", "print('must not run')")
    assert p.returncode == 4, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == "", p.stdout
    assert p.stderr.startswith("pyfence: hardening_unavailable: profile 'cg': hardening layer "
                               "'cgroup' is required"), p.stderr
    p = degraded.cli("exec", "--json", "--profile", "ns", "-c", "1")
    assert p.returncode == 4, (p.returncode, p.stdout, p.stderr)
    assert json.loads(p.stdout)["outcome"] == "hardening_unavailable", p.stdout
    # A session of such a profile never gets a worker either.
    p = degraded.cli("session", "open", "--profile", "ns")
    assert p.returncode == 4, (p.returncode, p.stdout, p.stderr)
    assert "profile 'ns': hardening layer 'namespaces' is required" in p.stderr, p.stderr
    status = degraded.cli("status")
    assert status.returncode == 0, status.stderr
    assert re.search(r"^ +hardening_unavailable +2$", status.stdout, re.M), status.stdout
    with degraded.client() as c:
        assert wait_for(lambda: only_idle_workers_left(degraded, c)), c.stats()["workers"]
