def factor(n):
    out = []
    d = 2
    while d * d <= n:
        while n % d == 0:
            out.append(d)
            n //= d
        d += 1
    if n > 1:
        out.append(n)
    return out
results = {n: factor(n) for n in (2, 12, 97, 360, 2 ** 31 - 1, 600851475143)}
print(results[360])
results
