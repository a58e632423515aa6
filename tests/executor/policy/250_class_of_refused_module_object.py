# imports: operator
# expect: refused Forbidden access to class _thread.lock: module _thread is not allowed
# x.__class__ answers what type(x) does and is checked alike: an allowed object's lock is a
# _thread.lock, whose class (its constructor) the profile does not allow.
import operator, queue
q = queue.Queue()
try:
    operator.attrgetter('mutex.__class__')(q)
except Exception as e:
    print(type(e).__name__, e)
q.mutex.__class__
