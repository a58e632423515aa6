# imports: dataclasses
# expect: refused snippet code called back while dataclasses builds a class
# A field name that is a str subclass runs its __format__ when dataclasses puts it into source
# text: it changed the name to a plain identifier there, so the audit hook's check at the exec
# passed, and returned code that became a default value (run at the exec). No snippet code runs
# while dataclasses builds a class.
import dataclasses
class S(str):
    def __format__(self, spec):
        dataclasses.fields(D)[0].name = "x"
        return "x=0,*,q=__import__('os').getpid()"
class D:
    __annotations__ = {S("x"): int}
dataclasses.dataclass(D)
