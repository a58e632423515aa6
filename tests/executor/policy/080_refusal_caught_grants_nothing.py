# expect: refused Forbidden access to dunder attribute: __dict__
# A refusal is a catchable InterpreterError (as in smolagents), but catching it grants nothing.
try:
    x = (1).__dict__
except Exception as e:
    x = None
    print('caught', type(e).__name__)
getattr(1, '__dict__')
