# expect: native
import statistics, random
def f():
    pass
(type(1), type(random.random), type([].append).__name__, callable(statistics.mean), type(f).__name__ == type(lambda: 0).__name__)
