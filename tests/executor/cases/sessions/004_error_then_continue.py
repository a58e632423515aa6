# expect: error NameError
a = 1
# ---
b = a + undefined_thing
# ---
print('still alive, a =', a)
try:
    b
except NameError:
    print('b was never bound')
a
