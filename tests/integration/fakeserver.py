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
