"""Network egress: http_request() in a snippet, made by pyfenced where the profile's egress
rules allow it (daemon/egress.h, pyfence-profile(5)). A local HTTP server on 127.0.0.1 plays
the outside world; rules name it by IP literal, the one way a rule reaches a local address."""
import json
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import PYFENCED, REPO


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _answer(self):
        self.server.seen.append((self.command, self.path))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path.startswith("/api/gather"):
            try:  # no answer until every request the test sends has arrived
                self.server.barrier.wait(timeout=15)
            except threading.BrokenBarrierError:
                self.send_response(503)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        if self.path.startswith("/api/slow"):
            time.sleep(3)
        if self.path.startswith("/api/stall"):
            time.sleep(20)
        if self.path.startswith("/api/redirect"):
            self.send_response(302)
            self.send_header("Location", "/admin")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.startswith("/api/headers/"):  # /api/headers/N: N lines "X-Rep: vI"
            self.send_response(200)
            for i in range(int(self.path.rsplit("/", 1)[1])):
                self.send_header("X-Rep", f"v{i}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.startswith("/api/big"):
            out = b"x" * 5000
        else:
            out = json.dumps({"method": self.command, "path": self.path,
                              "body": body.decode("latin-1"),
                              "x_token": self.headers.get("X-Token")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Test", "yes")
        self.send_header("X-Name", "caf\xe9")  # ISO-8859-1 on the wire
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _answer


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.seen = []
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def policy_with(directory, egress, **limits):
    directory.mkdir()
    profile = json.loads((REPO / "policy" / "profiles" / "default.json").read_text())
    profile["egress"] = egress
    profile["limits"].update(limits)
    (directory / "default.json").write_text(json.dumps(profile))
    return directory


@pytest.fixture
def egress_daemon(daemon_factory, tmpdir_short, server):
    port = server.server_address[1]
    rules = [{"url": f"http://127.0.0.1:{port}/api/", "methods": ["GET", "HEAD", "POST"]}]
    policy = policy_with(tmpdir_short / "policy", rules, egress_max_bytes=1024,
                         egress_timeout_ms=1000, egress_max_requests=3)
    d = daemon_factory("--policy", str(policy))
    d.base = f"http://127.0.0.1:{port}/api/"
    d.port = port
    return d


def test_get_and_post_reach_the_server(egress_daemon, server):
    base = egress_daemon.base
    with egress_daemon.client() as c:
        r = c.exec(f"r = http_request('{base}hello?q=1')\n"
                   "(r['status'], r['headers']['x-test'], r['headers']['x-name'], r['body'])")
        assert r.ok, (r, r.error)
        status, xtest, xname, body = r.output
        assert (status, xtest, xname) == (200, "yes", "caf\xe9")
        assert json.loads(body) == {"method": "GET", "path": "/api/hello?q=1", "body": "",
                                    "x_token": None}
        r = c.exec(f"r = http_request('{base}items', method='POST', body=b'a\\x00b',\n"
                   "                 headers={'X-Token': 't1'})\n"
                   "r['body']")
        assert r.ok, (r, r.error)
        assert json.loads(r.output) == {"method": "POST", "path": "/api/items",
                                        "body": "a\x00b", "x_token": "t1"}
        r = c.exec(f"http_request('{base}h', method='HEAD')['body']")
        assert r.ok and r.output == b"", (r, r.error)
    assert ("GET", "/api/hello?q=1") in server.seen


@pytest.mark.parametrize("code,expect", [
    ("http_request(BASE.replace('/api/', '/admin'))", "matches no egress rule"),
    ("http_request(BASE + '../admin')", "matches no egress rule"),
    ("http_request(BASE + 'x', method='DELETE')", "matches no egress rule"),
    ("http_request('https://example.com/')", "matches no egress rule"),
    ("http_request(BASE + 'x', headers={'Host': 'example.com'})", "set by pyfence"),
])
def test_requests_outside_the_rules_are_refused(egress_daemon, server, code, expect):
    with egress_daemon.client() as c:
        r = c.exec(code, variables={"BASE": egress_daemon.base})
    assert r.outcome == "error", r
    assert "Forbidden network egress" in r.error["message"] and expect in r.error["message"], r
    assert server.seen == []


def test_localhost_rules_are_refused_at_load(daemon_factory, tmpdir_short, server):
    """A rule naming localhost (or a name under it) could never allow a request: pyfenced
    connects a named host to public addresses only and refuses these names unlooked-up (RFC
    6761). So the policy does not load, and says why. (That a name resolving to a non-public
    address is refused at request time is tests/unit/test_egress.c's.)"""
    port = server.server_address[1]
    for host in ("localhost", "api.localhost"):
        policy = policy_with(tmpdir_short / f"policy-{host}", [{"url": f"http://{host}:{port}/"}])
        r = subprocess.run([PYFENCED, "--check-policy", str(policy)], capture_output=True,
                           text=True, timeout=30)
        assert r.returncode == 1, r
        assert (f"default.json: egress[0].url: http://{host}:{port}/ names host '{host}', a "
                "loopback name (RFC 6761), which is not a public address") in r.stderr, r.stderr
    assert server.seen == []


def test_redirects_are_not_followed(egress_daemon, server):
    with egress_daemon.client() as c:
        r = c.exec(f"r = http_request('{egress_daemon.base}redirect')\n"
                   "(r['status'], r['headers']['location'])")
    assert r.ok and r.output == (302, "/admin"), (r, r.error)
    assert server.seen == [("GET", "/api/redirect")]


def test_limits_bite(egress_daemon, server):
    base = egress_daemon.base
    with egress_daemon.client() as c:
        r = c.exec(f"http_request('{base}big')")
        assert r.outcome == "error" and "exceeds egress_max_bytes 1024" in r.error["message"], r
        r = c.exec(f"http_request('{base}x', method='POST', body=b'y' * 2000)")
        assert r.outcome == "error" and "exceeds egress_max_bytes 1024" in r.error["message"], r
        r = c.exec(f"try:\n    http_request('{base}slow')\nexcept TimeoutError as e:\n"
                   "    t = str(e)\nt")
        assert r.ok and "timed out after" in r.output, (r, r.error)
        r = c.exec(f"[http_request('{base}n')['status'] for _ in range(3)]")
        assert r.ok and r.output == [200, 200, 200], (r, r.error)
        r = c.exec(f"[http_request('{base}n')['status'] for _ in range(4)]")
        assert r.outcome == "error" and "egress_max_requests (3)" in r.error["message"], r


def test_response_header_lines_are_joined_and_capped(daemon_factory, tmpdir_short, server):
    """Repeated names are joined in order; past 256 lines (a server's choice, read on the loop
    every agent shares) the response is refused as too large."""
    port = server.server_address[1]
    policy = policy_with(tmpdir_short / "policy", [{"url": f"http://127.0.0.1:{port}/api/"}],
                         egress_max_bytes=1 << 20)
    d = daemon_factory("--policy", str(policy))
    base = f"http://127.0.0.1:{port}/api/headers/"
    with d.client() as c:
        r = c.exec(f"http_request('{base}3')['headers']['x-rep']")
        assert r.ok and r.output == "v0, v1, v2", (r, r.error)
        r = c.exec(f"len(http_request('{base}250')['headers']['x-rep'].split(', '))")
        assert r.ok and r.output == 250, (r, r.error)
        r = c.exec(f"http_request('{base}300')")
        assert r.outcome == "error" and "more than 256 header lines" in r.error["message"], r
        r = c.exec("1")  # the daemon goes on serving
        assert r.ok and r.output == 1, (r, r.error)


def test_connection_failure_is_a_connection_error(daemon_factory, tmpdir_short):
    policy = policy_with(tmpdir_short / "policy", [{"url": "http://127.0.0.1:9/"}])
    d = daemon_factory("--policy", str(policy))
    with d.client() as c:
        r = c.exec("try:\n    http_request('http://127.0.0.1:9/')\n"
                   "except ConnectionError as e:\n    m = 'refused: ' + str(e)\nm")
    assert r.ok and r.output.startswith("refused: GET http://127.0.0.1:9/"), (r, r.error)


def test_sessions_count_requests_per_run(egress_daemon, server):
    with egress_daemon.client() as c, c.open_session() as s:
        for _ in range(2):
            r = s.exec("[http_request(BASE + 'n')['status'] for _ in range(3)]",
                       variables={"BASE": egress_daemon.base})
            assert r.ok and r.output == [200, 200, 200], (r, r.error)


def test_job_ending_during_a_request_leaves_nothing(daemon_factory, tmpdir_short, server):
    """The wall clock ends the job while pyfenced waits for the server: the late answer goes
    nowhere, the daemon goes on serving, and an abandoned transfer is stopped instead of
    holding a shutting-down daemon until its own timeout."""
    port = server.server_address[1]
    policy = policy_with(tmpdir_short / "policy", [{"url": f"http://127.0.0.1:{port}/api/"}],
                         egress_timeout_ms=60000, timeout_ms=500)
    d = daemon_factory("--policy", str(policy))
    with d.client() as c:
        r = c.exec(f"http_request('http://127.0.0.1:{port}/api/slow')")
        assert r.outcome == "timeout", r
        time.sleep(3.5)  # the server answers the abandoned request meanwhile
        d.assert_serving()
        r = c.exec(f"http_request('http://127.0.0.1:{port}/api/stall')")
        assert r.outcome == "timeout", r
    started = time.monotonic()
    d.stop()  # the stalled transfer (20 s at the server) is stopped, not waited for
    assert time.monotonic() - started < 10


def test_requests_are_under_way_at_once(daemon_factory, tmpdir_short, server):
    """Eight jobs' requests reach a server that answers none of them until all eight have
    arrived: pyfenced makes every allowed request at once, not a few at a time (its transfers
    ran on libuv's thread pool before, four at once: the other four then waited for answers
    that never came, and the server gave up on all of them)."""
    n = 8
    server.barrier = threading.Barrier(n)
    port = server.server_address[1]
    policy = policy_with(tmpdir_short / "policy", [{"url": f"http://127.0.0.1:{port}/api/"}],
                         egress_timeout_ms=30000)
    d = daemon_factory("--policy", str(policy), "--max-workers", str(2 * n))
    replies = [None] * n

    def one(i):
        with d.client() as c:
            replies[i] = c.exec(f"http_request('http://127.0.0.1:{port}/api/gather')['status']")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for r in replies:
        assert r is not None and r.ok and r.output == 200, (r, r and r.error)
    assert len(server.seen) == n


def test_shipped_profiles_allow_no_egress(daemon, server):
    with daemon.client() as c:
        r = c.exec(f"http_request('http://127.0.0.1:{server.server_address[1]}/api/x')")
    assert r.outcome == "error", r
    assert "allows no network egress" in r.error["message"], r
    assert server.seen == []
