# imports: inspect, operator
# expect: refused Forbidden access to reflection function: getmembers
# inspect.getmembers reads every attribute of any object and answers them as values the walk
# never sees: a library function's __globals__ held the real builtins, from which C code
# (map, itemgetter, operator.call) took __import__ and imported os. Refused by name and as a
# value (policy.c, refused_functions); case 315 shows the rest of inspect still answering.
import inspect, operator
gl = map(operator.itemgetter('__globals__'), map(dict, map(inspect.getmembers, [inspect.signature])))
bi = map(operator.itemgetter('__builtins__'), gl)
print(list(map(operator.call, map(operator.itemgetter('__import__'), bi), ['os'])))
