# expect: refused Forbidden access to module: sys
# imports: operator
# attrgetter with several names returns a tuple: its items are never checked.
import operator, statistics, collections
sysmod = operator.attrgetter('sys', 'math')(statistics)[0:1]
mods = operator.attrgetter('modules', 'path')(*sysmod)[0]
fs = operator.attrgetter('compile', 'exec')(*map(mods.get, ['builtins']))
print(fs)
