x = 3
items = [1, 2]
(f'{x = }', f'{x=}', f'{x*2 = :>4}', f'{len(items)=}', f'{x!r:>3}|')
