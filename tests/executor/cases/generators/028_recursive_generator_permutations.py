def perms(items):
    if len(items) <= 1:
        yield list(items)
        return
    for i in range(len(items)):
        for rest in perms(items[:i] + items[i + 1:]):
            yield [items[i]] + rest
[''.join(p) for p in perms('abc')]
