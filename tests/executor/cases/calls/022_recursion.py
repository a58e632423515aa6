def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
print(fact(20), fib(15), [fib(i) for i in range(10)])
fact(30)
