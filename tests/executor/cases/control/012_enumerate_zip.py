names = ['ann', 'bob', 'cy']
ages = [31, 25]
for i, name in enumerate(names, start=1):
    print(i, name)
for n, a in zip(names, ages):
    print(n, a)
list(zip(*[(1, 'a'), (2, 'b')]))
