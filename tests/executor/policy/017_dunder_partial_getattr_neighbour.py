# imports: functools
# expect: native
import functools
g = functools.partial(getattr, 3 + 4j)
(g('real'), g('imag'))
