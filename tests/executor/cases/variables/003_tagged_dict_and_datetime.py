# variables: {"d": {"$type": "dict", "items": [[1, "one"], [{"$type": "tuple", "items": [2, 3]}, "tuple-key"]]}, "when": {"$type": "datetime", "iso": "2024-05-06T07:08:09"}, "dur": {"$type": "timedelta", "days": 1, "seconds": 30, "microseconds": 0}, "z": {"$type": "complex", "real": 1.5, "imag": -2}}
import datetime
print(d, when, dur, z)
(d[1], when + dur, when.year, z.conjugate())
