# imports: copy, enum
# expect: refused Forbidden definition of dunder __copy__ in class E
# enum's functional API files a dunder-named "member" as a plain class attribute, in enum's own
# code: here __copy__, which copy.copy calls and whose answer it returns.
import copy, enum
def answer(self):
    return 'answered by the snippet'
E = enum.Enum('E', [('A', 1), ('__copy__', answer)], module='__main__')
print(copy.copy(E.A))
