# imports: dataclasses
# expect: refused to make such a class the snippet's, give its namespace '__module__': '__main__'
# slots=True rebuilds make_dataclass's class with type(), from a namespace that says 'types':
# no maker is known for the new class, so dataclasses may not finish it. The refusal says how
# to make it the snippet's instead (051 does).
import dataclasses
dataclasses.make_dataclass('P', ['x'], slots=True)
