class Countdown:
    def __init__(self, n):
        self.n = n
    def __iter__(self):
        return self
    def __next__(self):
        if self.n <= 0:
            raise StopIteration
        self.n -= 1
        return self.n + 1
print(list(Countdown(3)))
total = 0
for v in Countdown(4):
    total += v
print(total, sum(Countdown(5)), sorted(Countdown(3)), 2 in Countdown(3))
a, b = Countdown(2)
(a, b)
