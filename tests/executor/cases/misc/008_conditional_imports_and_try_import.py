try:
    import math as m
    ok = True
except ImportError:
    ok = False
(ok, m.floor(2.7))
