# expect: native
with 5:
    pass
