# imports: argparse, copy
# expect: refused Forbidden keyword argument __reduce_ex__
# The same through a keyword written in the call (the parser allows any identifier) and
# argparse.Namespace, whose __init__ does setattr(self, name, kwargs[name]): copy.copy's
# getattr(x, '__reduce_ex__') finds it in the instance dict first, calls it, and then calls
# and writes what it answers.
import argparse, copy
def reduce(proto):
    print('reduce hook ran')
    return (dict, (), None, None, iter([('k', 'v')]))
ns = argparse.Namespace(__reduce_ex__=reduce)
print(copy.copy(ns))
