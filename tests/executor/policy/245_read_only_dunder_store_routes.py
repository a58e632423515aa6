# expect: refused Forbidden assignment or deletion of dunder attribute: __bases__
# __class__, __bases__, __mro__, __members__ and __init_subclass__ are read, never set or
# deleted: each store route refuses them (setattr, delattr, del, augmented assignment too),
# and the refusal stops the snippet before anything changes.
class Base0:
    pass
class A(Base0):
    pass
class B:
    pass
for store in (lambda: setattr(A(), '__class__', B), lambda: delattr(A, '__mro__')):
    try:
        store()
    except Exception as e:
        print(type(e).__name__, e)
print(A.__bases__)
A.__bases__ = (B,)
