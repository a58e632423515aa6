# expect: native
[].pop()
