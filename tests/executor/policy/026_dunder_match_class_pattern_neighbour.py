# expect: native
match 3 + 4j:
    case complex(real=r, imag=i):
        result = (r, i)
result
