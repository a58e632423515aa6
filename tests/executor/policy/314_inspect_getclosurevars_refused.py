# imports: inspect, operator
# expect: refused Forbidden access to reflection function: getclosurevars
# inspect.getclosurevars answers the real builtins a function's code names: the real getattr
# (not the snippet's checking one) read a library function's __globals__ for C code, and its
# __import__ imported os. Reached through C code, so refused by name as well as a value.
import inspect, operator
gc = map(operator.attrgetter('getclosurevars'), [inspect])
cv = map(operator.call, gc, [inspect.getmodule])
real_getattr = map(operator.itemgetter('getattr'), map(operator.attrgetter('builtins'), cv))
gl = map(operator.call, real_getattr, [inspect.signature], ['__globals__'])
bi = map(operator.itemgetter('__builtins__'), gl)
print(list(map(operator.call, map(operator.itemgetter('__import__'), bi), ['os'])))
