# expect: refused Forbidden access to dunder attribute: __dict__
match 1:
    case int(__dict__=c):
        print(c)
