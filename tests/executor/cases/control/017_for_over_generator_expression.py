total = 0
for sq in (i * i for i in range(5)):
    total += sq
total
