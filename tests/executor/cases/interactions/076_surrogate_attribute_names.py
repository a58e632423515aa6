# Names the snippet computes may hold a lone surrogate (no UTF-8 form): the policy's checks
# must look at the str itself (this crashed the executor: strlen(NULL)).
name = '\ud800'
print(hasattr(1, name), getattr(1, name, 'default'))
for f in (lambda: getattr(1, name), lambda: delattr(1, name), lambda: ('{0.' + name + '}').format(1)):
    try:
        f()
    except AttributeError as e:
        print('AttributeError', repr(str(e)))
class C:
    __match_args__ = (name,)
c = C()
setattr(c, name, 5)
match c:
    case C(v):
        print('matched', v)
getattr(c, name)
