# expect: refused queue's code setting attribute 'maxsize' of module queue
# A module's own method run with the module itself as self: queue.Queue.__init__(queue, 5)
# is queue's code setting queue.maxsize (and mutex, not_empty ... before it fails).
import queue
try:
    queue.Queue.__init__(queue, 5)
except AttributeError:
    pass
print(queue.maxsize)
