import random
rng = random.Random(2024)
rolls = [rng.randint(1, 6) + rng.randint(1, 6) for _ in range(1000)]
hist = {s: rolls.count(s) for s in range(2, 13)}
most = max(hist, key=hist.get)
print(most, hist[most])
(sum(rolls), sorted(hist.items())[:3])
