# expect: refused Forbidden access to _thread.lock.locked: module _thread is not allowed
# The getattr builtin reads with the same checks as the dot.
import queue
getattr(queue.Queue().mutex, 'locked')
