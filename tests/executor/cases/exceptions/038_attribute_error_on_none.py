# expect: native
result = None
result.append(1)
