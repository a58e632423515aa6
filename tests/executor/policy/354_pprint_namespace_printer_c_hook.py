# imports: pprint, operator, random, functools
# expect: refused Forbidden: pprint's printer _pprint_simplenamespace formatting a type object
# 347 with the value never reaching the walk: filed for slot wrappers in pprint's dispatch
# table, a C callable that keeps its arguments (partial(max, key=lst.append)) received
# object.__getattribute__ from the namespace printer (filed under type.__repr__, formatting
# object's __dict__), and C chains used it from the list to list '/' through random's os.
# Each of pprint's printers formats only what pprint files it for (guard_pprint.c): the namespace
# printer a types.SimpleNamespace, in the table and called directly.
import pprint, operator, random, functools
d = pprint.PrettyPrinter._dispatch
d[type.__repr__] = [v for v in d.values() if v.__name__ == '_pprint_simplenamespace'][0]
lst = []
d[type(object.__repr__).__repr__] = functools.partial(max, key=lst.append)
try:
    pprint.pformat(object, width=5)
except TypeError as e:
    print('max raised after storing:', e)
ga = map(operator.itemgetter(1), [lst, lst, lst])
om = map(operator.itemgetter('_os'), map(operator.call, ga, [random.Random.seed], ['__globals__']))
print('listdir /:', list(map(operator.call, map(operator.call, ga, om, ['listdir']), ['/'])))
