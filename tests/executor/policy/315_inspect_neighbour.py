# imports: inspect
# The neighbour of 313 and 314: the rest of inspect (signatures, docs, the is* checks, a class's
# MRO) answers as in CPython.
import inspect
class K(dict):
    "A mapping."
sig = inspect.signature(inspect.getdoc)
print(sig, list(sig.parameters), inspect.getdoc(K), inspect.cleandoc('  a\n    b'))
print(inspect.isclass(K), inspect.isbuiltin(len), inspect.ismodule(inspect), inspect.isfunction(len))
print([c.__name__ for c in inspect.getmro(K)])
