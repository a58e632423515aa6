# Unpacking errors, starred targets and displays, return/break/continue in finally,
# while/for else, subscripts evaluated once in augmented assignment, walrus, RecursionError.
cases = [lambda: [a for a, b in [(1, 2, 3)]], lambda: (lambda: [a for a, b in [(1,)]])()]
def u1():
    a, b = [1, 2, 3]
def u2():
    a, b, c = 'ab'
def u3():
    a, *b, c = [1]
def u4():
    a, b = 5
for fn in [u1, u2, u3, u4] + cases:
    try:
        fn()
    except (ValueError, TypeError) as e:
        print(type(e).__name__, e)
a, *b, c = range(6)
print(a, b, c, [*b, *'xy'], {**{'a': 1}, 'b': 2, **{'a': 3}}, *[1, 2], sep='|')
def fin():
    for i in range(3):
        try:
            if i == 1:
                return 'ret'
        finally:
            if i == 1:
                break
    return 'after break'
print(fin())
def fin2():
    try:
        raise ValueError('lost')
    finally:
        return 'finally wins'
print(fin2())
def fin3():
    out = []
    for i in range(3):
        try:
            continue
        finally:
            out.append(i)
    return out
print(fin3())
n = 0
while n < 3:
    n += 1
else:
    print('while else', n)
for x in iter([]):
    pass
else:
    print('for else')
d = {'k': [0]}
calls = []
def key():
    calls.append(1)
    return 'k'
d[key()][0] += 5
print(d, calls)
print(1 < 2 < 3 > 2, (lambda: (yield from []))() is not None, [y := 10, y * 2])
print([(i, j) for i in range(3) if (j := i * i) > 0], j)
x = [1, 2, 3]
del x[0], x[-1]
print(x)
try:
    del undefined_name
except NameError as e:
    print('NameError on del')
def rec(n):
    return rec(n + 1)
try:
    rec(0)
except RecursionError as e:
    print('RecursionError', str(e)[:30])
