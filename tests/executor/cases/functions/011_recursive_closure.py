def make_fact():
    def fact(n):
        return 1 if n == 0 else n * fact(n - 1)
    return fact
make_fact()(10)
