"""pyfence: the Python client of pyfenced (one file, standard library only).

pyfenced runs untrusted Python snippets (an LLM agent's code actions) in hardened, forked
workers. This module speaks its wire protocol (proto/PROTOCOL.md): 4-byte big-endian length
frames of UTF-8 JSON over a Unix socket.

    from pyfence import Client

    with Client() as c:                       # $PYFENCE_SOCKET or the default path
        r = c.exec("import math\\nprint('hi')\\nmath.sqrt(2)", timeout=5)
        print(r.logs, r.output, r.output_repr, r.outcome)

Values cross the wire as tagged JSON ("Values" in PROTOCOL.md): tuples, sets, bytes, complex,
non-finite floats, big ints, dicts with non-string keys and datetime types come back as the
Python values they were; anything else comes back as a `Repr` (its type name and repr text).
`variables=` are encoded the same way.

A Client may be shared by threads: every request gets its own id and each reply is handed to
the thread waiting for that id (several requests are then in flight on one connection).
`submit()` + `wait()` pipeline requests from one thread.

Sessions keep state between snippets in one worker (`Client.open_session()` -> `Session`, with
`exec()`, `get()`, `close()`; a context manager).

`PyfenceExecutor` adapts a Client to smolagents' executor interface:
`executor(code) -> CodeOutput(output, logs, is_final_answer)`; with `session=True` it keeps
state across calls, as smolagents' local executor does.

Errors: connection, protocol and refused-request failures raise `PyfenceError` (with `.code`,
the wire code name, and `.message`). A snippet that raises or hits a limit does NOT raise from
`Client.exec`: the result says so (`ok`, `outcome`, `error`); `result.raise_for_outcome()` turns
it into an `ExecutionError`. Outcome (or, for `open_session`, `.code`) `hardening_unavailable`
is the host's, not the snippet's: the profile requires a hardening layer (namespaces, cgroup,
Landlock...) that pyfenced cannot give there; the message names the profile, the layer, why,
and what an operator can do. Retrying does not help until that changes.

A KeyboardInterrupt (Ctrl-C) may come at any point of a call and leaves the Client usable:
what had been read is kept for the next wait, another thread takes over the reading, and an
interrupted `open_session` takes its open back. Only an interrupt in the middle of sending a
request's frame closes the connection (the rest of the frame could not be told apart from
the next request). `submit()` + `wait()` + `cancel()` give finer control.

`Client(reply_timeout=SECONDS)` bounds each wait for a reply (default: none, as a busy daemon
may queue a request for longer than its snippet runs): past it, `PyfenceError("timeout")` and
the connection is closed, never left to hand a late reply to the wrong request.
"""

import base64
import dataclasses
import datetime
import json
import math
import os
import re
import select
import signal
import socket
import struct
import threading
import time
from collections import deque

__all__ = [
    "Client",
    "CodeOutput",
    "ExecResult",
    "ExecutionError",
    "PyfenceError",
    "PyfenceExecutor",
    "Repr",
    "Session",
    "decode_value",
    "default_socket_path",
    "encode_value",
]

__version__ = "0.1.0"

PROTOCOL_VERSION = 1
# Replies may be as large as the largest max_frame_bytes a daemon can be configured with.
MAX_FRAME_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 64  # containers in a value (PROTOCOL.md "Values")
# JSON levels in a request: a tagged container takes up to 3 ({"$type": "dict", "items": [[K, V]]}),
# so a value of MAX_DEPTH containers fits with the request's own levels.
MAX_REQUEST_DEPTH = 256
# Ints within ±(2**53 - 1) travel as plain numbers; from 2**53 on the daemon, which keeps only
# the double it parsed, cannot tell 2**53 from 2**53 + 1 and refuses them: they go tagged.
_INT_LIMIT = 2**53 - 1
# A tagged int is decimal text up to CPython's default int_max_str_digits (4300); pyfenced
# refuses longer decimal text and takes "0x..." hex (sign first: "-0x1f"), which has no such
# limit, and sends such ints as hex itself. Below 2**14285 an int has at most 4301 digits, so
# str() is cheap there and its length decides; past it, hex without trying.
_INT_MAX_DECIMAL_DIGITS = 4300
_INT_DECIMAL_BITS = 14285
_INT_TEXT = re.compile(r"-?(?:0x[0-9a-fA-F]+|[0-9]+)")
# CPython runs a signal's Python handler between bytecodes: a SIGINT that comes after the last
# check and before a blocking call starts waits for that call to return. The main thread
# therefore blocks for at most this long at a time, so a Ctrl-C is acted on within it however
# long the reply takes (with reply_timeout None, it could otherwise wait for ever).
_INTERRUPT_SLICE = 0.2


def _wait_slice(left):
    """How long one blocking wait may last: `left` seconds (None: no bound), but in the main
    thread, where KeyboardInterrupt is raised, at most _INTERRUPT_SLICE."""
    if threading.current_thread() is not threading.main_thread():
        return left
    return _INTERRUPT_SLICE if left is None else min(left, _INTERRUPT_SLICE)


class _InterruptsHeld:
    """A with block that a KeyboardInterrupt must not cut in half: bytes read off the socket
    and not yet filed, a frame half sent, the reading taken and not yet handed on. A SIGINT
    that comes meanwhile is acted on as the block ends, by the handler that was in force.
    Python runs signal handlers in the main thread only, so elsewhere this does nothing; so
    too when SIGINT's handler is not a Python function (SIG_DFL ends the process anyway,
    SIG_IGN does nothing, and one set from C cannot be put back). Blocking waits stay outside
    such blocks, so that an interrupt still ends them at once."""

    __slots__ = ("_old", "_caught")

    def __enter__(self):
        self._old, self._caught = None, []
        if threading.current_thread() is threading.main_thread():
            old = signal.getsignal(signal.SIGINT)
            if callable(old):
                signal.signal(signal.SIGINT, self._catch)
                self._old = old
        return self

    def _catch(self, signum, frame):
        self._caught.append(frame)

    def __exit__(self, *exc):
        old, self._old = self._old, None
        if old is not None:
            signal.signal(signal.SIGINT, old)
            if self._caught:
                old(signal.SIGINT, self._caught[0])
        return False


class PyfenceError(Exception):
    """A failure with a wire code name (`connect`, `protocol`, `bad_request`, `timeout`...)."""

    def __init__(self, code, message, reply=None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.reply = reply


class ExecutionError(PyfenceError):
    """The snippet did not complete: it raised, was refused, or hit a limit (`.code`, the
    outcome: "error", "timeout"...; "hardening_unavailable" when it never ran because the host
    cannot give the hardening its profile requires)."""

    def __init__(self, result):
        err = result.error or {}
        super().__init__(result.outcome, err.get("message") or result.outcome, result.reply)
        self.result = result
        self.logs = result.logs


class Repr:
    """A value that crossed the wire only as its repr (`{"$type": "repr"}`): one way only."""

    __slots__ = ("type", "repr")

    def __init__(self, type, repr):  # noqa: A002 - the wire's field names
        self.type = type
        self.repr = repr

    def __repr__(self):
        return self.repr

    def __eq__(self, other):
        return isinstance(other, Repr) and (self.type, self.repr) == (other.type, other.repr)

    def __hash__(self):
        return hash((self.type, self.repr))


# ---- tagged values ---------------------------------------------------------------------------

def _encode_float(f):
    # A JSON parser that keeps numbers as doubles (pyfenced's cJSON, most clients) prints an
    # integral one back without its '.': 2.0 and -0.0 would come back as the ints 2 and 0. So
    # integral floats are tagged with their repr; only the others are plain numbers.
    if math.isfinite(f) and not f.is_integer():
        return f
    return {"$type": "float", "value": repr(f)}


def _encode_float_part(f):
    """A part of a complex: a float by position, so a plain number unless JSON cannot spell it
    or a hop would lose it (-0.0 prints as -0, read back as the int 0)."""
    if math.isfinite(f) and not (f == 0 and math.copysign(1, f) < 0):
        return f
    return {"$type": "float", "value": repr(f)}


def _decode_float_text(text):
    # float() also takes "1_0", " 1" and "infinity": hold the daemon to repr's spelling.
    if not text or text.strip() != text or "_" in text or text.lower() in ("infinity", "-infinity", "+inf"):
        raise ValueError(f"{text!r} is not a float's repr")
    return float(text)


def _encode_int_text(i):
    """The text of a tagged int: decimal when pyfenced takes it, else hex. str() is not tried
    on a longer int: it raises ValueError past this interpreter's int_max_str_digits, and
    pyfenced refuses more than 4300 digits whatever this interpreter allows."""
    if i.bit_length() <= _INT_DECIMAL_BITS:
        try:
            text = str(i)
            if len(text.lstrip("-")) <= _INT_MAX_DECIMAL_DIGITS:
                return text
        except ValueError:  # sys.set_int_max_str_digits() set lower here
            pass
    return ("-" if i < 0 else "") + hex(abs(i))


def _decode_int_text(text):
    # int() also takes " 1", "1_0" and "+1": hold the daemon to the documented forms.
    if not _INT_TEXT.fullmatch(text):
        raise ValueError(f"{text[:40]!r} is not a decimal or 0x-hex integer")
    return int(text, 16) if "x" in text else int(text)


def encode_value(value, _depth=0):
    """Python value -> tagged JSON-compatible value (PROTOCOL.md "Values")."""
    if _depth > MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH} levels")
    d = _depth + 1
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if -_INT_LIMIT <= value <= _INT_LIMIT:
            return int(value)
        return {"$type": "int", "value": _encode_int_text(int(value))}
    if isinstance(value, float):
        return _encode_float(float(value))
    if isinstance(value, list):
        return [encode_value(v, d) for v in value]
    if isinstance(value, dict):
        if all(type(k) is str and k != "$type" for k in value):
            return {k: encode_value(v, d) for k, v in value.items()}
        return {"$type": "dict", "items": [[encode_value(k, d), encode_value(v, d)] for k, v in value.items()]}
    for cls, tag in ((tuple, "tuple"), (frozenset, "frozenset"), (set, "set")):
        if isinstance(value, cls):
            return {"$type": tag, "items": [encode_value(v, d) for v in value]}
    if isinstance(value, (bytes, bytearray)):
        tag = "bytearray" if isinstance(value, bytearray) else "bytes"
        return {"$type": tag, "base64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, complex):
        return {"$type": "complex", "real": _encode_float_part(value.real), "imag": _encode_float_part(value.imag)}
    # datetime.datetime is a subclass of datetime.date: test it first.
    for cls, tag in ((datetime.datetime, "datetime"), (datetime.date, "date"), (datetime.time, "time")):
        if isinstance(value, cls):
            return {"$type": tag, "iso": value.isoformat()}
    if isinstance(value, datetime.timedelta):
        return {"$type": "timedelta", "days": value.days, "seconds": value.seconds,
                "microseconds": value.microseconds}
    raise TypeError(f"cannot send a value of type {type(value).__qualname__} to pyfenced "
                    "(see PROTOCOL.md \"Values\" for the types that can cross)")


def _tagged_field(obj, name, kind):
    v = obj.get(name)
    if not isinstance(v, kind):
        raise PyfenceError("protocol", f"tagged value {obj.get('$type')!r}: field {name!r} is missing or mistyped")
    return v


def _decode_tagged(obj, depth):
    tag = obj["$type"]
    d = depth + 1
    try:
        if tag == "int":
            return _decode_int_text(_tagged_field(obj, "value", str))
        if tag == "float":
            return _decode_float_text(_tagged_field(obj, "value", str))
        if tag in ("tuple", "set", "frozenset"):
            items = [decode_value(v, d) for v in _tagged_field(obj, "items", list)]
            return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
        if tag == "dict":
            return {decode_value(k, d): decode_value(v, d) for k, v in _tagged_field(obj, "items", list)}
        if tag in ("bytes", "bytearray"):
            raw = base64.b64decode(_tagged_field(obj, "base64", str), validate=True)
            return raw if tag == "bytes" else bytearray(raw)
        if tag == "complex":
            parts = [decode_value(obj.get(name), d) for name in ("real", "imag")]
            if not all(type(p) in (int, float) for p in parts):
                raise ValueError("the parts of a complex must be numbers")
            return complex(float(parts[0]), float(parts[1]))
        if tag in ("datetime", "date", "time"):
            cls = {"datetime": datetime.datetime, "date": datetime.date, "time": datetime.time}[tag]
            return cls.fromisoformat(_tagged_field(obj, "iso", str))
        if tag == "timedelta":
            return datetime.timedelta(days=obj.get("days", 0), seconds=obj.get("seconds", 0),
                                      microseconds=obj.get("microseconds", 0))
        if tag == "repr":
            return Repr(_tagged_field(obj, "type", str), _tagged_field(obj, "repr", str))
    except PyfenceError:
        raise
    except (KeyError, TypeError, ValueError) as e:
        raise PyfenceError("protocol", f"bad tagged value of $type {tag!r}: {e}") from None
    raise PyfenceError("protocol", f"unknown tagged value $type {tag!r}")


def decode_value(value, _depth=0):
    """Tagged JSON value (as parsed by json) -> Python value. Containers nest at most MAX_DEPTH
    levels, as encode_value allows (pyfenced sends deeper parts as a repr): a deeper value is
    PyfenceError("protocol"), not a RecursionError."""
    if type(value) is float and value.is_integer():
        # A plain number with an integral value is an int (integral floats come tagged), however
        # the writer spelled it ("1e16" or "1.0").
        return int(value)
    if not isinstance(value, (list, dict)):
        return value
    if _depth > MAX_DEPTH:
        raise PyfenceError("protocol", f"pyfenced sent a value nested deeper than {MAX_DEPTH} "
                                       "containers (PROTOCOL.md \"Values\")")
    d = _depth + 1
    if isinstance(value, list):
        return [decode_value(v, d) for v in value]
    if "$type" in value:
        return _decode_tagged(value, _depth)
    return {k: decode_value(v, d) for k, v in value.items()}


# ---- frames ----------------------------------------------------------------------------------

def _no_duplicates(pairs):
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise ValueError(f"duplicate key {k!r}")
        obj[k] = v
    return obj


def _no_constants(name):
    raise ValueError(f"{name} is not JSON")


def _loads(payload):
    """Strict JSON: UTF-8, one object, no duplicate keys, no NaN/Infinity literals."""
    try:
        obj = json.loads(payload.decode("utf-8"), object_pairs_hook=_no_duplicates,
                         parse_constant=_no_constants)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise PyfenceError("protocol", f"pyfenced sent an unreadable frame: {e}") from None
    if not isinstance(obj, dict):
        raise PyfenceError("protocol", "pyfenced sent a frame that is not a JSON object")
    return obj


def encode_frame(obj):
    """One JSON object -> a frame (4-byte big-endian length + UTF-8 JSON)."""
    payload = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
    return struct.pack(">I", len(payload)) + payload


def _check_request(req):
    """Refuses, before sending, what pyfenced would refuse for the whole frame without being
    able to say for which request id: nesting over MAX_REQUEST_DEPTH, NUL characters, lone
    surrogates."""
    op, deepest, todo = req.get("op"), 0, [(req, 1)]
    while todo:
        v, d = todo.pop()
        if isinstance(v, dict):
            deepest = max(deepest, d)
            todo.extend((c, d + 1) for c in v.values())
            todo.extend((k, d) for k in v)
        elif isinstance(v, list):
            deepest = max(deepest, d)
            todo.extend((c, d + 1) for c in v)
        elif isinstance(v, str):
            if "\0" in v:
                raise PyfenceError("bad_request", f"{op} request: a string contains a NUL character, "
                                                  "which pyfenced does not accept")
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as e:
                raise PyfenceError("bad_request", f"{op} request: a string is not valid Unicode "
                                                  f"({e.reason} at index {e.start})") from None
    if deepest > MAX_REQUEST_DEPTH:
        raise PyfenceError("bad_request", f"{op} request nests {deepest} JSON levels; pyfenced "
                                          f"accepts {MAX_REQUEST_DEPTH} (values may nest {MAX_DEPTH} "
                                          "containers: are the variables nested too deep?)")


def default_socket_path():
    """$PYFENCE_SOCKET; else /run/pyfence/pyfence.sock as root; else $XDG_RUNTIME_DIR/pyfence.sock."""
    path = os.environ.get("PYFENCE_SOCKET")
    if path:
        return path
    if os.geteuid() == 0:
        return "/run/pyfence/pyfence.sock"
    rt = os.environ.get("XDG_RUNTIME_DIR")
    if not rt:
        raise PyfenceError("config", "no socket path: pass socket_path or set PYFENCE_SOCKET "
                                     "(XDG_RUNTIME_DIR is not set)")
    return os.path.join(rt, "pyfence.sock")


def _checked(reply):
    """reply, if it is ok; else its error raised as PyfenceError."""
    if reply.get("ok") is not True:
        err = reply.get("error") or {}
        raise PyfenceError(err.get("code") or "internal", err.get("message") or "(no message)", reply)
    return reply


def _job_fields(imports, limits, timeout, variables):
    """The request fields an exec and a session.open share, from the Client methods' arguments."""
    fields = {}
    if imports:
        fields["imports"] = list(imports)
    lim = dict(limits or {})
    if timeout is not None:
        lim["timeout_ms"] = max(1, math.ceil(timeout * 1000))
    if lim:
        fields["limits"] = lim
    if variables:
        fields["variables"] = {str(k): encode_value(v) for k, v in variables.items()}
    return fields


# ---- results ---------------------------------------------------------------------------------

class ExecResult:
    """The reply to an exec: ok, outcome, output (decoded), output_repr, logs, is_final_answer,
    error (dict with code, message, type, line, source; None on success), stats, reply (raw),
    session_lost (the exec ran in a session whose worker is now gone)."""

    __slots__ = ("ok", "outcome", "output", "output_repr", "logs", "is_final_answer", "error",
                 "stats", "reply", "session_lost")

    def __init__(self, reply):
        self.reply = reply
        self.ok = reply.get("ok") is True
        err = reply.get("error")
        self.error = err if isinstance(err, dict) else None
        self.outcome = reply.get("outcome") or (self.error or {}).get("code") or ("ok" if self.ok else "internal")
        self.output = decode_value(reply.get("output"))
        self.output_repr = reply.get("output_repr")
        self.logs = reply.get("logs") or ""
        self.is_final_answer = reply.get("is_final_answer") is True
        self.stats = reply.get("stats") or {}
        self.session_lost = reply.get("session_lost") is True or self.outcome == "session_lost"

    def raise_for_outcome(self):
        """Raises ExecutionError unless the snippet completed; returns self otherwise."""
        if not self.ok:
            raise ExecutionError(self)
        return self

    def __repr__(self):
        if self.ok:
            return f"<ExecResult ok output={self.output_repr}>"
        return f"<ExecResult {self.outcome}: {(self.error or {}).get('message')!r}>"


# ---- the client ------------------------------------------------------------------------------

class Client:
    """A connection to pyfenced. Thread-safe; replies are matched to requests by id.

    reply_timeout (seconds, default None: wait as long as it takes) bounds each wait for a reply
    (exec(), wait(), request() and the session calls), and the sending of a request the daemon
    does not read. A daemon that has not answered by then is taken as stalled: the wait raises
    PyfenceError("timeout") and the connection is closed, so no reply that comes late can be
    taken for another request's; every later call on this Client raises the same error (open a
    new Client). Choose it above the longest snippet timeout you use plus the time a busy
    daemon may queue a request: it is a backstop against a stalled daemon, not a snippet
    limit (that is exec(timeout=), enforced by pyfenced)."""

    def __init__(self, socket_path=None, reply_timeout=None):
        if reply_timeout is not None and not reply_timeout > 0:
            raise ValueError(f"reply_timeout must be a positive number of seconds or None, not {reply_timeout!r}")
        self.reply_timeout = reply_timeout
        self.socket_path = socket_path or default_socket_path()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            # Blocking: a Unix socket connect then waits for room in a busy daemon's listen
            # backlog instead of failing with EAGAIN.
            self._sock.connect(self.socket_path)
        except OSError as e:
            self._sock.close()
            hint = " (is pyfenced running?)" if isinstance(e, (FileNotFoundError, ConnectionRefusedError)) else ""
            raise PyfenceError("connect", f"cannot connect to pyfenced at '{self.socket_path}': "
                                          f"{e.strerror or e}{hint}") from None
        self._send_lock = threading.Lock()
        self._cond = threading.Condition()
        self._next_id = 1
        self._inflight = {}  # id -> deque of frames received for it, not yet read
        self._reading = False  # one thread at a time reads the socket for everyone
        self._broken = None  # the PyfenceError that ended this connection
        self._buf = bytearray()

    # -- plumbing --

    def submit_request(self, op, **fields):
        """Sends {"id", "op", **fields}; returns the id. Use wait_reply(id) to read the reply."""
        return self._submit(op, fields)

    def _submit(self, op, fields, ids=None):
        """submit_request; the id also goes into the list `ids` before anything is sent, so that
        a caller interrupted in here (KeyboardInterrupt) knows what it may have sent."""
        with self._send_lock:
            if self._broken is not None:
                raise self._broken
            req = {"id": self._next_id, "op": op, **fields}
            _check_request(req)
            frame = encode_frame(req)
            rest, rid = [memoryview(frame)], None  # rest[0]: what is still to be sent
            try:
                with _InterruptsHeld():
                    rid = self._next_id
                    self._next_id += 1
                    with self._cond:
                        self._inflight[rid] = deque()
                    if ids is not None:
                        ids.append(rid)
                self._send_frame(rest, self._deadline())
            except (OSError, PyfenceError) as e:
                if isinstance(e, PyfenceError) and e.code == "timeout":
                    err = self._timed_out(f"did not read request {rid}")
                else:
                    err = e if isinstance(e, PyfenceError) else self._salvage_refusal() or \
                        PyfenceError("connect", f"connection to pyfenced at '{self.socket_path}' lost: {e}")
                with self._cond:
                    self._inflight.pop(rid, None)
                self._abandon(err)
                raise self._broken from None
            except BaseException:
                if rid is not None:
                    self._interrupted_send(rid, len(rest[0]), len(frame))
                raise
        return rid

    def _deadline(self):
        return None if self.reply_timeout is None else time.monotonic() + self.reply_timeout

    @staticmethod
    def _remaining(deadline):
        """Seconds left until deadline (None: no deadline), at least 0."""
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    def _abandon(self, err):
        """Ends the connection with err (unless it ended already): every waiter and every later
        call raise it. The socket is shut down, not closed (close() does that): a thread blocked
        reading it wakes up; a reply that comes late has no one to be mistaken by."""
        with self._cond:
            self._broken = self._broken or err
            self._cond.notify_all()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _timed_out(self, what):
        self._abandon(PyfenceError("timeout", f"pyfenced at '{self.socket_path}' {what} within "
                                              f"reply_timeout {self.reply_timeout} s: the connection "
                                              "is closed (a stalled daemon?)"))
        return self._broken

    def _send_frame(self, rest, deadline=None):
        """sendall of rest[0] (a memoryview, shortened as it goes out), but taking replies in
        while the daemon is not reading us: it may have stopped because we are not reading its
        replies to earlier requests, and then both would block. Past deadline (None: none),
        PyfenceError("timeout")."""
        while rest[0]:
            if deadline is not None and time.monotonic() >= deadline:
                raise PyfenceError("timeout", "did not read the request")
            with _InterruptsHeld():  # what went out is counted before an interrupt acts
                try:
                    rest[0] = rest[0][self._sock.send(rest[0], socket.MSG_DONTWAIT):]
                    continue
                except (BlockingIOError, InterruptedError):
                    pass
            with self._cond:
                someone_reads = self._reading
            left = self._remaining(deadline)
            if someone_reads:  # that thread drains the socket; just wait for room
                select.select([], [self._sock], [], 0.05 if left is None else min(0.05, left))
            elif select.select([self._sock], [self._sock], [], _wait_slice(left))[0]:
                self._pump()

    def _interrupted_send(self, rid, left, size):
        """Request `rid` was interrupted (KeyboardInterrupt) with `left` of its `size` bytes
        unsent. None sent: it is dropped. All sent: it stays in flight. Some: the connection is
        closed, as the next request would be read as the rest of this one."""
        if left == size:
            with self._cond:
                self._inflight.pop(rid, None)
        elif left:
            self._abandon(PyfenceError("connect", f"interrupted in the middle of sending request {rid}: "
                                                  f"the connection to pyfenced at '{self.socket_path}' "
                                                  "is closed"))

    def _pump(self):
        """Reads what is available without blocking and files the complete frames."""
        with _InterruptsHeld():
            with self._cond:
                if self._reading:
                    return
                self._reading = True
            err = self._take_in(True)
        if err is not None:
            raise err

    def _take_in(self, ready):
        """For the thread that reads (self._reading): when `ready`, reads what the socket has
        without blocking and files the complete frames; then hands the reading on. Returns the
        error that ended the connection, or None. Call it with interrupts held: bytes read and
        not yet filed would be lost to an interrupt."""
        msgs, err = [], None
        try:
            if ready:
                try:
                    chunk = self._sock.recv(262144, socket.MSG_DONTWAIT)
                except (BlockingIOError, InterruptedError):
                    chunk = None
                if chunk == b"":
                    pending = " in the middle of a frame" if self._buf else ""
                    raise PyfenceError("connect", f"pyfenced at '{self.socket_path}' closed the connection{pending}")
                if chunk:
                    self._buf += chunk
                while (m := self._parse_buffered()) is not None:
                    msgs.append(m)
        except PyfenceError as e:
            err = e
        except OSError as e:
            err = PyfenceError("connect", f"reading from pyfenced at '{self.socket_path}': {e}")
        finally:
            with self._cond:
                self._reading = False
                for m in msgs:
                    self._dispatch(m)
                if err is not None:
                    self._broken = self._broken or err
                self._cond.notify_all()
        return err

    def _salvage_refusal(self):
        """After a failed send: the daemon may have said why before closing (busy,
        shutting_down). Returns that error, or None."""
        claimed = False
        try:
            with _InterruptsHeld(), self._cond:
                if self._reading:
                    return None
                self._reading = claimed = True
            self._sock.settimeout(0.5)
            while True:
                msg = self._read_frame()
                if msg.get("id") is None and msg.get("ok") is False:
                    err = msg.get("error") or {}
                    return PyfenceError(err.get("code") or "internal",
                                        f"pyfenced at '{self.socket_path}': {err.get('message')}", msg)
        except (PyfenceError, OSError):
            return None
        finally:
            if claimed:
                self._sock.settimeout(None)
                with self._cond:
                    self._reading = False
                    self._cond.notify_all()

    def _read_frame(self):
        while (msg := self._parse_buffered()) is None:
            chunk = self._sock.recv(262144)
            if not chunk:
                raise PyfenceError("connect", f"pyfenced at '{self.socket_path}' closed the connection")
            self._buf += chunk
        return msg

    def _parse_buffered(self):
        """The next complete frame in the receive buffer, or None."""
        if len(self._buf) < 4:
            return None
        (n,) = struct.unpack(">I", self._buf[:4])
        if n == 0 or n > MAX_FRAME_BYTES:
            raise PyfenceError("protocol", f"pyfenced sent a frame length of {n} bytes")
        if len(self._buf) < 4 + n:
            return None
        payload = bytes(self._buf[4:4 + n])
        del self._buf[:4 + n]
        return _loads(payload)

    def _dispatch(self, msg):
        """Files a received frame under its id (called with self._cond held)."""
        rid = msg.get("id")
        if rid is None:
            err = msg.get("error") or {}
            if msg.get("ok") is False and isinstance(err, dict):
                self._broken = PyfenceError(err.get("code") or "internal",
                                            f"pyfenced at '{self.socket_path}': {err.get('message')}", msg)
            else:
                self._broken = PyfenceError("protocol", "pyfenced sent a frame without an id that is not an error")
        elif type(rid) is not int or rid not in self._inflight:
            self._broken = PyfenceError("protocol", f"pyfenced sent a frame for id {rid!r}, which is not in flight")
        else:
            self._inflight[rid].append(msg)

    def wait_reply(self, rid, on_event=None):
        """Blocks until the reply of request `rid`; passes its events to on_event(frame).
        Past reply_timeout, PyfenceError("timeout") and the connection is closed. Interrupted
        (KeyboardInterrupt), the frames it had taken are put back for the next wait_reply(rid)
        and another thread takes over the reading."""
        return self._wait_reply(rid, on_event)

    def _wait_reply(self, rid, on_event=None, into=None):
        """wait_reply; the reply also goes into the list `into` before it is returned, so that
        a caller interrupted as it returns still has it. Until then it stays among the frames
        an interrupt puts back: taken off them first, it was lost to an interrupt that came
        in between."""
        deadline = self._deadline()
        while True:
            frames, reading = deque(), False
            try:
                with _InterruptsHeld(), self._cond:
                    frames, reading = self._take_frames(rid, deadline)
                if reading:
                    ready = self._readable(deadline)
                    with _InterruptsHeld():
                        reading = False
                        self._take_in(ready)
                elif not frames:
                    self._wait_for_reader(rid, deadline)
                while frames:
                    if "event" not in frames[0]:
                        if into is not None:
                            into.append(frames[0])
                        return frames[0]
                    m = frames.popleft()
                    if on_event:
                        on_event(m)
            except BaseException:
                self._give_back(rid, frames, reading)
                raise

    def _take_frames(self, rid, deadline):
        """The frames received for `rid` up to its reply, and whether this thread must read
        (it then has the reading). Called with self._cond held."""
        if rid not in self._inflight:
            raise PyfenceError("not_found", f"request {rid!r} is not in flight on this connection")
        q, frames = self._inflight[rid], deque()
        while q:
            frames.append(q.popleft())
            if "event" not in frames[-1]:
                del self._inflight[rid]
                return frames, False
        if frames:
            return frames, False
        if self._broken is not None:
            del self._inflight[rid]
            raise self._broken
        if deadline is not None and time.monotonic() >= deadline:
            raise self._timed_out(f"sent no reply to request {rid}")
        if self._reading:
            return frames, False
        self._reading = True
        return frames, True

    def _readable(self, deadline):
        """Waits until the socket can be read or deadline passes (interruptible: nothing is
        consumed). True when it can, or when waiting failed (the read then says why)."""
        while True:
            try:
                if select.select([self._sock], [], [], _wait_slice(self._remaining(deadline)))[0]:
                    return True
            except (OSError, ValueError):
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def _wait_for_reader(self, rid, deadline):
        with self._cond:
            if self._reading and not self._inflight.get(rid) and self._broken is None:
                self._cond.wait(_wait_slice(self._remaining(deadline)))

    def _give_back(self, rid, frames, reading):
        """An interrupted wait_reply(rid): the frames it took not yet handed out go back in front
        of its queue; the reading, if it had it, goes to the other threads."""
        with _InterruptsHeld(), self._cond:
            if frames:
                self._inflight.setdefault(rid, deque()).extendleft(reversed(frames))
            if reading:
                self._reading = False
                self._cond.notify_all()

    def request(self, op, **fields):
        """Sends one request and returns its reply; a failure reply raises PyfenceError."""
        return _checked(self.wait_reply(self.submit_request(op, **fields)))

    # -- operations --

    def hello(self, client="pyfence.py"):
        """The daemon's versions and limits; PyfenceError("protocol") if it speaks another
        protocol version than this client."""
        reply = self.request("hello", client=client)
        if reply.get("protocol") != PROTOCOL_VERSION:
            raise PyfenceError("protocol", f"pyfenced at '{self.socket_path}' speaks protocol "
                                           f"{reply.get('protocol')}; this client speaks {PROTOCOL_VERSION}", reply)
        return reply

    def ping(self):
        self.request("ping")
        return True

    def stats(self):
        return self.request("stats")

    def submit(self, code, timeout=None, imports=(), limits=None, variables=None, stream=False,
               profile=None):
        """Sends an exec request and returns its id (see wait())."""
        fields = _job_fields(imports, limits, timeout, variables)
        if profile is not None:
            fields["profile"] = profile
        return self.submit_request("exec", code=code, stream=bool(stream), **fields)

    def wait(self, rid, on_output=None):
        """The ExecResult of exec request `rid`; on_output(text) gets its output as it comes."""

        def on_event(ev):
            if on_output and ev.get("event") == "output" and isinstance(ev.get("data"), str):
                on_output(ev["data"])

        return ExecResult(self.wait_reply(rid, on_event))

    def cancel(self, request_id):
        """Cancels request `request_id` (from submit()) of this connection: a queued exec ends at
        once and never starts; a running one stops at the executor's next check, or its worker
        is killed 500 ms later. Its ExecResult (outcome "cancelled") still comes from wait().
        Returns False when the daemon had no such request in flight (already answered). Only
        the connection that sent a request can cancel it."""
        return self.request("cancel", target=request_id).get("cancelled") is True

    def exec(self, code, timeout=None, imports=(), limits=None, variables=None, on_output=None,
             profile=None):
        """Runs a snippet in a fresh worker. timeout is in seconds; limits may only tighten.
        `profile` names a profile the caller may use (default: its own), whose limits, imports
        and warm pool apply; one it may not use is outcome not_found, like a missing one.
        Returns an ExecResult whatever the snippet did; raises PyfenceError only when no reply
        can be had."""
        rid = self.submit(code, timeout, imports, limits, variables, stream=on_output is not None,
                          profile=profile)
        return self.wait(rid, on_output)

    # -- sessions --

    def open_session(self, profile=None, imports=(), limits=None, variables=None, detach=False,
                     timeout=None):
        """Starts a session: one worker that keeps what each snippet defines (variables,
        functions, classes, imports) for the next. Returns a Session. `profile` names a profile
        the caller may use; `imports`, `limits` and `timeout` (seconds per snippet) are fixed for
        the session's life and may only tighten the profile's; `variables` are defined before
        the first snippet. detach=True keeps the session when this connection closes (until its
        idle timeout), so another connection of the same user can resume it with session(id).
        Interrupted while it waits (KeyboardInterrupt), the open is taken back before the
        exception goes on: no session is left."""
        fields = _job_fields(imports, limits, timeout, variables)
        if profile is not None:
            fields["profile"] = profile
        if detach:
            fields["detach"] = True
        sent, got = [], []  # the open's id once it may go out, its reply once it came
        try:
            rid = self._submit("session.open", fields, sent)
            self._wait_reply(rid, None, got)
            session = Session(self, _checked(got[0])["session"], got[0])
        except BaseException:
            # KeyboardInterrupt, say, while the open waited for a worker: take it back, so
            # that no session is left that nobody knows of (a detached one outlives us).
            self._take_back_open(sent, got[0] if got else None)
            raise
        return session

    def _take_back_open(self, sent, reply):
        """After an interrupted open_session: `sent` holds the id of the session.open if it
        may have gone out, `reply` its reply if one came. Cancels the open; closes the session
        if it opened all the same."""
        try:
            if reply is None and sent:
                with self._cond:
                    if sent[0] not in self._inflight:
                        return  # not sent, or the connection broke: an attached open ends with it
                self.cancel(sent[0])
                reply = self.wait_reply(sent[0])
            elif sent:
                with self._cond:  # an interrupt as the reply was handed out put it back as well
                    self._inflight.pop(sent[0], None)
            if reply is not None and reply.get("ok") is True:
                self.request("session.close", session=reply["session"])
        except PyfenceError:
            pass  # the connection broke: an attached open ends with it

    def session(self, session_id):
        """A Session object for an existing session of this user, e.g. a detached one opened
        by another connection. Nothing is sent: an id that is not (or no longer) this user's
        shows at its first use as not_found."""
        return Session(self, session_id)

    def list_sessions(self):
        """This user's sessions: dicts with id, profile, created and last_used (Unix ms),
        execs, detached, state (idle, busy or lost) and pending (requests waiting behind the
        one running), as PROTOCOL.md "session.list" says."""
        return self.request("session.list")["sessions"]

    def close(self):
        with self._cond:
            if self._broken is None:
                self._broken = PyfenceError("connect", "the client was closed")
            self._cond.notify_all()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Session:
    """A pyfenced session (Client.open_session): snippets run one after another in one worker,
    each seeing what the ones before it defined.

        with client.open_session(imports=["json"]) as s:
            s.exec("import json\ndef f(x): return x * 2")
            s.exec("f(21)").output                 # 42
            s.get("f", "nope")                     # {"f": Repr(...)}: names not defined are left out

    exec() returns an ExecResult whatever happened, like Client.exec. A session whose worker died
    (the memory limit, the wall-clock backstop, a crash) is lost: the exec that was running has
    result.session_lost set, the next request answers `session_lost` with the cause, and then
    the id is unknown (`not_found`). A lost session never silently restarts with fresh state.
    get() and close() raise PyfenceError on failure (close() ignores a session already gone).
    """

    def __init__(self, client, session_id, info=None):
        self.client = client
        self.id = session_id
        self.info = dict(info or {})  # the session.open reply: profile, limits, detached
        self.lost = False

    def submit(self, code, variables=None, stream=False):
        """Sends an exec on this session and returns its request id (see Client.wait())."""
        fields = {"code": code, "session": self.id, "stream": bool(stream)}
        if variables:
            fields["variables"] = {str(k): encode_value(v) for k, v in variables.items()}
        return self.client.submit_request("exec", **fields)

    def exec(self, code, variables=None, on_output=None):
        """Runs a snippet in the session after defining `variables` there; on_output(text) gets
        its printed output as it comes."""
        r = self.client.wait(self.submit(code, variables, stream=on_output is not None), on_output)
        self.lost = self.lost or r.session_lost
        return r

    def get(self, *names):
        """{name: value} for the names the session defines (decoded as exec outputs are)."""
        if len(names) == 1 and isinstance(names[0], (list, tuple)):
            names = tuple(names[0])
        reply = self.client.request("session.get", session=self.id, names=[str(n) for n in names])
        return {k: decode_value(v) for k, v in (reply.get("variables") or {}).items()}

    def close(self):
        """Ends the session and kills its worker; a session already gone is not an error."""
        try:
            self.client.request("session.close", session=self.id)
        except PyfenceError as e:
            # timeout: the Client closed the connection (see reply_timeout), as for connect.
            if e.code not in ("not_found", "session_lost", "connect", "timeout"):
                raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<pyfence.Session {self.id}>"


# ---- smolagents adapter ------------------------------------------------------------------------

@dataclasses.dataclass
class CodeOutput:
    """Like smolagents.local_python_executor.CodeOutput."""

    output: object
    logs: str
    is_final_answer: bool


class PyfenceExecutor:
    """A smolagents-style executor backed by pyfenced.

        executor = PyfenceExecutor(additional_authorized_imports=["numpy"])
        executor.send_variables({"x": 3})
        out = executor("y = x * 2\\nprint(y)\\nfinal_answer(y)")
        out.output, out.logs, out.is_final_answer      # 6, '6\\n', True

    By default each call runs in a fresh worker (no state is kept between calls). With
    session=True the calls share one session, as smolagents' local executor shares its state:
    what a call defines, the next sees; send_variables() defines variables in it. The session is
    opened detached on the first call, so it survives a reconnect, and closed by close(). If
    its worker dies (a memory limit, say), that call raises ExecutionError saying the session
    was lost, and the next call opens a new session (with the variables sent so far).
    profile= names a profile the caller may use (default: its own) for every call, in fresh
    workers or in the session. reply_timeout= is the Client's (a backstop against a stalled
    daemon; it does not apply to a client= passed in, which has its own).
    A connection the daemon closed while idle is reopened on the next call. A snippet that raises or
    hits a limit raises ExecutionError, whose message is smolagents' ("Code execution failed at
    line ... due to: ...") and whose .logs holds what it printed. Tools cannot cross the
    process boundary: send_tools() accepts only `final_answer`, which the executor provides.
    """

    def __init__(self, additional_authorized_imports=(), socket_path=None, timeout=None, client=None,
                 limits=None, session=False, profile=None, reply_timeout=None):
        self.additional_authorized_imports = list(additional_authorized_imports)
        self.timeout = timeout
        self.limits = dict(limits or {})
        self.state = {}
        self.use_session = bool(session)
        self.profile = profile
        self.session = None  # the Session, once the first call opened it
        self._pending = {}  # variables sent since the session's last call
        self._client = client or Client(socket_path, reply_timeout=reply_timeout)
        self._own_client = client is None

    def send_variables(self, variables):
        encode_value(variables)  # fail now, not at the next call, if a value cannot cross
        self.state.update(variables)
        self._pending.update(variables)

    def _submit_session(self, code_action):
        if self.session is None:
            self.session = self._client.open_session(
                profile=self.profile, imports=self.additional_authorized_imports,
                limits=self.limits or None, variables=self.state or None, detach=True,
                timeout=self.timeout)
            self._pending = {}
        rid = self.session.submit(code_action, variables=self._pending or None)
        self._pending = {}
        return rid

    def _submit(self, code_action):
        if self.use_session:
            return self._submit_session(code_action)
        return self._client.submit(code_action, timeout=self.timeout,
                                   imports=self.additional_authorized_imports,
                                   limits=self.limits or None, variables=self.state or None,
                                   profile=self.profile)

    def send_tools(self, tools):
        others = sorted(name for name in tools if name != "final_answer")
        if others:
            raise NotImplementedError(f"pyfenced cannot call Python tools across the sandbox: {', '.join(others)}")

    def __call__(self, code_action):
        try:
            rid = self._submit(code_action)
        except PyfenceError as e:
            # pyfenced closes idle connections (conn_idle_timeout_ms): an agent may think for
            # longer than that. The request was not sent, so sending it again is safe; the
            # session is detached, so the new connection resumes it.
            if e.code != "connect" or not self._own_client:
                raise
            self._client.close()
            self._client = Client(self._client.socket_path, reply_timeout=self._client.reply_timeout)
            if self.session is not None:
                self.session = self._client.session(self.session.id)
            rid = self._submit(code_action)
        r = self._client.wait(rid)
        if self.use_session and (r.session_lost or r.outcome == "not_found"):
            self.session = None  # told once, by the error below; the next call starts afresh
        r.raise_for_outcome()
        return CodeOutput(output=r.output, logs=r.logs, is_final_answer=r.is_final_answer)

    def close(self):
        if self.session is not None:
            try:
                self.session.close()
            except PyfenceError:
                pass
            self.session = None
        if self._own_client:
            self._client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
