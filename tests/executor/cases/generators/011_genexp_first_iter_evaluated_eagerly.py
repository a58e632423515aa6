# expect: error NameError
def f():
    return (x for x in undefined_iterable_name)
f()
