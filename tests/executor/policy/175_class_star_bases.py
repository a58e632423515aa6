# expect: refused Forbidden access to class threading.Condition
# class X(*it) hands its bases to CPython unchecked: a subclass of the refused class
# threading.Condition would inherit its constructor and dunders.
import queue
q = queue.Queue()
class Cond(*map(type, [q.not_empty])):
    pass
