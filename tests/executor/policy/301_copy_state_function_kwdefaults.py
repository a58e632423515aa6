# imports: copy, json
# expect: logs {"b": 1, "a": 2} InterpreterError: Forbidden: copy writing state key '__kwdefaults__' into a function object
# A reducer the snippet files in copy.dispatch_table chooses what copy._reconstruct rebuilds
# (y = func(*args): json.dumps itself) and the state it writes: its slotstate loop ran
# setattr(json.dumps, '__kwdefaults__', {..., 'indent': 7}), and json.dumps indented by 7 for
# every later caller. copy's state may no longer hold a dunder an object's own state may not
# (the function store rule, case 303, would refuse the setattr too).
import copy, json
class K:
    pass
def target():
    return json.dumps
kw = {'sort_keys': True, 'indent': 7, 'skipkeys': False, 'ensure_ascii': True,
      'check_circular': True, 'allow_nan': True, 'cls': None, 'separators': None,
      'default': None}
copy.dispatch_table[K] = lambda k: (target, (), (None, {'__kwdefaults__': kw}))
try:
    copy.copy(K())
    r = 'copied'
except Exception as e:
    r = f'{type(e).__name__}: {e}'
print(json.dumps({'b': 1, 'a': 2}), r)
