# imports: argparse, copy, numpy, numpy.*, pandas, pandas.*, typing
# The neighbour of 266: library classes' own __getattr__ still answer ordinary names and the
# dunders the snippet may read, as in CPython (pandas' column and label access, typing's
# _SpecialForm answering __name__, a GroupBy's column), a miss still raises the library's own
# AttributeError (argparse.Namespace), numpy records answer their fields, and copy still copies
# pandas objects whose index holds dunder-named labels.
import argparse, copy, numpy, pandas, typing
df = pandas.DataFrame({'a': [1, 2], 'col': [3, 4]})
s = pandas.Series([1, 2], index=['a', '__name__'])
print(df.col.tolist(), df.a.sum(), s.a, s['__name__'])
print(df.groupby('a').col.sum().tolist())
print(typing.Union.__name__, typing.Optional.__qualname__, typing.Any.__name__)
print(repr(typing.Optional[int]), typing.List[int] == typing.List[int])
ns = argparse.Namespace(x=1)
try:
    ns.y
except AttributeError as e:
    print('miss:', e)
r = numpy.rec.array([(1, 2.5)], dtype=[('x', int), ('y', float)])
print(r.x.tolist(), r[0].y, r[0].x)
d = pandas.Series([1, 2], index=['__deepcopy__', '__copy__'])
c = copy.deepcopy(d)
print(c.tolist(), c.index.tolist(), copy.copy(d).tolist())
