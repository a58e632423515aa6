# imports: pandas, pandas.*
# expect: refused Forbidden while a snippet runs: pandas.core.accessor's code setting attribute 'kk' of class pandas.core.series.Series
# pandas' accessor registration sets an attribute of pandas' own class, named by the snippet,
# whose value makes the snippet's class from each Series read through it: under a name such
# as __reduce_ex__, copy.deepcopy of any Series would call the snippet's object for its reduce
# tuple.
import pandas
class K:
    def __init__(self, s):
        self.s = s
pandas.api.extensions.register_series_accessor('kk')(K)
print(pandas.Series([1]).kk)
