# expect: native
x = 10
def f():
    print(x)
    x = 5
f()
