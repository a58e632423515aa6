# imports: pandas, pandas.*
# expect: logs refused: ValueError `df` does not support __dataframe__
# pandas' NDFrame.__getattr__ answers s[name] for a label of an object index, so a Series
# labelled '__dataframe__' answered the interchange protocol's hook with the snippet's f:
# pandas.api.interchange.from_dataframe called it and trusted what it answered (buffer
# pointers it reads through ctypes). A refused dunder is no longer asked of a library class's
# __getattr__ while a snippet runs: the lookup misses, and pandas takes its ordinary path.
import pandas
def f(nan_as_null=False, allow_copy=True):
    print('snippet f ran as __dataframe__')
    return 'not an interchange object'
s = pandas.Series([f], index=['__dataframe__'])
try:
    pandas.api.interchange.from_dataframe(s)
except Exception as e:
    print('refused:', type(e).__name__, e)
print(s['__dataframe__'] is f, s.index[0])
