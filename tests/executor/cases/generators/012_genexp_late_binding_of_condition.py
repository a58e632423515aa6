limit = 2
g = (x for x in range(5) if x < limit)
limit = 4
list(g)
