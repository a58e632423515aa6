# As in smolagents, `except BaseException` and a bare `except` do catch it: the run goes on.
try:
    final_answer('first')
except BaseException:
    print('caught')
def g():
    yield 1
    final_answer('from a generator')
try:
    list(g())
except:
    print('caught again')
final_answer('last')
