# imports: json
# expect: refused Forbidden access to introspection attribute: gi_frame
# str.format resolves fields with CPython's getattr: the repr of a frame's globals would leak.
import json
it = json.JSONEncoder(indent=1).iterencode({'a': [1, 2, 3]})
next(it)
'{0.gi_frame.f_globals[__builtins__]}'.format(it)
