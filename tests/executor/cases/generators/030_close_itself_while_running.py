# A generator that closes itself while it runs (from its finally block) gets CPython's
# ValueError('generator already executing'), caught or not; the close that ran the finally
# block still succeeds, and the generator is finished after it.
def g():
    try:
        yield 1
    finally:
        try:
            me.close()
        except ValueError as e:
            print('close inside:', e)
me = g()
next(me)
print(me.close(), me.gi_running, me.gi_suspended)
def k():
    try:
        yield 1
    finally:
        k_it.close()
k_it = k()
next(k_it)
try:
    next(k_it)
except ValueError as e:
    print('ValueError:', e, k_it.gi_running, k_it.gi_suspended)
print(list(k_it))
def s():
    yield s_it.close()
s_it = s()
try:
    next(s_it)
except ValueError as e:
    print('from the body:', e)
list(s_it)
