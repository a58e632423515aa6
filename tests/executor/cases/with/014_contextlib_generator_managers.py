# imports: contextlib
# contextlib's generator-based managers drive snippet generators with throw(type, value, tb):
# handled, re-raised, converted, StopIteration passing through; suppress and ExitStack.
import contextlib
@contextlib.contextmanager
def tag(name, log):
    log.append('<' + name)
    try:
        yield name.upper()
    except KeyError as e:
        log.append('handled ' + repr(e))
    finally:
        log.append(name + '>')
log = []
with tag('a', log) as t:
    log.append(t)
with tag('b', log):
    raise KeyError('k')
try:
    with tag('c', log):
        raise ValueError('v')
except ValueError as e:
    log.append('outer ' + str(e))
print(log)
with contextlib.suppress(ZeroDivisionError):
    1 / 0
with contextlib.ExitStack() as st:
    for n in 'xy':
        st.enter_context(tag(n, log))
    st.callback(log.append, 'cb')
print(log[-6:])
@contextlib.contextmanager
def swallow_gen_exit():
    yield 1
    yield 2
try:
    with swallow_gen_exit():
        pass
except RuntimeError as e:
    print('RuntimeError:', e)
@contextlib.contextmanager
def reraises():
    try:
        yield
    except ValueError:
        raise TypeError('converted')
try:
    with reraises():
        raise ValueError('orig')
except TypeError as e:
    print(repr(e), repr(e.__context__))
@contextlib.contextmanager
def stop_iter():
    yield
try:
    with stop_iter():
        raise StopIteration('si')
except StopIteration as e:
    print('StopIteration passes:', e)
