# expect: error NameError
def f():
    return missing_name + 1
f()
