# imports: functools
import functools
@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
print(fib(60), functools.reduce(lambda a, b: a * b, range(1, 6)))
p = functools.partial(int, base=2)
print(p('1011'))
@functools.wraps(fib)
def wrapper():
    return 1
sorted([3, 1, 2], key=functools.cmp_to_key(lambda a, b: b - a))
