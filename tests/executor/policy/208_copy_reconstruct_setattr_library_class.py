# imports: copy, json
# expect: refused Forbidden: copy writing state or items into a type object it did not make
# (Refused first by case 306's rule, copy writing only into what the reducer's function made;
# the class-store guard's "copy's code setting attribute 'item_separator' of class
# json.encoder.JSONEncoder" stays behind it.)
# copy._reconstruct's slot state is setattr(y, key, value) in copy's code, y any object the
# reducer returns: here json.JSONEncoder, whose class attribute item_separator every encoder
# made with non-default arguments then uses.
import copy, json
def encoder_class():
    return json.JSONEncoder
class R:
    pass
copy.dispatch_table[R] = lambda r: (encoder_class, (), (None, {'item_separator': ';'}))
copy.copy(R())
print(json.dumps([1, 2], sort_keys=True))
