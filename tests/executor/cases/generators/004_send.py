def acc():
    total = 0
    while True:
        x = yield total
        if x is None:
            break
        total += x
g = acc()
print(next(g), g.send(5), g.send(10))
try:
    g.send(None)
except StopIteration:
    print('stopped')
'ok'
