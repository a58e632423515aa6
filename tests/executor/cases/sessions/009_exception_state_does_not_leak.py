try:
    1 / 0
except ZeroDivisionError as e:
    msg = str(e)
# ---
try:
    e
except NameError:
    print('e not kept')
msg
