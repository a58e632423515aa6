# imports: copy, numpy, pandas, collections, datetime, decimal, fractions, re, functools
# The neighbour of case 306: copy writes state and items only into an object the reducer's
# function has just made, and the reducers of the objects below make one (numpy's dtype makes
# a new dtype when asked to copy; re's cached patterns come with no state): copying them
# agrees with CPython.
import copy, numpy as np, pandas as pd, collections, datetime, decimal, fractions, re, functools
d = np.dtype('f8')
print(copy.copy(d), copy.deepcopy(d), copy.deepcopy({'t': np.dtype('i4'), 'a': np.arange(3)}))
print(copy.deepcopy(pd.CategoricalDtype(['a'])), copy.copy(pd.CategoricalDtype(['b'])))
df = pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})
print(copy.deepcopy(df).shape, copy.copy(df['a']).tolist(), copy.deepcopy(pd.Timestamp('2026-01-01')))
od = collections.OrderedDict(a=1); od.extra = 5
print(copy.copy(od), copy.deepcopy(collections.Counter('aab')), copy.deepcopy(collections.deque([1, 2], 3)))
print(copy.deepcopy(collections.defaultdict(list, a=[1])), copy.copy(re.compile('a+')))
print(copy.deepcopy(functools.partial(max, 1)).args, copy.deepcopy(decimal.Decimal('1.5')), copy.copy(fractions.Fraction(1, 3)))
print(copy.deepcopy(datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)), copy.deepcopy(np.float64(2.5)))
Point = collections.namedtuple('Point', 'x y')
print(copy.deepcopy(Point(1, 2)), copy.deepcopy(np.array([Point(1, 2)], dtype=object)))
