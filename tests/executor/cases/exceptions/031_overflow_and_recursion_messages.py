import math
try:
    math.exp(1000)
except OverflowError as e:
    print('OverflowError', e)
try:
    float('1e400') == math.inf and int(float('inf'))
except OverflowError as e:
    print('OverflowError', e)
'ok'
