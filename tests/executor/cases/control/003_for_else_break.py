def find(seq, target):
    for i, v in enumerate(seq):
        if v == target:
            print('found at', i)
            break
    else:
        print('not found')
        return -1
    return i
find([1, 2, 3], 2)
find([1, 2, 3], 9)
