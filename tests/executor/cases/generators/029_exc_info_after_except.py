# expect: native
# imports: sys
# Once a generator's except block ends, sys.exc_info() and a bare raise in it see what its
# current resumer handles, not what the one that started the block handled.
import sys


def g():
    try:
        raise ValueError("inside")
    except ValueError:
        yield sys.exc_info()[0]
    yield sys.exc_info()[0]
    try:
        raise
    except RuntimeError as e:
        yield str(e)


try:
    raise IndexError("outer")
except IndexError:
    it = g()
    print(next(it))
print(next(it))
print(next(it))
try:
    raise KeyError("again")
except KeyError:
    it = g()
    print(next(it))
    print(next(it))
