# imports: json
# expect: native
import json
''.join(json.JSONEncoder(indent=1).iterencode({'a': [1, 2]}))
