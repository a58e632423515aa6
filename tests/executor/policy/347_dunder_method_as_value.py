# imports: pprint, json, operator, random
# expect: refused Forbidden: pprint's printer _pprint_simplenamespace formatting a type object
# A method named after an attribute the snippet may not read is refused as a value too, however
# it was reached. pprint's namespace printer, filed by the snippet under type.__repr__ in the
# class-level dispatch table, formatted object's __dict__ and handed each value to the printer
# filed for its type: a snippet hook got object.__getattribute__, an unchecked getattr. In C
# chains it read json.dumps.__globals__ (codecs.open read /etc/hostname), random's os
# (listdir('/')) and json.dumps.__kwdefaults__ (json.dumps patched for every caller). The value
# rule is shown by unit test test_dunder_methods_as_values; since case 354 the namespace
# printer formats only a types.SimpleNamespace (guard_pprint.c), which refuses this first.
import pprint, json, operator, random
d = pprint.PrettyPrinter._dispatch
d[type.__repr__] = [v for v in d.values() if v.__name__ == '_pprint_simplenamespace'][0]
got = []
d[type(object.__repr__).__repr__] = lambda self, obj, *rest: got.append(obj)
pprint.pformat(object, width=5)
ga = [v for v in got if 'getattribute' in repr(v)][0]
om = map(operator.itemgetter('_os'), map(ga, [random.Random.seed], ['__globals__']))
print('listdir /:', list(map(len, map(operator.call, map(ga, om, ['listdir']), ['/']))))
