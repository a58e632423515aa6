# imports: json.*
import json.decoder
from json import JSONDecodeError
try:
    json.loads('{bad')
except JSONDecodeError as e:
    print('decode error at', e.pos, e.msg)
json.decoder.JSONDecoder().decode('[1]')
