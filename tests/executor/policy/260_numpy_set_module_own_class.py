# imports: numpy, numpy.*
# expect: refused Forbidden while a snippet runs: numpy.core.overrides's code setting attribute '__module__' of class numpy.poly1d
# numpy's set_module decorator, run on a numpy class, rewrites its __module__: numpy.poly1d would
# have said __main__ and counted as the snippet's own class, free to change.
import numpy
numpy.core.overrides.set_module('__main__')(numpy.poly1d)
numpy.poly1d.deriv = print
print(numpy.poly1d([1, 2]).deriv)
