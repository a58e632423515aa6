# imports: dataclasses, json
# expect: logs refused: InterpreterError Forbidden while a snippet runs: dataclasses's code setting dunder '__dataclass_params__' of function dumps
# Library code sets attributes by name on objects it is handed: dataclasses.dataclass(f) stores
# __dataclass_params__ on any f before it finds f is no class, so json.dumps kept a dataclass
# marker after the failure, and copy's slotstate loop set json.dumps' __kwdefaults__ (case
# 301). While a snippet runs, library code stores on a function only what an object's own
# state may hold (and the stdlib's own stores on functions it has just made: case 304).
import dataclasses, json
try:
    dataclasses.dataclass(json.dumps)
except Exception as e:
    print('refused:', type(e).__name__, e)
print(json.dumps([1]))
