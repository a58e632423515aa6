items = {'a': [1, 2], 'b': [3]}
print(f"{', '.join(f'{k}={sum(v)}' for k, v in items.items())}")
print(f"{[x ** 2 for x in range(4)]}", f"{'yes' if items else 'no'}", f"{items['a'][1]}")
width = 6
f"{'|':>{width}}"
