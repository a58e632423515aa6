import random
random.seed(42)
a = [random.randint(1, 100) for _ in range(5)]
random.seed(42)
b = [random.randint(1, 100) for _ in range(5)]
print(a == b, a)
rng = random.Random(7)
print(rng.random(), rng.choice('abcdef'), rng.sample(range(10), 3))
items = list(range(6))
rng.shuffle(items)
items
