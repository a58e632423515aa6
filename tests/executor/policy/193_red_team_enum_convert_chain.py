# expect: refused Forbidden access to module namespace helper: _convert_
# imports: enum
# Enum._convert_ copies any module's namespace into an enum whose __module__ is 'builtins'
# (always allowed); _value2member_map_ hands the real exec/compile out inside a dict, whose
# keys no check sees; map(*list, ...) calls them; from inside namedtuple's frame the audit hook
# allows compile/exec, and a code object named <frozen importlib._bootstrap> then disables it.
import enum, collections
class E(enum.Enum):
    pass
B = E._convert_('PfB', 'builtins', lambda n: n in ('exec', 'compile'))
fs = list(B._value2member_map_)
g = dict(zip(['COMPILE', 'EXEC'], fs))
g['out'] = out = []
src = ("import builtins; builtins.exec = EXEC; builtins.compile = COMPILE\n"
       "import os\nout.append(os.getpid() > 0)\n")
class Names:
    def __iter__(self):
        code = list(map(*fs[0:1], [src], ['<frozen importlib._bootstrap>'], ['exec']))
        list(map(*fs[1:2], code, [g]))
        return iter(['a'])
collections.namedtuple('T', Names())
print('escaped:', out)
