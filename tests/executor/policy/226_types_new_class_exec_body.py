# imports: types
# expect: refused Forbidden definition of dunder __del__ in class K
# types.new_class fills the namespace by calling the snippet's exec_body, then makes the class
# in types' own code: the walk never sees the namespace. (ns.update(__del__=fin) is refused
# sooner, as a keyword argument: eval_call.c.)
import types
def fin(self):
    print('freed')
K = types.new_class('K', (), {}, lambda ns: ns.update({'__del__': fin, '__module__': '__main__'}))
k = K()
del k
