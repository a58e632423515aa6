# imports: pandas, pandas.*, operator
# expect: refused Forbidden access to class PyTablesScope: a subclass of Scope
# A subclass of Scope defined elsewhere (pytables' PyTablesScope) reads its caller's frame
# just the same: refused by its base, not by its own module.
import operator
from pandas.core.computation.pytables import PyTablesScope
bi = list(map(operator.itemgetter('__builtins__'), [PyTablesScope(0).scope]))
print(len(bi))
