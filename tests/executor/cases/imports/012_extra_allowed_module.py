# imports: json
import json
s = json.dumps({'b': [1, 2.5, None], 'a': True}, sort_keys=True)
print(s, json.loads(s)['b'], json.dumps('é'), json.dumps([1], indent=2))
json.loads('{"x": {"y": [1, 2]}}')
