# imports: copy, functools, types
# expect: logs routes: A A A A A A
# However __getattr__ reaches the class, the dispatcher is the type's slot: a subclass inheriting
# it, functools.partial, a callable object, staticmethod, type(name, bases, ns), types.new_class.
# Each answers ordinary names ('A') and is not asked for __deepcopy__.
import copy, functools, types
def answer(obj, name):
    if name == '__deepcopy__':
        def dc(memo):
            raise RuntimeError('deepcopy hook ran')
        return dc
    return 'A'
class Base:
    __getattr__ = answer
class Child(Base):
    pass
class ByPartial:
    __getattr__ = functools.partial(answer, None)
class Caller:
    def __call__(self, name):
        return answer(None, name)
class ByObject:
    __getattr__ = Caller()
class ByStatic:
    __getattr__ = staticmethod(lambda name: answer(None, name))
ByType = type('ByType', (), {'__getattr__': answer})
ByNewClass = types.new_class('ByNewClass', (), {},
                             lambda ns: ns.update(__getattr__=answer, __module__='__main__'))
got = []
for cls in (Child, ByPartial, ByObject, ByStatic, ByType, ByNewClass):
    obj = cls()
    got.append(type(copy.deepcopy(obj)) is cls and obj.x)
print('routes:', *got)
