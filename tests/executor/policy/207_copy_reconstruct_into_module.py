# imports: copy, json
# expect: refused copy cannot rebuild an object as a module
# copy._reconstruct rebuilds y = func(*args) and then writes the state into y.__dict__ in
# copy's own code: with func returning a module, that is the module's namespace. No class-body
# dunder is needed: copy.dispatch_table (copyreg's) chooses the reducer for a class.
import copy, json
def json_module():
    return json
class R:
    pass
copy.dispatch_table[R] = lambda r: (json_module, (), {'dumps': lambda *a, **k: 'patched'})
copy.copy(R())
print(json.dumps([1]))
