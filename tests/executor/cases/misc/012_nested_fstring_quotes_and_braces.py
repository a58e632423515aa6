d = {'k': 'v'}
items = ['a', 'b']
(f"{d['k']}", f'{",".join(items)}', f"{{{d['k']}}}", f"{'{'}", f'{len(items)!r:>4}')
