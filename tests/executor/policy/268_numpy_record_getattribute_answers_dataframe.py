# imports: numpy, numpy.*, pandas, pandas.*
# expect: logs refused: ValueError `df` does not support __dataframe__
# numpy.record's __getattribute__ (Python code, not __getattr__) answers a field of object
# dtype for any name numpy.void lacks, so a record with a field named '__dataframe__' answered
# the interchange protocol's hook with the snippet's f, which
# pandas.api.interchange.from_dataframe called and trusted. A refused dunder is looked up past
# a library class's Python __getattribute__ while a snippet runs, by the C lookup beneath it.
import numpy, pandas
def f(nan_as_null=False, allow_copy=True):
    print('snippet f ran as __dataframe__')
    return 'not an interchange object'
rec = numpy.rec.array([(f, 1)], dtype=[('__dataframe__', object), ('n', int)])[0]
try:
    pandas.api.interchange.from_dataframe(rec)
except Exception as e:
    print('refused:', type(e).__name__, e)
print(rec['__dataframe__'] is f, rec.n)
