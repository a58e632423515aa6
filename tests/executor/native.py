# The native side of the differential harness: runs a snippet with CPython itself, the way the
# executor's contract defines the result (smolagents): print output captured, the value of the
# last expression statement (or of final_answer(x)), and the exception type and message.
# Embedded into differential.c and bench_executor.c at build time; trusted code only.
import ast
import builtins
import contextlib
import io


class _FinalAnswer(BaseException):
    def __init__(self, value):
        super().__init__()
        self.value = value


def _final_answer(value):
    raise _FinalAnswer(value)


def compile_snippet(src):
    """Returns (body code, last-expression code or None)."""
    tree = ast.parse(src, "<snippet>")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
        last = compile(last, "<snippet>", "eval")
    return compile(tree, "<snippet>", "exec"), last


class _Out:
    """Where print writes, and sys.stdout and sys.stderr while a snippet runs; a session swaps
    in a fresh buffer for each snippet."""

    closed = False
    encoding = "utf-8"

    def __init__(self):
        self.buf = io.StringIO()

    def write(self, text):
        return self.buf.write(text)

    def flush(self):
        pass

    def writable(self):
        return True

    def writelines(self, lines):
        for line in lines:
            self.buf.write(line)


def fresh_globals(out):
    def _print(*args, **kwargs):
        if kwargs.get("file") is None:
            kwargs["file"] = out
        builtins.print(*args, **kwargs)

    bi = dict(builtins.__dict__)
    bi["print"] = _print
    bi["final_answer"] = _final_answer
    return {"__builtins__": bi, "__name__": "__main__"}


class Session:
    """One namespace kept across snippets, like an executor session; variables are injected
    into it first (name -> value, already converted from tagged JSON)."""

    def __init__(self, variables=None):
        self.out = _Out()
        self.g = fresh_globals(self.out)
        self.g.update(variables or {})

    def run(self, src):
        """-> (logs, value, is_final_answer, exc_type or None, exc_message or None, repr or None)"""
        self.out.buf = io.StringIO()
        value, final, etype, emsg = None, False, None, None
        # what library code writes to sys.stdout or sys.stderr is in the executor's logs too
        redirect = contextlib.ExitStack()
        redirect.enter_context(contextlib.redirect_stdout(self.out))
        redirect.enter_context(contextlib.redirect_stderr(self.out))
        try:
            with redirect:
                body, last = compile_snippet(src)
                exec(body, self.g)
                if last is not None:
                    value = eval(last, self.g)
        except _FinalAnswer as f:
            value, final = f.value, True
        except SyntaxError as e:
            etype, emsg = "SyntaxError", e.msg
        except BaseException as e:  # noqa: B036 - snippets may raise anything
            etype, emsg = type(e).__name__, str(e)
        try:
            shown = None if value is None else repr(value)
        except BaseException as e:  # noqa: B036
            shown = "<repr() raised %s>" % type(e).__name__
        return self.out.buf.getvalue(), value, final, etype, emsg, shown


def run(src):
    return Session().run(src)


def bench(src, runs):
    """Best-of-runs wall time in seconds of one native run (compile excluded), for the bench."""
    import time

    body, last = compile_snippet(src)
    best = None
    for _ in range(runs):
        g = fresh_globals(io.StringIO())
        t0 = time.perf_counter()
        try:
            exec(body, g)
            if last is not None:
                eval(last, g)
        except _FinalAnswer:
            pass
        dt = time.perf_counter() - t0
        best = dt if best is None or dt < best else best
    return best
