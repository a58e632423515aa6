# Exception notes, explicit and implicit chaining, from None, except*, finally on return.
try:
    try:
        1 / 0
    except ZeroDivisionError as e:
        e.add_note('while dividing')
        raise ValueError('bad') from e
except ValueError as v:
    print(repr(v), repr(v.__cause__), v.__cause__.__notes__, v.__suppress_context__)
try:
    try:
        {}['k']
    except KeyError:
        raise RuntimeError('ctx')
except RuntimeError as r:
    print(repr(r.__context__), r.__cause__, r.__suppress_context__)
try:
    try:
        raise TypeError('t')
    except TypeError:
        raise ValueError('v') from None
except ValueError as v:
    print(v.__cause__, repr(v.__context__), v.__suppress_context__)
class MyErr(Exception):
    def __init__(self, code):
        super().__init__(f'code {code}')
        self.code = code
try:
    raise MyErr(5)
except Exception as e:
    print(type(e).__name__, e, e.code, e.args, isinstance(e, MyErr))
eg = ExceptionGroup('many', [ValueError(1), TypeError(2)])
try:
    raise eg
except* ValueError as g:
    print('vals', repr(g.exceptions))
except* TypeError as g:
    print('types', repr(g.exceptions))
e = ValueError('x')
e.add_note('n1'); e.add_note('n2')
print(e.__notes__, str(e), repr(e))
def f():
    try:
        return 'try'
    finally:
        print('finally runs')
f()
