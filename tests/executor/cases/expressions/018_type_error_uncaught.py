# expect: native
x = [1, 2]
print(len(x))
x + 1
