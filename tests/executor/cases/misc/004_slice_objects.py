s = slice(1, 5, 2)
data = list(range(10))
print(data[s], s.start, s.stop, s.step, slice(3).indices(10), 'abcdef'[slice(None, None, -2)])
data[::3] = [0] * 4
data
