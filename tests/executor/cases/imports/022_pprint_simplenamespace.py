# imports: pprint, types
# pprint's namespace printer still formats what CPython files it for: types.SimpleNamespace
# and its subclasses (the executor's version refuses any other object, policy case 354).
import pprint, types
class Point(types.SimpleNamespace):
    pass
ns = types.SimpleNamespace(a=1, b=[1, 2, 3], inner=Point(x=1.5, y='why'))
pprint.pprint(ns, width=20)
print(pprint.pformat(Point(z=None)))
