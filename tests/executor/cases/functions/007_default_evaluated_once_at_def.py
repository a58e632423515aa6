import time
calls = []
def stamp():
    calls.append(len(calls))
    return len(calls)
def f(v=stamp()):
    return v
print(f(), f(), f(10), calls)
x = 5
def g(a=x):
    return a
x = 6
g()
