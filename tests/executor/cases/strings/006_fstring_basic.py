name = 'Ada'
n = 3
pi = 3.14159
print(f'{name} has {n} items', f'{n * 2}', f'{name!r}', f'{name!s:>6}|', f'{pi:.2f}', f'{n:03d}')
print(f'{{literal}}', f'{"nested quotes"}', f'{n=}', f'{pi=:.1f}')
f'{name.upper()}-{len(name)}'
