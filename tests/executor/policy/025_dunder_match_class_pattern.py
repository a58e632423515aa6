# expect: refused Forbidden access to dunder attribute: __class__
match 1:
    case int(__class__=c):
        print(c)
