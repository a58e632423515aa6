errors = (KeyError, IndexError)
def risky(i):
    return [1][i]
try:
    risky(5)
except errors as e:
    print('caught', type(e).__name__)
'ok'
