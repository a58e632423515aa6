# imports: copy, json, operator
# expect: refused Forbidden access to dunder attribute: __globals__
# A C method's reducer is (getattr, (obj, name)), and deepcopy copies those arguments through
# the memo, which the snippet may fill: a dict subclass answering json.dumps for str (a type's
# id is its hash << 4) and '__globals__' for the name had copy's frame call the real getattr,
# which handed out json's namespace and the real builtins in the list deepcopy rebuilt. The
# real getattr as a reducer's function now reads as the snippet's getattr does.
import copy, json, operator
class Memo(dict):
    def __init__(self, target, name):
        self.target, self.name, self.state = target, name, 0
    def get(self, key, default=None):
        if key == hash(str) << 4:
            self.state = 1
            return self.target
        if self.state == 1:
            self.state = 2
            return self.name
        return default
G = copy.deepcopy([str.join], Memo(json.dumps, '__globals__'))
print(list(map(operator.itemgetter('__builtins__'), G)))
