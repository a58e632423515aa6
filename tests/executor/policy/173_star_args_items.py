# expect: refused Forbidden access to class threading.Condition
# The items of *iterable reach the callee without passing through the walk: map(*L, ...) would
# call whatever a list filled by C code holds (L.extend takes map(type, ...)'s refused class
# threading.Condition straight from the iterator), here running its constructor.
import queue
q = queue.Queue()
L = []
L.extend(map(type, [q.not_empty]))
made = list(map(*L, [q.mutex]))
