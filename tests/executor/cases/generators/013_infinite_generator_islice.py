import itertools
def naturals():
    n = 0
    while True:
        yield n
        n += 1
print(list(itertools.islice(naturals(), 5)))
evens = (n for n in naturals() if n % 2 == 0)
[next(evens) for _ in range(4)]
