s = 'é'
print(f'{s!a}', f'{s!r}', f'{[1, "a"]}', f'{None}', f'{True:d}')
f'{3 + 4j}'
