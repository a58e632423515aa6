from itertools import count, cycle, islice
c = count(1)
print(next(c), next(c))
print(list(islice(cycle('ab'), 5)))
list(islice(count(0, 2), 4))
