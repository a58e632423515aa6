# expect: refused Forbidden access to class threading.Condition
# The values of **mapping reach the callee unchecked as well: sorted's key= would be the
# refused class threading.Condition, which a dict filled by C code (dict.update) holds.
import queue
q = queue.Queue()
kw = {}
kw.update(zip(['key'], map(type, [q.not_empty])))
sorted([q.mutex], **kw)
