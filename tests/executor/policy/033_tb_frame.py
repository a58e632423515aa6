# expect: refused Forbidden access to dunder attribute: __traceback__
try:
    1 / 0
except ZeroDivisionError as e:
    e.__traceback__.tb_frame
