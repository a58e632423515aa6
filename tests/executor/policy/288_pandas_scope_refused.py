# imports: pandas, pandas.*
# expect: refused Forbidden access to pandas.core.computation.scope.ensure_scope
# pandas' Scope copies its caller's frame's globals into the ChainMap it hands out: its module
# is covered by no wildcard ("pandas.*") and no allowed package (policy.c). pandas' own users
# of it (eval, query) compile their expression, refused anyway.
# Its functions are refused as values however they are reached (eval's module imports one).
import pandas
print(pandas.__name__)
try:
    import pandas.core.computation.scope as sc
    print(sc)
except Exception as e:
    print(type(e).__name__, e)
from pandas.core.computation.eval import ensure_scope
print(ensure_scope(0))
