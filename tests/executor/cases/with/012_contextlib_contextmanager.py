# imports: contextlib
import contextlib
log = []
@contextlib.contextmanager
def tag(name):
    log.append('<' + name + '>')
    try:
        yield name
    finally:
        log.append('</' + name + '>')
with tag('b') as t:
    log.append(t)
with contextlib.suppress(ZeroDivisionError):
    1 / 0
log
