# imports: pprint, dataclasses, functools, operator, random
# expect: refused Forbidden: pprint's printer _pprint_dataclass formatting a type object
# 354 through pprint's dataclass printer: a snippet dataclass's field renamed
# '__getattribute__' (Field.name is a plain store), the printer filed under type.__repr__
# formatted the class itself, and getattr(DC, '__getattribute__') in pprint's code answered
# object.__getattribute__, handed to a C callable that keeps its arguments; C chains listed
# '/' through random's os. pprint calls its dataclass printer for dataclass instances only:
# so does the executor's version.
import pprint, dataclasses, functools, operator, random
@dataclasses.dataclass
class DC:
    a: int = 1
dataclasses.fields(DC)[0].name = '__getattribute__'
d = pprint.PrettyPrinter._dispatch
d[type.__repr__] = pprint.PrettyPrinter._pprint_dataclass
lst = []
d[type(object.__repr__).__repr__] = functools.partial(max, key=lst.append)
try:
    pprint.pformat(DC, width=5)
except TypeError as e:
    print('max raised after storing:', e)
ga = map(operator.itemgetter(1), [lst, lst, lst])
om = map(operator.itemgetter('_os'), map(operator.call, ga, [random.Random.seed], ['__globals__']))
print('listdir /:', list(map(operator.call, map(operator.call, ga, om, ['listdir']), ['/'])))
