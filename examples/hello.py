# A first pyfence snippet: run it with `pyfence exec examples/hello.py`.
# It runs in a fresh, sandboxed worker. What it prints streams back as it is produced; the value
# of its last expression comes back as the result (here, a dict), like a notebook cell.
import math
import statistics

print("hello from a pyfence worker")

samples = [2.5, 3.1, 4.7, 5.0, 6.2]
mean = statistics.mean(samples)
print(f"mean {mean:.2f}, stdev {statistics.stdev(samples):.2f}")

primes = []
for n in range(2, 30):
    if math.gcd(n, math.prod(primes)) == 1:
        primes.append(n)

{"mean": round(mean, 3), "hypot": math.hypot(3, 4), "primes": primes}
