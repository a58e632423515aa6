s = {x % 4 for x in range(10)}
print(sorted(s))
s
