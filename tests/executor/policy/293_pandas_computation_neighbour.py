# imports: pandas, pandas.*
# The neighbour of 288-292: the rest of pandas.core.computation, and pandas used as usual.
import pandas
import pandas.core.computation.expressions as expressions
from pandas.core.computation.pytables import PyTablesExpr
df = pandas.DataFrame({'a': [1, 2, 3], 'b': [4.0, 5.0, 6.0]})
print(expressions.USE_NUMEXPR in (True, False), PyTablesExpr.__name__)
print((df.a + df.b).tolist(), df.apply(lambda r: r.a * 2, axis=1).tolist(), df.sum().to_dict())
