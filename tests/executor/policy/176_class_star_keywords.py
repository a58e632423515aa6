# expect: refused Forbidden access to class threading.Condition
# class X(**d): the keyword values (metaclass=) are handed to CPython, which calls the
# metaclass: here the refused class threading.Condition, from a dict filled by C code.
import queue
q = queue.Queue()
kw = {}
kw.update(zip(['metaclass'], map(type, [q.not_empty])))
class X(**kw):
    pass
