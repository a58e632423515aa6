def stats(xs):
    return min(xs), max(xs), sum(xs) / len(xs)
lo, hi, avg = stats([2, 4, 9])
print(lo, hi, avg)
stats([1])
