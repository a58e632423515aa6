# imports: json,operator
# expect: refused Forbidden access to introspection attribute: gi_frame
# attrgetter walks a dotted path with CPython's getattr, handing the frame's globals (and
# through them the real eval) straight back: every step of the path is checked by name.
import json, operator
it = json.JSONEncoder(indent=1).iterencode({'a': [1, 2, 3]})
next(it)
operator.attrgetter('gi_frame.f_globals')(it)['__builtins__']['eval']('1 + 1', {})
