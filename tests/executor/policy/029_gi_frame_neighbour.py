# expect: native
def g():
    yield 1
gen = g()
(gen.gi_running, next(gen))
