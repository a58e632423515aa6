# imports: json
# expect: refused Forbidden access to introspection attribute: gi_frame
# iterencode without the C accelerator is a real CPython generator, with a real frame.
import json
it = json.JSONEncoder(indent=1).iterencode({'a': 1})
it.gi_frame
