"""A tiny scripted stand-in for pyfenced, to test the clients' framing, id matching and value
decoding without the daemon. Each connection runs `handler(conn, request)` for every request
frame; the handler sends what it likes through conn.send()/conn.send_raw()/conn.close()."""

import json
import os
import socket
import struct
import threading


class FakeConn:
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.held = []  # requests a handler chose to answer later
        self.closed = False

    def send(self, obj):
        self.send_raw(frame(obj))

    def send_raw(self, data):
        if not self.closed:
            self.sock.sendall(data)

    def close(self):
        if not self.closed:
            self.closed = True
            self.sock.shutdown(socket.SHUT_RDWR)
            self.sock.close()

    def read_request(self):
        while True:
            if len(self.buf) >= 4:
                (n,) = struct.unpack(">I", self.buf[:4])
                if len(self.buf) >= 4 + n:
                    payload, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
                    return json.loads(payload)
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buf += chunk


def frame(obj):
    payload = json.dumps(obj).encode()
    return struct.pack(">I", len(payload)) + payload


class FakeServer:
    def __init__(self, path, handler):
        self.path = path
        self.handler = handler
        self.requests = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(64)
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                s, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(FakeConn(s),), daemon=True).start()

    def _serve(self, conn):
        try:
            while not conn.closed:
                req = conn.read_request()
                if req is None:
                    break
                self.requests.append(req)
                self.handler(conn, req)
        except OSError:
            pass
        finally:
            if not conn.closed:
                conn.sock.close()

    def stop(self):
        self.sock.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def ok_exec_reply(rid, output=None, output_repr=None, logs="", **extra):
    reply = {"id": rid, "ok": True, "outcome": "ok", "output": output, "output_repr": output_repr,
             "logs": logs, "is_final_answer": False,
             "stats": {"queue_ms": 0.1, "run_ms": 0.2, "cpu_ms": 1, "ops": 3, "max_rss_kb": 1000}}
    reply.update(extra)
    return reply


def error_exec_reply(rid, outcome, message, type_=None, line=None, source=None, logs=""):
    return {"id": rid, "ok": False, "outcome": outcome, "output": None, "output_repr": None,
            "logs": logs, "is_final_answer": False,
            "error": {"code": outcome, "message": message, "type": type_, "line": line, "source": source},
            "stats": {"queue_ms": 0.1, "run_ms": 0.2, "cpu_ms": 1, "ops": 3, "max_rss_kb": 1000}}


def emulate_exec(conn, req):
    """Runs the snippet with this (trusted, test-only) interpreter the way pyfenced would report
    it: output events, the last expression's value, smolagents-style errors. A snippet that is
    exactly `#outcome:NAME` gets that outcome instead, to test the clients' handling of it."""
    import ast
    import contextlib
    import io

    rid, code = req["id"], req["code"]
    if code.startswith("#outcome:"):
        outcome = code.split(":", 1)[1].strip()
        conn.send(error_exec_reply(rid, outcome, f"the {outcome} message", logs="partial\n"))
        return
    out = io.StringIO()
    ns = {}
    try:
        tree = ast.parse(code)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        with contextlib.redirect_stdout(out):
            exec(compile(tree, "<snippet>", "exec"), ns)
            value = eval(compile(ast.Expression(last.value), "<snippet>", "eval"), ns) if last else None
    except Exception as e:  # noqa: BLE001 - reported to the client like pyfenced does
        msg = f"Code execution failed at line '{code.strip()}' due to: {type(e).__name__}: {e}"
        if req.get("stream", True) and out.getvalue():
            conn.send({"id": rid, "event": "output", "data": out.getvalue()})
        conn.send(error_exec_reply(rid, "error", msg, type(e).__name__, 1, code.strip(), logs=out.getvalue()))
        return
    if req.get("stream", True) and out.getvalue():
        conn.send({"id": rid, "event": "output", "data": out.getvalue()})
    simple = value if value is None or isinstance(value, (bool, int, float, str)) else \
        {"$type": "repr", "type": type(value).__qualname__, "repr": repr(value)}
    conn.send(ok_exec_reply(rid, simple, None if value is None else repr(value), logs=out.getvalue()))


def emulate(conn, req):
    """Answers every op like pyfenced, running exec through emulate_exec."""
    rid, op = req["id"], req["op"]
    if op == "hello":
        conn.send({"id": rid, "ok": True, "server": "pyfenced", "version": "0.1.0", "protocol": 1,
                   "python": "3.11.2", "limits": {"max_frame_bytes": 8388608}, "job_limits": {}})
    elif op == "ping":
        conn.send({"id": rid, "ok": True})
    elif op == "stats":
        conn.send({"id": rid, "ok": True, "version": "0.1.0", "uptime_ms": 3723000, "connections": 2,
                   "jobs": {"running": 1, "total": 13,
                            "by_outcome": {"ok": 10, "timeout": 2, "hardening_unavailable": 1}},
                   "zygote": {"pid": 4242, "restarts": 0}})
    elif op == "exec":
        emulate_exec(conn, req)
    else:
        conn.send({"id": rid, "ok": False, "error": {"code": "unknown_op", "message": f"no op {op!r}"}})
