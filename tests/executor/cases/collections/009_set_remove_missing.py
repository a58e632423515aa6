# expect: native
s = {1}
s.remove(2)
