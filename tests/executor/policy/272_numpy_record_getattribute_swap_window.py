# imports: numpy, numpy.*, pandas, pandas.*
# expect: logs inside window: ValueError `df` does not support __dataframe__
# The first lookup on numpy.record (a Python __getattribute__, no __getattr__) ran CPython's
# __getattr__ dispatcher, which put its unchecked simpler dispatcher in the slot and then ran
# record.__getattribute__; the check came back only after it returned. Lookups made meanwhile
# (record.__getattribute__ reading obj.dtype of an object field, K's __getattr__ handing
# another record to from_dataframe) found the snippet's f as the record's __dataframe__. The
# executor now makes the swap itself, to the checked dispatcher, before any Python code runs.
import numpy, pandas
def f(nan_as_null=False, allow_copy=True):
    print('snippet f ran as __dataframe__')
    return 'not an interchange object'
r2 = numpy.rec.array([(f, 1)], dtype=[('__dataframe__', object), ('n', int)])[0]
class K:
    def __getattr__(self, name):
        try:
            pandas.api.interchange.from_dataframe(r2)
        except Exception as e:
            print('inside window:', type(e).__name__, e)
        raise AttributeError(name)
r1 = numpy.rec.array([(K(), 1)], dtype=[('a', object), ('n', int)])[0]
print(type(r1.a).__name__, r1.n)
try:
    pandas.api.interchange.from_dataframe(r2)
except Exception as e:
    print('after:', type(e).__name__, e)
