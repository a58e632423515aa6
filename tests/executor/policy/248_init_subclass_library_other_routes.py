# imports: typing, operator
# expect: refused Forbidden access to dunder attribute: __init_subclass__ of a class the snippet did not make
# The same value check on the other routes that hand the snippet the value: getattr,
# operator.attrgetter, a match class pattern.
import operator, typing
for get in (lambda: getattr(typing.Generic, '__init_subclass__'),
            lambda: operator.attrgetter('__init_subclass__')(typing.Generic)):
    try:
        get()
    except Exception as e:
        print(type(e).__name__)
match typing.Generic:
    case type(__init_subclass__=hook):
        hook()
