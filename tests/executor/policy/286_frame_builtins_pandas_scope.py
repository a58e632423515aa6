# imports: pandas, pandas.*, operator, json, typing
# expect: refused pandas.core.computation.scope
# Red-team finding: pandas' Scope copies its caller's frame's globals (the run's frame's, whose
# __builtins__ were the interpreter's) into a ChainMap, and C code (map, itemgetter, call) used
# them where no value check looks. Closed by the frame's own builtins (its __import__ refuses
# os: "Forbidden import of module os", test_exec_policy's test_frame_builtins), by ChainMaps
# of namespaces being refused (test_chainmap_namespace), and, first, by pandas' scope module
# being covered by no wildcard: "Import of pandas.core.computation.scope is not allowed".
import operator
from pandas.core.computation.scope import ensure_scope
bi = list(map(operator.itemgetter('__builtins__'), [ensure_scope(0).scope]))
os_ = list(map(operator.call, map(operator.itemgetter('__import__'), bi), ['os']))
print('imported', os_)
