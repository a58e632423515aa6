# expect: refused Forbidden access to dunder attribute: __dict__
class P:
    __match_args__ = ('__dict__',)
match P():
    case P(d):
        print(d)
