# expect: native
def level3(d):
    return d['missing']
def level2(d):
    return level3(d)
def level1():
    return level2({})
level1()
