# expect: refused Forbidden access to class threading.Condition
# type(name, bases, ns) makes a class whose dunders CPython calls: a namespace filled by C code
# (dict.update) would make the refused class threading.Condition its __eq__, never seen by a
# check. The bases and ns's values are checked.
import queue
q = queue.Queue()
ns = {}
ns.update(zip(['__eq__'], map(type, [q.not_empty])))
T = type('T', (), ns)
T() == q.mutex
