def counter_factory():
    counts = []
    total = 0
    def add(v):
        nonlocal total
        total += v
        counts.append(total)
    for v in (1, 2, 3):
        add(v)
    return total, counts
counter_factory()
