# expect: native
x = 5
x()
