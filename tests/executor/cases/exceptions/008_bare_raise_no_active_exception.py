# expect: native
raise
