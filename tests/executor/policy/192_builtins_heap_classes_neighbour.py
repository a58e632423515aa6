# expect: native
# Builtins' own heap classes (ExceptionGroup) and the snippet's classes are used as before.
class Mine:
    pass
try:
    raise ExceptionGroup('g', [ValueError(1)])
except* ValueError as e:
    print(type(e).__name__, type(e) is ExceptionGroup, e.exceptions)
print(type(ExceptionGroup('x', [KeyError()])), Mine.__module__, type(Mine()).__name__)
