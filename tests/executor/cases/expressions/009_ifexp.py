x = 3
print('odd' if x % 2 else 'even', 'big' if x > 10 else 'small' if x > 1 else 'tiny')
y = [i if i % 2 else -i for i in range(6)]
print(y)
'yes' if y else 'no'
