total = 10
def f():
    return [total + i for i in range(2)]
f()
