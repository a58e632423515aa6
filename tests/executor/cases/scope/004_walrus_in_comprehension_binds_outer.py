data = [3, 8, 1]
if any((hit := v) > 5 for v in data):
    print('first over 5:', hit)
[last := v * 2 for v in data]
last
