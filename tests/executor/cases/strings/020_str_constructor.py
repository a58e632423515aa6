print(str(1), str(1.5), str([1, 'a']), str(None), str(b'x'), str((1,)), str({'k': 1}))
print(repr(str), str('already'))
str(123) + str(456)
