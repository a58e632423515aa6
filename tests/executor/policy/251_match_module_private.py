# expect: refused Forbidden access to private attribute _sum of module statistics
# A match class pattern reads attributes as the . operator does, a module's private names
# included: they were read there with the value check alone.
import statistics
M = type(statistics)
match statistics:
    case M(_sum=f):
        print(f)
