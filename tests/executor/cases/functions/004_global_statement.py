counter = 0
def bump(n):
    global counter
    counter += n
    return counter
bump(2)
bump(3)
def read_only():
    return counter * 10
print(counter, read_only())
counter
