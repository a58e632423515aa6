class Adder:
    def __init__(self, n):
        self.n = n
    def __call__(self, x):
        return x + self.n
add5 = Adder(5)
print(add5(10), callable(add5), callable(5), list(map(add5, [1, 2])))
add5(-5)
