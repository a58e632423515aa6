"""libpyfence end to end against the real pyfenced (tests/integration/libclient_e2e.c)."""

import subprocess

from conftest import LIBCLIENT_E2E, require_binary


def test_libpyfence_end_to_end(daemon):
    r = subprocess.run([require_binary(LIBCLIENT_E2E), daemon.socket_path], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr + daemon.logs()
    daemon.assert_serving()
