# imports: inspect, enum
# The neighbour of 230 and 231: what library code reads of the run's frame is what a script's
# module frame says (its function is <module>, its module __main__).
import inspect, enum
E = enum.Enum('E', 'A')
info = inspect.stack()[0]
print(info.function, info.filename, E.__module__, type(info).__name__, len(info))
