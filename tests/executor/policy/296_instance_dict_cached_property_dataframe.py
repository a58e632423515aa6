# imports: pandas, pandas.*, functools
# expect: logs refused: ValueError `df` does not support __dataframe__
# functools.cached_property writes what its function returns into the instance dict under its
# attrname, which the snippet may set: '__dataframe__', a hook its class may not define. CPython's
# lookup found the instance dict's entry, and pandas.api.interchange.from_dataframe called the
# snippet's hook (policy case 266's attack by another route). A dunder a snippet's class may not
# define is now answered by the class alone on its instances: the lookup misses, and pandas takes
# its ordinary path.
import functools, pandas
def mk(self):
    def hook(nan_as_null=False, allow_copy=True):
        print('snippet hook ran as __dataframe__')
        return 'not an interchange object'
    return hook
cp = functools.cached_property(mk)
class K:
    p = cp
cp.attrname = '__dataframe__'
k = K()
print(callable(k.p))
try:
    pandas.api.interchange.from_dataframe(k)
except Exception as e:
    print('refused:', type(e).__name__, e)
