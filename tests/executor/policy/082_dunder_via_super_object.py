# expect: refused Forbidden access to dunder attribute: __getattribute__
class A:
    pass
object.__getattribute__(A(), 'x')
