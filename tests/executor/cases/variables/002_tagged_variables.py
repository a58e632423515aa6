# variables: {"t": {"$type": "tuple", "items": [1, 2]}, "s": {"$type": "set", "items": [3, 3, 4]}, "b": {"$type": "bytes", "base64": "aGk="}, "big": {"$type": "int", "value": "123456789012345678901234567890"}, "f": {"$type": "float", "value": "1"}, "nan": {"$type": "float", "value": "nan"}}
print(type(t).__name__, type(s).__name__, b, big + 1, f, nan != nan)
(t, sorted(s), b.decode(), big, f, type(f).__name__)
