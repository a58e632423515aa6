# expect: native
raise ValueError('données invalides: «ñ» ✗')
