# expect: native
try:
    1 / 0
except ZeroDivisionError:
    [][1]
