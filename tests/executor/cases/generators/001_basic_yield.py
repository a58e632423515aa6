def count_up(n):
    i = 0
    while i < n:
        yield i
        i += 1
g = count_up(3)
print(next(g), next(g), next(g), next(g, 'done'))
list(count_up(5))
