it = iter([1])
print(next(it), next(it, 'default'))
try:
    next(it)
except StopIteration:
    print('StopIteration caught')
'ok'
