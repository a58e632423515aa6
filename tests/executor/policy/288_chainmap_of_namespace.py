# imports: pandas, pandas.*
# expect: refused Forbidden access to a module's namespace
# A ChainMap whose maps hold a module's namespace (a dict holding __builtins__) is one: pandas'
# Scope copies its caller's frame's globals into a DeepChainMap (a ChainMap of a ChainMap).
from pandas.core.computation.scope import ensure_scope
cm = ensure_scope(0).scope
print(type(cm).__name__, len(cm))
