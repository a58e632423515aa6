log = []
def src():
    for i in range(3):
        log.append(i)
        yield i
ge = (x * 2 for x in src())
print(log)
first = next(ge)
print(first, log)
print(list(ge), log)
sum(x for x in range(10) if x % 2)
