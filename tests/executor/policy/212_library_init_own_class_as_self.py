# imports: json
# expect: refused json.encoder's code setting attribute 'skipkeys' of class json.encoder.JSONEncoder
# A library's own method run with its own class as self: JSONEncoder.__init__(JSONEncoder, ...)
# is json's code setting JSONEncoder.item_separator, a class attribute other encoders read.
import json
json.JSONEncoder.__init__(json.JSONEncoder, separators=(';', ':'))
print(json.dumps([1, 2], sort_keys=True))
