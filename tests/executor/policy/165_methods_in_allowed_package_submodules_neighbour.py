# imports: json
# A package's classes keep their methods in its submodules (json.JSONEncoder's are in
# json.encoder): allowing the package allows holding and calling them.
import json
e = json.JSONEncoder(indent=1)
encode = e.encode
print(encode([1]), e.encode({"a": 1}), json.JSONDecodeError("m", "d", 0).msg)
"".join(e.iterencode({"b": [2]}))
