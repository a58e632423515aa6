# imports: json
# expect: refused Forbidden access to introspection attribute: gi_frame
import json
it = json.JSONEncoder(indent=1).iterencode({'a': 1})
match it:
    case object(gi_frame=f):
        f.f_globals
