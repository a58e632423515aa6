# expect: refused Forbidden access to class _thread.lock: module _thread is not allowed
# Holding a class of a module the profile does not allow is refused: calling it runs its
# constructor, and its methods are one attribute away.
import queue
type(queue.Queue().mutex)
