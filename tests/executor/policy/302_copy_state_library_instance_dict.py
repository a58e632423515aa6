# imports: copy, json
# expect: logs shallow: Forbidden: copy writing state key '__deepcopy__' into a JSONEncoder object; deep: Forbidden: copy writing state key '__deepcopy__' into a JSONEncoder object; subclass: Forbidden: copy writing a D as the state of a JSONEncoder object
# The same reducer rebuilt a library object and wrote {'__deepcopy__': f} into its instance
# dict, where a library object's lookup finds it (the class-only lookup is for the snippet's
# classes): copy.deepcopy of it called the snippet's f. Checked on the state copy writes, the
# shallow copy's as y is made, the deep copy's once deep-copied; a dict subclass state is
# refused, since its keys() may answer keys other than those its storage holds.
import copy, json
def f(memo):
    print('snippet hook ran as __deepcopy__')
    return 'hooked'
class K:
    pass
class D(dict):
    pass
def attempt(fn):
    try:
        y = fn(K())
        return copy.deepcopy(y)
    except Exception as e:
        return str(e).partition(' object')[0] + ' object'
copy.dispatch_table[K] = lambda k: (json.JSONEncoder, (), {'__deepcopy__': f})
shallow = attempt(copy.copy)
# deep-copied state: a value copy keeps as it is (len(memo) answered the copy)
copy.dispatch_table[K] = lambda k: (json.JSONEncoder, (), {'__deepcopy__': len})
deep = attempt(copy.deepcopy)
copy.dispatch_table[K] = lambda k: (json.JSONEncoder, (), D(indent=3))
subclass = attempt(copy.copy)
print(f'shallow: {shallow}; deep: {deep}; subclass: {subclass}')
