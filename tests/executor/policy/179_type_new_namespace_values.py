# expect: refused Forbidden access to class threading.Condition
# type.__new__(type, name, bases, ns) is the same class creation as type(name, bases, ns).
import queue
q = queue.Queue()
ns = {}
ns.update(zip(['__eq__'], map(type, [q.not_empty])))
T = type.__new__(type, 'T', (), ns)
