# imports: copy
# expect: logs copied: K 7 ordinary
# A snippet's class may define __getattr__, but not __deepcopy__ (class_dunders.c): copy's
# getattr(x, '__deepcopy__', None) misses normal lookup and asked __getattr__, whose answer copy
# called. The executor's __getattr__ dispatcher (class_getattr.c) asks __getattr__ only for names
# the class may define: copy finds no __deepcopy__ and copies the object its own way. CPython
# runs the hook (the run then raises): this case is the executor's alone.
import copy
class K:
    def __init__(self):
        self.n = 7
    def __getattr__(self, name):
        if name == '__deepcopy__':
            def dc(memo):
                raise RuntimeError('deepcopy hook ran')
            return dc
        return 'ordinary'
c = copy.deepcopy(K())
print('copied:', type(c).__name__, c.n, c.anything)
